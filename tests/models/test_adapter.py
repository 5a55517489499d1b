"""ModelAdapter.predict_with_proba: one preprocessing pass, the model's own answers."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier

import counterfact as cf
from counterfact.models._adapter import _predict_is_argmax, as_adapter


@pytest.fixture(scope="module")
def german():
    data = cf.datasets.load("german_credit")
    # the features only time moves may rise here, so that nearest observed rows are admissible
    rising = {f.name: "increasing" for f in data.schema if f.actionability == "time"}
    return data.with_schema(data.schema.with_actionability(**rising))


@pytest.mark.parametrize("kind", ["rf", "tree", "lr", "mlp", "xgb", "lgbm"])
def test_predict_with_proba_equals_the_model(german, kind):
    if kind in ("xgb", "lgbm"):
        pytest.importorskip({"xgb": "xgboost", "lgbm": "lightgbm"}[kind])
    model = cf.models.fit(german, kind, random_state=0)
    pred, proba = as_adapter(model, german.schema).predict_with_proba(german.X)
    np.testing.assert_array_equal(pred, model.predict(german.X))
    np.testing.assert_allclose(proba, model.predict_proba(german.X))


def test_argmax_shortcut_only_for_the_exact_sklearn_tree_classes():
    class Voting(RandomForestClassifier):
        def predict(self, X):  # a subclass may decide differently
            return super().predict(X)

    assert _predict_is_argmax(RandomForestClassifier().fit([[0], [1]], [0, 1]))
    assert not _predict_is_argmax(Voting().fit([[0], [1]], [0, 1]))


@pytest.mark.parametrize("kind", ["xgb", "lgbm"])
def test_boosted_models_fitted_by_the_library_explain_end_to_end(german, kind):
    """``models.fit`` wraps xgboost/lightgbm to answer in the dataset's labels; the
    wrapper exposes ``steps`` but is no Pipeline -- explaining through it must work."""
    pytest.importorskip({"xgb": "xgboost", "lgbm": "lightgbm"}[kind])
    model = cf.models.fit(german, kind, random_state=0, n_estimators=20)
    X = german.X.iloc[:40]
    fav = german.metadata.get("favourable_class", model.classes_[-1])
    X = X[model.predict(X) != fav].iloc[:2]
    result = cf.NearestObservable().fit(model, german).explain(X)
    cfs = result.counterfactuals
    assert len(cfs) > 0
    assert (model.predict(cfs[german.X.columns]) == fav).all()
