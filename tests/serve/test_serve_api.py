"""The HTTP API of ``counterfact serve`` (FastAPI's test client, fast methods on LR)."""

from __future__ import annotations

import json
import threading

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
pytest.importorskip("z3")

from fastapi.testclient import TestClient

import counterfact as cf
from counterfact.exceptions import ConstraintError, UnsupportedConstraintError
from counterfact.methods import Candidates, NearestObservable
from counterfact.schema._format import format_value
from counterfact.serve import Limits, ServerBusy, Service, create_app
from counterfact.serve._docs import swagger_ui_assets

METHODS = ("nearest", "ufce", "mace")


@pytest.fixture(scope="module")
def setting():
    data = cf.datasets.load("german_credit")
    # monotone directions left free, so that the nearest observed row finds some for these rows
    directed = {
        f.name: "free" for f in data.schema if f.actionability in ("increasing", "decreasing")
    }
    data = data.with_schema(data.schema.with_actionability(**directed))
    train, _ = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    methods = {}
    for name in METHODS:
        params = {"random_state": 0}
        if name == "ufce":
            params["n_neighbors"] = 25
        methods[name] = cf.methods.get(name, **params).fit(model, train)
    return train, model, methods


@pytest.fixture(scope="module")
def service(setting):
    train, model, methods = setting
    return Service(
        data=train, model=model, methods=methods, limits=Limits(max_rows=5, max_body_bytes=20_000)
    )


@pytest.fixture(scope="module")
def client(service):
    with TestClient(create_app(service), raise_server_exceptions=False) as c:
        yield c


@pytest.fixture(scope="module")
def example_rows(client):
    return [client.get(f"/api/example?index={k}").json()["row"] for k in range(2)]


def _frame(service, rows):
    return service.schema.coerce(pd.DataFrame(rows, columns=service.schema.names))


# ------------------------------------------------------------------ describing
def test_health(client):
    r = client.get("/health")
    assert r.status_code == 200
    assert r.json() == {"status": "ok", "methods": list(METHODS), "pending": 0}


def test_schema_describes_every_feature(client, setting):
    train = setting[0]
    out = client.get("/api/schema").json()
    assert [f["name"] for f in out["features"]] == train.schema.names
    for f, feat in zip(out["features"], train.schema, strict=True):
        assert f["kind"] == feat.kind
        assert f["actionability"] == feat.actionability
        assert f["resolution"] == feat.resolution
        if feat.is_numeric:
            assert (f["lower"], f["upper"]) == (feat.lower, feat.upper)
            assert f["categories"] is None
        else:
            assert f["categories"] == list(feat.categories)
    by_name = {f["name"]: f for f in out["features"]}
    assert by_name["duration_months"]["resolution"] == 1
    assert by_name["purpose"]["actionability"] == "immutable"
    assert out["favourable"] == 1 and out["class_labels"] == {"0": "bad", "1": "good"}
    assert out["limits"]["max_rows"] == 5


def test_methods_list_parameters_and_supported_constraints(client, setting):
    out = client.get("/api/methods").json()["methods"]
    assert [m["name"] for m in out] == list(METHODS)
    for m in out:
        method = setting[2][m["name"]]
        assert m["supported_constraints"] == sorted(method.supported_constraints)
        assert set(m["parameters"]) == set(method.get_params())
        assert m["certified"] == (m["name"] == "mace")
    assert [m["name"] for m in out if m["default"]] == ["mace"]


def test_examples_are_rows_the_model_rejects(client, setting, service):
    model = setting[1]
    first = client.get("/api/example").json()
    assert first["index"] == 0 and first["total"] == len(service.examples) > 0
    past = client.get(f"/api/example?index={first['total']}")
    assert past.status_code == 422 and f"from 0 to {first['total'] - 1}" in past.json()["detail"]
    rows = [client.get(f"/api/example?index={k}").json()["row"] for k in range(5)]
    assert (model.predict(_frame(service, rows)) != 1).all()


def test_predict_matches_the_model(client, setting, service, example_rows):
    model = setting[1]
    out = client.post("/api/predict", json={"rows": example_rows}).json()
    proba = model.predict_proba(_frame(service, example_rows))
    for p, expected in zip(out["predictions"], proba, strict=True):
        assert p["probabilities"]["1"] == pytest.approx(expected[1])
        assert p["probability_favourable"] == pytest.approx(expected[1])
        assert p["prediction"] == int(np.argmax(expected))
        assert p["label"] == {0: "bad", 1: "good"}[p["prediction"]]


# ------------------------------------------------------------------ explaining
def _recheck(service, model, request, answer):
    """Every counterfactual: flips the real model, keeps the constraints, lists exactly its
    changes."""
    schema = service.schema
    # the answer's constraints: the request's plus the server's default timeline
    constraints = cf.Constraints.from_dict(answer.get("constraints"))
    asked = cf.Constraints.from_dict(request.get("constraints"))
    assert constraints == asked.merge(cf.Constraints(timeline=constraints.timeline))
    queries = _frame(service, request["rows"])
    n_found = 0
    for res in answer["results"]:
        x = queries.iloc[res["row"]]
        p_before = model.predict_proba(queries.iloc[[res["row"]]])[0, 1]
        assert res["probability_before"] == pytest.approx(p_before)
        assert res["status"] in cf.result.STATUSES and res["certificate"]
        if not res["counterfactuals"]:
            assert res["status"] not in ("optimal", "feasible") and res["reason"]
        for c in res["counterfactuals"]:
            row = _frame(service, [c["row"]])
            assert model.predict(row)[0] == res["target"] == 1
            assert c["probability_after"] == pytest.approx(model.predict_proba(row)[0, 1])
            assert cf.violations(x, row, schema, constraints).empty
            assert [ch["feature"] for ch in c["changes"]] == [
                ch.feature for ch in cf.result.changes(schema, x, row.iloc[0])
            ]
            assert c["changes"], "a counterfactual changes at least one feature"
            for ch in c["changes"]:
                assert ch["after_text"] == format_value(
                    schema[ch["feature"]], row.iloc[0][ch["feature"]]
                )
            n_found += 1
    return n_found


@pytest.mark.parametrize("method", METHODS)
def test_explain_every_counterfactual_rechecked(client, setting, service, example_rows, method):
    model = setting[1]
    constraints = {"ranges": {"duration_months": [6, None]}, "immutable": ["housing"]}
    if method != "nearest":  # observed rows rarely differ in only a few features
        constraints["max_changes"] = 3
    rows = (
        example_rows[:1] if method == "ufce" else example_rows
    )  # the slowest of the three: one row
    request = {
        "rows": rows,
        "method": method,
        "n_counterfactuals": 2,
        "constraints": constraints,
        "time_limit": 10,
    }
    r = client.post("/api/explain", json=request)
    assert r.status_code == 200, r.text
    answer = r.json()
    assert answer["method"] == method and answer["time_limit"] == 10
    assert len(answer["results"]) == len(rows)
    assert _recheck(service, model, request, answer) >= 1


def test_explain_respects_features_to_vary(client, setting, service, example_rows):
    request = {
        "rows": example_rows[:1],
        "method": "mace",
        "n_counterfactuals": 2,
        "constraints": {"features_to_vary": ["duration_months", "credit_amount", "savings"]},
    }
    answer = client.post("/api/explain", json=request).json()
    assert _recheck(service, setting[1], request, answer) >= 1
    # what the person changes; age and the years at the address and in the job move only
    # with time (the server's default timeline), and each answer says when
    by_time = {f.name for f in service.schema if f.actionability == "time"}
    for c in answer["results"][0]["counterfactuals"]:
        assert {ch["feature"] for ch in c["changes"]} - by_time <= {
            "duration_months",
            "credit_amount",
            "savings",
        }
        assert c["when"] and c["months"] is not None
    assert answer["results"][0]["certificate"].startswith("MACE")


def test_explain_reports_reason_when_nothing_exists(client, example_rows):
    request = {
        "rows": example_rows[:1],
        "method": "mace",
        "constraints": {"features_to_vary": ["telephone"]},
    }
    res = client.post("/api/explain", json=request).json()["results"][0]
    assert res["status"] == "infeasible" and res["counterfactuals"] == []
    assert "proven" in res["certificate"]


def test_explain_default_method_and_target(client, example_rows):
    out = client.post("/api/explain", json={"rows": example_rows[:1]}).json()
    assert out["method"] == "mace" and out["results"][0]["target"] == 1


def test_shared_method_is_never_modified(client, setting, example_rows):
    mace = setting[2]["mace"]
    before = mace.get_params()
    client.post("/api/explain", json={"rows": example_rows[:1], "method": "mace", "time_limit": 3})
    assert mace.get_params() == before


# ------------------------------------------------------------- invalid requests
def _row(example_rows, **changes):
    return {**example_rows[0], **changes}


def _library_message(fn):
    with pytest.raises(cf.CounterfactError) as info:
        fn()
    return str(info.value)


INVALID = [
    # (name, body or callable(example_rows) -> body, status, error kind, part of the message)
    ("bad JSON", "{rows: [", 422, "RequestValidationError", "not valid JSON"),
    ("not an object", "[1, 2]", 422, "RequestValidationError", "Invalid request"),
    ("no body", "", 422, "RequestValidationError", "JSON body is required"),
    (
        "unknown field",
        lambda e: {"rows": e, "colour": "red"},
        422,
        "RequestValidationError",
        "colour: unknown field",
    ),
    ("no rows", lambda e: {"rows": []}, 422, "ValidationError", "rows is empty"),
    (
        "unknown feature",
        lambda e: {"rows": [_row(e, income=3)]},
        422,
        "ValidationError",
        "unknown features ['income']",
    ),
    (
        "missing feature",
        lambda e: {"rows": [{k: v for k, v in e[0].items() if k != "age"}]},
        422,
        "ValidationError",
        "lacks the features ['age']",
    ),
    (
        "outside the domain",
        lambda e: {"rows": [_row(e, age=130)]},
        422,
        "ValidationError",
        "outside the feature's domain [19, 75]",
    ),
    (
        "an unknown measure",
        lambda e: {"rows": e, "measure": "bogus"},
        422,
        "ValidationError",
        "measure must be one of",
    ),
    (
        "a range wholly outside the domain",
        lambda e: {"rows": e, "constraints": {"ranges": {"duration_months": [100, 200]}}},
        422,
        "ValidationError",
        "constraints.ranges['duration_months'] = [100, 200] lies outside the feature's domain",
    ),
    (
        "unknown category",
        lambda e: {"rows": [_row(e, savings="a lot")]},
        422,
        "ValidationError",
        "not among its categories",
    ),
    (
        "string for a number",
        lambda e: {"rows": [_row(e, age="33")]},
        422,
        "ValidationError",
        "send a JSON number",
    ),
    (
        "fractional integer",
        lambda e: {"rows": [_row(e, age=33.5)]},
        422,
        "ValidationError",
        "fractional",
    ),
    (
        "null value",
        lambda e: {"rows": [_row(e, age=None)]},
        422,
        "RequestValidationError",
        "rows[0]['age']",
    ),
    (
        "unknown method",
        lambda e: {"rows": e, "method": "magic"},
        422,
        "ValidationError",
        "Unknown method 'magic'",
    ),
    (
        "method not loaded",
        lambda e: {"rows": e, "method": "mdpso"},
        422,
        "ValidationError",
        "not loaded on this server",
    ),
    (
        "unknown target",
        lambda e: {"rows": e, "target": 7},
        422,
        "ValidationError",
        "not a class of the model",
    ),
    (
        "constraint on unknown feature",
        lambda e: {"rows": e, "constraints": {"immutable": ["income"]}},
        422,
        "ConstraintError",
        "names unknown features ['income']",
    ),
    (
        "unknown constraint key",
        lambda e: {"rows": e, "constraints": {"frozen": ["age"]}},
        422,
        "RequestValidationError",
        "constraints.frozen: unknown field",
    ),
    (
        "range on a category",
        lambda e: {"rows": e, "constraints": {"ranges": {"savings": [0, 1]}}},
        422,
        "ConstraintError",
        "ranges apply to numeric features",
    ),
    (
        "allowed value outside the domain",
        lambda e: {"rows": e, "constraints": {"allowed_values": {"savings": ["lots"]}}},
        422,
        "ConstraintError",
        "outside the feature's domain",
    ),
    (
        "cannot honour",
        lambda e: {
            "rows": e,
            "method": "nearest",
            "constraints": {
                "causal": [
                    {
                        "child": "credit_amount",
                        "parents": ["duration_months"],
                        "coef": {"duration_months": 100.0},
                    }
                ]
            },
        },
        422,
        "UnsupportedConstraintError",
        "cannot honour constraints of kind ['causal']",
    ),
    (
        "NaN in a range",
        lambda e: {"rows": e, "constraints": {"ranges": {"age": [float("nan"), 50]}}},
        422,
        "RequestValidationError",
        "constraints.ranges.age[0]: must be a finite JSON number",
    ),
    (
        "string count",
        lambda e: {"rows": e, "n_counterfactuals": "2"},
        422,
        "RequestValidationError",
        "n_counterfactuals: Input should be a valid integer",
    ),
    (
        "max_changes beyond the features",
        lambda e: {"rows": e, "constraints": {"max_changes": 10**12}},
        422,
        "ConstraintError",
        "exceeds the number of features (20)",
    ),
    (
        "n_counterfactuals 0",
        lambda e: {"rows": e, "n_counterfactuals": 0},
        422,
        "ValidationError",
        "n_counterfactuals must be",
    ),
    (
        "negative time limit",
        lambda e: {"rows": e, "time_limit": -1},
        422,
        "ValidationError",
        "time_limit must be",
    ),
]


@pytest.mark.parametrize("name, body, status, kind, message", INVALID, ids=[c[0] for c in INVALID])
def test_invalid_requests_get_a_clean_4xx(client, example_rows, name, body, status, kind, message):
    content = body if isinstance(body, str) else json.dumps(body(example_rows))
    r = client.post("/api/explain", content=content, headers={"content-type": "application/json"})
    assert r.status_code == status, r.text
    out = r.json()
    assert set(out) == {"error", "detail"}
    assert out["error"] == kind
    assert message in out["detail"]
    assert "Traceback" not in r.text


def test_contradictory_constraints_get_the_librarys_message(client, example_rows):
    expected = _library_message(lambda: cf.Constraints(immutable=["age"], increasing=["age"]))
    r = client.post(
        "/api/explain",
        json={"rows": example_rows, "constraints": {"immutable": ["age"], "increasing": ["age"]}},
    )
    assert r.status_code == 422 and r.json() == {"error": "ConstraintError", "detail": expected}
    # a range that excludes the row's own value of a feature that must not change
    r = client.post(
        "/api/explain",
        json={
            "rows": example_rows[:1],
            "constraints": {
                "immutable": ["duration_months"],
                "ranges": {"duration_months": [1, 2]},
            },
        },
    )
    assert r.status_code == 422 and r.json()["error"] == ConstraintError.__name__
    assert "excludes the query's own value" in r.json()["detail"]
    empty = _library_message(lambda: cf.Constraints(features_to_vary=[]))
    r = client.post(
        "/api/explain", json={"rows": example_rows, "constraints": {"features_to_vary": []}}
    )
    assert r.status_code == 422 and r.json()["detail"] == empty


def test_predict_rejects_bad_rows_too(client, example_rows):
    r = client.post("/api/predict", json={"rows": [_row(example_rows, age=5)]})
    assert r.status_code == 422 and "outside the feature's domain" in r.json()["detail"]


def test_unknown_paths_and_verbs_are_json_4xx(client):
    r = client.get("/api/nothing")
    assert r.status_code == 404 and r.json()["error"] == "Not Found"
    r = client.get("/api/explain")
    assert r.status_code == 405 and r.json()["error"] == "Method Not Allowed"


# ---------------------------------------------------------------------- limits
def test_limits(client, example_rows):
    r = client.post("/api/explain", json={"rows": example_rows[:1] * 6})
    assert r.status_code == 422 and "at most 5 rows per request" in r.json()["detail"]
    r = client.post("/api/explain", json={"rows": example_rows, "n_counterfactuals": 6})
    assert r.status_code == 422 and "limit of 5" in r.json()["detail"]
    r = client.post("/api/explain", json={"rows": example_rows, "time_limit": 31})
    assert r.status_code == 422 and "cap of 30 s" in r.json()["detail"]
    big = json.dumps({"rows": example_rows, "pad": "x" * 30_000})
    r = client.post("/api/explain", content=big, headers={"content-type": "application/json"})
    assert r.status_code == 413 and "20000 bytes" in r.json()["detail"]
    # a body streamed without a length is cut off too

    def chunks():
        for _ in range(30):
            yield b" " * 1000

    r = client.post("/api/explain", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413


def test_too_many_pending_explanations_get_429(setting, example_rows):
    train, model, methods = setting
    svc = Service(data=train, model=model, methods=methods, limits=Limits(max_pending=1))
    with TestClient(create_app(svc), raise_server_exceptions=False) as c:
        svc.acquire()  # one explanation in flight
        try:
            with pytest.raises(ServerBusy):
                svc.acquire()
            r = c.post("/api/explain", json={"rows": example_rows[:1], "method": "nearest"})
            assert r.status_code == 429 and r.headers["retry-after"] == "2"
            assert "retry" in r.json()["detail"]
        finally:
            svc.release()
        assert (
            c.post("/api/explain", json={"rows": example_rows[:1], "method": "nearest"}).status_code
            == 200
        )


# ----------------------------------------------------------------------- token
@pytest.mark.parametrize("token", ["", "   "])
def test_empty_token_is_refused(service, token):
    with pytest.raises(cf.ValidationError, match="non-empty"):
        create_app(service, token=token)


def test_bearer_token(service, example_rows):
    with TestClient(create_app(service, token="s3cret"), raise_server_exceptions=False) as c:
        assert c.get("/health").status_code == 200
        assert c.get("/").status_code == 200
        r = c.get("/api/schema")
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
        assert "Authorization: Bearer" in r.json()["detail"]
        assert c.get("/api/schema", headers={"Authorization": "Bearer nope"}).status_code == 401
        assert c.get("/api/schema", headers={"Authorization": "Basic s3cret"}).status_code == 401
        ok = {"Authorization": "Bearer s3cret"}
        assert c.get("/api/schema", headers=ok).status_code == 200
        r = c.post("/api/explain", json={"rows": example_rows[:1], "method": "nearest"})
        assert r.status_code == 401
        assert (
            c.post(
                "/api/explain", json={"rows": example_rows[:1], "method": "nearest"}, headers=ok
            ).status_code
            == 200
        )


# -------------------------------------------------------------- page and docs
def test_page_loads_nothing_from_elsewhere(client):
    r = client.get("/")
    assert r.status_code == 200 and "<form" in r.text
    assert "default-src 'self'" in r.headers["content-security-policy"]
    for path in ("/", "/static/app.js", "/static/app.css"):
        text = client.get(path).text
        assert "http://" not in text and "https://" not in text and "//cdn" not in text


def test_openapi_documents_every_endpoint(client):
    spec = client.get("/openapi.json").json()
    assert {
        "/health",
        "/api/schema",
        "/api/methods",
        "/api/example",
        "/api/predict",
        "/api/explain",
    } <= set(spec["paths"])
    assert {"ExplainRequest", "ExplainOut", "ConstraintsIn", "ErrorOut"} <= set(
        spec["components"]["schemas"]
    )
    # /docs only from a local Swagger UI (counterfact[serve] installs one), never from a CDN
    assert client.get("/docs").status_code == (200 if swagger_ui_assets() else 404)


# ----------------------------------------------------------------- concurrency
class _Gate(NearestObservable):
    """NearestObservable that waits for a gate before searching (to hold a request in flight)."""

    gate = threading.Event()
    entered = threading.Event()

    def _explain_one(self, query) -> Candidates:
        type(self).entered.set()
        type(self).gate.wait(30)
        return super()._explain_one(query)


def test_health_answers_while_an_explanation_runs(setting, example_rows):
    train, model, _ = setting
    gated = _Gate(random_state=0).fit(model, train)
    svc = Service(data=train, model=model, methods={"gated": gated})
    with TestClient(create_app(svc), raise_server_exceptions=False) as c:
        out = {}
        t = threading.Thread(
            target=lambda: out.setdefault(
                "r", c.post("/api/explain", json={"rows": example_rows[:1]})
            )
        )
        t.start()
        try:
            assert _Gate.entered.wait(30)
            h = c.get("/health")
            assert h.status_code == 200 and h.json()["pending"] == 1
            assert c.get("/api/schema").status_code == 200
        finally:
            _Gate.gate.set()
            t.join(60)
        assert out["r"].status_code == 200 and out["r"].json()["results"][0]["counterfactuals"]
        assert c.get("/health").json()["pending"] == 0


def test_service_rejects_unfitted_methods_and_bad_limits(setting):
    train, model, _ = setting
    with pytest.raises(cf.NotFittedError):
        Service(data=train, model=model, methods={"nearest": NearestObservable()})
    with pytest.raises(cf.ValidationError):
        Service(data=train, model=model, methods={})
    with pytest.raises(cf.ValidationError):
        Limits(max_rows=0)
    assert issubclass(UnsupportedConstraintError, cf.CounterfactError)


# ------------------------------------------------------------------------ CLI
def _cli(capsys, *argv):
    from counterfact.cli import main

    code = main(["serve", *argv])
    return code, capsys.readouterr().err


def test_cli_registers_serve_with_help(capsys):
    from counterfact.cli import main

    with pytest.raises(SystemExit) as info:
        main(["serve", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for flag in (
        "--data",
        "--model-file",
        "--allow-unsafe-model-load",
        "--methods",
        "--host",
        "--port",
        "--workers",
        "--token",
    ):
        assert flag in out
    assert "127.0.0.1" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--port", "0", "--data", "x.csv"], "--data needs --target"),
        (["--port", "70000"], "--port must be in 0..65535"),
        (["--port", "0", "--workers", "0"], "--workers must be >= 1"),
        (["--port", "0", "--methods", ","], "--methods is empty"),
        (["--port", "0", "--max-rows", "0"], "max_rows must be an int >= 1"),
        (["--port", "0", "--model-file", "model.joblib"], "--allow-unsafe-model-load"),
        (["--port", "0", "--model", "forest"], "is not a model kind"),
        (["--port", "0", "--data", "no-such-file.csv", "--target", "y"], "no such file"),
        (["--port", "0", "--token", ""], "--token is empty"),
        (["--port", "0", "--token", "  "], "--token is empty"),
    ],
)
def test_cli_errors_are_one_line_exit_2(capsys, argv, message):
    code, err = _cli(capsys, *argv)
    assert code == 2
    assert err.startswith("counterfact: error:") and message in err
    assert "Traceback" not in err


def test_cli_port_in_use(capsys):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        code, err = _cli(capsys, "--port", str(port))
    assert code == 2 and f"cannot listen on 127.0.0.1:{port}" in err


def test_the_server_prices_answers_as_the_library_does():
    """A service built on a bundled dataset fits on a training split: its measure of effort
    counts moves in the MADs of those rows, as ``result.cost()`` does (it took the MADs of
    every row: German Credit's credit amount moved 107 DM for 1.0975 on the page and
    1.1002 in the library)."""
    from counterfact.serve import build_service

    service = build_service("german_credit", methods=["mace"], warm_up=False)
    x = cf.datasets.load("german_credit").X.loc[[383]]  # a held-out row
    row = json.loads(x.iloc[0].to_json())
    with TestClient(create_app(service)) as c:
        r = c.post("/api/explain", json={"rows": [row], "method": "mace", "horizon": 0})
    assert r.status_code == 200, r.text
    served = [cf_["cost"] for cf_ in r.json()["results"][0]["counterfactuals"]]
    mace = service._methods["mace"]
    today = cf.Constraints(timeline=cf.datasets.timeline(mace.data_, horizon=0))
    answer = mace.explain(x, constraints=today)
    assert "credit_amount" in {c.feature for c in answer.changes(383)}  # a move in MADs
    assert served and served == pytest.approx(answer.cost().tolist(), rel=1e-9)


def test_a_horizon_sets_the_requests_own_timeline_and_adds_nothing():
    """A request with a timeline of its own and a ``horizon``: that timeline with that
    horizon, as ``--horizon`` does with a constraints file (the dataset's rates and cost of
    waiting were merged in, and its shorter horizon won)."""
    from counterfact.serve import build_service

    service = build_service("german_credit", methods=["mace"], warm_up=False)
    x = cf.datasets.load("german_credit").X.loc[[383]]
    row = json.loads(x.iloc[0].to_json())
    own = {"timeline": {"horizon": 6, "wait_cost": 0.01}}
    with TestClient(create_app(service)) as c:
        for horizon, want in ((12, 12), (0, 0)):
            body = {"rows": [row], "method": "mace", "horizon": horizon, "constraints": own}
            r = c.post("/api/explain", json=body)
            assert r.status_code == 200, r.text
            timeline = r.json()["constraints"]["timeline"]
            assert timeline["horizon"] == want
            assert timeline["wait_cost"] == 0.01 and not timeline.get("rates")
            assert all(a["months"] <= want for a in r.json()["results"][0]["counterfactuals"])
            served = r.json()["results"][0]["counterfactuals"]
    # the Python answer has the same keys as the HTTP one (reasons and notice null unasked)
    direct = service.explain(rows=[row], method="mace", horizon=0, constraints=own)
    assert served
    for a, b in zip(direct["results"][0]["counterfactuals"], served, strict=True):
        assert a.keys() == b.keys() and a["reasons"] is None and a["notice"] is None
