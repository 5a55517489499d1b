"""Options, not copies: the dominance rule and the same-change step of the measure on
hand-made answers of one German Credit applicant, the reason a query gives for fewer
answers than asked, the copies found by certified regions, a region in words, and
the rule applied through ``explain`` to a method that pads its answers."""

from __future__ import annotations

from dataclasses import make_dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.constraints._kinds import CONSTRAINT_KINDS
from counterfact.methods import Candidates, CounterfactualMethod, MethodTags, Query
from counterfact.methods._pipeline._diversity import (
    SAME_CHANGE_SHARE,
    OptionArrays,
    changed_mask,
    dominance,
    dominated_rows,
    pick_options,
    signed_moves,
)
from counterfact.methods._pipeline._select import (
    Answers,
    Selection,
    fewer_reason,
    without_region_copies,
)
from counterfact.result import Region
from counterfact.testing._conformance import option_faults


@pytest.fixture(scope="module")
def credit():
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    x = test.X.iloc[0].copy()
    x["duration_months"], x["credit_amount"] = 36, 3446.0
    x["other_debtors"], x["savings"] = "none", "< 100 DM"
    return train, x


def _answers(credit, changes: list[dict[str, Any]], proba: list[float]) -> OptionArrays:
    """The options arrays of answers given as their changes to the applicant."""
    train, x = credit
    schema = train.schema
    rows = schema.coerce(pd.DataFrame([{**x.to_dict(), **c} for c in changes]))
    values = np.zeros((len(rows), len(schema)), dtype=object)
    for j, f in enumerate(schema):
        if f.is_categorical:
            values[:, j] = rows[f.name].astype(object).to_numpy()
    cost = cf.Costs().bind(schema, train.X).evaluate(x, rows, per_feature=True)
    return OptionArrays(
        changed_mask(schema, rows, x),
        signed_moves(schema, rows, x),
        values,
        np.asarray(proba, dtype=float),
        cost,
    )


def test_an_unnecessary_change_is_dominated_whichever_comes_first(credit):
    term = {"duration_months": 33}
    padded = {**term, "credit_amount": 3334.0}
    o = _answers(credit, [padded, term], [0.62, 0.62])
    assert dominance(o).tolist() == [[False, False], [True, False]]
    assert pick_options(o, 3) == ([1], 1, 0)


def test_a_move_further_is_dominated_unless_it_is_more_likely(credit):
    o = _answers(credit, [{"duration_months": 33}, {"duration_months": 30}], [0.62, 0.62])
    assert dominated_rows(o).tolist() == [False, True]
    # more likely: not dominated, and 3 months (half a MAD) apart: a second option
    o = _answers(credit, [{"duration_months": 33}, {"duration_months": 30}], [0.62, 0.65])
    assert pick_options(o, 3) == ([0, 1], 0, 0)
    # one month further (a sixth of a MAD, below a quarter of the cost): a copy
    o = _answers(credit, [{"duration_months": 33}, {"duration_months": 32}], [0.62, 0.63])
    cost = o.total
    assert abs(cost[1] - cost[0]) < SAME_CHANGE_SHARE * cost[0]
    assert pick_options(o, 3) == ([0], 0, 1)


def test_other_directions_and_categories_are_options(credit):
    o = _answers(
        credit,
        [{"credit_amount": 2900.0}, {"credit_amount": 3900.0}, {"other_debtors": "guarantor"}],
        [0.61, 0.61, 0.61],
    )
    assert not dominance(o).any()
    o = _answers(
        credit, [{"other_debtors": "guarantor"}, {"other_debtors": "co-applicant"}], [0.6, 0.6]
    )
    assert not dominance(o).any() and pick_options(o, 2)[0] == [0, 1]


def test_ordinal_moves_compare_by_rank(credit):
    one, two = {"savings": "100 <= ... < 500 DM"}, {"savings": "500 <= ... < 1000 DM"}
    o = _answers(credit, [two, one], [0.7, 0.7])
    assert dominated_rows(o).tolist() == [True, False]
    # a level down is another direction
    o = _answers(credit, [one, {"savings": "unknown / no savings account"}], [0.7, 0.7])
    assert not dominance(o).any()


def test_of_two_equal_answers_the_methods_earlier_is_kept(credit):
    same = {"duration_months": 30}
    o = _answers(credit, [same, same], [np.nan, np.nan])  # probabilities unknown: equal
    assert dominated_rows(o).tolist() == [False, True]


def test_fewer_answers_say_why_and_claim_a_proof_only_when_given():
    d = {"n_dominated": 2, "n_too_similar": 1, "n_rejected_model": 3}
    why = fewer_reason(1, 3, d)
    assert why.startswith("1 of 3: no other option") and "2 were dominated" in why
    assert "1 was a copy of these" in why and "3 candidates failed verification" in why
    assert "proved" not in why
    assert fewer_reason(3, 3, d) is None and fewer_reason(0, 3, d) is None
    assert "found no other valid answer" in fewer_reason(2, 3, {})
    proven = fewer_reason(2, 3, {"alternatives_exhausted": True})
    assert proven == (
        "2 of 3: the method proved that every other answer repeats the changes of one of "
        "these, each as far or further (up to a step)"
    )


def test_an_answer_inside_an_earlier_region_is_a_copy(credit):
    train, x = credit
    schema = train.schema
    term = {**x.to_dict(), "duration_months": 33}
    padded = {**term, "credit_amount": 3334.0}
    other = {**x.to_dict(), "other_debtors": "guarantor"}
    frame = schema.coerce(pd.DataFrame([term, padded, other]))
    frame.index = pd.MultiIndex.from_tuples([(7, 0), (7, 1), (7, 2)], names=["query", "rank"])
    fixed = {n: x[n] for n in schema.names if n != "duration_months"}
    box = Region({"duration_months": (4.0, 33.0)}, fixed, True, "proven")
    padded_box = Region(
        {"duration_months": (4.0, 33.0), "credit_amount": (1292.0, 3773.0)},
        {n: x[n] for n in schema.names if n not in ("duration_months", "credit_amount")},
        True,
        "proven",
    )
    sel = Selection([10, 11, 12], "feasible", {})
    # the regions phase's record: any dataclass with ``computed`` will do
    found = make_dataclass("Found", ["computed"])({(7, 0): box, (7, 1): padded_box})
    answers, kept = without_region_copies(Answers([sel], frame, [10, 11, 12]), found, 3)
    assert answers.rows == [10, 12] and sel.chosen == [10, 12]
    assert list(answers.frame.index) == [(7, 0), (7, 1)]
    assert answers.frame.iloc[1]["other_debtors"] == "guarantor"
    assert kept.computed == {(7, 0): box}
    assert sel.diagnostics["n_region_copies"] == 1
    assert (
        sel.diagnostics["reason"].startswith("2 of 3: ")
        and "certified region" in (sel.diagnostics["reason"])
    )


def test_a_region_in_words(credit):
    train, _ = credit
    schema = train.schema
    region = Region(
        {"duration_months": (4.0, 33.0), "credit_amount": (1292.0, 3773.0)},
        {},
        True,
        "proven",
        domain={"duration_months": (4.0, 72.0), "credit_amount": (250.0, 18424.0)},
    )
    text = "any duration months up to 33 months with credit amount between 1,292 and 3,773 DM"
    assert region.sentence(schema) == text
    region = Region(
        {"age": (30.0, 75.0), "other_debtors": frozenset({"guarantor", "co-applicant"})},
        {},
        False,
        "sampled",
        n_checked=256,
        domain={"age": (19.0, 75.0)},
    )
    assert region.sentence(schema) == (
        "any age from 30 years with other debtors 'co-applicant' or 'guarantor' "
        "(checked on 256 samples, not proven)"
    )


class Padder(CounterfactualMethod):
    """Proposes a valid answer twice: first padded with a change that lowers the
    probability of the target, then as it is."""

    name = "padder"
    tags = MethodTags(
        display_name="padder",
        summary="pads an answer with an unnecessary change",
        constraints=frozenset(CONSTRAINT_KINDS) - {"causal"},
    )
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {}

    def __init__(self, *, random_state: int | None = None) -> None:
        self.random_state = random_state

    def _explain_one(self, query: Query) -> Candidates:
        a = query.x.copy()
        a["other_debtors"], a["savings"], a["duration_months"] = "guarantor", ">= 1000 DM", 6
        pads = []
        for name, value in (("telephone", "yes"), ("telephone", "none"), ("housing", "rent")):
            if a[name] != value:
                pads.append(a.copy())
                pads[-1][name] = value
        frame = pd.DataFrame([a, *pads]).reset_index(drop=True)
        p = self.model_.predict_proba(frame)[:, 1]
        worse = 1 + int(np.argmin(p[1:]))  # the padding that lowers P(target) most
        picks = [worse, 0] if p[worse] < p[0] else [0]
        return Candidates(frame.iloc[picks].reset_index(drop=True), "feasible")


def test_explain_drops_a_padded_answer_and_says_why():
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    rows = cf.rows_to_explain(model, test).head(4)
    m = Padder(random_state=0).fit(model, train)
    r = m.explain(rows, n_counterfactuals=2)
    # the queries the answer is valid for, and padded
    answered = [q for q in rows.index if r.found[q] and r.diagnostics.loc[q, "n_proposed"] == 2]
    assert len(answered) >= 2
    for q in answered:
        cfs = r.for_query(q)
        assert len(cfs) == 1
        changed = [c.feature for c in r.changes(q)]
        assert sorted(changed) == ["duration_months", "other_debtors", "savings"]
        assert r.diagnostics.loc[q, "n_dominated"] == 1
        why = r.reason[q]
        assert why.startswith("1 of 2: no other option") and "1 was dominated" in why
    padded = m.explain(rows, n_counterfactuals=2, alternatives="method")
    assert (padded.found[answered] == 2).all()
    # the conformance check's own reading of the rule finds the padded copies
    faults = option_faults(padded, cf.Costs().bind(train.schema, train.X))
    assert len(faults) == len(answered) and all("dominates" in f for f in faults)
