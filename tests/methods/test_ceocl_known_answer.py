"""CE-OCL known answers, shared with MACE (same problems as tests/methods/test_mace.py).

With ``norm="l1"`` and ``distance_scale="range"`` CE-OCL minimises
``sum_j |x_j - q_j| / range_j + sum_{categorical} 1[changed]``, which is ``J``
times MACE's normalised l1 distance.  On the logistic-regression closed form
and on an enumerated depth-3 tree, CE-OCL's optimum (divided by ``J``) must
equal the known answer, and MACE's epsilon-optimal answer must agree with it
within MACE's epsilon; both backends.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import counterfact as cf
from counterfact.methods._pipeline import resolution

pytest.importorskip("highspy")
pytest.importorskip("pyscipopt")
pytest.importorskip("z3")

#: the paper's own objective: the known answers here are in it
OWN = cf.Requirements(costs="own")


def _load_mace_tests():
    """The problem generators and closed forms of tests/methods/test_mace.py (one source
    of truth)."""
    spec = importlib.util.spec_from_file_location(
        "_mace_known_answers", Path(__file__).with_name("test_mace.py")
    )
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


K = _load_mace_tests()
EPS = K.EPS  # MACE's optimality tolerance (normalised distance)
TOL = 1e-6  # CE-OCL is exact up to solver tolerances


@pytest.fixture(scope="module")
def lr_setting():
    data = K._numeric_data()
    train, test = data.split(test_size=0.2, random_state=0)
    return train, test, cf.models.fit(train, "lr", random_state=0)


@pytest.fixture(scope="module")
def tree_setting():
    data = K._mixed_data()
    train, test = data.split(test_size=0.2, random_state=0)
    return train, test, cf.models.fit(train, "tree", random_state=0, max_depth=3)


def _ceocl(backend: str, train, model) -> cf.CEOCL:  # type: ignore[no-untyped-def]
    return cf.CEOCL(
        norm="l1", distance_scale="range", solver=backend, solution_pool=False, random_state=0
    ).fit(model, train)


@pytest.mark.parametrize("backend", ["highs", "scip"])
def test_lr_closed_form_and_mace(lr_setting, backend):
    train, test, model = lr_setting
    schema = train.schema
    J = len(schema)
    w, b = K._raw_linear(model)
    lo = np.array([schema[n].lower for n in schema.names])
    hi = np.array([schema[n].upper for n in schema.names])
    R = schema.ranges()
    X = test.X.iloc[:6]
    ceocl = _ceocl(backend, train, model)
    res = ceocl.explain(X, requirements=OWN)
    mace = (
        cf.MACE(norm="l1", rel_gap=EPS, margin=ceocl.margin)
        .fit(model, train)
        .explain(X, requirements=OWN)
    )
    for qid, x in X.iterrows():
        q = x.to_numpy(dtype=float)
        sign = 1.0 if model.predict(x.to_frame().T)[0] == 0 else -1.0
        opt = K._lr_l1_opt(w, b, q, np.minimum(lo, q), np.maximum(hi, q), R, sign, ceocl.margin)
        assert res.status[qid] == "optimal"
        d = res.diagnostics.loc[qid]
        got = d["objective"] / J
        assert got == pytest.approx(opt, abs=TOL)
        # the returned row's own distance (independent of the solver's objective)
        row = res.for_query(qid).iloc[[0]]
        assert float(cf.metrics.distance(x, row, schema, norm="l1")[0]) == pytest.approx(
            opt, abs=TOL
        )
        # MACE agrees within its epsilon, and its proven bounds bracket CE-OCL's optimum.
        # MACE's answer may lie between the decision and CE-OCL's margin (its proofs hold
        # 1e-6 above the decision; which point its Z3 search meets first varies with load),
        # so its answer is bracketed by the optimum at the decision and CE-OCL's optimum
        at_decision = K._lr_l1_opt(w, b, q, np.minimum(lo, q), np.maximum(hi, q), R, sign, 0.0)
        dm = mace.diagnostics.loc[qid]
        assert dm["delta_min"] - TOL <= at_decision <= dm["delta_max"] + TOL
        assert dm["delta_min"] - TOL <= got <= dm["delta_max"] + (opt - at_decision) + TOL
        assert abs(dm["delta_max"] - got) <= EPS + TOL


@pytest.mark.parametrize("backend", ["highs", "scip"])
def test_lr_with_bounds_and_immutable(lr_setting, backend):
    """Ranges and an immutable feature move the closed form; CE-OCL follows."""
    train, test, model = lr_setting
    schema = train.schema
    names = schema.names
    w, b = K._raw_linear(model)
    x = test.X.iloc[0]
    q = x.to_numpy(dtype=float)
    lo = np.array([schema[n].lower for n in names])
    hi = np.array([schema[n].upper for n in names])
    eff = np.abs(w) * schema.ranges()
    top, other = int(np.argmax(eff)), int(np.argsort(-eff)[1])
    rng_lo, rng_hi = min(q[top], lo[top]), max(q[top], lo[top]) + 0.1 * schema.ranges()[top]
    cons = cf.Constraints(ranges={names[top]: (rng_lo, rng_hi)}, immutable=[names[other]])
    qlo, qhi = np.minimum(lo, q), np.maximum(hi, q)
    qlo[top], qhi[top] = max(qlo[top], rng_lo), min(qhi[top], rng_hi)
    qlo[other] = qhi[other] = q[other]
    sign = 1.0 if model.predict(x.to_frame().T)[0] == 0 else -1.0
    ceocl = _ceocl(backend, train, model)
    opt = K._lr_l1_opt(w, b, q, qlo, qhi, schema.ranges(), sign, ceocl.margin)
    res = ceocl.explain(x, constraints=cons, requirements=OWN)
    if np.isinf(opt):
        assert res.status.iloc[0] == "infeasible"
        return
    assert res.diagnostics.iloc[0]["objective"] / len(schema) == pytest.approx(opt, abs=TOL)
    row = res.counterfactuals.iloc[0]
    assert row[names[other]] == x[names[other]]
    assert rng_lo - 1e-9 <= row[names[top]] <= rng_hi + 1e-9


@pytest.mark.parametrize("backend", ["highs", "scip"])
def test_tree_enumerated_and_mace(tree_setting, backend):
    train, test, model = tree_setting
    schema = train.schema
    J = len(schema)
    X = test.X.iloc[:8]
    res = _ceocl(backend, train, model).explain(X, requirements=OWN)
    mace = cf.MACE(norm="l1", rel_gap=EPS).fit(model, train).explain(X, requirements=OWN)
    classes = list(model.classes_)
    for qid, x in X.iterrows():
        opt = K._tree_opt(model, schema, x, classes.index(res.target[qid]), "l1")
        assert res.status[qid] == "optimal", (qid, res.status[qid])
        got = res.diagnostics.loc[qid, "objective"] / J
        # float32-safe split bounds may cost up to ~1e-6 of a range per split
        assert got == pytest.approx(opt, abs=1e-5)
        row = res.for_query(qid).iloc[[0]]
        assert float(cf.metrics.distance(x, row, schema, norm="l1")[0]) == pytest.approx(
            opt, abs=1e-5
        )
        dm = mace.diagnostics.loc[qid]
        assert abs(dm["delta_max"] - got) <= EPS + 1e-5
        assert dm["delta_min"] <= got + 1e-5


def test_l1_objective_is_j_times_mace_distance(lr_setting):
    """The scaling that makes the two objectives comparable: without
    ``distance_scale="range"`` (MAD weights, CE-OCL's default for l1) the
    optimum is a different point in general, with the range scale it is MACE's."""
    train, test, model = lr_setting
    x = test.X.iloc[1]
    r_range = _ceocl("highs", train, model).explain(x, requirements=OWN)
    r_mad = cf.CEOCL(norm="l1", random_state=0).fit(model, train).explain(x, requirements=OWN)
    d_range = float(
        cf.metrics.distance(x, r_range.counterfactuals.iloc[[0]], train.schema, norm="l1")[0]
    )
    d_mad = float(
        cf.metrics.distance(x, r_mad.counterfactuals.iloc[[0]], train.schema, norm="l1")[0]
    )
    assert d_range <= d_mad + TOL
    assert r_range.diagnostics.iloc[0]["objective"] / len(train.schema) == pytest.approx(
        d_range, abs=TOL
    )


# ------------------------------------------------------------------ l2: HiGHS vs SCIP's exact MIQP
def _widened(schema: cf.Schema, widen: float) -> cf.Schema:
    feats = []
    for f in schema:
        if f.is_numeric:
            w = widen * f.range
            lo, hi = float(f.lower) - w, float(f.upper) + w  # type: ignore[arg-type]
            if f.kind == "integer":
                lo, hi = float(np.floor(lo)), float(np.ceil(hi))
            f = f.with_(lower=lo, upper=hi)
        feats.append(f)
    return cf.Schema(tuple(feats), target=schema.target, classes=schema.classes)


@pytest.mark.parametrize("widen", [0.0, 5.0])
def test_l2_highs_certified_equals_scip_miqp(widen):
    """HiGHS has no MIQP: secant squares + polish + outer-approximation certificate.
    Its optimum must equal SCIP's exact convex MIQP, also on wide boxes where the
    secant model alone picks a sub-optimal integer assignment."""
    data = K._mixed_data()
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    train = train.with_schema(_widened(train.schema, widen))
    X = test.X.iloc[:6]
    obj = {}
    for backend in ("highs", "scip"):
        res = (
            cf.CEOCL(norm="l2", alpha=0.05, solver=backend, solution_pool=False, random_state=0)
            .fit(model, train)
            .explain(X, requirements=OWN)
        )
        assert (res.status == "optimal").all(), res.status.tolist()
        obj[backend] = res.diagnostics["objective"].to_numpy(dtype=float)
    np.testing.assert_allclose(obj["highs"], obj["scip"], rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("backend", ["highs", "scip"])
def test_no_other_option_when_one_feature_may_move(lr_setting, backend):
    """One feature may move on a logistic regression: after the optimum every other
    counterfactual moves that feature further the same way (the optimum plus more),
    so the default blocking ("options") proves that no other option exists: one
    answer, ``alternatives_exhausted``, and a reason that says it is proven."""
    train, test, model = lr_setting
    schema = train.schema
    w, _ = K._raw_linear(model)
    f = schema.names[int(np.argmax(np.abs(w) * schema.ranges()))]
    c = cf.Constraints(features_to_vary=[f])
    ceocl = _ceocl(backend, train, model)
    X = test.X.iloc[:4]
    three = ceocl.explain(X, n_counterfactuals=3, constraints=c, requirements=OWN)
    one = ceocl.explain(X, constraints=c, requirements=OWN)
    for qid in X.index:
        if one.found[qid] == 0:
            continue
        d = three.diagnostics.loc[qid]
        assert three.found[qid] == 1 and bool(d["alternatives_exhausted"])
        assert d["n_options"] == 0 and "proved" in d["reason"]
        assert float(three.for_query(qid)[f].iloc[0]) == pytest.approx(
            float(one.for_query(qid)[f].iloc[0]), abs=1e-6 * schema[f].range
        )
    assert (one.found > 0).sum() >= 2


@pytest.mark.parametrize("backend", ["highs", "scip"])
def test_point_diversity_when_no_other_change_set_is_left(lr_setting, backend):
    """blocking="features", one feature may move: after the optimum no other change
    set exists, so the 2nd and 3rd counterfactuals are the next nearest points that
    differ from every earlier one (by >= 1 % of the range: the paper's criterion under
    ``alternatives="method"``, the method's own answers, which the shared selection
    would drop as copies), each valid; the first stays the optimum."""
    train, test, model = lr_setting
    schema = train.schema
    w, _ = K._raw_linear(model)
    f = schema.names[int(np.argmax(np.abs(w) * schema.ranges()))]
    c = cf.Constraints(features_to_vary=[f])
    ceocl = cf.CEOCL(
        norm="l1",
        distance_scale="range",
        solver=backend,
        solution_pool=False,
        blocking="features",
        random_state=0,
    ).fit(model, train)
    X = test.X.iloc[:4]
    three = ceocl.explain(
        X, n_counterfactuals=3, constraints=c, requirements=OWN, alternatives="method"
    )
    one = ceocl.explain(X, constraints=c, requirements=OWN)
    # answers are snapped to the feature's grid afterwards: one resolution unit less
    step = 0.01 * schema[f].range - (resolution(schema[f]) or 0.0)
    for qid in X.index:
        if one.found[qid] == 0:
            continue
        cfs = three.for_query(qid)
        assert len(cfs) == 3 and three.diagnostics.loc[qid, "n_point_diverse"] == 2
        assert (model.predict(cfs) == three.target[qid]).all()
        v = cfs[f].to_numpy(dtype=float)
        assert min(abs(a - b) for i, a in enumerate(v) for b in v[i + 1 :]) >= step * (1 - 1e-6)
        assert v[0] == pytest.approx(
            float(one.for_query(qid)[f].iloc[0]), abs=1e-6 * schema[f].range
        )
    assert (one.found > 0).sum() >= 2


def _in_projected_hull(method, row, mutable_cols) -> bool:  # type: ignore[no-untyped-def]
    """LP, independent of the MIP: is z(row), on the coordinates that may change,
    a convex combination of the hull points (epsilon 0)?"""
    from scipy.optimize import linprog

    hull = method.hulls_[method.model_.class_index(1)]
    P = hull.points[:, mutable_cols]
    z = method.compiled_.inputs.encode(row.to_frame().T)[0][mutable_cols]
    N = len(P)
    A_eq = np.vstack([P.T, np.ones(N)])
    b_eq = np.r_[z, 1.0]
    res = linprog(np.zeros(N), A_eq=A_eq, b_eq=b_eq, bounds=[(0, 1)] * N, method="highs")
    return bool(res.status == 0)


def test_trust_scope_mutable_and_all(tree_setting):
    """scope "mutable": the hull constrains only what may change (answers lie in the hull
    projected on those coordinates); scope "all": the paper's region over every feature."""
    train, test, model = tree_setting
    c = cf.Constraints(immutable=["job", "k"])
    X = test.X[model.predict(test.X) == 0].iloc[:5]
    kw = {"norm": "l1", "trust_region": "hull", "solver": "highs", "random_state": 0}
    mut = cf.CEOCL(**kw).fit(model, train).explain(X, constraints=c, requirements=OWN)
    full = (
        cf.CEOCL(trust_scope="all", **kw)
        .fit(model, train)
        .explain(X, constraints=c, requirements=OWN)
    )
    method = cf.CEOCL(**kw).fit(model, train)
    blocks = {b.name: b for b in method.compiled_.inputs.blocks}
    mutable_cols = [blocks["a"].start, blocks["b"].start]
    assert (mut.found > 0).sum() >= (full.found > 0).sum() and (mut.found > 0).sum() > 0
    for q in X.index:
        assert mut.diagnostics.loc[q, "hull_dims"] < full.diagnostics.loc[q, "hull_dims"]
        for _, row in mut.for_query(q).iterrows():
            assert _in_projected_hull(method, row, mutable_cols)
