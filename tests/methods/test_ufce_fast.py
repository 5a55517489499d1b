"""UFCE's exact shortcut to the model's decisions (no DataFrame and no
ColumnTransformer per call) and its one-thread LOF: same answers, only faster."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.methods.ufce._fast import FastDecide, one_thread


def _data(n: int = 400, seed: int = 3) -> cf.Dataset:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "a": np.round(rng.uniform(0, 10, n), 2),
            "k": rng.integers(0, 20, n),
            "job": rng.choice(["x", "y", "z"], n),
            "level": pd.Categorical(
                rng.choice(["low", "mid", "high"], n),
                categories=["low", "mid", "high"],
                ordered=True,
            ),
        }
    )
    s = X["a"] - 5 + 0.1 * X["k"] + (X["job"] == "y") * 2.0 + X["level"].cat.codes.to_numpy()
    y = (s + rng.normal(0, 1, n) > 0).astype(int)
    return cf.Dataset.from_frame(X.assign(y=y), target="y", name="fast")


@pytest.fixture(scope="module")
def split():
    return _data().split(test_size=0.25, random_state=0)


@pytest.mark.parametrize("kind", ["lr", "rf"])
def test_shortcut_equals_the_models_predict(split, kind):
    train, test = split
    params = {"n_estimators": 15, "max_depth": 5} if kind == "rf" else {}
    model = cf.models.fit(train, kind, random_state=0, **params)
    m = cf.UFCE(random_state=0, n_grid=8).fit(model, train)
    assert isinstance(m._fast, FastDecide)
    # random code rows, far from the training rows too (integers off their grid)
    rng = np.random.default_rng(0)
    R = m._space.to_codes(test.X)
    R = np.repeat(R, 5, axis=0)
    R[:, 0] = rng.uniform(-5, 15, len(R))
    R[:, 1] = rng.uniform(-3, 25, len(R))
    want = np.array([m._class_pos[v] for v in model.predict(m._space.to_frame(R)).tolist()])
    assert np.array_equal(m._fast(R), want)


def test_same_answers_with_and_without_the_shortcut(split):
    train, test = split
    model = cf.models.fit(train, "lr", random_state=0)
    m = cf.UFCE(random_state=0, n_grid=8).fit(model, train)
    X = test.X[model.predict(test.X) == 0].iloc[:5]
    fast = m.explain(X, n_counterfactuals=2)
    m._fast = None
    slow = m.explain(X, n_counterfactuals=2)
    pd.testing.assert_frame_equal(fast.counterfactuals, slow.counterfactuals)
    assert fast.status.tolist() == slow.status.tolist()


def test_no_shortcut_for_a_model_that_is_not_a_folded_pipeline(split):
    train, _ = split
    model = cf.models.fit(train, "lr", random_state=0)

    class Wrapped:  # a plain object with predict_proba: the model is called as it is
        classes_ = model.classes_

        def predict_proba(self, X):
            return model.predict_proba(X)

        def predict(self, X):
            return model.predict(X)

    m = cf.UFCE(random_state=0, n_grid=8).fit(Wrapped(), train)
    assert m._fast is None


def test_one_thread_gives_the_same_outliers():
    from sklearn.neighbors import LocalOutlierFactor

    rng = np.random.default_rng(1)
    V = rng.normal(size=(300, 6))
    lof = LocalOutlierFactor(n_neighbors=10, novelty=True).fit(V)
    Q = rng.normal(scale=2.0, size=(200, 6))
    with one_thread():
        a = lof.predict(Q)
    assert np.array_equal(a, lof.predict(Q))
