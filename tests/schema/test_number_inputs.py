"""Numbers are checked where they enter: a value an integer feature cannot hold is an
error naming the column and the value as written, never a silent cast to
-9223372036854775808 (issue 29)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.exceptions import ValidationError
from counterfact.schema._numbers import MAX_INTEGER, finite_number, show_number

INT64_MIN = "-9223372036854775808"


@pytest.fixture(scope="module")
def setting():
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    rows = cf.rows_to_explain(model, test.X, data=train).iloc[[0]]
    return train, model, rows


@pytest.mark.parametrize(
    ("value", "shown"), [(1e19, "1e+19"), (9.3e18, "9.3e+18"), (1e308, "1e+308"), (-1e19, "-1e+19")]
)
def test_an_integer_beyond_what_the_feature_holds_is_refused(setting, value, shown):
    """The reproduction: NearestObservable().fit(model, train).explain(X) with
    X["duration_months"] = 1e19 explained a row with -9223372036854775808, status optimal."""
    train, model, rows = setting
    X = rows.copy()
    X["duration_months"] = value
    with pytest.raises(ValidationError, match="duration_months") as info:
        cf.NearestObservable().fit(model, train).explain(X)
    assert shown in str(info.value) and INT64_MIN not in str(info.value)


def test_a_python_int_beyond_float64_is_refused_not_overflowing(setting):
    train, _, rows = setting
    X = rows.astype({"duration_months": object})
    X["duration_months"] = 10**400
    with pytest.raises(ValidationError, match="401 digits"):
        train.schema.validate_frame(X)


def test_the_largest_exact_integer_is_still_accepted(setting):
    train, _, rows = setting
    X = rows.copy()
    X["duration_months"] = MAX_INTEGER
    out = train.schema.validate_frame(X)
    assert int(out["duration_months"].iloc[0]) == MAX_INTEGER


def test_infinite_values_name_the_row_and_value(setting):
    train, _, rows = setting
    X = rows.copy()
    X["credit_amount"] = np.inf
    with pytest.raises(ValidationError, match=r"credit_amount.*inf"):
        train.schema.validate_frame(X)


def test_coerce_refuses_what_int64_cannot_hold():
    schema = cf.Schema(
        (cf.Feature("a", "integer", lower=0, upper=10), cf.Feature("b", "real", lower=0, upper=1))
    )
    for bad in (np.nan, 1e19, np.inf):
        with pytest.raises(ValidationError, match="column 'a'") as info:
            schema.coerce(pd.DataFrame({"a": [1.0, bad], "b": [0.5, 0.5]}))
        assert INT64_MIN not in str(info.value)
    assert schema.coerce(pd.DataFrame({"a": [1.0, 2.0], "b": [0.5, 0.5]}))["a"].tolist() == [1, 2]


def test_fractional_values_of_an_integer_column_are_quoted(setting):
    train, _, rows = setting
    X = rows.copy()
    X["duration_months"] = 7.5
    with pytest.raises(ValidationError, match=r"fractional values, such as 7.5"):
        train.schema.validate_frame(X)


def test_finite_number_helper():
    assert finite_number(3, "x") == 3.0
    for bad, text in (
        (True, "must be a number"),
        ("3", "must be a number"),
        (float("nan"), "finite"),
        (float("inf"), "finite"),
        (10**400, "too large"),
    ):
        with pytest.raises(ValidationError, match=text):
            finite_number(bad, "x")
    assert show_number(10**400).endswith("(401 digits)")
    assert show_number(1e19) == "1e+19"


def test_a_boolean_names_a_class_only_when_the_classes_are_booleans(setting):
    """`"target": true` was accepted as class 1 (True == 1)."""
    from counterfact.models import desired_class

    _, model, _ = setting
    with pytest.raises(ValidationError, match="boolean"):
        desired_class(model, target=True)
    assert desired_class(model, target=1) == 1

    class BoolModel:
        classes_ = np.array([False, True])

    assert (
        desired_class(BoolModel(), target=True) is True
        or desired_class(BoolModel(), target=True) == np.True_
    )
