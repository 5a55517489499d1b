"""Relations between features through the HTTP API: accepted, honoured, and errors shown."""

from __future__ import annotations

import pandas as pd
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
pytest.importorskip("z3")

from fastapi.testclient import TestClient

import counterfact as cf
from counterfact.serve import Limits, Service, create_app

RELATIONS = [
    "credit_amount <= 150 * duration_months",
    "if housing != housing@ then residence_since == 1",
]


@pytest.fixture(scope="module")
def client_and_service():
    data = cf.datasets.load("german_credit")
    train, _ = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    methods = {"mace": cf.methods.get("mace", random_state=0).fit(model, train)}
    service = Service(
        data=train, model=model, methods=methods, limits=Limits(max_rows=5, max_body_bytes=20_000)
    )
    with TestClient(create_app(service), raise_server_exceptions=False) as c:
        yield c, service


def test_payload_with_relations_is_honoured(client_and_service):
    client, service = client_and_service
    row = client.get("/api/example?index=0").json()["row"]
    request = {"rows": [row], "method": "mace", "constraints": {"relations": RELATIONS}}
    r = client.post("/api/explain", json=request)
    assert r.status_code == 200, r.text
    res = r.json()["results"][0]
    assert res["status"] in ("optimal", "infeasible")
    x = service.schema.coerce(pd.DataFrame([row], columns=service.schema.names)).iloc[0]
    c = cf.Constraints(relations=RELATIONS)
    for answer in res["counterfactuals"]:
        cand = dict(row)
        for ch in answer["changes"]:
            cand[ch["feature"]] = ch["after"]
        frame = service.schema.coerce(pd.DataFrame([cand], columns=service.schema.names))
        assert cf.violations(x, frame, service.schema, c).empty


def test_a_bad_relation_is_a_client_error_pointing_at_it(client_and_service):
    client, _ = client_and_service
    row = client.get("/api/example?index=0").json()["row"]
    request = {"rows": [row], "method": "mace", "constraints": {"relations": ["credit_amnt <= 3"]}}
    r = client.post("/api/explain", json=request)
    assert 400 <= r.status_code < 500
    assert "credit_amnt" in r.text and "credit_amount" in r.text
    request["constraints"]["relations"] = [123]
    assert client.post("/api/explain", json=request).status_code == 422
