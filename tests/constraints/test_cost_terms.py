"""cf.Costs: evaluation against hand computations, forbidden moves as bounds, input errors."""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.constraints._costs import BoundCosts, FeatureCost, singular

INF = float("inf")


@pytest.fixture(scope="module")
def data() -> cf.Dataset:
    frame = pd.DataFrame(
        {
            "n": [1, 2, 2, 3, 10],
            "r": [0.5, 1.5, 2.5, 3.5, 4.5],
            "c": ["x", "y", "z", "x", "y"],
            "o": ["lo", "lo", "mid", "hi", "hi"],
            "y": [0, 1, 0, 1, 0],
        }
    )
    return cf.Dataset.from_frame(
        frame, target="y", kinds={"o": "ordinal"}, categories={"o": ["lo", "mid", "hi"]}
    )


def _row(data, **values):
    x = data.X.iloc[1].copy()
    for k, v in values.items():
        x[k] = v
    return x


def test_percentile_shift_matches_a_hand_computation(data):
    # n's distinct values 1, 2, 3, 10 hold 1, 2, 1, 1 of 5 rows: the 4 rows above the
    # lowest value are spread 2, 1, 1, so P = 0, 0.5, 0.75, 1 (the lowest value is no move)
    bound = cf.Costs(percentile={"n": 5.0}).bind(data.schema, data.X)
    assert bound.knots["n"] == ((1.0, 2.0, 3.0, 10.0), (0.0, 0.5, 0.75, 1.0))
    x = _row(data, n=2)
    rows = pd.DataFrame([_row(data, n=v) for v in (2, 3, 6, 0, 10, 1)])
    per = bound.evaluate(x, rows, per_feature=True)[:, data.schema.index("n")]
    p6 = 0.75 + (6 - 3) / (10 - 3) * 0.25
    assert per == pytest.approx([0.0, 5 * 0.25, 5 * (p6 - 0.5), 5 * 0.5, 5 * 0.5, 5 * 0.5])
    lowest_to_highest = bound.evaluate(_row(data, n=1), pd.DataFrame([_row(data, n=10)]))
    assert lowest_to_highest == pytest.approx([5.0])  # the weight is that whole move
    curve = bound.for_query(x)[data.schema.index("n")]
    assert math.isclose(float(curve.exact(6)), 5 * (p6 - 0.5), rel_tol=1e-12)
    assert not curve.convex  # a percentile curve is no convex function: solvers need segments


def test_weights_transitions_and_the_unlisted_rule(data):
    costs = cf.Costs(weights={"n": (2.0, 0.5), "c": 3.0}, transitions={"o": {("lo", "hi"): 4.0}})
    bound = costs.bind(data.schema, data.X)
    x = _row(data, n=2, r=1.5, c="y", o="lo")
    row = _row(data, n=5, r=3.5, c="x", o="mid")
    per = dict(
        zip(
            data.schema.names, bound.evaluate(x, row.to_frame().T, per_feature=True)[0], strict=True
        )
    )
    assert per["n"] == pytest.approx(2.0 * 3)
    # named nowhere: 1 for the change plus |change| / MAD (r's MAD: 1.0)
    assert per["r"] == pytest.approx(1.0 + 2.0 / 1.0)
    assert per["c"] == pytest.approx(3.0)
    # a transition left out: the default weight per rank moved (the ranks' MAD: 1), no charge
    assert per["o"] == pytest.approx(1.0)
    hi = _row(data, n=2, r=1.5, c="y", o="hi")
    assert bound.evaluate(x, hi.to_frame().T)[0] == pytest.approx(4.0)
    down = _row(data, n=1)
    assert bound.evaluate(_row(data, n=2), down.to_frame().T)[0] == pytest.approx(0.5)


def test_forbidden_moves_become_bounds(data):
    costs = cf.Costs(
        weights={"n": (INF, 1.0)}, transitions={"c": {("y", "z"): INF}}, missing="weight"
    )
    bound = costs.bind(data.schema, data.X)
    x = _row(data, n=2, c="y")
    b = bound.restrict(cf.Constraints().resolve(data.schema).for_query(x))
    assert b["n"].upper == 2 and b["n"].lower == 1
    assert b["c"].values == ("x", "y")
    assert bound.forbids
    strict = cf.Costs(transitions={"c": {("y", "x"): 1.0}}, missing="forbid").bind(
        data.schema, data.X
    )
    assert strict.restrict(cf.Constraints().resolve(data.schema).for_query(x))["c"].values == (
        "x",
        "y",
    )
    assert bound.evaluate(x, _row(data, n=3).to_frame().T)[0] == INF


def test_curve_interval_and_exact_agree(data):
    bound = cf.Costs(weights={"r": (1.0, 2.0)}, percentile={"r": 1.0}).bind(data.schema, data.X)
    c = bound.for_query(_row(data, r=2.0))[data.schema.index("r")]
    lo, hi = c.interval(1.5, -10.0, 10.0)
    assert c(np.array([lo, hi])) == pytest.approx([1.5, 1.5], rel=1e-6)
    for v in np.linspace(-1, 6, 15):
        assert float(c.exact(v)) == pytest.approx(float(c(v)), rel=1e-12, abs=1e-12)


def test_round_trip_and_words(data):
    costs = cf.Costs(
        weights={"n": (INF, 0.5)},
        transitions={"c": {("x", "y"): 2.0}},
        percentile=["r"],
        unit="months of saving",
        unit_scale=2.0,
    )
    bound = costs.bind(data.schema, data.X)
    back = BoundCosts.from_dict(bound.to_dict(), data.schema)
    x, rows = data.X.iloc[0], data.X.iloc[1:]
    np.testing.assert_array_equal(back.evaluate(x, rows), bound.evaluate(x, rows))
    assert bound.describe(1.49) == "about 3 months of saving"
    assert bound.describe(0.5) == "about 1 month of saving"  # one month, not "1 months"
    assert [singular(u) for u in ("hours", "USD", "DM", "ms", "class")] == [
        "hour",
        "USD",
        "DM",
        "ms",
        "class",
    ]
    assert cf.Costs().bind(data.schema, data.X).describe(0.41234) == "0.4123"


def test_range_l1_keeps_the_old_unlisted_rule(data):
    bound = cf.Costs.preset("range-l1").bind(data.schema)
    x = _row(data, r=1.5)
    per = bound.evaluate(x, _row(data, r=3.5).to_frame().T, per_feature=True)[0]
    assert per[data.schema.index("r")] == pytest.approx(2.0 / data.schema["r"].range)


def test_a_change_charge_is_a_jump_at_the_query():
    c = FeatureCost("x", "curve", 2.0, (2.0,), (0.0,), left=1.0, right=0.5, change=1.0)
    assert c(np.array([2.0, 2.0 + 1e-6, 3.0, 1.0])) == pytest.approx([0.0, 1.0, 1.5, 2.0])
    assert c.exact(Fraction(2)) == 0
    assert c.exact(Fraction(2) + Fraction(1, 10**9)) == 1 + Fraction(1, 2 * 10**9)
    assert c.exact(3.0) == Fraction(3, 2)
    assert not c.convex and not c.free
    assert replace(c, change=0.0).convex  # the curve itself is convex; the jump is not
    # a budget below the charge leaves only the query's value; above it, the curve's reach
    assert c.interval(0.9, -10.0, 10.0) == (2.0, 2.0)
    lo, hi = c.interval(1.5, -10.0, 10.0)
    assert (lo, hi) == pytest.approx((1.5, 3.0))
    assert c.interval(0.9, 3.0, 10.0) == (3.0, 3.0)  # the box leaves out the query


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"weights": {"n": -1.0}}, "cannot be negative"),
        ({"weights": {"n": (1.0, 2.0, 3.0)}}, "pair \\(up, down\\)"),
        ({"weights": {"n": float("nan")}}, "cannot be negative or NaN"),
        ({"unit": "months"}, "needs unit_scale"),
        ({"unit_scale": 2.0}, "without a unit"),
        ({"missing": "free"}, "missing must be one of"),
        ({"transitions": {"c": {"x": 1.0}}}, "keys must be pairs"),
        ({"percentile": {"n": INF}}, "finite number"),
        ({"n_knots": 1}, "n_knots"),
    ],
)
def test_bad_costs_say_what_and_how(kwargs, match):
    with pytest.raises(cf.ValidationError, match=match):
        cf.Costs(**kwargs)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"weights": {"income": 1.0}}, "unknown features \\['income'\\]"),
        ({"per_change": {"cc": 5.0}}, "Costs.per_change names unknown features \\['cc'\\]"),
        ({"weights": {"c": (1.0, 2.0)}}, "unordered"),
        ({"transitions": {"c": {("x", "w"): 1.0}}}, "'w', which is not a category"),
        (
            {"transitions": {"n": {(1, 2): 1.0}}},
            "transitions are for binary, categorical and ordinal",
        ),
        ({"transitions": {"c": {("x", "x"): 1.0}}}, "keeping a value costs nothing"),
        ({"percentile": ["c"]}, "percentile needs an order"),
    ],
)
def test_costs_checked_against_the_schema(data, kwargs, match):
    with pytest.raises(cf.ValidationError, match=match):
        cf.Costs(**kwargs).bind(data.schema, data.X)
