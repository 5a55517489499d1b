"""Recourse a person can act on, through the HTTP API: class names, feature descriptions,
what each method's answers mean, a probability margin, certified regions, reasons for a
notice, answers that hold for retrained models, and /docs without a CDN.

FastAPI's test client; German Credit, logistic regression, MACE and the nearest baseline.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
pytest.importorskip("z3")

from fastapi.testclient import TestClient

import counterfact as cf
from counterfact.cli import main as cli_main
from counterfact.serve import Limits, Service, build_service, create_app
from counterfact.serve._docs import swagger_ui_assets
from counterfact.serve._meaning import resolve_class_names
from counterfact.serve._request import ExplainJob

NAMES = {"0": "refused", "1": "granted"}


@pytest.fixture(scope="module")
def setting():
    data = cf.datasets.load("german_credit")
    train, _ = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    methods = {n: cf.methods.get(n, random_state=0).fit(model, train) for n in ("mace", "nearest")}
    others = cf.models.retrained(model, train, n=2, random_state=0)
    return train, model, methods, others


@pytest.fixture(scope="module")
def service(setting):
    train, model, methods, others = setting
    limits = Limits(max_rows=3, max_time_limit=10.0, default_time_limit=5.0)
    return Service(
        data=train,
        model=model,
        methods=methods,
        limits=limits,
        class_names="refused,granted",
        robust_to=others,
    )


@pytest.fixture(scope="module")
def client(service):
    with TestClient(create_app(service), raise_server_exceptions=False) as c:
        yield c


@pytest.fixture(scope="module")
def row(client):
    return client.get("/api/example?index=0").json()["row"]


def _frame(service, rows):
    return service.schema.coerce(pd.DataFrame(rows, columns=service.schema.names))


def _explain(client, row, **body):
    r = client.post("/api/explain", json={"rows": [row], "n_counterfactuals": 2, **body})
    assert r.status_code == 200, r.text
    return r.json()


# ------------------------------------------------------------- describing
def test_class_names_reach_every_answer(client, service, row):
    schema = client.get("/api/schema").json()
    assert schema["class_labels"] == NAMES and schema["favourable"] == 1
    assert (
        client.post("/api/predict", json={"rows": [row]}).json()["predictions"][0]["label"]
        == "refused"
    )
    out = _explain(client, row, method="mace", reasons=True)
    res = out["results"][0]
    assert res["decision"]["label"] == "refused" and res["target_label"] == "granted"
    assert "not assigned to 'granted'" in res["counterfactuals"][0]["notice"]


def test_class_names_default_from_the_data_and_are_checked(setting):
    train, model, methods, _ = setting
    plain = Service(data=train, model=model, methods={"nearest": methods["nearest"]})
    assert plain.class_labels() == {"0": "bad", "1": "good"}  # the dataset's target_labels
    assert resolve_class_names([0, 1], "0=no,1=yes") == {"0": "no", "1": "yes"}
    assert resolve_class_names([0, 1], ["no", "yes"]) == {"0": "no", "1": "yes"}
    assert resolve_class_names(["a", "b"], None) == {"a": "a", "b": "b"}
    for given, message in [
        ("bad,good,best", "3 class names"),
        ("0=no,2=yes", "unknown classes ['2']"),
        ("no,no", "distinct"),
        ("no, ", "empty"),
        ("0=no", "no name for ['1']"),
    ]:
        with pytest.raises(
            cf.ValidationError, match=message.replace("[", r"\[").replace("]", r"\]")
        ):
            Service(
                data=train, model=model, methods={"nearest": methods["nearest"]}, class_names=given
            )


def test_build_service_checks_class_names_before_fitting_methods(setting):
    train = setting[0]
    fitted = []
    with pytest.raises(cf.ValidationError, match="3 class names"):
        build_service(
            train,
            model="lr",
            methods=["nearest"],
            class_names="a,b,c",
            warm_up=False,
            log=fitted.append,
        )
    assert not any("fitting nearest" in line for line in fitted)


def test_schema_carries_descriptions_and_what_the_server_offers(client, service):
    out = client.get("/api/schema").json()
    for f, feat in zip(out["features"], service.schema, strict=True):
        assert f["description"] == feat.description
    assert any(f["description"] == "Duration of the credit in months" for f in out["features"])
    assert out["robust_to"] == 2
    assert out["api_docs"] == ("/docs" if swagger_ui_assets() else "/openapi.json")


def test_methods_say_what_their_answers_mean(client, setting):
    methods = {m["name"]: m for m in client.get("/api/methods").json()["methods"]}
    for name, m in methods.items():
        tags = type(setting[2][name]).tags
        assert (m["proves_optimality"], m["proves_infeasibility"]) == (
            tags.proves_optimality,
            tags.proves_infeasibility,
        )
        assert m["display_name"] == tags.display_name
        assert set(m["meaning"]) >= {"optimal", "feasible", "infeasible", "timeout", "failed"}
    # the meaning names the measure of effort
    optimal = methods["mace"]["meaning"]["optimal"]
    assert optimal.startswith("Proven smallest") and "fewer changes or smaller moves" in optimal
    assert "not proven smallest" in methods["mace"]["meaning"]["feasible"]
    assert methods["mace"]["meaning"]["infeasible"].startswith("Proven")
    assert "does not prove" in methods["nearest"]["meaning"]["optimal"]
    assert "does not prove that none exists" in methods["nearest"]["meaning"]["infeasible"]


def test_each_answer_says_what_its_status_means(client, row):
    methods = {m["name"]: m for m in client.get("/api/methods").json()["methods"]}
    for name in ("mace", "nearest"):
        res = _explain(client, row, method=name)["results"][0]
        assert res["meaning"] == methods[name]["meaning"][res["status"]]


def test_a_row_already_granted_means_nothing_needs_to_change(client, setting):
    from counterfact.serve._render import ALREADY_MEANING

    train, model, _, _ = setting
    granted = train.X[model.predict(train.X) == 1].head(1)
    row = json.loads(granted.to_json(orient="records"))[0]
    res = _explain(client, row, method="mace", target=1)["results"][0]
    assert res["status"] == "failed" and res["reason"] == "query already predicted as target"
    assert res["meaning"] == ALREADY_MEANING  # not "found no answer"


def test_under_robustness_the_meaning_speaks_of_the_setting_kept(client, row):
    methods = {m["name"]: m for m in client.get("/api/methods").json()["methods"]}
    out = _explain(client, row, method="mace", robustness=0.95, time_limit=5)
    res = out["results"][0]
    setting = res["diagnostics"].get("robustness_setting")
    plain = methods["mace"]["meaning"][res["status"]]
    assert res["status"] == "optimal" and setting not in (None, "plain"), (res["status"], setting)
    assert res["meaning"].startswith(plain)
    assert (
        f"This speaks of the answers under the setting chosen for robustness 95 % ({setting}"
        in res["meaning"]
    )
    assert res["meaning"].endswith(
        "a cheaper answer that holds for fewer retrained models may exist."
    )


# ---------------------------------------------------------------- margin
def test_min_probability_is_reached_and_checked_with_the_model(client, service, row):
    plain = _explain(client, row, method="mace")["results"][0]
    assert (
        plain["status"] == "optimal"
        and min(c["probability_after"] for c in plain["counterfactuals"]) < 0.6
    )
    for name in ("mace", "nearest"):
        out = _explain(client, row, method=name, min_probability=0.65)
        assert out["min_probability"] == 0.65
        res = out["results"][0]
        if name == "mace":
            assert res["status"] == "optimal" and res["counterfactuals"]
        for c in res["counterfactuals"]:
            p = service.model.model.predict_proba(_frame(service, [c["row"]]))[0, 1]
            assert p >= 0.65 and c["probability_after"] == pytest.approx(p)


@pytest.mark.parametrize("value", [0, 1, -0.1, 1.5, "0.6", True, 10**400, "NaN"])
def test_a_bad_min_probability_is_a_422_naming_it(client, row, value):
    body = json.dumps(
        {"rows": [row], "method": "nearest", "min_probability": value}, allow_nan=True
    )
    if value == "NaN":
        body = body.replace('"NaN"', "NaN")
    r = client.post("/api/explain", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 422, r.text
    assert "min_probability" in r.json()["detail"]


@pytest.mark.parametrize("field", ["regions", "robust", "reasons"])
@pytest.mark.parametrize("value", [1, "yes", None, [True]])
def test_the_flags_take_only_booleans(client, row, field, value):
    r = client.post("/api/explain", json={"rows": [row], "method": "nearest", field: value})
    assert r.status_code == 422 and field in r.json()["detail"]


# --------------------------------------------------------------- regions
def _corners(region, feature_by_name):
    """Every corner of the region's box, its middle on the grid, every allowed category: for a
    logistic regression (a half-space) the box holds if and only if its corners do."""
    axes = []
    for name, b in region["bounds"].items():
        if isinstance(b, dict):
            axes.append([(name, v) for v in b["values"]])
        else:
            lo, hi = b
            step = feature_by_name[name].resolution or 1.0
            mid = round((lo + hi) / 2 / step) * step
            axes.append([(name, v) for v in sorted({lo, mid, hi})])
    return [dict(c) for c in itertools.product(*axes)]


def test_regions_hold_everywhere_in_their_box(client, service, row):
    out = _explain(client, row, method="mace", regions=True)
    assert out["regions"] is True
    res = out["results"][0]
    assert res["counterfactuals"]
    features = {f.name: f for f in service.schema}
    for c in res["counterfactuals"]:
        region = c["region"]
        assert region["certified"] is True and region["text"]
        changed = {ch["feature"] for ch in c["changes"]}
        assert set(region["bounds"]) == changed  # the unchanged features stay as they are
        points = [{**row, **corner} for corner in _corners(region, features)]
        for name, b in region["bounds"].items():  # the answer itself lies in its region
            v = c["row"][name]
            assert (v in b["values"]) if isinstance(b, dict) else (b[0] <= v <= b[1])
        preds = service.model.model.predict(_frame(service, points))
        assert (preds == 1).all()
    assert all(
        c["region"] is None
        for c in _explain(client, row, method="mace")["results"][0]["counterfactuals"]
    )


def test_regions_extend_the_request_deadline():
    frame = pd.DataFrame({"a": [1, 2]})
    plain = ExplainJob(frame, "mace", None, 1, 2, 5.0)
    with_regions = ExplainJob(frame, "mace", None, 1, 2, 5.0, regions=True)
    assert with_regions.deadline == plain.deadline + 2 * 2 * 5.0


# --------------------------------------------------------------- reasons
def test_reasons_for_a_notice(client, service, row):
    res = _explain(client, row, method="mace", reasons=True)["results"][0]
    model = service.model.model
    x = _frame(service, [row])
    base = model.predict_proba(x)[0, 1]
    for c in res["counterfactuals"]:
        reasons = c["reasons"]
        changed = {ch["feature"]: ch for ch in c["changes"]}
        assert 1 <= len(reasons) <= min(4, len(changed))
        closes = [r["closes"] for r in reasons]
        assert closes == sorted(closes, reverse=True)  # the largest share of the gap first
        for r in reasons:
            assert r["current"] == row[r["feature"]] and r["needed"] == c["row"][r["feature"]]
            alone = x.copy()
            alone[r["feature"]] = c["row"][r["feature"]]
            assert r["closes"] == pytest.approx(
                model.predict_proba(service.schema.coerce(alone))[0, 1] - base
            )
            assert r["sentence"] in c["notice"]
        assert c["notice"].startswith(
            "Principal reasons the application was not assigned to 'granted':"
        )
        # the guarantee in words for a lay reader, with the measure; no raw bound
        assert "How this was established: " + res["plain_certificate"] in c["notice"]
        assert "Smaller means fewer changes or smaller moves" in c["notice"]
    without = _explain(client, row, method="mace")["results"][0]["counterfactuals"][0]
    assert without["reasons"] is None and without["notice"] is None


def test_the_notice_states_the_margin_and_the_region(client, row):
    c = _explain(client, row, method="mace", reasons=True, regions=True, min_probability=0.6)[
        "results"
    ][0]["counterfactuals"][0]
    assert "a probability of at least 0.6" in c["notice"]
    bounds = c["region"]["bounds"].values()
    point = all(len(b["values"]) == 1 if isinstance(b, dict) else b[0] == b[1] for b in bounds)
    # a region that is the answer itself offers no other option, so the notice says none
    assert ("would also have sufficed" in c["notice"]) is not point


# ---------------------------------------------------------------- robust
def test_robust_answers_hold_for_every_retrained_model(client, service, setting, row):
    others = setting[3]
    out = _explain(client, row, method="mace", robust=True, time_limit=10)
    assert out["robust_to"] == 2
    res = out["results"][0]
    assert res["counterfactuals"], res
    rows = _frame(service, [c["row"] for c in res["counterfactuals"]])
    assert (service.model.model.predict(rows) == 1).all()
    for other in others:
        assert (other.predict(rows) == 1).all()
    assert _explain(client, row, method="nearest")["robust_to"] == 0


def test_robust_needs_retrained_models(setting, row):
    train, model, methods, _ = setting
    service = Service(data=train, model=model, methods={"nearest": methods["nearest"]})
    assert service.schema_info()["robust_to"] == 0
    with TestClient(create_app(service), raise_server_exceptions=False) as c:
        r = c.post("/api/explain", json={"rows": [row], "robust": True})
        assert r.status_code == 422 and "--robust-to" in r.json()["detail"]
    with pytest.raises(cf.ValidationError, match="classes"):
        Service(
            data=train,
            model=model,
            methods={"nearest": methods["nearest"]},
            robust_to=[_OtherClasses(model)],
        )


class _OtherClasses:
    """A model that decides between other classes than the served one."""

    def __init__(self, model):
        self.model = model
        self.classes_ = np.array([0, 2])

    def predict_proba(self, X):
        return self.model.predict_proba(X)


# ------------------------------------------------------ request log, docs
def test_the_request_log_records_the_regions_revealed(setting, row, tmp_path):
    train, model, methods, _ = setting
    service = Service(data=train, model=model, methods={"mace": methods["mace"]})
    path = tmp_path / "requests.jsonl"
    with TestClient(create_app(service, request_log=path), raise_server_exceptions=False) as c:
        out = _explain(c, row, regions=True, min_probability=0.6)
    record = json.loads(path.read_text().splitlines()[0])
    assert record["request"]["regions"] is True and record["request"]["min_probability"] == 0.6
    shown = [c_["region"]["bounds"] for c_ in out["results"][0]["counterfactuals"]]
    assert record["revealed"]["rows"][0]["regions"] == shown


def test_docs_come_from_local_files_or_not_at_all(setting, monkeypatch):
    train, model, methods, _ = setting
    service = Service(data=train, model=model, methods={"nearest": methods["nearest"]})
    if swagger_ui_assets() is not None:
        with TestClient(create_app(service)) as c:
            page = c.get("/docs")
            assert page.status_code == 200
            assert (
                "/docs-assets/swagger-ui-bundle.js" in page.text
                and "/docs-assets/swagger-ui.css" in page.text
            )
            assert "cdn" not in page.text and "https://" not in page.text
            assert c.get("/docs-assets/swagger-ui-bundle.js").status_code == 200
            # FastAPI's ReDoc loads from a CDN: not served
            assert c.get("/redoc").status_code == 404
    monkeypatch.setattr("counterfact.serve._app.swagger_ui_assets", lambda: None)
    with TestClient(create_app(service)) as c:
        assert c.get("/docs").status_code == 404
        assert c.get("/api/schema").json()["api_docs"] == "/openapi.json"
        assert c.get("/openapi.json").status_code == 200


# ------------------------------------------------------------------- CLI
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--port", "0", "--class-names", " "], "--class-names is empty"),
        (["--port", "0", "--robust-to", "-1"], "--robust-to must be >= 0"),
    ],
)
def test_cli_checks_the_new_options_first(capsys, argv, message):
    assert cli_main(["serve", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("counterfact: error:") and message in err
