"""explain(requirements=cf.Requirements(costs=cf.Costs(...))): exact methods find the
brute-force optimum under the costs, heuristics rank by them, and results speak in the
user's unit.

The data: four features on a small domain (two integers, a categorical and an
ordinal feature; 11 x 9 x 3 x 4 = 1188 points), so that the cheapest
counterfactual under the costs is found by enumerating every point with the
real model.  The costs use each kind of term: up/down weights, a forbidden
direction, per-category transitions with a forbidden one, and percentile
shifts (non-convex, piecewise linear) on a numeric and an ordinal feature.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.constraints._costs import BoundCosts
from counterfact.methods._tags import MethodTags
from counterfact.methods.nearest import NearestObservable
from counterfact.schema._spread import mad as mad_of

pytest.importorskip("highspy")
pytest.importorskip("z3")

LEVELS = ["lo", "mid", "high", "top"]
INF = float("inf")
COSTS = cf.Costs(
    weights={"a": (0.1, 0.5), "b": (INF, 0.3)},
    transitions={"c": {("x", "z"): 2.5, ("y", "z"): 0.7, ("x", "y"): INF}},
    percentile={"a": 1.5, "d": 2.0},
    unit="months of saving",
    unit_scale=1.0,
)


def _data(seed: int = 0, n: int = 400) -> cf.Dataset:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 11, n)
    b = rng.integers(0, 9, n)
    c = rng.choice(["x", "y", "z"], n, p=[0.5, 0.3, 0.2])
    d = rng.integers(0, 4, n)
    logit = 0.6 * a - 0.5 * b + 2.0 * (c == "z") + 0.9 * d - 3.0 + rng.normal(0, 0.7, n)
    frame = pd.DataFrame(
        {
            "a": a,
            "b": b,
            "c": c,
            "d": np.array(LEVELS, dtype=object)[d],
            "y": (logit > 0).astype(int),
        }
    )
    return cf.Dataset.from_frame(
        frame, target="y", kinds={"d": "ordinal"}, categories={"d": LEVELS}
    )


@pytest.fixture(scope="module")
def setting():
    data = _data()
    model = cf.models.fit(data, "lr", random_state=0)
    grid = pd.DataFrame(
        list(itertools.product(range(11), range(9), ["x", "y", "z"], LEVELS)),
        columns=["a", "b", "c", "d"],
    )
    grid = data.schema.coerce(grid)
    pred = np.asarray(model.predict(grid))
    X = data.X
    rejected = X[np.asarray(model.predict(X)) == 0].drop_duplicates()
    queries = rejected.iloc[[0, 3, 7, 12, 20]]
    return data, model, grid, pred, queries


def _brute(data, grid, pred, query, target=1):
    bound = COSTS.bind(data.schema, data.X)
    cost = bound.evaluate(query, grid)
    ok = (pred == target) & np.isfinite(cost)
    return float(cost[ok].min())


def _first_costs(result):
    c = result.cost()
    return c[c.index.get_level_values(1) == 0].droplevel(1)


@pytest.mark.parametrize("oracle", ["z3", "highs"])
def test_mace_finds_the_brute_force_optimum(setting, oracle):
    data, model, grid, pred, queries = setting
    mace = cf.MACE(solver=oracle, rel_gap=1e-3, time_limit=60, random_state=0).fit(model, data)
    res = mace.explain(queries, requirements=cf.Requirements(costs=COSTS))
    got = _first_costs(res)
    for q in queries.index:
        best = _brute(data, grid, pred, queries.loc[q])
        assert res.status[q] == "optimal"
        assert best - 1e-9 <= got[q] <= best + 1e-3 + 1e-9
        assert res.diagnostics.loc[q, "delta_min"] <= best + 1e-9  # the lower bound is a proof
        assert res.diagnostics.loc[q, "delta_max"] == pytest.approx(got[q], abs=1e-9)


def test_ceocl_finds_the_brute_force_optimum(setting):
    data, model, grid, pred, queries = setting
    ceocl = cf.CEOCL(norm="l1", time_limit=60, random_state=0).fit(model, data)
    res = ceocl.explain(queries, requirements=cf.Requirements(costs=COSTS))
    got = _first_costs(res)
    for q in queries.index:
        best = _brute(data, grid, pred, queries.loc[q])
        assert res.status[q] == "optimal"
        assert got[q] == pytest.approx(best, rel=1e-6, abs=1e-7)
        assert res.diagnostics.loc[q, "objective"] == pytest.approx(best, rel=1e-6, abs=1e-7)


@pytest.mark.parametrize("solver", ["auto", "bnb", "cpsat", "z3"])
def test_forest_solvers_are_exact_under_the_costs(setting, solver):
    data, _model, grid, _pred, _queries = setting
    forest = cf.models.fit(data, "rf", random_state=0, n_estimators=5, max_depth=3)
    pred = np.asarray(forest.predict(grid))
    X = data.X
    rejected = X[np.asarray(forest.predict(X)) == 0].drop_duplicates().iloc[:3]
    res = (
        cf.MACE(solver=solver, rel_gap=1e-3, time_limit=60, random_state=0)
        .fit(forest, data)
        .explain(rejected, requirements=cf.Requirements(costs=COSTS))
    )
    got = _first_costs(res)
    for q in rejected.index:
        best = _brute(data, grid, pred, rejected.loc[q])
        assert res.status[q] == "optimal"
        assert best - 1e-9 <= got[q] <= best + 1e-3 + 1e-9


def _heuristics():
    out = [("nearest", {})]
    out += [("ufce", dict(cf.UFCE.tags.fast_params)), ("mdpso", dict(cf.MDPSO.tags.fast_params))]
    return out


@pytest.mark.parametrize("name,params", _heuristics())
def test_heuristics_rank_by_the_costs_and_report_them(setting, name, params):
    data, model, grid, pred, queries = setting
    method = cf.methods.get(name, **params).fit(model, data)
    res = method.explain(queries, n_counterfactuals=2, requirements=cf.Requirements(costs=COSTS))
    assert method.tags.costs == "search"
    bound = COSTS.bind(data.schema, data.X)
    got = res.cost()
    assert len(got) > 0
    for (q, r), row in res.counterfactuals.iterrows():
        x = queries.loc[q]
        own = float(bound.evaluate(x, row.to_frame().T)[0])
        assert got[(q, r)] == pytest.approx(own, rel=1e-12, abs=1e-12)
        assert np.isfinite(own)  # forbidden moves never appear
        assert row["b"] <= x["b"] and not (x["c"] == "x" and row["c"] == "y")
        assert own >= _brute(data, grid, pred, x) - 1e-9  # never better than the optimum
    for q in res.queries.index:
        costs = got[got.index.get_level_values(0) == q].to_numpy()
        assert np.all(np.diff(costs) >= -1e-12)  # listed cheapest first


def test_l2c_ranks_by_the_costs(setting):
    pytest.importorskip("torch")
    data, model, _grid, _pred, queries = setting
    params = {**dict(cf.L2C.tags.fast_params), "random_state": 0}
    res = (
        cf.L2C(**params)
        .fit(model, data)
        .explain(queries, n_counterfactuals=2, requirements=cf.Requirements(costs=COSTS))
    )
    bound = COSTS.bind(data.schema, data.X)
    for (q, r), row in res.counterfactuals.iterrows():
        assert res.cost()[(q, r)] == pytest.approx(
            float(bound.evaluate(queries.loc[q], row.to_frame().T)[0])
        )


def test_result_speaks_in_the_unit_and_round_trips(setting):
    data, model, _grid, _pred, queries = setting
    res = (
        cf.MACE(solver="highs", time_limit=30, random_state=0)
        .fit(model, data)
        .explain(queries.iloc[:2], requirements=cf.Requirements(costs=COSTS))
    )
    text = res.describe()
    assert "cost about" in text and "months of saving" in text
    q = queries.index[0]
    assert "months of saving" in res.certificate(q) and "normalised" not in res.certificate(q)
    doc = json.loads(res.to_json())
    assert doc["costs"]["unit"] == "months of saving"
    assert doc["costs"]["values"][0] == pytest.approx(float(res.cost().iloc[0]))
    back = cf.CounterfactualResult.from_json(res.to_json())
    pd.testing.assert_series_equal(back.cost(), res.cost())
    assert back.describe() == text


def test_costs_are_not_mutated_and_bad_use_is_refused(setting):
    data, model, _grid, _pred, queries = setting
    before = repr(COSTS)

    class NoCosts(NearestObservable):
        tags = MethodTags(display_name="no costs", summary="a method that cannot take costs")

    with pytest.raises(cf.UnsupportedConstraintError, match="cannot take costs"):
        NoCosts().fit(model, data).explain(
            queries.iloc[:1], requirements=cf.Requirements(costs=COSTS)
        )
    with pytest.raises(cf.ValidationError, match=r"must be a cf\.Costs"):
        NearestObservable().fit(model, data).explain(
            queries.iloc[:1], requirements=cf.Requirements(costs={"a": 1.0})
        )
    with pytest.raises(cf.ValidationError, match="unknown features"):
        NearestObservable().fit(model, data).explain(
            queries.iloc[:1],
            requirements=cf.Requirements(costs=cf.Costs(weights={"income": 1.0})),
        )
    assert repr(COSTS) == before


def test_audit_costs_carry_the_unit(setting):
    data, model, _grid, _pred, queries = setting
    mace = cf.MACE(solver="highs", time_limit=30, random_state=0).fit(model, data)
    audit = cf.audit(
        mace,
        queries,
        requirements=cf.Requirements(costs=COSTS),
        statistics=cf.recourse.Statistics(n_bootstrap=20, min_group_size=1),
    )
    assert audit.meta["measure"] == "costs" and audit.meta["cost_unit"] == "months of saving"
    rec = audit.per_row[audit.per_row["outcome"] == "recourse"]
    assert len(rec) and np.allclose(rec["cost"], rec["cost_user"])
    res = mace.explain(queries, requirements=cf.Requirements(costs=COSTS))
    assert np.allclose(rec["cost_user"].to_numpy(), _first_costs(res).reindex(rec.index).to_numpy())


# ------------------------------------------------------------ the measure of effort


def test_the_default_measure_counts_changes_and_moves_in_mads(setting):
    """Known answers of ``Costs()``: 1 per changed feature plus each numeric or ordinal
    move in MADs of the training data, a category change moving one unit."""
    data, *_ = setting
    bound = cf.Costs().bind(data.schema, data.X)
    mad = mad_of(data.X, data.schema)
    q = data.X.iloc[0]
    one_cat = q.copy()
    one_cat["c"] = "z" if q["c"] != "z" else "x"
    far = q.copy()
    far["a"] = 10 if q["a"] < 5 else 0
    far["b"] = 8 if q["b"] < 4 else 0
    both = one_cat.copy()
    both["a"] = q["a"] + 1 if q["a"] < 10 else q["a"] - 1
    cost = bound.evaluate(q, pd.DataFrame([q, one_cat, far, both]))
    expected_far = 2 + abs(far["a"] - q["a"]) / mad[0] + abs(far["b"] - q["b"]) / mad[1]
    assert cost == pytest.approx([0.0, 2.0, expected_far, 2.0 + 1.0 + 1 / mad[0]])
    # a category change beats a large numeric move, one change beats two
    assert cost[1] < cost[2] and cost[1] < cost[3]


def test_named_measures_and_own(setting):
    data, model, _grid, _pred, queries = setting
    assert cf.Costs().preset_name == "effort"
    assert cf.Costs.preset("fewest-changes").moves == 0.01
    assert cf.Requirements(costs="smallest-moves").costs == cf.Costs(per_change=0.0)
    assert "MADs" in cf.Costs().words() and "range" in cf.Costs.preset("range-l1").words()
    with pytest.raises(cf.ValidationError, match="named measure"):
        cf.Requirements(costs="cheapest")
    with pytest.raises(cf.ValidationError, match="Unknown measure"):
        cf.Costs.preset("cheapest")
    with pytest.raises(cf.ValidationError, match=r"Costs\.scale"):
        cf.Costs(scale="std")
    near = NearestObservable().fit(model, data)
    own = near.explain(queries.iloc[:2], requirements=cf.Requirements(costs="own"))
    assert own.costs is None
    default = near.explain(queries.iloc[:2])
    assert default.costs is not None and default.costs.costs == cf.Costs()


def test_range_scale_is_the_range_normalised_l1(setting):
    data, *_ = setting
    bound = cf.Costs.preset("range-l1").bind(data.schema)
    q = data.X.iloc[0]
    row = q.copy()
    row["a"] = 10 if q["a"] < 5 else 0
    row["c"] = "z" if q["c"] != "z" else "x"
    rng = data.schema.ranges()
    assert bound.evaluate(q, row.to_frame().T)[0] == pytest.approx(
        abs(row["a"] - q["a"]) / rng[0] + 1.0
    )


def test_per_change_and_its_round_trip(setting):
    data, *_ = setting
    costs = cf.Costs(weights={"a": 0.5}, per_change={"a": 3.0, "b": 0.0})
    assert costs.charge("a") == 3.0 and costs.charge("b") == 0.0 and costs.charge("c") == 1.0
    bound = costs.bind(data.schema, data.X)
    again = BoundCosts.from_dict(json.loads(json.dumps(bound.to_dict())), data.schema)
    assert again.spread == bound.spread and again.costs == costs
    q = data.X.iloc[0]
    row = q.copy()
    row["a"] = q["a"] + 2 if q["a"] <= 8 else q["a"] - 2
    assert bound.evaluate(q, row.to_frame().T)[0] == pytest.approx(3.0 + 2 * 0.5)
    with pytest.raises(cf.ValidationError, match="per_change"):
        cf.Costs(per_change=-1)
    with pytest.raises(cf.ValidationError, match="scale='range'"):
        cf.Costs().bind(data.schema)
