"""A saved result says only what holds: a newer document whose version was lowered is
refused, an old document without a hash loads as unverified, and a model re-checks
every claim (the margin, the trees' votes, the other models, the regions) and says
which it cannot (the proofs) (issue 36)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.dummy import DummyClassifier

import counterfact as cf
from counterfact.exceptions import ValidationError
from counterfact.result import CounterfactualResult
from counterfact.result._json import FORMAT_KEYS


def _free_split() -> tuple[cf.Dataset, cf.Dataset]:
    """German Credit with every feature free, split 80/20."""
    data = cf.datasets.load("german_credit")
    data = data.with_schema(
        data.schema.with_actionability(**dict.fromkeys(data.schema.names, "free"))
    )
    return data.split(test_size=0.2, random_state=0)


@pytest.fixture(scope="module")
def setting():
    train, test = _free_split()
    model = cf.models.fit(train, "lr", random_state=0)
    other = cf.models.retrained(model, train, n=1, random_state=1)[0]
    rows = cf.rows_to_explain(model, test.X, data=train).iloc[:2]
    need = cf.Requirements(min_probability=0.55, regions=True, robust_to=[other])
    result = cf.NearestObservable(random_state=0).fit(model, train).explain(rows, requirements=need)
    assert len(result.regions) == len(result.counterfactuals) >= 1
    assert all(r.certified for r in result.regions.values())
    return model, other, train, result, result.to_json()


def _edit(text: str, fn) -> str:  # type: ignore[no-untyped-def]
    d = json.loads(text)
    fn(d)
    return json.dumps(d)


def _margin_099(d):  # type: ignore[no-untyped-def]
    """The issue's edit: more credit, and a margin the model does not give."""
    d["counterfactuals"]["rows"][0]["credit_amount"] += 5000
    d["requirements"]["min_probability"] = 0.99
    d["regions"] = d["regions"][1:]  # the first answer's region no longer surrounds it


def test_a_downgraded_document_is_refused_naming_the_key(setting):
    *_, text = setting

    def downgrade(d):  # type: ignore[no-untyped-def]
        _margin_099(d)
        d["version"] = 2

    with pytest.raises(
        ValidationError, match=r"format version 2, but carries keys .*'costs': since format 3"
    ):
        CounterfactualResult.from_json(_edit(text, downgrade))
    to_3 = _edit(text, lambda d: d.update(version=3))
    with pytest.raises(ValidationError, match=r"'integrity': since format 4 or later"):
        CounterfactualResult.from_json(to_3)


def _as_format_2(d):  # type: ignore[no-untyped-def]
    """A document as format 2 wrote it: none of the keys that came later."""
    d["version"] = 2
    for key in set(d) - FORMAT_KEYS[2]:
        d.pop(key)


def test_an_old_document_is_unverified_until_a_model_rechecks_it(setting):
    model, _, _, result, text = setting
    old = _edit(text, _as_format_2)
    back = CounterfactualResult.from_json(old)
    assert not back.integrity.verified and back.integrity.verified_by == ()
    assert back.describe().startswith("Unverified: result read from a format-2 file")
    checked = CounterfactualResult.from_json(old, model=model)
    assert checked.integrity.verified_by == ("model",)
    assert "Unverified" not in checked.describe()
    # an edited old document: the model's probability is the one shown, and a wrong answer
    # is refused
    lied = _edit(old, lambda d: d["confidence"].__setitem__(0, 0.99))
    assert CounterfactualResult.from_json(lied, model=model).confidence.iloc[0] == pytest.approx(
        result.confidence.iloc[0]
    )


def test_an_edited_margin_is_refused(setting):
    model, other, *_, text = setting
    with pytest.raises(ValidationError, match=r"below the min_probability 0.99"):
        CounterfactualResult.from_json(
            _edit(text, _margin_099), verify=False, model=model, robust_to=[other]
        )


def _stretch(d):  # type: ignore[no-untyped-def]
    """A region stretched to the whole domain of every numeric feature it bounds."""
    region = d["regions"][0][2]
    for name, bound in region["bounds"].items():
        if isinstance(bound, list):
            region["bounds"][name] = region["domain"].get(name, bound)


def test_a_stretched_region_is_refused(setting):
    model, other, *_, text = setting
    with pytest.raises(ValidationError, match=r"the region of \(query .*points checked fail"):
        CounterfactualResult.from_json(
            _edit(text, _stretch), verify=False, model=model, robust_to=[other]
        )


def _first_region(d):  # type: ignore[no-untyped-def]
    return d["regions"][0][2]


def _moved_person(d):  # type: ignore[no-untyped-def]
    """A region that holds another person's values (a fixed feature changed)."""
    fixed = _first_region(d)["fixed"]
    name = next(k for k, v in fixed.items() if isinstance(v, (int, float)))
    fixed[name] = fixed[name] + 7


def _answer_outside(d):  # type: ignore[no-untyped-def]
    """A region shrunk to a point that is not its counterfactual."""
    bounds = _first_region(d)["bounds"]
    name = next(k for k, b in bounds.items() if isinstance(b, list))
    bounds[name] = [bounds[name][0] - 2, bounds[name][0] - 1]


def _reversed(d):  # type: ignore[no-untyped-def]
    bounds = _first_region(d)["bounds"]
    name = next(k for k, b in bounds.items() if isinstance(b, list))
    bounds[name] = [bounds[name][1] + 1, bounds[name][0]]


def _no_bounds_key(d):  # type: ignore[no-untyped-def]
    del _first_region(d)["bounds"]


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (_moved_person, r"cannot stand around its counterfactual: it holds \w+ at"),
        (_answer_outside, r"the counterfactual it surrounds lies outside it"),
        (_reversed, r"a reversed range"),
        (_no_bounds_key, r"is malformed \(KeyError"),
    ],
)
def test_a_region_that_cannot_stand_for_its_answer_is_refused(setting, edit, said):
    """Whatever the model says of its points, a region must hold the query's other values
    and contain its own counterfactual, with ranges that are ranges."""
    model, other, *_, text = setting
    with pytest.raises(ValidationError, match=r"the region of \(query .*" + said):
        CounterfactualResult.from_json(
            _edit(text, edit), verify=False, model=model, robust_to=[other]
        )


def test_unprotected_claims_are_dropped_and_said(setting):
    model, other, _, result, text = setting
    note = _edit(text, lambda d: d["params"].update(note="checked by hand"))
    back = CounterfactualResult.from_json(note, verify=False, model=model)
    assert back.integrity.verified_by == ("model",)
    # the proof is not protected by a hash any more: checked, not certified
    assert back.regions.keys() == result.regions.keys()
    assert not any(r.certified for r in back.regions.values())
    assert all(r.n_checked > 200 for r in back.regions.values())
    # the other model was not given: that claim is "not re-checked", and says so
    assert any("other model" in n and "not re-checked" in n for n in back.integrity.notes)
    assert "not re-checked" in back.describe()
    with_other = CounterfactualResult.from_json(note, verify=False, model=model, robust_to=[other])
    assert not any("other model" in n for n in with_other.integrity.notes)


def test_the_other_models_are_rechecked(setting):
    model, other, train, _, text = setting
    never = DummyClassifier(strategy="constant", constant=0).fit(train.X, train.y)
    with pytest.raises(ValidationError, match=r"robust_to\[0\] predicts 0, not the target 1"):
        CounterfactualResult.from_json(text, model=model, robust_to=[never])
    with pytest.raises(ValidationError, match=r"robust_to lists 2 models.*1 other models"):
        CounterfactualResult.from_json(text, model=model, robust_to=[other, other])
    with pytest.raises(ValidationError, match=r"needs model="):
        CounterfactualResult.from_json(text, robust_to=[other])


def test_a_genuine_document_keeps_its_claims(setting):
    model, other, _, result, text = setting
    back = CounterfactualResult.from_json(text, model=model, robust_to=[other])
    assert back.integrity.verified_by == ("sha256", "model") and not back.integrity.notes
    assert back.regions == result.regions
    assert CounterfactualResult.from_json(text).to_json() == text
    # re-saving keeps what vouched for it: an unverified result stays unverified
    old = CounterfactualResult.from_json(_edit(text, _as_format_2))
    again = CounterfactualResult.from_json(old.to_json())
    assert not again.integrity.verified and again.describe().startswith("Unverified")


@pytest.fixture(scope="module")
def forest_setting():
    train, test = _free_split()
    forest = cf.models.fit(train, "rf", random_state=0, n_estimators=15, max_depth=4)
    rows = cf.rows_to_explain(forest, test.X, data=train).iloc[:2]
    need = cf.Requirements(min_vote_share=0.6)
    mace = cf.MACE(random_state=0, time_limit=20).fit(forest, train)
    result = mace.explain(rows, requirements=need)
    assert len(result.counterfactuals) >= 1
    return forest, result, result.to_json()


def test_an_edited_vote_share_is_refused_counted_from_the_trees(forest_setting):
    forest, result, text = forest_setting
    trees, Xt = forest.steps[-1][1], forest[:-1].transform(result.counterfactuals)
    good = list(trees.classes_).index(1)  # each tree predicts a class's position
    votes = sum(np.asarray(t.predict(Xt)) == good for t in trees.estimators_)
    share = (int(votes.min()) + 1) / 15  # one tree more than the least voted answer has
    assert share <= 1
    raised = _edit(text, lambda d: d["requirements"].update(min_vote_share=share))
    with pytest.raises(ValidationError, match=rf"{int(votes.min())} of 15 trees of the model"):
        CounterfactualResult.from_json(raised, verify=False, model=forest)
    kept = _edit(text, lambda d: d["params"].update(note="checked by hand"))
    back = CounterfactualResult.from_json(kept, verify=False, model=forest)
    assert back.requirements["min_vote_share"] == 0.6


def test_an_edited_file_says_its_proofs_were_not_rechecked(forest_setting):
    forest, result, text = forest_setting
    proven = int(result.status.isin(["optimal", "infeasible"]).sum())
    assert proven >= 1
    kept = _edit(text, lambda d: d["params"].update(note="checked by hand"))
    back = CounterfactualResult.from_json(kept, verify=False, model=forest)
    assert any(
        f"{proven} row" in n and "proofs were not re-checked" in n for n in back.integrity.notes
    )
    # a genuine file's hash vouches for its proofs: no such note
    sealed = CounterfactualResult.from_json(text, model=forest)
    assert not any("proofs" in n for n in sealed.integrity.notes)
