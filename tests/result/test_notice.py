"""Reasons for an adverse-action notice, from the counterfactual: a known answer on a
linear model."""

from __future__ import annotations

import pandas as pd
import pytest
from _linear import linear_problem

import counterfact as cf


@pytest.fixture(scope="module")
def linear():
    """Approval rises with income, falls with debt; tenure matters little."""
    return linear_problem(tenure_weight=0.01)


def test_reasons_are_the_changed_features_ordered_by_what_each_closes(linear):
    data, model = linear
    x = pd.DataFrame({"income": [30], "debt": [40], "tenure": [5]})
    r = (
        cf.MACE(norm="l1", time_limit=20)
        .fit(model, data)
        .explain(x, requirements=cf.Requirements(min_probability=0.7))
    )
    table = r.reasons(0)
    changed = {c.feature for c in r.changes(0)}
    assert set(table["feature"]) == changed and len(table) <= 4
    # known answer: each reason's gain is the model's own probability with that one change
    col = model.classes_.tolist().index(1)
    base = model.predict_proba(x)[0, col]
    for _, row in table.iterrows():
        one = x.copy()
        one[row["feature"]] = row["needed"]
        assert row["closes"] == pytest.approx(model.predict_proba(one)[0, col] - base)
        assert row["current"] == x.loc[0, row["feature"]]
    assert table["closes"].is_monotonic_decreasing
    assert (
        "tenure" not in table["feature"].tolist()[:1]
    )  # the weakest lever is never the first reason


def test_the_notice_states_the_guarantee_and_the_margin(linear):
    data, model = linear
    x = pd.DataFrame({"income": [30], "debt": [40], "tenure": [5]})
    r = (
        cf.MACE(norm="l1", time_limit=20)
        .fit(model, data)
        .explain(x, requirements=cf.Requirements(min_probability=0.7, regions=True))
    )
    text = r.notice(0)
    assert text.startswith("Principal reasons")
    assert "at least 0.7" in text
    # the guarantee names the measure in words, never the certificate's raw numbers
    assert "MACE: proven: no answer with fewer changes or smaller moves" in text
    assert "Smaller means fewer changes or smaller moves, counting 1 per changed feature" in text
    assert "closer" not in text and "costs less than" not in text
    assert "would also have sufficed" in text  # the region, in words
    page = r.notice(0, as_html=True)
    assert page.count("<li>") == len(r.reasons(0)) and "<script" not in page
    heuristic = cf.NearestObservable().fit(model, data).explain(x)
    said = heuristic.notice(0)
    assert "not proven: an answer with fewer changes or smaller moves may exist" in said or (
        "nearest observed row" in said and "smaller meaning fewer changes or smaller" in said
    )


def test_no_counterfactual_no_reasons(linear):
    data, model = linear
    x = pd.DataFrame({"income": [30], "debt": [40], "tenure": [5]})
    r = (
        cf.MACE(time_limit=20)
        .fit(model, data)
        .explain(x, constraints=cf.Constraints(immutable=["income", "debt", "tenure"]))
    )
    with pytest.raises(cf.ValidationError, match="no counterfactual"):
        r.reasons(0)
    with pytest.raises(cf.ValidationError, match="max_reasons"):
        cf.MACE(time_limit=20).fit(model, data).explain(x).reasons(0, max_reasons=0)
