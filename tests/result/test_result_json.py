"""CounterfactualResult.from_json: any damaged document raises ValidationError naming the
problem."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import counterfact as cf
from counterfact.exceptions import ValidationError
from counterfact.result import CounterfactualResult
from counterfact.result._json import FORMAT_KEYS, content_hash


@pytest.fixture(scope="module")
def good() -> str:
    schema = cf.Schema(
        (
            cf.Feature("a", "integer", lower=0, upper=10),
            cf.Feature("b", "categorical", categories=("x", "y")),
        ),
        target="y",
        classes=(0, 1),
    )
    queries = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}, index=[0, 1])
    cfs = pd.DataFrame(
        {"a": [3], "b": ["x"]}, index=pd.MultiIndex.from_tuples([(0, 0)], names=["query", "rank"])
    )
    r = CounterfactualResult(
        queries=queries,
        counterfactuals=cfs,
        status=pd.Series(["feasible", "failed"], index=[0, 1]),
        runtime=pd.Series([0.1, 0.2], index=[0, 1]),
        diagnostics=pd.DataFrame(index=[0, 1]),
        schema=schema,
        target=pd.Series([1, 1], index=[0, 1]),
        method="nearest",
        constraints=cf.Constraints(immutable=["b"]),
    )
    return r.to_json()


def test_round_trip(good):
    r = CounterfactualResult.from_json(good)
    assert r.status.tolist() == ["feasible", "failed"]
    assert r.reason[1] == "no counterfactual found"
    assert CounterfactualResult.from_json(good.encode()).to_json() == r.to_json()


def _edit(text: str, fn) -> str:  # type: ignore[no-untyped-def]
    d = json.loads(text)
    fn(d)
    return json.dumps(d)


DAMAGE = {
    "empty": (lambda t: "", "not valid JSON"),
    "truncated": (lambda t: t[: len(t) // 2], "not valid JSON"),
    "garbage": (lambda t: "\x00\x01garbage{", "not valid JSON"),
    "list": (lambda t: "[1, 2, 3]", "expected a JSON object, got a JSON array"),
    "number": (lambda t: "42", "expected a JSON object, got a JSON number"),
    "null": (lambda t: "null", "got a JSON null"),
    "no format": (lambda t: _edit(t, lambda d: d.pop("format")), "'format' tag is missing"),
    "wrong format": (
        lambda t: _edit(t, lambda d: d.update(format="other")),
        "'format' tag is 'other'",
    ),
    "newer version": (lambda t: _edit(t, lambda d: d.update(version=99)), "version 99.*upgrade"),
    "version text": (
        lambda t: _edit(t, lambda d: d.update(version="1")),
        "'version' must be an integer",
    ),
    "no schema": (lambda t: _edit(t, lambda d: d.pop("schema")), "key 'schema' is missing"),
    "no status": (lambda t: _edit(t, lambda d: d.pop("status")), "key 'status' is missing"),
    "status wrong type": (
        lambda t: _edit(t, lambda d: d.update(status="feasible")),
        "'status' must be an array",
    ),
    "schema a list": (
        lambda t: _edit(t, lambda d: d.update(schema=[])),
        "'schema' must be an object",
    ),
    "no query rows": (
        lambda t: _edit(t, lambda d: d["queries"].pop("rows")),
        "'rows' in 'queries' is missing",
    ),
    "bad features": (
        lambda t: _edit(t, lambda d: d["schema"].update(features=[{"name": "a"}])),
        "Result document",
    ),
    "features not list": (
        lambda t: _edit(t, lambda d: d["schema"].update(features=3)),
        "Result document",
    ),
    "unknown status": (
        lambda t: _edit(t, lambda d: d.update(status=["feasible", "great"])),
        "unknown statuses",
    ),
    "short runtime": (
        lambda t: _edit(t, lambda d: d.update(runtime=[0.1])),
        "'runtime' has 1 entries",
    ),
    "runtime text": (lambda t: _edit(t, lambda d: d.update(runtime=["x", "y"])), "Result document"),
    "bad row value": (
        lambda t: _edit(t, lambda d: d["queries"]["rows"][0].update(a="zz")),
        "Result document",
    ),
    "bad cf index": (
        lambda t: _edit(t, lambda d: d["counterfactuals"].update(index=[5])),
        r"\[query, rank\]",
    ),
    "bad constraints": (
        lambda t: _edit(t, lambda d: d.update(constraints={"nope": 1})),
        "Unknown constraint keys",
    ),
    "n_cf text": (
        lambda t: _edit(t, lambda d: d.update(n_counterfactuals="1")),
        "'n_counterfactuals' must be an integer",
    ),
    "method number": (
        lambda t: _edit(t, lambda d: d.update(method=3)),
        "'method' must be a string",
    ),
    "short certificates": (
        lambda t: _edit(t, lambda d: d.update(certificates=["x"])),
        "'certificates' must be an array of 2",
    ),
    "certificate number": (
        lambda t: _edit(t, lambda d: d.update(certificates=[1, 2])),
        "'certificates' must be an array",
    ),
}


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_damaged_documents_raise_validation_error(good, case):
    damage, message = DAMAGE[case]
    with pytest.raises(ValidationError, match=message):
        CounterfactualResult.from_json(damage(good))


@pytest.mark.parametrize("value", [None, 3, {"a": 1}, b"\xff\xfe"])
def test_non_text_input(value):
    with pytest.raises(ValidationError):
        CounterfactualResult.from_json(value)  # type: ignore[arg-type]


def test_a_file_name_is_answered_with_how_to_read_it(good, tmp_path):
    path = tmp_path / "result.json"
    path.write_text(good)
    for name in (str(path), "results/missing.json"):
        with pytest.raises(ValidationError, match="not a file name") as info:
            CounterfactualResult.from_json(name)
        assert "read_text()" in str(info.value)
    with pytest.raises(
        ValidationError, match="not valid JSON"
    ):  # plain garbage is still "not JSON"
        CounterfactualResult.from_json("hello")
    assert CounterfactualResult.from_json(path.read_text()).method == "nearest"


def test_a_version_1_document_still_loads(good):
    """Documents written before results kept the method's words load, with the text that
    holds for any method as their guarantee."""
    d = json.loads(good)
    d["version"] = 1
    for key in set(d) - FORMAT_KEYS[1]:  # the keys that came with later formats
        d.pop(key)
    r = CounterfactualResult.from_json(json.dumps(d))
    assert (
        r.certificate(0)
        == "nearest: found by search; valid (checked with the model), not proven nearest"
    )
    assert r.certificate(1).startswith("nearest: no counterfactual found (not a proof")


def test_certificates_round_trip(good):
    d = json.loads(good)
    d["certificates"] = ["proven by a test", None]
    d["sha256"] = content_hash(d)  # an edit, sealed again (else from_json reports the edit)
    r = CounterfactualResult.from_json(json.dumps(d))
    assert r.certificate(0) == "proven by a test"
    assert json.loads(r.to_json())["certificates"] == ["proven by a test", None]


def _with_constraints(constraints: cf.Constraints) -> CounterfactualResult:
    schema = cf.Schema(
        (
            cf.Feature("a", "integer", lower=0, upper=10),
            cf.Feature("c", "real", lower=0.0, upper=5.0),
        ),
        target="y",
        classes=(0, 1),
    )
    cfs = pd.DataFrame(
        {"a": [3], "c": [1.5]}, index=pd.MultiIndex.from_tuples([(0, 0)], names=["query", "rank"])
    )
    return CounterfactualResult(
        queries=pd.DataFrame({"a": [1], "c": [0.5]}, index=[0]),
        counterfactuals=cfs,
        status=pd.Series(["feasible"], index=[0]),
        runtime=pd.Series([0.1], index=[0]),
        diagnostics=pd.DataFrame(index=[0]),
        schema=schema,
        target=pd.Series([1], index=[0]),
        method="a method",
        constraints=constraints,
    )


def test_an_unserialisable_causal_function_drops_only_itself():
    """A causal relation given as a Python function cannot be saved; the relations, the
    linear causal relations and every other constraint still are, and the document says
    what was left out."""
    linear = cf.Causal(child="a", parents=("c",), coef={"c": 2.0})
    opaque = cf.Causal(child="c", parents=("a",), fn=lambda p: p["a"].to_numpy() / 2.0)
    c = cf.Constraints(
        increasing=["a"], relations=["a <= 4 * c"], causal=[linear, opaque], max_changes=2
    )
    text = _with_constraints(c).to_json()
    doc = json.loads(text)
    assert doc["constraints"]["relations"] == ["a <= 4 * c"]
    assert [r["child"] for r in doc["constraints"]["causal"]] == ["a"]
    assert doc["constraints"]["increasing"] == ["a"] and doc["constraints"]["max_changes"] == 2
    assert "'c'" in doc["constraints_note"] and "not serialisable" in doc["constraints_note"]
    back = CounterfactualResult.from_json(text)
    assert [str(r) for r in back.constraints.relations] == ["a <= 4 * c"]
    assert [r.child for r in back.constraints.causal] == ["a"]
    # with nothing to leave out, the document carries no note
    assert "constraints_note" not in json.loads(_with_constraints(cf.Constraints()).to_json())


def test_a_row_recorded_invalid_keeps_its_contradicting_constraints():
    """A row whose own constraints contradict is ``invalid`` in the result; reading the
    result back keeps them as written (it raised), and any other query's are still checked."""
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    near = cf.NearestObservable().fit(model, train)
    X = cf.rows_to_explain(model, test).head(2)
    bad = cf.Constraints(features_to_vary=["age", "credit_amount"])  # age: only time moves it
    r = near.explain(X, constraints=[bad, None])
    assert r.status.iloc[0] == "invalid"
    again = CounterfactualResult.from_json(r.to_json())
    assert again.status.iloc[0] == "invalid" and again.reason.iloc[0] == r.reason.iloc[0]
    assert again.query_constraints[X.index[0]] == bad
    doc = json.loads(r.to_json())
    doc["status"][0] = "failed"  # the same constraints, on a row not recorded invalid
    doc["sha256"] = content_hash(doc)
    with pytest.raises(ValidationError, match="query_constraints"):
        CounterfactualResult.from_json(json.dumps(doc))
