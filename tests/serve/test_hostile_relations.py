"""Relations that cannot hurt the server: every malformed relation is a 422 naming the
problem, and /health and /api/schema keep answering whatever a request sends."""

from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient

import counterfact as cf
from counterfact.constraints._kinds import CONSTRAINT_KINDS
from counterfact.serve import Limits, Service, create_app
from counterfact.serve._models import ConstraintsIn

HOSTILE = {
    "huge exponent": ("credit_amount <= 1e999999999", "exponent"),
    "beyond float": ("credit_amount <= 1e309", "1e15"),
    "900 digits": ("credit_amount <= " + "9" * 900, "digits"),
    "deep parentheses": ("credit_amount <= " + "(" * 400 + "1" + ")" * 400, "nested"),
    "many signs": ("credit_amount <= " + "-" * 900 + "1", "nested"),
    "computed overflow": ("credit_amount <= 1e15 * 1e15 * duration_months", "1e15"),
    "division by zero": ("credit_amount <= duration_months / 0", "division by zero"),
    "unclosed": ("credit_amount <= (duration_months", "expected ')'"),
}


@pytest.fixture(scope="module")
def client():
    data = cf.datasets.load("german_credit")
    train, _ = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    methods = {name: cf.methods.get(name).fit(model, train) for name in cf.methods.names()[:1]}
    limits = Limits(max_rows=2, max_time_limit=2.0, default_time_limit=0.5)
    service = Service(data=train, model=model, methods=methods, limits=limits)
    with TestClient(create_app(service), raise_server_exceptions=False) as c:
        yield c


@pytest.fixture(scope="module")
def row(client):
    return client.get("/api/example?index=0").json()["row"]


def _explain(client, row, relation):  # type: ignore[no-untyped-def]
    body = {"rows": [row], "constraints": {"relations": [relation]}}
    return client.post("/api/explain", json=body)


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_relation_is_a_422_naming_the_limit(client, row, case):
    relation, words = HOSTILE[case]
    start = time.perf_counter()
    r = _explain(client, row, relation)
    assert time.perf_counter() - start < 5.0
    assert r.status_code == 422, r.text
    assert r.json()["error"] == "ConstraintError" and words in r.json()["detail"]


def test_the_server_stays_responsive_whatever_a_request_sends(client, row):
    def flood() -> None:
        for relation, _ in HOSTILE.values():
            _explain(client, row, relation)

    workers = [threading.Thread(target=flood) for _ in range(3)]
    for w in workers:
        w.start()
    slowest = 0.0
    while any(w.is_alive() for w in workers):
        start = time.perf_counter()
        assert client.get("/health").status_code == 200
        slowest = max(slowest, time.perf_counter() - start)
    for w in workers:
        w.join()
    start = time.perf_counter()
    assert client.get("/health").status_code == 200
    assert client.get("/api/schema").status_code == 200
    assert max(slowest, time.perf_counter() - start) < 2.0


def test_the_request_model_has_one_field_per_constraint_kind():
    assert list(ConstraintsIn.model_fields) == list(CONSTRAINT_KINDS)
    for kind in cf.constraints.constraint_kinds():
        assert ConstraintsIn.model_fields[kind.name].description == kind.help
