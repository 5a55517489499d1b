"""``fit`` checks the model against the training data: columns, predict_proba, classes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

import counterfact as cf
from counterfact.exceptions import ValidationError


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 300
    frame = pd.DataFrame(
        {
            "a": rng.integers(0, 50, n),
            "b": np.round(rng.normal(0, 1, n), 2),
            "c": rng.normal(0, 1, n),
        }
    )
    frame["y"] = ((frame["a"] / 50 + frame["b"]) > 0.5).astype(int)
    return cf.Dataset.from_frame(frame, target="y")


def test_model_fitted_on_other_columns(data):
    X = data.X.rename(columns={"a": "age"})
    model = LogisticRegression().fit(X, data.y)
    with pytest.raises(ValidationError, match=r"other columns.*\['age'\].*\['a'\].*data\.X"):
        cf.NearestObservable().fit(model, data)
    fewer = LogisticRegression().fit(data.X[["a", "b"]], data.y)
    with pytest.raises(ValidationError, match=r"not fitted on: \['c'\]"):
        cf.NearestObservable().fit(fewer, data)


def test_columns_in_another_order_are_fine(data):
    model = LogisticRegression().fit(data.X[["c", "b", "a"]], data.y)
    m = cf.NearestObservable().fit(model, data)
    r = m.explain(data.X.iloc[:5])
    assert r.found.sum() > 0


def test_predict_proba_failing_or_misshaped(data):
    numpy_model = LogisticRegression().fit(data.X.to_numpy()[:, :2], data.y)  # 2 features, no names
    with pytest.raises(ValidationError, match="predict_proba fails on 5 training rows"):
        cf.NearestObservable().fit(numpy_model, data)

    class OneColumn:
        classes_ = np.array([0, 1])

        def predict_proba(self, X):
            return np.ones((len(X), 1))

    with pytest.raises(ValidationError, match=r"shape \(5, 1\).*one column per class"):
        cf.NearestObservable().fit(OneColumn(), data)


def test_classes_must_match(data):
    as_text = LogisticRegression().fit(data.X, data.y.astype(str))
    with pytest.raises(
        ValidationError,
        match=r"classes \[.0., .1.\] are not the data.s classes \[0, 1\].*label type",
    ):
        cf.NearestObservable().fit(as_text, data)
    shifted = LogisticRegression().fit(data.X, data.y + 1)
    with pytest.raises(ValidationError, match="not the data's classes"):
        cf.NearestObservable().fit(shifted, data)


def test_good_model_passes_and_nothing_is_mutated(data):
    model = cf.models.fit(data, "lr")
    before = data.frame.copy()
    cf.NearestObservable().fit(model, data)
    pd.testing.assert_frame_equal(before, data.frame)


def test_data_may_lack_a_class_the_model_knows():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.uniform(0, 10, 300), "b": rng.uniform(0, 10, 300)})
    y = np.where(X["a"] < 3, 0, np.where(X["a"] < 7, 1, 2))
    model = cf.models.fit(cf.Dataset.from_frame(X.assign(y=y), target="y"), "lr", random_state=0)
    partial = cf.Dataset.from_frame(X.assign(y=y)[y < 2], target="y")
    cf.NearestObservable().fit(model, partial)  # a sample without class 2 is fine


def test_retrained_copies_keep_quiet_what_fit_keeps_quiet(data):
    """fit("svm") keeps scikit-learn's notice about SVC(probability=True) quiet (the library
    chose it, the user cannot act on it); refitting copies of that model does too."""
    import warnings

    model = cf.models.fit(data, "svm", random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        copies = cf.models.retrained(model, data, n=3, random_state=0)
    assert len(copies) == 3
    assert not [w for w in caught if "probability" in str(w.message)], caught


@pytest.mark.parametrize("kind", ["xgb", "lgbm"])
def test_models_fitted_on_label_codes_can_be_retrained(kind):
    """XGBoost and LightGBM models from fit() learn label codes behind the user's labels;
    retrained copies keep those labels, get their own seeds, and carry robustness."""
    pytest.importorskip({"xgb": "xgboost", "lgbm": "lightgbm"}[kind])
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"a": rng.integers(0, 50, 300), "b": np.round(rng.normal(0, 1, 300), 2)})
    frame["y"] = np.where(frame["a"] / 50 + frame["b"] > 0.5, "good", "bad")
    labelled = cf.Dataset.from_frame(frame, target="y")
    model = cf.models.fit(labelled, kind, random_state=0, n_estimators=10, max_depth=3)
    copies = cf.models.retrained(model, labelled, n=2, random_state=0)
    for copy in copies:
        assert set(copy.predict(labelled.X)) <= {"good", "bad"}
        assert list(copy.classes_) == list(model.classes_)
        assert (copy.predict(labelled.X) == labelled.y).mean() > 0.8
    assert not np.allclose(copies[0].predict_proba(labelled.X), model.predict_proba(labelled.X))
    assert model.predict_proba(labelled.X).shape == (300, 2)  # the original is untouched


def test_labels_are_coded_by_their_place_among_classes_in_any_order():
    """A schema may list its classes unsorted ("good" before "bad"): the codes the
    boosters learn follow that order, and a clone's set_params sets the pipeline before
    its own parameters, as scikit-learn does."""
    pytest.importorskip("xgboost")
    from sklearn.base import clone

    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"a": rng.integers(0, 50, 300), "b": np.round(rng.normal(0, 1, 300), 2)})
    frame["y"] = np.where(frame["a"] / 50 + frame["b"] > 0.5, "good", "bad")
    schema = cf.Schema(
        (cf.Feature("a", "integer", lower=0, upper=49), cf.Feature("b", "real", lower=-4, upper=4)),
        target="y",
        classes=("good", "bad"),
    )
    data = cf.Dataset(frame=frame, schema=schema)
    model = cf.models.fit(data, "xgb", random_state=0, n_estimators=10, max_depth=3)
    assert list(model.classes_) == ["good", "bad"]
    assert (model.predict(data.X) == data.y).mean() > 0.9
    copy = clone(model)
    fresh = clone(model.pipeline)
    step = fresh.steps[-1][0]
    copy.set_params(pipeline=fresh, **{f"pipeline__{step}__max_depth": 2})
    assert copy.pipeline is fresh and fresh.get_params()[f"{step}__max_depth"] == 2


def test_an_assumed_favourable_class_is_said():
    """With nothing naming the favourable class, the last class is assumed and said: a 1/2
    coding (UCI German Credit: 2 is the bad risk) or COMPAS's 1 ("reoffended") may mean
    the opposite."""
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"a": rng.integers(0, 50, 200), "b": np.round(rng.normal(0, 1, 200), 2)})
    frame["y"] = np.where(frame["a"] / 50 + frame["b"] > 0.5, 1, 2)
    coded = cf.Dataset.from_frame(frame, target="y")
    model = cf.models.fit(coded, "lr", random_state=0)
    with pytest.warns(UserWarning, match=r"taken to be 2, the model's last class.*target=1"):
        cf.rows_to_explain(model, coded)
    import warnings

    compas = cf.datasets.load("compas")
    on_compas = cf.models.fit(compas, "lr", random_state=0)
    with pytest.warns(UserWarning, match="taken to be 1"):
        cf.rows_to_explain(on_compas, compas.X)  # a bare frame: nothing names it
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cf.rows_to_explain(model, coded, target=1)  # said: nothing assumed
        cf.rows_to_explain(on_compas, compas)  # the dataset names it
        cf.rows_to_explain(on_compas, compas.X, data=compas)
