"""What one answer's texts say, checked from the outside: a notice that lists fewer changes
than the answer makes says so; a saved result's notice reads the same with its model and
says what its order means without; a row with no answer names what it was held to; a
solver's margin is said with the score it is on; waiting has its price in words."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest
from _linear import linear_problem

import counterfact as cf
from counterfact.methods._pipeline._prepare import _lower_first
from counterfact.result._text import _margin_words


@pytest.fixture(scope="module")
def linear():
    """Approval rises with income, falls with debt and rises a little with tenure."""
    data, model = linear_problem(tenure_weight=0.05)
    return data, model, cf.MACE(time_limit=20).fit(model, data)


@pytest.fixture(scope="module")
def spread(linear):
    """An answer that changes every feature: each capped below what it would need alone."""
    _, _, mace = linear
    x = pd.DataFrame({"income": [20], "debt": [45], "tenure": [0]})
    caps = cf.Constraints(ranges={"income": (20, 60), "debt": (20, 45)})
    result = mace.explain(x, constraints=caps)
    assert len(result.changes(0)) == 3, result.describe()
    return result


def test_a_notice_listing_fewer_changes_than_the_answer_makes_says_so(spread):
    text = spread.notice(0, max_reasons=1)
    assert "The answer makes 3 changes: this one and changes of " in text
    assert "only with all 3 together would the model's decision have been '1'" in text
    assert "With this change, the model's decision" not in text
    full = spread.notice(0)
    assert "With these changes together, the model's decision would have been '1'." in full


def test_a_saved_result_gives_the_same_notice_with_its_model(linear, spread):
    _, model, _ = linear
    again = cf.CounterfactualResult.from_json(spread.to_json(), model=model)
    assert again.notice(0) == spread.notice(0)
    bare = cf.CounterfactualResult.from_json(spread.to_json())
    assert "listed in the order of the data's features" in bare.notice(0)
    assert "listed in the order" not in spread.notice(0)


def test_a_row_with_no_answer_names_the_requirement_it_was_held_to(linear):
    _, _, mace = linear
    x = pd.DataFrame({"income": [20], "debt": [45], "tenure": [0]})
    frozen = cf.Constraints(immutable=["income", "debt"])
    result = mace.explain(x, constraints=frozen, requirements=cf.Requirements(min_probability=0.9))
    assert result.status[0] == "infeasible"
    assert "required: a probability of at least 0.9 for the target" in result.describe()


def test_a_solvers_margin_is_said_with_the_score_it_is_on():
    record = SimpleNamespace(margin_tolerance=-1e-4, threshold=0.9, margin_scale="logit")
    said = _margin_words(record)
    assert said == (
        ", among answers that pass the required probability 0.9 by a margin of more than "
        "0.0001 on the logit"
    )
    plain = SimpleNamespace(margin_tolerance=-1e-6, threshold=None, margin_scale="")
    assert _margin_words(plain).endswith("by a margin of more than 1e-06")


def test_waiting_has_its_price_in_the_measure_line(credit_mace):
    _, test, model, mace = credit_mace
    rows = test.X[model.predict(test.X) == 0].iloc[:2]
    advice = cf.Constraints(timeline=cf.datasets.timeline("german_credit", horizon=12))
    result = mace.explain(rows, constraints=advice)
    line = next(t for t in result.describe().splitlines() if t.startswith("Smaller means"))
    assert line.endswith("; each month of waiting costs 0.042.")
    answered = next(q for q in rows.index if result.found[q])
    assert "each month of waiting costs 0.042" in result.notice(answered)
    assert "waiting" not in mace.explain(rows).describe().split("\n")[0]


def test_a_reason_after_a_colon_continues_the_sentence():
    assert _lower_first("Feature 'x' must lie in [0, 1].") == "feature 'x' must lie in [0, 1]."
    assert _lower_first("A relation reads x.") == "a relation reads x."
    assert _lower_first("LOF needs rows.") == "LOF needs rows."


def test_the_notice_names_the_target_in_the_users_words(spread):
    text = spread.notice(0, target_label="approved")
    assert text.startswith("Principal reasons the application was not assigned to 'approved':")
    assert "'1'" not in text
