"""A saved global recourse says only what holds: its content is sealed by a hash, a lowered
format version is refused, and with the model and the population every cell that says an
action works is re-derived (issue 36)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import counterfact as cf
from counterfact.exceptions import ValidationError
from counterfact.recourse import ActionSearch, Statistics
from counterfact.recourse._global._result import FORMAT_KEYS, VERSION
from counterfact.result._json import content_hash


@pytest.fixture(scope="module")
def german():
    data = cf.datasets.load("german_credit")
    # the features only time moves may rise here, so that nearest observed rows are admissible
    rising = {f.name: "increasing" for f in data.schema if f.actionability == "time"}
    data = data.with_schema(data.schema.with_actionability(**rising))
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    method = cf.NearestObservable().fit(model, train)
    X = test.X.iloc[:60]
    g = cf.global_recourse(
        method,
        X,
        max_actions=2,
        data=test,
        statistics=Statistics(n_bootstrap=50, min_group_size=5),
        search=ActionSearch(max_candidates=30),
    )
    assert 0 < g.n_covered < g.n_rejected  # someone is left for the edit to "cover"
    return model, X, g, g.to_json()


def _edit(text: str, fn, *, reseal: bool = False) -> str:  # type: ignore[no-untyped-def]
    d = json.loads(text)
    fn(d)
    if reseal:
        d["sha256"] = content_hash(d)
    return json.dumps(d)


def _cover_someone(d):  # type: ignore[no-untyped-def]
    """The issue's edit: one uncovered rejected person said to be covered by A1."""
    t = d["per_row"]["columns"]
    k = next(
        i for i, (r, c) in enumerate(zip(t["rejected"], t["covered"], strict=True)) if r and not c
    )
    t["works:A1"][k], t["covered"][k], t["action"][k] = True, True, "A1"
    t["n_working"][k] += 1
    return d["per_row"]["index"][k]


def test_round_trip_and_the_hash(german):
    model, X, g, text = german
    d = json.loads(text)
    assert d["version"] == VERSION == 2 and d["sha256"] == content_hash(d)
    back = cf.GlobalRecourse.from_json(text)
    assert back.to_json() == text and back.integrity.verified_by == ("sha256",)
    pd.testing.assert_frame_equal(back.summary(), g.summary())
    checked = cf.GlobalRecourse.from_json(text, model=model, data=X)
    assert checked.integrity.verified_by == ("sha256", "model")
    with pytest.raises(ValidationError, match="does not match its sha256"):
        cf.GlobalRecourse.from_json(_edit(text, _cover_someone))


def test_a_flipped_cell_is_refused(german):
    model, X, _, text = german

    # the hash sealed again: the table no longer agrees with itself
    def flip(d):  # type: ignore[no-untyped-def]
        t = d["per_row"]["columns"]
        k = next(
            i
            for i, (r, c) in enumerate(zip(t["rejected"], t["covered"], strict=True))
            if r and not c
        )
        t["works:A1"][k] = True

    flipped = _edit(text, flip, reseal=True)
    with pytest.raises(ValidationError, match="contradict the table itself"):
        cf.GlobalRecourse.from_json(flipped)
    # every column edited to agree: only the model can tell
    consistent = _edit(text, _cover_someone, reseal=True)
    assert (
        cf.GlobalRecourse.from_json(consistent).coverage
        > json.loads(text)["summary"]["columns"]["coverage"][0]
    )
    with pytest.raises(ValidationError, match=r"A1 .* is said to work, but"):
        cf.GlobalRecourse.from_json(consistent, model=model, data=X)
    with pytest.raises(ValidationError, match=r"is said to work, but"):
        cf.GlobalRecourse.from_json(_edit(text, _cover_someone), verify=False, model=model, data=X)
    with pytest.raises(ValidationError, match="only with the model and the population"):
        cf.GlobalRecourse.from_json(_edit(text, _cover_someone), verify=False, model=model)


def test_a_lowered_version_is_refused_and_format_1_is_unverified(german):
    model, X, _, text = german
    with pytest.raises(ValidationError, match=r"format version 1, but carries keys .*'integrity'"):
        cf.GlobalRecourse.from_json(_edit(text, lambda d: d.update(version=1)))

    def as_format_1(d):  # type: ignore[no-untyped-def]
        d["version"] = 1
        for key in set(d) - FORMAT_KEYS[1]:
            d.pop(key)

    old = _edit(text, as_format_1)
    back = cf.GlobalRecourse.from_json(old)
    assert not back.integrity.verified
    assert back.findings()[0].startswith("Unverified: global recourse read from a format-1")
    assert cf.GlobalRecourse.from_json(old, model=model, data=X).integrity.verified_by == ("model",)


# ------------------------------------------------------------------ the audit's file
@pytest.fixture(scope="module")
def audit_text():
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    method = cf.NearestObservable().fit(model, train)
    a = cf.audit(method, test.X.iloc[:30], statistics=Statistics(n_bootstrap=50))
    return a, a.to_json()


def test_the_audit_is_sealed_and_cannot_be_lowered(audit_text):
    from counterfact.recourse._result import FORMAT_KEYS as AUDIT_KEYS

    a, text = audit_text
    back = cf.AuditResult.from_json(text)
    assert back.integrity.verified_by == ("sha256",) and back.to_json() == text
    pd.testing.assert_frame_equal(back.summary(), a.summary())

    def more_recourse(d):  # type: ignore[no-untyped-def]
        d["summary"]["columns"]["n_recourse"][0] += 1

    with pytest.raises(ValidationError, match="does not match its sha256"):
        cf.AuditResult.from_json(_edit(text, more_recourse))
    edited = cf.AuditResult.from_json(_edit(text, more_recourse), verify=False)
    assert not edited.integrity.verified and "edited" in edited.integrity.describe("audit")
    with pytest.raises(ValidationError, match=r"format version 1, but carries keys"):
        cf.AuditResult.from_json(_edit(text, lambda d: d.update(version=1)))

    def as_format_1(d):  # type: ignore[no-untyped-def]
        d["version"] = 1
        for key in set(d) - AUDIT_KEYS[1]:
            d.pop(key)

    assert not cf.AuditResult.from_json(_edit(text, as_format_1)).integrity.verified


def _drop_uncovered(d):  # type: ignore[no-untyped-def]
    """Every rejected person no action helps taken out of the table: 100 % coverage."""
    t = d["per_row"]
    keep = [
        i
        for i, (r, c) in enumerate(
            zip(t["columns"]["rejected"], t["columns"]["covered"], strict=True)
        )
        if c or not r
    ]
    t["index"] = [t["index"][i] for i in keep]
    t["columns"] = {k: [v[i] for i in keep] for k, v in t["columns"].items()}


def test_a_table_that_leaves_people_out_is_refused_with_the_population(german):
    model, X, g, text = german
    assert g.coverage < 1
    thinner = _edit(text, _drop_uncovered, reseal=True)  # consistent, and sealed again
    assert cf.GlobalRecourse.from_json(thinner).coverage == 1.0  # the table alone cannot tell
    with pytest.raises(ValidationError, match=r"leaves out \d+ people of data .* rejected"):
        cf.GlobalRecourse.from_json(thinner, model=model, data=X)
    with pytest.raises(ValidationError, match=r"leaves out"):
        cf.GlobalRecourse.from_json(_edit(text, _drop_uncovered), verify=False, model=model, data=X)


def test_an_edited_file_says_its_costs_were_not_rechecked(german):
    model, X, _, text = german

    def cheaper(d):  # type: ignore[no-untyped-def]
        t = d["per_row"]["columns"]
        k = t["covered"].index(True)
        t["cost"][k] = 0.01

    back = cf.GlobalRecourse.from_json(_edit(text, cheaper), verify=False, model=model, data=X)
    assert any("costs" in n and "not re-checked" in n for n in back.integrity.notes)
    sealed = cf.GlobalRecourse.from_json(text, model=model, data=X)
    assert not any("costs" in n for n in sealed.integrity.notes)
