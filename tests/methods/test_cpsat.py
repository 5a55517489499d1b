"""MACE's CP-SAT oracle (tree ensembles): the same optimum as the Z3 oracle within
epsilon, and its proven lower bound never above the true optimum."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import counterfact as cf

pytest.importorskip("ortools")
pytest.importorskip("z3")

EPS = 1e-3


def _data(n: int = 400, seed: int = 3) -> cf.Dataset:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "a": rng.uniform(0, 10, n).round(2),
            "b": rng.uniform(-5, 5, n).round(2),
            "k": rng.integers(0, 20, n),
            "job": rng.choice(["x", "y", "z"], n),
        }
    )
    s = X["a"] - X["b"] + 0.2 * X["k"] + (X["job"] == "y") * 3.0 - 6
    y = (s + rng.normal(0, 1, n) > 0).astype(int)
    return cf.Dataset.from_frame(X.assign(y=y), target="y", name="mixed")


@pytest.fixture(scope="module")
def setting():
    train, test = _data().split(test_size=0.2, random_state=0)
    return train, test, cf.models.fit(train, "rf", random_state=0, n_estimators=10, max_depth=4)


@pytest.mark.parametrize("norm", ["l1", "linf", "l0"])
def test_cpsat_matches_z3(setting, norm):
    train, test, model = setting
    X = test.X.iloc[:6]
    z = (
        cf.MACE(norm=norm, rel_gap=EPS, solver="z3", random_state=0)
        .fit(model, train)
        .explain(X, requirements=cf.Requirements(costs="own"))
    )
    c = (
        cf.MACE(norm=norm, rel_gap=EPS, solver="cpsat", random_state=0)
        .fit(model, train)
        .explain(X, requirements=cf.Requirements(costs="own"))
    )
    assert (c.diagnostics["solver"] == "cpsat").all()
    both = (z.status == "optimal") & (c.status == "optimal")
    assert both.sum() >= 4
    for qid in X.index[both.to_numpy()]:
        dz, dc = z.diagnostics.loc[qid], c.diagnostics.loc[qid]
        # both oracles search each real feature's grid (the reported values), so
        # neither answer is moved by rounding afterwards
        assert not dz["snapped"] and not dc["snapped"]
        assert abs(dz["delta_max"] - dc["delta_max"]) <= EPS + 1e-9
        # each proven lower bound is below the other oracle's counterfactual
        assert dc["delta_min"] <= dz["delta_max"] + 1e-9
        assert dz["delta_min"] <= dc["delta_max"] + 1e-9
        assert (model.predict(c.for_query(qid)) == c.target[qid]).all()


def test_cpsat_falls_back_to_z3_for_diversity(setting):
    """Diversity clauses are not in the CP-SAT model: the 2nd answer comes from Z3."""
    train, test, model = setting
    res = (
        cf.MACE(norm="l1", solver="cpsat", random_state=0)
        .fit(model, train)
        .explain(test.X.iloc[:2], n_counterfactuals=2, requirements=cf.Requirements(costs="own"))
    )
    assert (res.found >= 1).all()


def test_auto_oracle_is_chosen_per_model_class(setting, monkeypatch):
    """``solver="auto"``: the branch-and-bound for tree ensembles, HiGHS for ReLU networks; for the
    searches the branch-and-bound does not run, CP-SAT for scikit-learn's boosted ensembles (as
    measured) and Z3 for forests; without OR-Tools a boosted model falls back to Z3."""
    import importlib.util

    train, test, rf = setting
    gbm = cf.models.fit(train, "gbm", random_state=0, n_estimators=10, max_depth=2)
    mlp = cf.models.fit(train, "mlp", random_state=0, hidden_layer_sizes=(4,), max_iter=300)
    forest = cf.MACE().fit(rf, train)
    assert forest.solvers_ == ("bnb", "z3")
    assert cf.MACE().fit(mlp, train).solvers_ == ("highs", "z3")
    boosted = cf.MACE(random_state=0).fit(gbm, train)
    assert boosted.solvers_ == ("bnb", "cpsat", "z3")
    X = test.X.iloc[:3]
    r = boosted.explain(X, requirements=cf.Requirements(costs="own"))
    assert (r.diagnostics["solver"] == "bnb").all() and (r.status == "optimal").all()
    r = (
        cf.MACE(random_state=0, solver="cpsat")
        .fit(gbm, train)
        .explain(X, requirements=cf.Requirements(costs="own"))
    )
    assert (r.diagnostics["solver"] == "cpsat").all() and (r.status == "optimal").all()
    assert (
        gbm.predict(r.counterfactuals[X.columns])
        == r.target.loc[r.counterfactuals.index.get_level_values(0)].to_numpy()
    ).all()
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "ortools" else real(name, *a)
    )
    assert cf.MACE().fit(gbm, train).solvers_ == ("bnb", "z3")


@pytest.mark.parametrize("kind", ["xgb", "lgbm", "gbm-3class"])
def test_auto_on_boosted_models_returns_verified_optimal_answers(kind):
    """XGBoost and LightGBM (via ``models.fit``) and a three-class gradient boosting
    (several conditions: CP-SAT falls back to Z3 per search) under ``auto``: proven
    answers that the model accepts."""
    if kind in ("xgb", "lgbm"):
        pytest.importorskip({"xgb": "xgboost", "lgbm": "lightgbm"}[kind])
        train, test = _data().split(test_size=0.2, random_state=0)
        model = cf.models.fit(train, kind, random_state=0, n_estimators=10, max_depth=3)
    else:
        data = _data()
        s = data.frame["a"] - data.frame["b"]
        y = np.digitize(s, [-2.0, 3.0])
        data = cf.Dataset.from_frame(data.X.assign(y=y), target="y", name="three")
        train, test = data.split(test_size=0.2, random_state=0)
        model = cf.models.fit(train, "gbm", random_state=0, n_estimators=10, max_depth=2)
    mace = cf.MACE(norm="l1", rel_gap=EPS, random_state=0).fit(model, train)
    # as measured (see MACE._auto_solvers)
    assert mace.solvers_ == (("bnb", "z3") if kind == "xgb" else ("bnb", "cpsat", "z3"))
    X = test.X.iloc[:3]
    r = (
        mace.explain(X, target=0, requirements=cf.Requirements(costs="own"))
        if kind == "gbm-3class"
        else mace.explain(X, requirements=cf.Requirements(costs="own"))
    )
    assert (r.status == "optimal").all(), r.reason
    cfs = r.counterfactuals
    assert (
        model.predict(cfs[X.columns]) == r.target.loc[cfs.index.get_level_values(0)].to_numpy()
    ).all()
