"""Row selection: explain the rows the model does not already assign to the desired class."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.models import desired_class


@pytest.fixture(scope="module")
def german():
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    return data, train, test, cf.models.fit(train, "lr", random_state=0)


@pytest.mark.parametrize(
    "name, favourable, meaning",
    [
        ("german_credit", 1, "good"),
        ("adult", 1, ">50K"),
        ("compas", 0, "no recidivism"),
        ("default_credit_taiwan", 0, None),
        ("sba", 0, "paid in full"),
        ("hill_valley", None, None),
    ],
)
def test_favourable_class_per_dataset(name, favourable, meaning):
    assert cf.datasets.favourable(name) == favourable
    if name in ("german_credit", "compas", "sba"):  # small enough to load here
        data = cf.datasets.load(name)
        assert data.metadata["favourable"] == favourable
        if meaning is not None:
            assert meaning in data.metadata["target_labels"][favourable]


def test_rejected_rows_are_selected_and_counted(german):
    _data, _train, test, model = german
    before = test.X.copy()
    rejected = cf.rows_to_explain(model, test)
    pred = model.predict(test.X)
    assert list(rejected.index) == list(test.X.index[pred != 1])
    assert 0 < len(rejected) < len(test)  # some rows are already approved and skipped
    assert list(rejected.columns) == list(test.X.columns)
    pd.testing.assert_frame_equal(test.X, before)  # the input is not modified
    rejected.iloc[0, 0] = rejected.iloc[0, 0]  # a copy: writing to it cannot touch the input
    pd.testing.assert_frame_equal(test.X, before)


def test_frame_with_data_and_target_override(german):
    _data, train, test, model = german
    from_frame = cf.rows_to_explain(model, test.X, data=train)
    assert list(from_frame.index) == list(cf.rows_to_explain(model, test).index)
    approved = cf.rows_to_explain(model, test.X, target=0)  # explain the approved ones instead
    assert set(approved.index) == set(test.X.index) - set(from_frame.index)


def test_explaining_the_selection_never_hits_already_target_rows(german):
    _data, train, test, model = german
    nearest = cf.NearestObservable().fit(model, train)
    selected = cf.rows_to_explain(model, test).head(4)
    result = nearest.explain(selected, target=1)
    assert not result.reason.str.contains("already").any()
    everything = nearest.explain(test.X.head(6), target=1)
    already = everything.reason.str.contains("already")
    assert already.sum() == 6 - len(cf.rows_to_explain(model, test.X.head(6), data=train))
    assert (everything.status[already] == "failed").all()


def test_compas_selects_predicted_reoffenders():
    data = cf.datasets.load("compas")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "tree", random_state=0, max_depth=4)
    chosen = cf.rows_to_explain(model, test)
    assert (
        len(chosen) > 0 and (model.predict(chosen) == 1).all()
    )  # favourable is 0: not reoffending


def _own_frame(n: int = 200, classes: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=n), "b": rng.integers(0, 5, n)})
    frame["y"] = np.digitize(
        frame["a"], np.quantile(frame["a"], np.linspace(0, 1, classes + 1)[1:-1])
    )
    return frame


def test_own_data_defaults_to_the_last_class_and_multiclass_needs_a_target():
    from sklearn.linear_model import LogisticRegression

    frame = _own_frame()
    data = cf.Dataset.from_frame(frame, target="y")
    model = LogisticRegression().fit(frame[["a", "b"]], frame["y"])
    assert desired_class(model, data=data) == 1
    chosen = cf.rows_to_explain(model, data)
    assert (model.predict(chosen) == 0).all()

    frame3 = _own_frame(classes=3)
    data3 = cf.Dataset.from_frame(frame3, target="y")
    model3 = LogisticRegression().fit(frame3[["a", "b"]], frame3["y"])
    with pytest.raises(cf.ValidationError, match="target="):
        cf.rows_to_explain(model3, data3)
    chosen = cf.rows_to_explain(model3, data3, target=2)
    assert (model3.predict(chosen) != 2).all()


def test_bad_input_is_a_clear_error(german):
    _data, _train, test, model = german
    with pytest.raises(cf.ValidationError, match="not a class of the model"):
        cf.rows_to_explain(model, test, target="maybe")
    with pytest.raises(cf.ValidationError, match="DataFrame"):
        cf.rows_to_explain(model, test.X.to_numpy())
    with pytest.raises(cf.ValidationError, match="classes_"):
        cf.rows_to_explain(object(), test)
    with pytest.raises(cf.ValidationError, match="lacks the columns"):
        cf.rows_to_explain(model, test.X.drop(columns=["age"]), data=test)
    assert len(cf.rows_to_explain(model, test.X.iloc[:0], data=test)) == 0
