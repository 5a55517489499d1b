"""The trees' vote share through the HTTP API (``min_vote_share``): a forest's server
honours it with the real trees' votes, repeats it, keeps it under ``robustness``, and
refuses bad values and other models with a ``422`` naming the field.

FastAPI's test client; German Credit on five features, a forest of nine shallow trees.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
pytest.importorskip("z3")

from fastapi.testclient import TestClient

import counterfact as cf
from counterfact.constraints._votes import votes_needed
from counterfact.models import ModelAdapter
from counterfact.models._votes import tree_votes
from counterfact.serve import Service, create_app

COLUMNS = ["checking_status", "duration_months", "savings", "installment_rate", "housing"]
N_TREES = 9
SHARE = 7 / 9


@pytest.fixture(scope="module")
def train():
    full = cf.datasets.load("german_credit")
    schema = cf.Schema([full.schema[c] for c in COLUMNS], target=full.target)
    data = cf.Dataset(full.frame[[*COLUMNS, full.target]], schema, name="german_credit_5")
    return data.split(test_size=0.2, random_state=0)[0]


def _client(train, kind, **params):
    model = cf.models.fit(train, kind, random_state=0, **params)
    methods = {n: cf.methods.get(n, random_state=0).fit(model, train) for n in ("mace", "nearest")}
    return TestClient(create_app(Service(data=train, model=model, methods=methods)))


@pytest.fixture(scope="module")
def forest(train):
    with _client(train, "rf", n_estimators=N_TREES, max_depth=4) as c:
        yield c


@pytest.fixture(scope="module")
def rows(forest):
    return [forest.get(f"/api/example?index={k}").json()["row"] for k in range(3)]


def _explain(client, rows, **body):
    r = client.post("/api/explain", json={"rows": rows, "n_counterfactuals": 2, **body})
    assert r.status_code == 200, r.text
    return r.json()


def _votes(client, train, answer) -> list[int]:
    """The real trees' votes for each answer's target class."""
    model = client.app.state.service.model
    found = [c["row"] for res in answer["results"] for c in res["counterfactuals"]]
    frame = train.schema.coerce(pd.DataFrame(found, columns=train.schema.names))
    adapter = ModelAdapter(model.model, train.schema)
    target = answer["results"][0]["target"]
    return list(tree_votes(adapter, frame)[:, adapter.class_index(target)])


def test_every_answer_gets_the_share_by_the_real_trees(forest, train, rows):
    need = votes_needed(SHARE, N_TREES)
    plain = _votes(forest, train, _explain(forest, rows, method="mace"))
    assert plain and min(plain) < need  # the share asks for more than the decision
    for name in ("mace", "nearest"):
        out = _explain(forest, rows, method=name, min_vote_share=SHARE)
        assert out["min_vote_share"] == pytest.approx(SHARE)
        votes = _votes(forest, train, out)
        assert votes and min(votes) >= need, (name, votes)
        if name == "mace":
            assert {r["status"] for r in out["results"]} <= {"optimal", "infeasible"}


def test_robustness_keeps_the_share(forest, train, rows):
    out = _explain(forest, rows[:1], method="nearest", robustness=0.6, min_vote_share=SHARE)
    votes = _votes(forest, train, out)
    assert votes and min(votes) >= votes_needed(SHARE, N_TREES)
    assert all(c["robustness"] for c in out["results"][0]["counterfactuals"])


@pytest.mark.parametrize("value", [0, 1.5, -0.1, "0.6", True, "NaN"])
def test_a_bad_share_is_a_422_naming_it(forest, rows, value):
    body = json.dumps({"rows": rows[:1], "method": "nearest", "min_vote_share": value})
    if value == "NaN":
        body = body.replace('"NaN"', "NaN")
    r = forest.post("/api/explain", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 422, r.text
    assert "min_vote_share" in r.json()["detail"]


def test_another_model_refuses_the_share(train, rows):
    with _client(train, "lr") as lr:
        r = lr.post("/api/explain", json={"rows": rows[:1], "min_vote_share": 0.6})
        assert r.status_code == 422, r.text
        out = r.json()
        assert out["error"] == "UnsupportedModelError"
        assert "min_vote_share" in out["detail"] and "LogisticRegression" in out["detail"]
        # the way out in the request's own fields: this server has no retrained copies
        assert "Send min_probability" in out["detail"] and "robust_to" not in out["detail"]
        assert lr.post("/api/explain", json={"rows": rows[:1]}).status_code == 200


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"robustness": 1.5}, "robustness must be strictly between 0 and 1"),
        ({"robustness": "0.9"}, "robustness: must be a finite JSON number"),
        ({"robustness": 0.9, "robust": True}, "cannot be combined with robust: true"),
    ],
)
def test_a_bad_robustness_is_a_422_in_the_requests_words(train, rows, body, says):
    model = cf.models.fit(train, "lr", random_state=0)
    mace = cf.methods.get("mace", random_state=0).fit(model, train)
    copies = cf.models.retrained(model, train, n=2, random_state=1)
    service = Service(data=train, model=model, methods={"mace": mace}, robust_to=copies)
    with TestClient(create_app(service)) as client:
        r = client.post("/api/explain", json={"rows": rows[:1], **body})
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert says in detail and "Requirements(" not in detail and "robust_to" not in detail


def test_the_notice_states_the_share(forest, rows):
    asked = _explain(forest, rows[:1], method="mace", min_vote_share=SHARE, reasons=True)
    plain = _explain(forest, rows[:1], method="mace", reasons=True)
    said = "; required: at least 77.78 % of the trees' votes"
    notices = [c["notice"] for c in asked["results"][0]["counterfactuals"]]
    assert notices and all(said in n for n in notices)
    assert not any("trees' votes" in c["notice"] for c in plain["results"][0]["counterfactuals"])
    assert asked["results"][0]["certificate"].endswith(said)
    assert said in asked["results"][0]["plain_certificate"]


def test_a_robustness_request_gets_time_for_every_setting(forest, rows):
    """The server's deadline covers every search the ladder may make for a row (a forest's
    vote shares, margins, copies and bisections), not one search per row."""
    service = forest.app.state.service
    plain = service.prepare_explain(rows=rows[:2], method="mace", time_limit=2)
    robust = service.prepare_explain(rows=rows[:2], method="mace", time_limit=2, robustness=0.9)
    assert plain.calls == 1 and robust.calls >= 10
    assert robust.deadline >= 1.25 * robust.calls * 2 * 2 > plain.deadline
