"""CE-OCL's speed-ups keep its answers: the incumbent search and the narrowed box
give the same proven optimum as the plain model and as brute force, and the time
limit holds on a forest whose MIP cannot be finished in time."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import counterfact as cf

pytest.importorskip("highspy")


def _grid_data(n: int = 500, seed: int = 1) -> cf.Dataset:
    """Small discrete domain (10 x 10 x 3 x 4 = 1200 points) for brute force."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "a": rng.integers(0, 10, n),
            "b": rng.integers(0, 10, n),
            "c": rng.choice(["x", "y", "z"], n),
            "d": pd.Categorical(
                rng.choice(["lo", "mid", "high", "top"], n),
                categories=["lo", "mid", "high", "top"],
                ordered=True,
            ),
        }
    )
    s = 0.6 * X["a"] - 0.4 * X["b"] + (X["c"] == "y") * 2.0 + X["d"].cat.codes * 0.8 - 2.0
    y = (s + rng.normal(0, 1.0, n) > 0).astype(int)
    return cf.Dataset.from_frame(X.assign(y=y), target="y", name="grid")


@pytest.fixture(scope="module")
def grid_setting():
    train, test = _grid_data().split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "rf", random_state=0, n_estimators=10, max_depth=4)
    return train, test, model


def _all_points(schema) -> pd.DataFrame:  # type: ignore[no-untyped-def]
    cats = {
        f.name: (
            list(f.categories)
            if f.categories is not None
            else list(range(int(f.lower), int(f.upper) + 1))
        )
        for f in schema
    }
    rows = list(itertools.product(*(cats[f.name] for f in schema)))
    frame = pd.DataFrame(rows, columns=schema.names)
    d = schema["d"]
    frame["d"] = pd.Categorical(frame["d"], categories=list(d.categories), ordered=True)
    return frame


def _costs(  # type: ignore[no-untyped-def]
    method, schema, q: pd.Series, P: pd.DataFrame
) -> np.ndarray:
    """CE-OCL's objective (its own scales) for every point of ``P``."""
    total = np.zeros(len(P))
    for j, f in enumerate(schema):
        if f.kind == "categorical":
            total += (P[f.name].astype(str) != str(q[f.name])).to_numpy(float)
            continue
        if f.kind == "ordinal":
            rank = {c: k for k, c in enumerate(f.categories)}
            v, qv = P[f.name].map(rank).to_numpy(float), float(rank[q[f.name]])
        else:
            v, qv = P[f.name].to_numpy(float), float(q[f.name])
        dev = (v - qv) / float(method.scales_[j])
        total += dev**2 if method.norm == "l2" else np.abs(dev)
    return total


def _plain(method: cf.CEOCL) -> cf.CEOCL:
    """``method`` with every speed-up off: the plain model, HiGHS's defaults."""
    method._narrow = False  # type: ignore[misc]
    method._cut_bounds = False  # type: ignore[misc]
    method._tree_options = False  # type: ignore[misc]
    return method


@pytest.mark.parametrize("norm", ["l2", "l1"])
def test_optimum_equals_brute_force_and_plain_model(grid_setting, norm):
    """Every proven optimum equals the brute-force minimum over the whole domain
    (points the model assigns to the target with a clear margin), with and
    without the speed-ups (incumbent search and narrowed box, cut bounds, tree options)."""
    train, test, model = grid_setting
    schema = train.schema
    P = _all_points(schema)
    proba = model.predict_proba(P)
    classes = list(model.classes_)
    fast = cf.CEOCL(norm=norm, solution_pool=False, random_state=0).fit(model, train)
    plain = _plain(cf.CEOCL(norm=norm, solution_pool=False, random_state=0).fit(model, train))
    X = test.X.iloc[:8]
    own = cf.Requirements(costs="own")  # its l1 / l2 objective, as brute-forced
    a, b = fast.explain(X, requirements=own), plain.explain(X, requirements=own)
    checked = narrowed = 0
    for qid in X.index:
        if a.status[qid] != "optimal":
            continue
        t = classes.index(a.target[qid])
        margin = proba[:, t] - proba[:, 1 - t]
        cost = _costs(fast, schema, X.loc[qid], P)
        clear = cost[margin >= 1e-3]
        near_tie = cost[(margin > -1e-3) & (margin < 1e-3)]
        if not len(clear) or (len(near_tie) and near_tie.min() <= clear.min()):
            continue  # the answer would depend on how ties are broken
        obj = float(a.diagnostics.loc[qid, "objective"])
        assert obj == pytest.approx(clear.min(), rel=1e-5, abs=1e-7)
        assert b.status[qid] == "optimal"
        assert float(b.diagnostics.loc[qid, "objective"]) == pytest.approx(obj, rel=1e-5, abs=1e-7)
        narrowed += bool(a.diagnostics.loc[qid].get("narrowed_features", 0) or 0)
        checked += 1
    assert checked >= 4
    assert narrowed >= 1  # the search found an incumbent and the box was narrowed


def test_one_hot_pipeline_same_optima_with_and_without_the_speed_ups(grid_setting):
    """A forest behind a pipeline that one-hot encodes the discrete features (ordinal
    included): the cut bounds, tree options and snapping give the plain model's optima,
    three answers each, every one accepted by the real pipeline."""
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder

    train, test, _ = grid_setting
    pre = ColumnTransformer(
        [("oh", OneHotEncoder(handle_unknown="ignore"), ["c", "d"])], remainder="passthrough"
    )
    model = Pipeline(
        [("pre", pre), ("rf", RandomForestClassifier(n_estimators=10, max_depth=4, random_state=0))]
    )
    model.fit(train.X, train.y)
    fast = cf.CEOCL(random_state=0).fit(model, train)
    plain = _plain(cf.CEOCL(random_state=0).fit(model, train))
    X = test.X.iloc[:6]
    a, b = fast.explain(X, n_counterfactuals=3), plain.explain(X, n_counterfactuals=3)
    both = (a.status == "optimal") & (b.status == "optimal")
    assert both.sum() >= 4
    np.testing.assert_allclose(
        a.diagnostics.loc[both, "objective"].to_numpy(float),
        b.diagnostics.loc[both, "objective"].to_numpy(float),
        rtol=1e-6,
        atol=1e-9,
    )
    for qid in X.index[both.to_numpy()]:
        cfs = a.for_query(qid)
        assert len(cfs) == len(b.for_query(qid)) >= 1
        assert (model.predict(cfs[train.schema.names]) == a.target[qid]).all()


def test_narrowing_keeps_diverse_answers_and_l0(grid_setting):
    """l0 with alpha, three counterfactuals: same first optimum and same number
    of answers with and without the narrowed box."""
    train, test, model = grid_setting
    kw = dict(norm="l0", alpha=0.1, solution_pool=False, random_state=0)
    fast = cf.CEOCL(**kw).fit(model, train)  # type: ignore[arg-type]
    plain = cf.CEOCL(**kw).fit(model, train)  # type: ignore[arg-type]
    plain._narrow = False  # type: ignore[misc]
    X = test.X.iloc[:5]
    a, b = fast.explain(X, n_counterfactuals=3), plain.explain(X, n_counterfactuals=3)
    both = (a.status == "optimal") & (b.status == "optimal")
    assert both.sum() >= 3
    np.testing.assert_allclose(
        a.diagnostics.loc[both, "objective"].to_numpy(float),
        b.diagnostics.loc[both, "objective"].to_numpy(float),
        rtol=1e-6,
        atol=1e-9,
    )
    for qid in X.index[both.to_numpy()]:
        assert len(a.for_query(qid)) == len(b.for_query(qid))
        assert (model.predict(a.for_query(qid)) == a.target[qid]).all()


def test_narrow_box_bounds():
    """The narrowed box is what the radius allows, per feature."""
    from counterfact.methods.ceocl._formulation import narrow_box
    from counterfact.solvers._milp import FeatureVars, Model, RawInputs

    m = Model()
    x = m.add_var(0.0, 100.0, name="x")
    k = m.add_var(0.0, 20.0, integer=True, name="k")
    ind = [m.add_binary() for _ in range(3)]
    feats = [
        FeatureVars("x", "real", 50.0, 0.0, 100.0, x),
        FeatureVars("k", "integer", 10.0, 0.0, 20.0, k),
        FeatureVars("c", "categorical", 1.0, 0.0, 2.0, None, ind),
    ]
    inputs = RawInputs(None, [x, k, *ind], feats)
    scales = np.array([100.0, 20.0, 1.0])
    # l2, radius 0.04: |dx| <= 0.2 * 100, |dk| <= 0.2 * 20; a categorical change (1) is too dear
    assert narrow_box(m, inputs, 0.04, norm="l2", scales=scales, alpha=0.0) == 3
    assert m.var_bounds(x) == pytest.approx((30.0, 70.0), abs=1e-4)
    assert m.var_bounds(k) == (6.0, 14.0)
    assert [m.var_bounds(v)[1] for v in ind] == [0.0, 1.0, 0.0]
    # l1 with alpha: a change costs alpha + distance
    m2 = Model()
    y = m2.add_var(0.0, 100.0)
    inp2 = RawInputs(None, [y], [FeatureVars("y", "real", 50.0, 0.0, 100.0, y)])
    narrow_box(m2, inp2, 0.3, norm="l1", scales=np.array([100.0]), alpha=0.1)
    assert m2.var_bounds(y) == pytest.approx((30.0, 70.0), abs=1e-4)
    narrow_box(
        m2, inp2, 0.05, norm="l1", scales=np.array([100.0]), alpha=0.1
    )  # cheaper than any change
    assert m2.var_bounds(y) == pytest.approx((50.0, 50.0), abs=1e-6)


def test_time_limit_on_a_forest_too_large_to_solve():
    """A 60-tree depth-8 forest on German Credit at time_limit=1: every query ends
    with a status, and an answer verified by the real model whenever the status
    says so (the wall time against the limit is measured by
    ``benchmarks/time_limits.py``, not asserted here)."""
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "rf", random_state=0, n_estimators=60, max_depth=8)
    method = cf.CEOCL(time_limit=1.0, random_state=0).fit(model, train)
    fav = cf.datasets.favourable("german_credit")
    X = test.X[model.predict(test.X) != fav].iloc[:3]
    for i in range(len(X)):
        res = method.explain(X.iloc[[i]])
        status = res.status.iloc[0]
        assert status in {"optimal", "feasible", "timeout"}
        if status in ("optimal", "feasible"):
            cfs = res.for_query(X.index[i])
            assert len(cfs) and (model.predict(cfs) == res.target.iloc[0]).all()
        if status == "timeout":
            assert res.reason.iloc[0]
