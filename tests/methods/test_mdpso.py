"""MD-PSO (Shekhar et al. 2023): conformance, information value, boxes, coherence, backends."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.constraints import violations
from counterfact.exceptions import ValidationError
from counterfact.methods._pipeline import explain as explain_at
from counterfact.methods.mdpso import SwarmOptions
from counterfact.methods.mdpso._iv import bin_feature, information_value, iv_from_bins
from counterfact.methods.mdpso._problem import build_problem
from counterfact.methods.mdpso._search import Swarm, run
from counterfact.methods.mdpso._select import kmeans, select
from counterfact.testing._conformance import conformance_checks

FAST_SWARM = {"n_particles": 16, "max_iter": 30, "patience": 8}
FAST = {"swarm": SwarmOptions(**FAST_SWARM)}
#: the fast swarm without restarts (the paper's single run)
SINGLE_RUN = {"swarm": SwarmOptions(**FAST_SWARM, n_restarts=0)}


# ----------------------------------------------------------------- settings
def _setting(kind: str):  # type: ignore[no-untyped-def]
    pytest.importorskip("counterfact.datasets", reason="counterfact.datasets is not available yet")
    from counterfact.testing import make_setting

    return make_setting(kind)


@pytest.mark.parametrize("check", conformance_checks(), ids=lambda c: c.__name__)
def test_conformance_forest(check) -> None:  # type: ignore[no-untyped-def]
    check(lambda: cf.MDPSO(**FAST), _setting("rf"))


@pytest.fixture(scope="module")
def mixed():  # type: ignore[no-untyped-def]
    """Every feature kind, a linear ground truth, and a fitted logistic regression."""
    rng = np.random.default_rng(0)
    n = 300
    df = pd.DataFrame(
        {
            "age": rng.integers(18, 70, n),
            "income": rng.gamma(2.0, 1.5, n).round(3),
            "debt": rng.uniform(0, 10, n).round(2),
            "job": rng.choice(["a", "b", "c", "d"], n),
            "owner": rng.choice(["yes", "no"], n),
            "edu": pd.Categorical(
                rng.choice(["lo", "mid", "hi"], n), categories=["lo", "mid", "hi"], ordered=True
            ),
            "kids": rng.integers(0, 4, n),
        }
    )
    score = (
        0.8 * df.income
        - 0.5 * df.debt
        + (df.job == "c") * 1.5
        + df.edu.cat.codes * 0.7
        + (df.owner == "yes") * 0.8
        - 0.02 * df.age
    )
    df["y"] = (score + rng.normal(0, 0.5, n) > 0).astype(int)
    data = cf.Dataset.from_frame(df, "y")
    model = cf.models.fit(data, "lr", random_state=0)
    queries = data.X[model.predict(data.X) == 0].iloc[:5]
    return data, model, queries


# ---------------------------------------------------------- information value
def test_iv_categorical_hand_computed() -> None:
    # positives: x x x y, negatives: x y y y  ->  P = (3/4, 1/4), N = (1/4, 3/4)
    codes = np.array([0, 0, 0, 1, 0, 1, 1, 1])
    pos = np.array([1, 1, 1, 1, 0, 0, 0, 0], dtype=bool)
    expected = (0.75 - 0.25) * math.log(0.75 / 0.25) + (0.25 - 0.75) * math.log(0.25 / 0.75)
    assert iv_from_bins(codes, pos) == pytest.approx(expected)
    assert expected == pytest.approx(math.log(3))
    # symmetric in the two classes
    assert iv_from_bins(codes, ~pos) == pytest.approx(expected)


def test_iv_numeric_bins_outliers_and_smoothing() -> None:
    # 0..19 plus an outlier: Tukey's fences (Q1=5, Q3=15, IQR=10 -> [-10, 30]) drop 1000,
    # then 10 equal-width bins over [0, 19] pair consecutive values (0,1), (2,3), ..., (18,19)
    v = np.array([*range(20), 1000.0])
    codes, kept = bin_feature(v, n_bins=10)
    assert kept.tolist() == [True] * 20 + [False]
    assert codes.tolist() == [i // 2 for i in range(20)]
    y = np.isin(v, [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 1000])
    # bins 0-3: (2 pos, 0 neg); bins 4, 5: (1, 1); bins 6-9: (0, 2); n_p = n_n = 10;
    # empty cells count 0.5: P = .2 / .1 / .05 and N = .05 / .1 / .2
    expected = 4 * (0.2 - 0.05) * math.log(0.2 / 0.05) + 4 * (0.05 - 0.2) * math.log(0.05 / 0.2)
    assert iv_from_bins(codes, y[kept]) == pytest.approx(expected)
    frame = pd.DataFrame({"v": v, "y": y.astype(int)})
    data = cf.Dataset.from_frame(frame, "y")
    iv = information_value(data.X, data.y.to_numpy(), data.schema, np.array([0, 1]))
    assert iv[0, 0] == pytest.approx(expected) and iv[1, 0] == pytest.approx(expected)


def test_iv_few_values_one_bin_each_and_multiclass() -> None:
    codes, kept = bin_feature(np.array([3, 3, 7, 7, 9]), n_bins=10)
    assert codes.tolist() == [0, 0, 1, 1, 2] and kept.all()
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 200)
    frame = pd.DataFrame(
        {"signal": y + rng.normal(0, 0.3, 200), "noise": rng.normal(0, 1, 200), "y": y}
    )
    data = cf.Dataset.from_frame(frame, "y")
    iv = information_value(data.X, data.y.to_numpy(), data.schema, np.array([0, 1, 2]))
    assert iv.shape == (3, 2)
    assert (iv[:, 0] > iv[:, 1]).all()  # the informative feature ranks first for every class


def test_fitted_iv_and_active_set(mixed) -> None:  # type: ignore[no-untyped-def]
    data, model, queries = mixed
    m = cf.MDPSO(n_active=2, **FAST).fit(model, data)
    iv = m.information_value_
    assert list(iv.columns) == data.schema.names and list(iv.index) == [0, 1]
    expected = information_value(data.X, data.y.to_numpy(), data.schema, np.array([0, 1]))
    np.testing.assert_allclose(iv.to_numpy(), expected)
    # the active set: top-2 IV among the features the query may move (immutables never take a slot)
    x = queries.iloc[0]
    top = iv.loc[1].sort_values(ascending=False).index.tolist()
    bounds = cf.Constraints(immutable=[top[0]]).resolve(data.schema).for_query(x)
    pr = build_problem(
        x, bounds, data.schema, iv.loc[1].to_numpy(), n_active=2, epsilon=1.0, box="absolute"
    )
    assert pr.names == top[1:3]
    r = m.explain(queries, n_counterfactuals=2, constraints=cf.Constraints(immutable=[top[0]]))
    cfs = r.counterfactuals
    for q in queries.index:
        if r.found[q]:
            assert set(r.diagnostics.loc[q, "active_features"].split(", ")) <= set(top[1:])
            assert (cfs.loc[q, top[0]] == queries.loc[q, top[0]]).all()


# ----------------------------------------------------------------- the box
def test_epsilon_box_respected(mixed) -> None:  # type: ignore[no-untyped-def]
    data, model, queries = mixed
    eps, debt_eps = 0.3, 0.8
    m = cf.MDPSO(
        epsilon=eps,
        epsilon_per_feature={"debt": debt_eps},
        n_active=None,
        random_state=0,
        **SINGLE_RUN,
    )
    r = m.fit(model, data).explain(queries, n_counterfactuals=3)
    assert r.found.sum() > 0
    schema = data.schema
    for q in queries.index:
        cfs = r.for_query(q)
        for name in ("income", "debt", "age", "kids"):
            f = schema[name]
            lo, scale = float(f.lower), f.range
            z = (float(queries.loc[q, name]) - lo) / scale
            e = debt_eps if name == "debt" else eps
            blo, bhi = min(max(z * (1 - e), 0.0), z), max(min(z * (1 + e), 1.0), z)
            vals = (cfs[name].astype(float) - lo) / scale
            assert (vals >= blo - 1e-9).all() and (vals <= bhi + 1e-9).all(), (
                name,
                z,
                vals.tolist(),
            )


def test_swarm_positions_stay_in_box_and_coherent(mixed) -> None:  # type: ignore[no-untyped-def]
    data, _model, queries = mixed
    x = queries.iloc[0]
    cons = cf.Constraints(increasing=["edu"], allowed_values={"kids": [0, 1, 2, 3]}, max_changes=3)
    bounds = cons.resolve(data.schema).for_query(x)
    iv = np.ones(len(data.schema))
    pr = build_problem(x, bounds, data.schema, iv, n_active=None, epsilon=0.5, box="absolute")
    kinds = {f.name: f.kind for f in pr.features}
    assert kinds["job"] == "categorical" and kinds["edu"] == "grid" and kinds["age"] == "integer"
    sw = Swarm(
        pr,
        SwarmOptions(n_particles=30, discrete_diversity=0.5, patience=15),
        np.random.default_rng(0),
    )
    rng = np.random.default_rng(1)
    for _ in range(15):
        X = sw.ask()
        assert (X >= pr.lo - 1e-12).all() and (X <= pr.hi + 1e-12).all()
        for s, e, _q, _k in pr.groups:  # one-hot groups sit on a corner
            assert set(np.unique(X[:, s:e])) <= {0.0, 1.0} and (X[:, s:e].sum(1) == 1).all()
        for c, g in pr.grids:
            assert np.isin(X[:, c], g).all()
        raw = pr.decode(X)
        assert np.array_equal(raw["age"], np.round(raw["age"])) and raw["age"].dtype == np.int64
        assert set(raw["edu"]) <= {"mid", "hi"}  # increasing: never below the query's level
        changed = sw.magnitudes(sw.be.asarray(X)) > 0
        assert (changed.sum(1) <= 3).all()  # max_changes by repair
        sw.tell(rng.random(30) < 0.3, rng.random(30))


def test_forced_feature_moves_into_range(mixed) -> None:  # type: ignore[no-untyped-def]
    data, model, queries = mixed
    q = queries[queries["debt"] > 3].iloc[:2]
    cons = cf.Constraints(ranges={"debt": (0.0, 2.5)})
    r = (
        cf.MDPSO(random_state=0, **FAST)
        .fit(model, data)
        .explain(q, n_counterfactuals=2, constraints=cons)
    )
    for i in q.index:
        cfs = r.for_query(i)
        assert (cfs["debt"] <= 2.5 + 1e-9).all()
        assert violations(q.loc[i], cfs, data.schema, cons).empty


# ----------------------------------------------------------- search core
def test_core_known_answer() -> None:
    """Valid iff x0 >= 0.6 from z = (0.5, 0.5, 0.5): the optimum changes x0 alone, to 0.6."""
    schema = cf.Schema(
        tuple(cf.Feature(n, "real", lower=0.0, upper=1.0) for n in ("a", "b", "c")), target="y"
    )
    x = pd.Series({"a": 0.5, "b": 0.5, "c": 0.5})
    bounds = cf.Constraints().resolve(schema).for_query(x)
    pr = build_problem(x, bounds, schema, np.ones(3), n_active=None, epsilon=0.4, box="absolute")

    def score(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return X[:, 0] >= 0.6, np.maximum(0.6 - X[:, 0], 0)

    res = run(
        pr, score, SwarmOptions(n_particles=30, max_iter=100, patience=15), np.random.default_rng(0)
    )
    best = res.pbest_X[np.argmin(res.pbest_cost)]
    optimum = (0.1 + 1) / 3  # proximity 0.1/3 + sparsity 1/3
    assert res.pbest_valid.any() and res.pbest_cost.min() >= optimum - 1e-12
    assert best[0] == pytest.approx(0.6, abs=0.02) and best[1] == 0.5 and best[2] == 0.5


def test_kmeans_and_selection() -> None:
    rng = np.random.default_rng(0)
    X = np.vstack(
        [rng.normal(0, 0.01, (10, 2)), rng.normal(5, 0.01, (10, 2)), rng.normal(10, 0.01, (10, 2))]
    )
    labels = kmeans(X, 3, np.random.default_rng(1))
    assert len({tuple(np.unique(labels[i : i + 10])) for i in (0, 10, 20)}) == 3
    cost = np.arange(30.0)  # the first cluster is the cheapest
    order = select(X, cost, 3, "kmeans", np.random.default_rng(1))
    assert sorted(order[:3].tolist()) == [0, 10, 20] and sorted(order.tolist()) == list(range(30))
    assert select(X, cost, 3, "topk", np.random.default_rng(1))[:3].tolist() == [0, 1, 2]


@pytest.mark.parametrize("selection", ["kmeans", "topk", "pbest"])
def test_selections_valid(mixed, selection) -> None:  # type: ignore[no-untyped-def]
    data, model, queries = mixed
    r = (
        cf.MDPSO(selection=selection, random_state=0, **FAST)
        .fit(model, data)
        .explain(queries, n_counterfactuals=3)
    )
    assert r.found.sum() > 0
    for q in queries.index:
        cfs = r.for_query(q)
        if len(cfs):
            assert (model.predict(cfs) == 1).all()


# ------------------------------------------------------- reproducibility
def test_reproducible_and_batch_independent(mixed) -> None:  # type: ignore[no-untyped-def]
    data, model, queries = mixed
    cons = cf.Constraints(immutable=["age"], max_changes=3)

    def go(seed: int = 5, **kw):  # type: ignore[no-untyped-def]
        m = cf.MDPSO(random_state=seed, **FAST, **kw).fit(model, data)
        return m.explain(queries.iloc[:3], n_counterfactuals=3, constraints=cons).counterfactuals

    base = go()
    pd.testing.assert_frame_equal(base, go())
    pd.testing.assert_frame_equal(base, go(batch_size=2))  # lock-step batches do not change results
    assert not base.equals(go(seed=6))


def test_torch_backend_matches_numpy(mixed) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("torch")
    data, model, queries = mixed
    go = [
        cf.MDPSO(random_state=3, device=d, **FAST)
        .fit(model, data)
        .explain(queries.iloc[:2], n_counterfactuals=2)
        .counterfactuals
        for d in (None, "cpu")
    ]
    pd.testing.assert_frame_equal(go[0], go[1])  # same random stream, same float64 arithmetic


def test_one_model_call_per_iteration(mixed) -> None:  # type: ignore[no-untyped-def]
    data, model, queries = mixed

    class Counting:
        def __init__(self, m):  # type: ignore[no-untyped-def]
            self.m, self.classes_, self.calls = m, m.classes_, 0

        def predict_proba(self, X):  # type: ignore[no-untyped-def]
            self.calls += 1
            return self.m.predict_proba(X)

        def predict(self, X):  # type: ignore[no-untyped-def]
            return self.m.predict(X)

    counting = Counting(model)
    m = cf.MDPSO(random_state=0, **SINGLE_RUN).fit(counting, data)
    search_calls = []
    solve = m._solve_group

    def counted(group):  # type: ignore[no-untyped-def]
        before = counting.calls
        out = solve(group)
        search_calls.append(counting.calls - before)
        return out

    m._solve_group = counted
    r = m.explain(queries, n_counterfactuals=2)
    # a model that is not evaluated row by row: one call per swarm and iteration
    # (so that no query's answer depends on its batch), and no more
    assert sum(search_calls) == r.diagnostics["n_iterations"].sum()


def test_forest_swarms_share_one_call_per_iteration(mixed) -> None:  # type: ignore[no-untyped-def]
    data, _lr, queries = mixed
    model = cf.models.fit(data, "rf", random_state=0, n_estimators=20)
    m = cf.MDPSO(random_state=0, **SINGLE_RUN).fit(model, data)
    assert m._fast is not None and m._fast.row_independent
    calls = []
    predict = m._fast.proba_x

    def counted(X):  # type: ignore[no-untyped-def]
        calls.append(len(X))
        return predict(X)

    m._fast.proba_x = counted
    r = m.explain(queries, n_counterfactuals=2)
    assert len(calls) == r.diagnostics["n_iterations"].max()  # every live swarm in one call
    # the same answers as one query at a time (each seeded by its own values)
    one = pd.concat(
        [
            explain_at(m, queries.iloc[[i]], n_counterfactuals=2).counterfactuals
            for i in range(len(queries))
        ]
    )
    pd.testing.assert_frame_equal(r.counterfactuals, one)


@pytest.mark.parametrize("kind", ["lr", "rf"])
def test_fast_model_same_results(mixed, kind) -> None:  # type: ignore[no-untyped-def]
    data, lr, queries = mixed
    model = lr if kind == "lr" else cf.models.fit(data, "rf", random_state=0, n_estimators=20)
    cons = cf.Constraints(immutable=["age"])
    go = {}
    for fast in (True, False):
        m = cf.MDPSO(random_state=2, fast_model=fast, **FAST).fit(model, data)
        assert (m._fast is not None) == fast  # the pipeline folds: the shortcut is taken
        r = m.explain(queries.iloc[:3], n_counterfactuals=3, constraints=cons)
        go[fast] = (r.counterfactuals, r.diagnostics["n_iterations"].tolist())
    pd.testing.assert_frame_equal(go[True][0], go[False][0])
    assert go[True][1] == go[False][1]

    # a model that is not a pipeline is called as it is
    class Plain:
        classes_ = lr.classes_

        def predict_proba(self, X):  # type: ignore[no-untyped-def]
            return lr.predict_proba(X)

    assert cf.MDPSO(**FAST).fit(Plain(), data)._fast is None


def test_parameter_errors(mixed) -> None:  # type: ignore[no-untyped-def]
    data, model, _ = mixed
    with pytest.raises(ValidationError, match="epsilon_per_feature"):
        cf.MDPSO(epsilon_per_feature={"nope": 0.1}).fit(model, data)
    with pytest.raises(ValidationError, match=r"n_particles.*SwarmOptions.*\[2, inf\)"):
        SwarmOptions(n_particles=1)
    with pytest.raises(ValidationError, match=r"n_particles.*SwarmOptions"):
        cf.MDPSO(swarm={"n_particles": 1}).fit(model, data)
    with pytest.raises(ValidationError, match=r"'swarm' parameter of MDPSO.*\['particles'\]"):
        cf.MDPSO(swarm={"particles": 16}).fit(model, data)
    with pytest.raises(ValidationError, match=r"'swarm' parameter of MDPSO must be a SwarmOptions"):
        cf.MDPSO(swarm=16).fit(model, data)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="fast_model"):
        cf.MDPSO(fast_model="yes").fit(model, data)  # type: ignore[arg-type]
    pytest.importorskip("torch")
    with pytest.raises(ValidationError, match="device"):
        cf.MDPSO(device="no-such-device").fit(model, data)


def test_swarm_options_object(mixed) -> None:  # type: ignore[no-untyped-def]
    """The swarm's settings are one parameter: stored unchanged, shown by repr, replaced
    by set_params; a dict of its fields gives the same answers as the object."""
    import dataclasses

    data, model, queries = mixed
    assert cf.MDPSO().swarm == SwarmOptions()
    assert SwarmOptions().n_particles == 50 and SwarmOptions().patience == 30
    assert SwarmOptions(weights=[1, 2, 0]).weights == (1.0, 2.0, 0.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        SwarmOptions().n_particles = 3  # type: ignore[misc]
    options = SwarmOptions(**FAST_SWARM)
    m = cf.MDPSO(random_state=1, swarm=options)
    assert m.get_params()["swarm"] is options
    assert "swarm=SwarmOptions(n_particles=16" in repr(m)
    assert "swarm" not in repr(cf.MDPSO())
    first = m.fit(model, data).explain(queries.iloc[:2], n_counterfactuals=2).counterfactuals
    m.set_params(swarm=dict(FAST_SWARM))
    again = m.fit(model, data).explain(queries.iloc[:2], n_counterfactuals=2).counterfactuals
    pd.testing.assert_frame_equal(first, again)


def test_time_limit_and_multiclass() -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 240)
    frame = pd.DataFrame(
        {
            "a": y + rng.normal(0, 0.4, 240),
            "b": rng.normal(0, 1, 240),
            "c": rng.choice(["u", "v"], 240),
            "y": y,
        }
    )
    data = cf.Dataset.from_frame(frame, "y")
    model = cf.models.fit(data, "lr", random_state=0)
    X = data.X[model.predict(data.X) == 0].iloc[:3]
    m = cf.MDPSO(random_state=0, epsilon=1.0, **FAST).fit(model, data)
    assert m.information_value_.shape == (3, 3)
    r = m.explain(X, n_counterfactuals=2, target=2)
    assert r.found.sum() > 0
    assert (model.predict(r.counterfactuals) == 2).all()
    with pytest.raises(ValidationError):
        m.explain(X)  # three classes: the target must be given
    r = (
        cf.MDPSO(random_state=0, time_limit=1e-4)
        .fit(model, data)
        .explain(X, n_counterfactuals=2, target=2)
    )
    assert set(r.status) <= {"feasible", "timeout"}
    assert (r.diagnostics["n_iterations"] <= 1).all()


def test_time_limit_bounds_the_search(mixed) -> None:  # type: ignore[no-untyped-def]
    """A search that would run for minutes stops at the limit with its best verified answers."""
    data, model, queries = mixed
    endless = SwarmOptions(max_iter=100_000, patience=100_000, n_particles=16)
    m = cf.MDPSO(random_state=0, time_limit=0.3, swarm=endless).fit(model, data)
    r = m.explain(queries.iloc[:2], n_counterfactuals=2)
    assert set(r.status) <= {"feasible", "timeout"}
    assert (
        r.runtime <= 0.3 + 0.5
    ).all()  # the method's own time per query (its contract: limit + 0.5 s)
    assert (r.diagnostics["n_iterations"] < 100_000).all()
    feasible = r.status.index[r.status == "feasible"]
    assert (r.found[feasible] > 0).all()


def test_pool_fills_up_from_the_visited_positions() -> None:
    """A converged swarm holds few distinct valid rows: the valid positions it
    visited fill the pool up to the candidates handed on (personal bests: only up to k)."""
    from counterfact.methods.mdpso._search import SwarmResult
    from counterfact.methods.mdpso._select import n_handed_on, pool

    same = np.array([[0.5, 0.5]] * 4)
    visited = np.array([[0.1 * i, 0.2] for i in range(1, 31)])
    res = SwarmResult(
        X=same,
        cost=np.full(4, 0.3),
        valid=np.ones(4, dtype=bool),
        pbest_X=same,
        pbest_cost=np.full(4, 0.3),
        pbest_valid=np.ones(4, dtype=bool),
        n_iter=5,
        history=[],
        archive_X=visited,
        archive_cost=np.linspace(0.1, 0.9, 30),
    )
    X, c = pool(res, "kmeans", k=3)
    assert len(X) == 31 and n_handed_on(3) == 22  # the one converged row and every visited one
    assert np.all(np.diff(c) >= 0)  # sorted by cost
    X, _ = pool(res, "pbest", k=1)
    assert len(X) == 1  # enough personal bests for k=1: nothing added
    big = SwarmResult(
        X=visited,
        cost=np.linspace(0.1, 0.9, 30),
        valid=np.ones(30, dtype=bool),
        pbest_X=visited,
        pbest_cost=np.linspace(0.1, 0.9, 30),
        pbest_valid=np.ones(30, dtype=bool),
        n_iter=5,
        history=[],
        archive_X=np.array([[9.0, 9.0]]),
        archive_cost=np.array([0.0]),
    )
    X, _ = pool(big, "kmeans", k=3)
    assert len(X) == 30  # already more than handed on: the archive is not searched


def test_a_batch_shares_its_queries_budgets(mixed) -> None:  # type: ignore[no-untyped-def]
    """``time_limit`` is seconds per query: a batch of 4 queries started 1.5 s ago with 1 s
    each still has 2.5 s (the pooled deadline, as UFCE's); each query's own clock would
    have stopped every swarm at once, as ``timeout``."""
    import time
    from dataclasses import replace

    from counterfact.methods._pipeline._prepare import prepare

    data, model, queries = mixed
    m = cf.MDPSO(random_state=0, swarm=SwarmOptions(**FAST_SWARM, n_restarts=0)).fit(model, data)
    tasks, _ = prepare(m, queries.iloc[:4], 1, None, None)
    past = time.perf_counter() - 1.5
    tasks = [replace(t, time_limit=1.0, started=past) for t in tasks]
    out = m._explain_batch(tasks)
    assert [c.status for c in out].count("timeout") == 0, [c.status for c in out]
