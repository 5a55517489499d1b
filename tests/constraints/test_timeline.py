"""cf.Timeline: elapsed months, advancing features, bands, rates, the constraint kind."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import counterfact as cf
from counterfact.constraints._kinds import constraint_kind
from counterfact.exceptions import ConstraintError, SchemaError
from counterfact.schema import Feature

EMPLOYMENT = ("<1", "1<=X<4", "4<=X<7", ">=7")
JOBS = ("unemployed", "< 1 year", "1 <= ... < 4 years", "4 <= ... < 7 years", ">= 7 years")


@pytest.fixture(scope="module")
def credit() -> cf.Dataset:
    """German Credit with age the only feature time moves (the tests set the others)."""
    ds = cf.datasets.load("german_credit")
    schema = ds.schema
    for f in schema:
        if f.actionability == "time":
            schema = schema.with_feature(f.name, actionability="free", per_month=None, edges=None)
    schema = schema.with_feature("age", actionability="time", per_month=1 / 12)
    return ds.with_schema(schema)


def _row(ds: cf.Dataset, **values: object) -> pd.Series:
    row = ds.X.iloc[0].copy()
    for k, v in values.items():
        row[k] = v
    return row


def test_age_is_pinned_to_whole_years(credit: cf.Dataset) -> None:
    tl = cf.Timeline(horizon=30)
    x = _row(credit, age=30)
    assert [tl.advance(credit.schema, x, t)["age"] for t in (0, 11, 12, 23, 24, 30)] == [
        30,
        30,
        31,
        31,
        32,
        32,
    ]
    assert tl.elapsed(credit.schema, x, _row(credit, age=31)) == 12
    assert tl.elapsed(credit.schema, x, _row(credit, age=30)) == 0
    assert tl.elapsed(credit.schema, x, _row(credit, age=33)) is None  # 36 months > 30
    assert tl.elapsed(credit.schema, x, _row(credit, age=29)) is None


def test_rate_feature_needs_enough_months(credit: cf.Dataset) -> None:
    tl = cf.Timeline(horizon=12, rates={"credit_amount": (math.inf, 100.0)})
    x = _row(credit, credit_amount=2000.0, age=30)
    assert tl.elapsed(credit.schema, x, _row(credit, credit_amount=1750.0, age=30)) == 3
    assert tl.elapsed(credit.schema, x, _row(credit, credit_amount=5000.0, age=30)) == 0
    # 1,250 less needs 13 months: beyond the horizon
    assert tl.elapsed(credit.schema, x, _row(credit, credit_amount=750.0, age=30)) is None
    # the rate and the age together: 300 less needs 3 months, age 31 needs 12
    both = _row(credit, credit_amount=1700.0, age=31)
    assert tl.elapsed(credit.schema, x, both) == 12
    assert tl.window(credit.schema, x, 5)["credit_amount"] == (1500.0, math.inf)


def test_band_advances_to_the_level_certainly_reached(credit: cf.Dataset) -> None:
    edges = (0.0, 1.0, 4.0, 7.0, math.inf)
    tl = cf.Timeline(horizon=40, advancing={"employment_since": (1 / 12, edges)})
    x = _row(credit, employment_since=JOBS[2], age=30)
    qt = tl.bind(credit.schema, x)
    j = credit.schema.index("employment_since")
    # tenure at least 1 year now: "4 <= ... < 7" is certain after 3 years, not before
    assert [qt.band_reach(j, t) for t in (0, 1, 35, 36, 40)] == [2, 2, 2, 3, 3]
    assert tl.elapsed(credit.schema, x, _row(credit, employment_since=JOBS[3], age=33)) == 36
    assert tl.elapsed(credit.schema, x, _row(credit, employment_since=JOBS[4], age=33)) is None
    assert tl.elapsed(credit.schema, x, _row(credit, employment_since=JOBS[1], age=30)) is None


def test_under_a_year_waits_twelve_months_not_one(credit: cf.Dataset) -> None:
    """Someone hired yesterday is in "< 1 year": only after 12 months is everyone in it
    certainly in "1 <= ... < 4 years" (the upper edge would have said 1 month)."""
    edges = (0.0, 1.0, 4.0, 7.0, math.inf)
    tl = cf.Timeline(horizon=24, advancing={"employment_since": (1 / 12, edges)})
    x = _row(credit, employment_since=JOBS[1], age=30)
    later = _row(credit, employment_since=JOBS[2], age=31)
    assert tl.elapsed(credit.schema, x, later) == 12
    assert tl.window(credit.schema, x, 11)["employment_since"] == (1.0, 1.0)
    assert tl.window(credit.schema, x, 12)["employment_since"] == (1.0, 2.0)


def test_unemployed_reaches_no_band_unless_a_lower_edge_says_so(credit: cf.Dataset) -> None:
    j = credit.schema.index("employment_since")
    upper_only = (0.0, 1.0, 4.0, 7.0, math.inf)
    x = _row(credit, employment_since=JOBS[0], age=30)
    qt = cf.Timeline(24, advancing={"employment_since": (1 / 12, upper_only)}).bind(
        credit.schema, x
    )
    assert [qt.band_reach(j, t) for t in (0, 12, 24)] == [0, 0, 0]
    # the data may say more: a lower edge for the lowest level (one value more), here
    # "unemployed" read as a tenure from -1 to 0 years (a job starts within a year)
    with_lower = (-1.0, *upper_only)
    qt = cf.Timeline(24, advancing={"employment_since": (1 / 12, with_lower)}).bind(
        credit.schema, x
    )
    assert [qt.band_reach(j, t) for t in (0, 11, 12, 23, 24)] == [0, 0, 1, 1, 2]
    f = Feature("e", "ordinal", categories=EMPLOYMENT, actionability="time", edges=(0, 1, 4, 7, 99))
    assert f.edges == (0.0, 1.0, 4.0, 7.0, 99.0)


def test_bundled_german_credit_bands_and_top_code() -> None:
    data = cf.datasets.load("german_credit")
    tl = cf.datasets.timeline(data)
    x = data.X.iloc[0].copy()
    x["employment_since"], x["residence_since"], x["age"] = "< 1 year", 3, 30
    months = {
        t: tl.advance(data.schema, x, t)[["residence_since", "age"]].tolist() for t in (11, 12, 24)
    }
    assert months == {11: [3, 30], 12: [4, 31], 24: [4, 32]}  # 4 = "4 years or more"
    after = x.copy()
    after["employment_since"], after["residence_since"], after["age"] = (
        "1 <= ... < 4 years",
        4,
        31,
    )
    assert tl.elapsed(data.schema, x, after) == 12
    after["residence_since"] = 5
    assert tl.elapsed(data.schema, x, after) is None
    x["residence_since"] = 4
    assert tl.window(data.schema, x, 24)["residence_since"] == (4.0, 4.0)
    bounds = cf.Constraints(timeline=tl).resolve(data.schema).for_query(x)["residence_since"]
    assert (bounds.lower, bounds.upper) == (4.0, 4.0)


def test_top_coded_is_declared_on_numeric_time_features_only() -> None:
    f = Feature("r", "integer", 1, 4, actionability="time", per_month=1 / 12, top_coded=True)
    assert Feature.from_dict(f.to_dict()) == f
    assert f.with_(actionability="increasing").top_coded is False
    with pytest.raises(SchemaError, match="top_coded"):
        Feature("r", "integer", 1, 4, top_coded=True)
    with pytest.raises(SchemaError, match="top_coded"):
        Feature("e", "ordinal", categories=EMPLOYMENT, actionability="time", top_coded=True)


def test_max_changes_does_not_count_what_time_moved(credit: cf.Dataset) -> None:
    x = _row(credit, age=30, credit_amount=2000.0, duration_months=12)
    row = _row(credit, age=31, credit_amount=1500.0, duration_months=12)  # a year older, one change
    frame = pd.DataFrame([row])
    timed = cf.Constraints(max_changes=1, timeline=cf.Timeline(12))
    assert timed.resolve(credit.schema).for_query(x).satisfied(frame).tolist() == [True]
    assert cf.violations(x, frame, credit.schema, timed).empty
    two = pd.DataFrame([_row(credit, age=31, credit_amount=1500.0, duration_months=24)])
    assert timed.resolve(credit.schema).for_query(x).satisfied(two).tolist() == [False]
    assert "max_changes" in set(cf.violations(x, two, credit.schema, timed)["kind"])


def test_without_a_timeline_a_time_feature_is_immutable(credit: cf.Dataset) -> None:
    x = _row(credit, age=30)
    plain = cf.Constraints().resolve(credit.schema).for_query(x)
    assert plain["age"].fixed
    timed = cf.Constraints(timeline=cf.Timeline(25)).resolve(credit.schema).for_query(x)
    assert (timed["age"].lower, timed["age"].upper) == (30.0, 32.0)
    assert timed.timeline is not None and timed.timeline.horizon == 25


def test_features_to_vary_may_name_what_time_moves_under_a_timeline(credit: cf.Dataset) -> None:
    vary = ["credit_amount", "age"]
    with pytest.raises(ConstraintError, match=r"only time moves.*no timeline"):
        cf.Constraints(features_to_vary=vary).resolve(credit.schema)
    x = _row(credit, age=30)
    timed = cf.Constraints(features_to_vary=vary, timeline=cf.Timeline(25))
    bounds = timed.resolve(credit.schema).for_query(x)
    assert (bounds["age"].lower, bounds["age"].upper) == (30.0, 32.0)
    assert bounds["duration_months"].fixed and not bounds["credit_amount"].fixed
    with pytest.raises(ConstraintError, match="immutable"):  # an immutable one still refused
        cf.Constraints(features_to_vary=["foreign_worker"]).resolve(credit.schema)


def test_a_timeline_may_take_age_past_the_oldest_seen(credit: cf.Dataset) -> None:
    top = credit.schema["age"].upper
    x = _row(credit, age=int(top))
    b = cf.Constraints(timeline=12).resolve(credit.schema).for_query(x)["age"]
    assert b.upper == top + 1


def test_json_form_and_cli_flag_round_trip() -> None:
    c = cf.Constraints(
        timeline=cf.Timeline(12, rates={"savings": (100.0, math.inf)}, wait_cost=0.5)
    )
    d = c.to_dict()
    assert d["timeline"]["rates"]["savings"] == [100.0, "inf"]
    assert cf.Constraints.from_dict(d) == c
    assert cf.Constraints.from_dict({"timeline": 6}).timeline == cf.Timeline(6)
    free = cf.Timeline(6, wait_cost=0)  # free waiting is written, not read back as the default
    assert free.to_dict()["wait_cost"] == 0 and cf.Timeline.from_dict(free.to_dict()) == free
    assert cf.Timeline(6).wait_cost == pytest.approx(1 / 24)
    assert constraint_kind("timeline").cli.flag == "--horizon"
    assert "timeline" in c.kinds()


def test_merge_keeps_the_stricter_timeline() -> None:
    a = cf.Constraints(timeline=cf.Timeline(24, rates={"savings": 100.0}))
    b = cf.Constraints(timeline=cf.Timeline(12, rates={"savings": 50.0}, wait_cost=1.0))
    m = a.merge(b).timeline
    assert (m.horizon, m.rates["savings"], m.wait_cost) == (12, (50.0, 50.0), 1.0)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"horizon": -1}, "between 0 and"),
        ({"horizon": 2.5}, "whole number"),
        ({"wait_cost": -1}, ">= 0"),
        ({"rates": {"savings": -5}}, ">= 0 per month"),
        ({"rates": {"x": 1}, "advancing": {"x": 1}}, "both advancing"),
        ({"advancing": {"age": 0}}, "positive advance"),
    ],
)
def test_bad_timelines_are_refused(kwargs: dict, match: str) -> None:
    with pytest.raises(ConstraintError, match=match):
        cf.Timeline(**kwargs)


def test_schema_checks_and_constraint_conflicts(credit: cf.Dataset) -> None:
    with pytest.raises(SchemaError, match="unordered"):
        Feature("c", "categorical", categories=("a", "b"), actionability="time")
    with pytest.raises(SchemaError, match="actionability='time'"):
        Feature("a", "integer", 0, 9, per_month=1.0)
    with pytest.raises(SchemaError, match="upper edge"):
        Feature("e", "ordinal", categories=EMPLOYMENT, actionability="time", edges=(1, 2))
    bad = cf.Constraints(immutable=["age"], timeline=cf.Timeline(12))
    with pytest.raises(ConstraintError, match="advances it"):
        bad.resolve(credit.schema)
    with pytest.raises(ConstraintError, match="unknown features"):
        cf.Constraints(timeline=cf.Timeline(12, rates={"nope": 1})).resolve(credit.schema)
    no_rate = credit.schema.with_feature("residence_since", actionability="time")
    with pytest.raises(ConstraintError, match="advance per month is unknown"):
        cf.Constraints(timeline=cf.Timeline(12)).resolve(no_rate)


def test_the_timeline_in_words():
    t = cf.Timeline(horizon=12, rates={"savings": (1 / 6, 0.0)}, wait_cost=1 / 24)
    assert t.words() == (
        "within 12 months; savings up at most 1 every 6 months; a month of waiting costs 0.042"
    )
    assert cf.Timeline(horizon=6, wait_cost=0).words() == "within 6 months; waiting is free"
    assert cf.Timeline(horizon=1, wait_cost=0).words() == "within 1 month; waiting is free"
    assert cf.Timeline(horizon=6).words() == "within 6 months; a month of waiting costs 0.042"
