"""Every error of the HTTP API says what was wrong and what to send instead (FastAPI's test
client), and docs/serve.md says what the schema says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient

import counterfact as cf
from counterfact.serve import Service, create_app

DOC = Path(__file__).resolve().parents[2] / "docs" / "serve.md"


@pytest.fixture(scope="module")
def service():
    data = cf.datasets.load("german_credit")
    train, _ = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    nearest = cf.methods.get("nearest", random_state=0).fit(model, train)
    return Service(data=train, model=model, methods={"nearest": nearest})


@pytest.fixture(scope="module")
def client(service):
    with TestClient(create_app(service), raise_server_exceptions=False) as c:
        yield c


def test_an_example_out_of_range_is_a_422_naming_the_range(client, service):
    total = len(service.examples)
    last = client.get(f"/api/example?index={total - 1}")
    assert last.status_code == 200 and last.json()["index"] == total - 1
    for index in (total, 999, -1):
        r = client.get(f"/api/example?index={index}")
        assert r.status_code == 422, (index, r.json())
        assert r.json()["error"] == "ValidationError"
        detail = r.json()["detail"]
        assert f"index={index} is out of range" in detail
        assert f"from 0 to {total - 1}" in detail
    with pytest.raises(cf.exceptions.ValidationError, match="out of range"):
        service.example(total)


def test_an_unknown_path_lists_the_endpoints(client):
    for path in ("/api/nothing", "/nothing", "/static/nothing.js"):
        r = client.get(path)
        assert r.status_code == 404 and r.json()["error"] == "Not Found"
        detail = r.json()["detail"]
        assert detail.startswith(f"There is nothing at {path}. The endpoints are GET /health")
        for endpoint in ("GET /api/schema", "GET /api/example?index=k", "POST /api/explain"):
            assert endpoint in detail


def test_a_wrong_verb_names_the_one_to_use(client):
    r = client.get("/api/explain")
    assert r.status_code == 405 and r.json()["error"] == "Method Not Allowed"
    assert r.json()["detail"].startswith("GET is not allowed on /api/explain: use POST, with a")
    assert r.headers["allow"] == "POST"
    r = client.delete("/api/schema")
    assert r.status_code == 405
    assert r.json()["detail"] == "DELETE is not allowed on /api/schema: use GET."


@pytest.mark.parametrize(
    ("body", "what"),
    [
        (b'{"rows": [{"purpose": "caf\xe9"}]}', "is not UTF-8 text"),
        (b"[" * 100_00 + b"]" * 100_00, "is nested too deeply to be read"),
    ],
    ids=["latin-1", "deep"],
)
def test_a_body_that_cannot_be_read_says_what_to_send(client, body, what):
    r = client.post("/api/explain", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and r.json()["error"] == "Bad Request"
    detail = r.json()["detail"]
    assert detail.startswith(f"The request body {what}. Send a UTF-8 encoded JSON object")


def test_the_doc_names_the_features_german_credit_marks_immutable():
    schema = cf.datasets.load("german_credit").schema
    immutable = {f.name for f in schema if f.actionability == "immutable"}
    text = " ".join(DOC.read_text(encoding="utf-8").split())
    said = re.search(r"Features the data marks immutable \(German Credit: ([^)]*)\)", text)
    assert said, "docs/serve.md no longer lists German Credit's immutable features"
    named = {
        item.strip().replace(" and ", " ").replace(" ", "_")
        for item in re.split(r",\s*", said.group(1))
    }
    assert named == immutable
