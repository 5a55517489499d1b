"""Units: a numeric feature's unit travels with the schema and is written after its values."""

from __future__ import annotations

import pandas as pd
import pytest

import counterfact as cf
from counterfact.result import changes
from counterfact.result._text import describe_changes
from counterfact.schema import Feature
from counterfact.schema._format import format_value


def test_a_unit_is_kept_written_and_serialised() -> None:
    f = Feature("duration", "integer", lower=4, upper=72, unit="months")
    assert format_value(f, 24) == "24" and format_value(f, 24, unit=True) == "24 months"
    assert format_value(f, float("nan"), unit=True) == "?"
    assert Feature.from_dict(f.to_dict()) == f and f.to_dict()["unit"] == "months"
    assert "unit" not in Feature("n", "integer", lower=0, upper=1).to_dict()


def test_a_unit_only_on_numeric_features_and_only_text() -> None:
    with pytest.raises(cf.SchemaError, match="only real and integer features take a unit"):
        Feature("colour", "categorical", categories=("red", "blue"), unit="paint")
    with pytest.raises(cf.SchemaError, match="unit must be a string"):
        Feature("n", "real", lower=0, upper=1, unit=3)  # type: ignore[arg-type]


def test_with_units_and_the_words_of_a_change() -> None:
    s = cf.Schema(
        (
            Feature("duration", "integer", lower=4, upper=72),
            Feature("amount", "real", lower=0, upper=1e4),
        )
    )
    with pytest.raises(cf.SchemaError):
        s.with_units(nope="days")
    s2 = s.with_units(duration="months", amount="DM")
    assert (
        s.features[0].unit == "" and s2["duration"].unit == "months"
    )  # a copy, the original untouched
    ch = changes(
        s2,
        pd.Series({"duration": 24, "amount": 1000.0}),
        pd.Series({"duration": 12, "amount": 800.0}),
    )
    assert describe_changes(ch) == "duration 24 -> 12 months; amount 1000 -> 800 DM"


def test_bundled_data_names_its_units() -> None:
    s = cf.datasets.load("german_credit").schema
    assert (s["duration_months"].unit, s["credit_amount"].unit, s["age"].unit) == (
        "months",
        "DM",
        "years",
    )
