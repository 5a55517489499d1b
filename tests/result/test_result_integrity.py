"""Saved results detect damage: every row is checked against the schema, the content
against its SHA-256, and an edited file loads only on purpose, re-verified with a
model (issue 29)."""

from __future__ import annotations

import json
import random

import pytest

import counterfact as cf
from counterfact.exceptions import ValidationError
from counterfact.result import CounterfactualResult
from counterfact.result._json import FORMAT_KEYS, FORMAT_VERSION, content_hash


@pytest.fixture(scope="module")
def setting():
    data = cf.datasets.load("german_credit")
    # every feature free: the bundled defaults leave the nearest observed row nothing to offer
    data = data.with_schema(
        data.schema.with_actionability(**dict.fromkeys(data.schema.names, "free"))
    )
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    rows = cf.rows_to_explain(model, test.X, data=train).iloc[:3]
    result = (
        cf.NearestObservable(random_state=0)
        .fit(model, train)
        .explain(rows, n_counterfactuals=2, constraints=cf.Constraints(immutable=["age"]))
    )
    assert len(result.counterfactuals) >= 2
    return model, result, result.to_json()


def _edit(text: str, fn) -> str:  # type: ignore[no-untyped-def]
    d = json.loads(text)
    fn(d)
    return json.dumps(d)


def _resealed(text: str, fn) -> str:  # type: ignore[no-untyped-def]
    """An edit whose hash is recomputed: only the schema checks can catch it."""
    d = json.loads(text)
    fn(d)
    d["sha256"] = content_hash(d)
    return json.dumps(d)


def test_the_document_carries_its_schema_and_hash(setting):
    _, result, text = setting
    d = json.loads(text)
    assert d["version"] == FORMAT_VERSION == 4
    assert d["schema"] == result.schema.to_dict()
    assert d["sha256"] == content_hash(d) and len(d["sha256"]) == 64
    back = CounterfactualResult.from_json(text)
    assert back.to_json() == text


def _first_cf(d):  # type: ignore[no-untyped-def]
    return d["counterfactuals"]["rows"][0]


DAMAGE = {
    # the reproductions of the issue (each loaded before)
    "missing feature": (
        lambda d: _first_cf(d).pop("duration_months"),
        r"lacks the features \['duration_months'\]",
    ),
    "7.5 in an integer column": (
        lambda d: _first_cf(d).update(duration_months=7.5),
        "integer but holds 7.5",
    ),
    "unknown category": (lambda d: _first_cf(d).update(housing="castle"), "'castle'"),
    "constraints naming unknown features": (
        lambda d: d.update(constraints={"immutable": ["salary"]}),
        "salary",
    ),
    # more of the same kind
    "extra feature": (
        lambda d: _first_cf(d).update(salary=3),
        r"features \['salary'\] that are not in the schema",
    ),
    "text in a numeric column": (lambda d: _first_cf(d).update(age="old"), "must be a number"),
    "boolean in a numeric column": (lambda d: _first_cf(d).update(age=True), "must be a number"),
    "changed value outside the domain": (
        lambda d: _first_cf(d).update(credit_amount=1e9),
        "outside the feature's domain",
    ),
    "counterfactual of an unknown query": (
        lambda d: d["counterfactuals"]["index"][0].__setitem__(0, 123456),
        "belongs to no query",
    ),
    "negative rank": (
        lambda d: d["counterfactuals"]["index"][0].__setitem__(1, -1),
        "rank must be an integer",
    ),
    "duplicate rank": (
        lambda d: d["counterfactuals"]["index"].__setitem__(1, d["counterfactuals"]["index"][0]),
        "repeat",
    ),
    "unknown target": (lambda d: d["target"].__setitem__(0, 7), "not one of the classes"),
    "boolean target": (lambda d: d["target"].__setitem__(0, True), "boolean"),
    "confidence above 1": (
        lambda d: d["confidence"].__setitem__(0, 1.5),
        r"'confidence'\[0\] must be a number in \[0, 1\]",
    ),
    "negative runtime": (lambda d: d["runtime"].__setitem__(0, -1.0), "'runtime'"),
    "empty method": (lambda d: d.update(method=" "), "'method' is empty"),
    "missing hash": (lambda d: d.pop("sha256"), "key 'sha256' is missing"),
}


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_damage_is_named_even_with_a_matching_hash(setting, case):
    _, _, text = setting
    damage, message = DAMAGE[case]
    with pytest.raises(ValidationError, match=message):
        CounterfactualResult.from_json(
            _resealed(text, damage) if case != "missing hash" else _edit(text, damage)
        )


def test_a_failed_query_cannot_have_counterfactuals(setting):
    _, _, text = setting

    def fail_first(d):  # type: ignore[no-untyped-def]
        q = d["counterfactuals"]["index"][0][0]
        d["status"][d["queries"]["index"].index(q)] = "failed"

    with pytest.raises(ValidationError, match="status is 'failed'"):
        CounterfactualResult.from_json(_resealed(text, fail_first))


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d.update(method="macee"),  # a wrong method name
        lambda d: _first_cf(d).update(duration_months=_first_cf(d)["duration_months"] + 1),
        lambda d: d["status"].__setitem__(
            0, "optimal" if d["status"][0] != "optimal" else "feasible"
        ),
        lambda d: d["params"].update(time_limit=99),
    ],
)
def test_any_edit_is_caught_by_the_hash(setting, edit):
    _, _, text = setting
    with pytest.raises(ValidationError, match=r"does not match its sha256.*verify=False"):
        CounterfactualResult.from_json(_edit(text, edit))


def test_no_single_bit_flip_loads_changed_data(setting):
    """Of 300 single-bit flips 159 loaded, 100 of them with changed data; now a flip is
    either an error or leaves the data as written."""
    _, _, text = setting
    raw = text.encode()
    rng = random.Random(29)
    loaded = 0
    for _ in range(300):
        flipped = bytearray(raw)
        flipped[rng.randrange(len(raw))] ^= 1 << rng.randrange(8)
        try:
            back = CounterfactualResult.from_json(bytes(flipped))
        except ValidationError:
            continue
        loaded += 1
        assert back.to_json() == text
    assert loaded <= 30  # only flips that JSON reads as the same document (1e5 / 1E5)


def test_an_edited_file_loads_on_purpose_and_is_reverified(setting):
    model, result, text = setting
    with pytest.raises(ValidationError, match=r"only with the model"):
        CounterfactualResult.from_json(text, verify=False)
    note = _edit(text, lambda d: d["params"].update(note="checked by hand"))
    back = CounterfactualResult.from_json(note, verify=False, model=model)
    assert back.params["note"] == "checked by hand" and back.model.model is model  # adapted
    assert back.confidence.round(9).tolist() == result.confidence.round(9).tolist()


def test_reverification_names_counterfactuals_that_fail(setting):
    model, result, text = setting
    row = json.loads(text)["counterfactuals"]["rows"][0]
    q, r = result.counterfactuals.index[0]
    # back to the query's own values: the model no longer predicts the target
    query = result.queries.loc[q]

    def undo(d):  # type: ignore[no-untyped-def]
        d["counterfactuals"]["rows"][0] = {
            k: (v.item() if hasattr(v, "item") else v) for k, v in query.items()
        }

    with pytest.raises(
        ValidationError, match=rf"\(query {int(q)!r}, rank {int(r)}\): the model predicts"
    ):
        CounterfactualResult.from_json(_edit(text, undo), verify=False, model=model)
    # an immutable feature changed (age is immutable in this result)
    aged = _edit(
        text,
        lambda d: d["counterfactuals"]["rows"][0].update(
            age=row["age"] + 1 if row["age"] < 75 else 70
        ),
    )
    with pytest.raises(ValidationError, match="immutable age"):
        CounterfactualResult.from_json(aged, verify=False, model=model)


def test_a_version_2_document_without_hash_still_loads(setting):
    _, result, text = setting
    d = json.loads(text)
    d["version"] = 2
    for key in set(d) - FORMAT_KEYS[2]:  # the keys that came with later formats
        d.pop(key)
    back = CounterfactualResult.from_json(json.dumps(d))
    assert back.status.tolist() == result.status.tolist()
    assert not back.integrity.verified and back.integrity.format_version == 2
    assert back.describe().startswith("Unverified: result read from a format-2 file")
