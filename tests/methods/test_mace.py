"""MACE: known answers (closed form for logistic regression, enumerated depth-3 trees),
multi-class, constraints, diversity, time limits, and the conformance suite."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.constraints._bounds import changed
from counterfact.methods._pipeline._prepare import prepare

pytest.importorskip("z3")

#: the paper's own objective (eq. 3 under ``norm``): the known answers below are in it
OWN = cf.Requirements(costs="own")
EPS = 1e-3


# --------------------------------------------------------------------------- data
def _numeric_data(n: int = 300, seed: int = 0) -> cf.Dataset:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "a": rng.uniform(0, 10, n),
            "b": rng.uniform(-5, 5, n),
            "c": rng.uniform(0, 100, n),
            "d": rng.uniform(0, 1, n),
        }
    )
    score = 0.6 * X["a"] - 0.8 * X["b"] + 0.03 * X["c"] + 2.0 * X["d"] - 4.5
    y = (score + rng.normal(0, 1.0, n) > 0).astype(int)
    return cf.Dataset.from_frame(X.assign(y=y), target="y", name="synthetic")


def _mixed_data(n: int = 300, seed: int = 1, n_classes: int = 2) -> cf.Dataset:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "a": rng.uniform(0, 10, n),
            "b": rng.uniform(-5, 5, n),
            "k": rng.integers(0, 20, n),
            "job": rng.choice(["x", "y", "z"], n),
        }
    )
    s = X["a"] - X["b"] + 0.2 * X["k"] + (X["job"] == "y") * 3.0 - 6
    if n_classes == 2:
        y = (s + rng.normal(0, 1, n) > 0).astype(int)
    else:
        y = np.digitize(s + rng.normal(0, 1, n), [-3, 3])
    return cf.Dataset.from_frame(X.assign(y=y), target="y", name="mixed")


def _raw_linear(model) -> tuple[np.ndarray, float]:
    """Score w.z + b of a fitted lr pipeline over raw numeric features."""
    pre, clf = model.named_steps["pre"], model.named_steps["clf"]
    sc = pre.named_transformers_["num"]
    w = clf.coef_[0] / sc.scale_
    b = float(clf.intercept_[0] - np.sum(clf.coef_[0] * sc.mean_ / sc.scale_))
    return w, b


# --------------------------------------------------------------- closed forms
def _lr_l1_opt(w, b, q, lo, hi, R, gap_sign, margin):
    """min (1/J) sum |dz_j|/R_j  s.t.  sign*(w.z+b) >= margin, lo <= z <= hi
    (fractional knapsack)."""
    J = len(q)
    need = margin - gap_sign * (w @ q + b)
    if need <= 0:
        return 0.0
    ws = gap_sign * w
    room = np.where(ws > 0, hi - q, q - lo)  # raw movement available in the useful direction
    eff = np.abs(ws) * R  # score per unit of normalised distance
    cost = 0.0
    for j in np.argsort(-eff):
        if ws[j] == 0 or need <= 0:
            break
        gain = abs(ws[j]) * room[j]
        take = min(gain, need)
        cost += take / abs(ws[j]) / R[j]
        need -= take
    return cost / J if need <= 1e-12 else np.inf


def _lr_linf_opt(w, b, q, lo, hi, R, gap_sign, margin):
    """min t  s.t. moving every feature by t*R_j (clipped to its bound) closes the gap."""
    need = margin - gap_sign * (w @ q + b)
    if need <= 0:
        return 0.0
    ws = gap_sign * w
    room = np.where(ws > 0, hi - q, q - lo)
    caps = room / R  # t at which feature j hits its bound

    def gain(t):
        return float(np.sum(np.abs(ws) * np.minimum(t, caps) * R))

    if gain(caps.max()) < need:
        return np.inf
    lo_t, hi_t = 0.0, float(caps.max())
    for _ in range(200):
        mid = (lo_t + hi_t) / 2
        lo_t, hi_t = (mid, hi_t) if gain(mid) < need else (lo_t, mid)
    return hi_t


@pytest.fixture(scope="module")
def lr_setting():
    data = _numeric_data()
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    return train, test, model


@pytest.mark.parametrize("norm", ["l1", "linf"])
def test_lr_known_answer(lr_setting, norm):
    train, test, model = lr_setting
    w, b = _raw_linear(model)
    schema = train.schema
    lo = np.array([schema[n].lower for n in schema.names])
    hi = np.array([schema[n].upper for n in schema.names])
    R = schema.ranges()
    X = test.X.iloc[:6]
    mace = cf.MACE(norm=norm, rel_gap=EPS).fit(model, train)
    res = mace.explain(X, requirements=OWN)
    opt_fn = _lr_l1_opt if norm == "l1" else _lr_linf_opt
    for qid, x in X.iterrows():
        q = x.to_numpy(dtype=float)
        pred = model.predict(x.to_frame().T)[0]
        sign = 1.0 if pred == 0 else -1.0
        qlo, qhi = np.minimum(lo, q), np.maximum(hi, q)
        d = res.diagnostics.loc[qid]
        # the proof covers every point passing the threshold by the stated tolerance
        # (negative margin_tolerance: by at least that much on the logit); the answer
        # itself only has to pass the real model's decision
        proof = opt_fn(w, b, q, qlo, qhi, R, sign, -float(d["margin_tolerance"]))
        valid = opt_fn(w, b, q, qlo, qhi, R, sign, 0.0)
        assert res.status[qid] == "optimal"
        assert d["delta_min"] <= proof + 1e-9
        assert valid <= d["delta_max"] + 1e-9
        assert d["delta_max"] - proof <= EPS * d["delta_max"] + 1e-9
        assert d["solver"] == "z3"


def test_lr_known_answer_with_bounds(lr_setting):
    """Ranges and an immutable feature change the closed form; MACE follows."""
    train, test, model = lr_setting
    w, b = _raw_linear(model)
    schema = train.schema
    names = schema.names
    x = test.X.iloc[0]
    q = x.to_numpy(dtype=float)
    lo = np.array([schema[n].lower for n in names])
    hi = np.array([schema[n].upper for n in names])
    # cap the most efficient feature close to the query, freeze another
    eff = np.abs(w) * schema.ranges()
    top = int(np.argmax(eff))
    other = int(np.argsort(-eff)[1])
    rng_lo = min(q[top], lo[top])
    rng_hi = max(q[top], lo[top]) + 0.1 * schema.ranges()[top]
    cons = cf.Constraints(ranges={names[top]: (rng_lo, rng_hi)}, immutable=[names[other]])
    qlo, qhi = np.minimum(lo, q), np.maximum(hi, q)
    qlo[top], qhi[top] = max(qlo[top], rng_lo), min(qhi[top], rng_hi)
    qlo[other] = qhi[other] = q[other]
    pred = model.predict(x.to_frame().T)[0]
    sign = 1.0 if pred == 0 else -1.0
    opt = _lr_l1_opt(w, b, q, qlo, qhi, schema.ranges(), sign, 1e-4)
    res = (
        cf.MACE(norm="l1", rel_gap=EPS)
        .fit(model, train)
        .explain(x, constraints=cons, requirements=OWN)
    )
    d = res.diagnostics.iloc[0]
    if np.isinf(opt):
        assert res.status.iloc[0] == "infeasible"
        return
    assert d["delta_min"] <= opt + 1e-9 <= d["delta_max"] + 2e-9
    assert d["delta_max"] - opt <= EPS + 1e-9
    cfrow = res.counterfactuals.iloc[0]
    assert cfrow[names[other]] == x[names[other]]
    assert rng_lo - 1e-9 <= cfrow[names[top]] <= rng_hi + 1e-9


# ------------------------------------------------------------------ trees
def _leaf_boxes(model, schema):
    """Per leaf: predicted class index and, per raw feature, the admissible set."""
    pre, clf = model.named_steps["pre"], model.named_steps["clf"]
    names = list(pre.get_feature_names_out())
    t = clf.tree_
    out = []

    def walk(node, cons):
        if t.children_left[node] == -1:
            out.append((int(np.argmax(t.value[node][0])), list(cons)))
            return
        f, thr = names[t.feature[node]], t.threshold[node]
        walk(t.children_left[node], [*cons, (f, "le", thr)])
        walk(t.children_right[node], [*cons, (f, "gt", thr)])

    walk(0, [])
    return out


def _tree_opt(model, schema, x, target_idx, norm):
    J = len(schema)
    best = np.inf
    for cls, cons in _leaf_boxes(model, schema):
        if cls != target_idx:
            continue
        deltas = []
        feasible = True
        for f in schema:
            q = x[f.name]
            if f.is_numeric:
                lo, hi = min(f.lower, q), max(f.upper, q)
                for name, op, thr in cons:
                    if name != f"num__{f.name}":
                        continue
                    if op == "le":
                        hi = min(hi, np.floor(thr) if f.kind == "integer" else thr)
                    else:
                        lo = max(lo, np.floor(thr) + 1 if f.kind == "integer" else thr)
                if lo > hi:
                    feasible = False
                    break
                deltas.append(abs(min(max(q, lo), hi) - q) / f.range)
            else:
                pre = f"cat__{f.name}_"
                must = {n[len(pre) :] for n, op, _ in cons if op == "gt" and n.startswith(pre)}
                never = {n[len(pre) :] for n, op, _ in cons if op == "le" and n.startswith(pre)}
                ok = [
                    c for c in f.categories if str(c) not in never and (not must or str(c) in must)
                ]
                if len(must) > 1 or not ok:
                    feasible = False
                    break
                deltas.append(0.0 if q in ok else 1.0)
        if not feasible:
            continue
        d = np.array(deltas)
        val = {"l0": np.count_nonzero(d) / J, "l1": d.sum() / J, "linf": d.max()}[norm]
        best = min(best, val)
    return best


@pytest.fixture(scope="module")
def tree_setting():
    data = _mixed_data()
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "tree", random_state=0, max_depth=3)
    return train, test, model


@pytest.mark.parametrize("norm", ["l0", "l1", "linf"])
def test_tree_known_answer(tree_setting, norm):
    train, test, model = tree_setting
    X = test.X.iloc[:8]
    mace = cf.MACE(norm=norm, rel_gap=EPS).fit(model, train)
    res = mace.explain(X, requirements=OWN)
    classes = list(model.classes_)
    for qid, x in X.iterrows():
        target = res.target[qid]
        opt = _tree_opt(model, train.schema, x, classes.index(target), norm)
        d = res.diagnostics.loc[qid]
        assert res.status[qid] == "optimal", (qid, res.status[qid], d.to_dict())
        assert d["delta_min"] <= opt + 1e-6
        assert opt <= d["delta_max"] + 1e-6
        assert d["delta_max"] - opt <= EPS + 1e-6


def test_multiclass_tree_target(tree_setting):
    data = _mixed_data(n=450, seed=3, n_classes=3)
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "tree", random_state=0, max_depth=3)
    X = test.X.iloc[:6]
    preds = model.predict(X)
    mace = cf.MACE(norm="l1", rel_gap=EPS).fit(model, train)
    with pytest.raises(cf.ValidationError, match="target"):
        mace.explain(X)
    target = 2
    res = mace.explain(X, target=target, requirements=OWN)
    for qid, x, p in zip(X.index, X.itertuples(index=False), preds, strict=True):
        if p == target:
            assert res.status[qid] == "failed"
            continue
        opt = _tree_opt(
            model, train.schema, pd.Series(x._asdict()), list(model.classes_).index(target), "l1"
        )
        cfs = res.for_query(qid)
        if np.isinf(opt):
            assert res.status[qid] == "infeasible"
            continue
        assert len(cfs) == 1 and (model.predict(cfs) == target).all()
        d = res.diagnostics.loc[qid]
        assert d["delta_min"] <= opt + 1e-6 <= d["delta_max"] + 2e-6


def test_multiclass_lr(lr_setting):
    data = _mixed_data(n=450, seed=3, n_classes=3)
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    X = test.X.iloc[:4]
    res = cf.MACE(norm="l1").fit(model, train).explain(X, target=[0, 1, 2, 0])
    for qid in X.index:
        cfs = res.for_query(qid)
        if len(cfs):
            assert (model.predict(cfs) == res.target[qid]).all()
            assert res.status[qid] == "optimal"


# ------------------------------------------------------------- constraints
def test_constraints_every_kind(tree_setting):
    train, test, model = tree_setting
    X = test.X.iloc[:5]
    cons = cf.Constraints(
        immutable=["job"],
        increasing=["k"],
        ranges={"a": (0.0, 9.0)},
        allowed_values={"k": list(range(0, 20, 2))},
        max_changes=2,
    )
    res = cf.MACE(norm="l1").fit(model, train).explain(X, constraints=cons, n_counterfactuals=2)
    assert (res.found > 0).any()
    for qid in X.index:
        cfs = res.for_query(qid)
        if len(cfs):
            assert cf.violations(X.loc[qid], cfs, train.schema, cons).empty
    res2 = (
        cf.MACE(norm="l0")
        .fit(model, train)
        .explain(X, constraints=cf.Constraints(features_to_vary=["a"]))
    )
    for qid in X.index:
        cfs = res2.for_query(qid)
        if len(cfs):
            assert (
                cfs.drop(columns="a").to_numpy() == X.loc[[qid]].drop(columns="a").to_numpy()
            ).all()


def test_infeasible_when_nothing_can_change(tree_setting):
    train, test, model = tree_setting
    x = test.X.iloc[:1]
    res = (
        cf.MACE()
        .fit(model, train)
        .explain(
            x,
            constraints=cf.Constraints(
                features_to_vary=["b"], ranges={"b": (float(x["b"].iloc[0]), float(x["b"].iloc[0]))}
            ),
        )
    )
    assert res.status.iloc[0] == "infeasible"


# ---------------------------------------------------------------- diversity
@pytest.mark.parametrize("min_diff", [1, 2])
def test_diversity_blocking(tree_setting, min_diff):
    train, test, model = tree_setting
    X = test.X.iloc[:3]
    res = (
        cf.MACE(norm="l1", min_diff=min_diff, blocking="points")
        .fit(model, train)
        .explain(X, n_counterfactuals=3, requirements=OWN)
    )
    schema = train.schema
    for qid in X.index:
        cfs = res.for_query(qid)
        # the blocking clauses give further answers; the pipeline drops those another
        # answer of the query dominates (more changes, each moved as far)
        assert len(cfs) + int(res.diagnostics.loc[qid, "n_dominated"]) >= 2
        d = res.diagnostics.loc[qid, "distances"]
        assert all(
            d[i] <= d[i + 1] + EPS for i in range(len(d) - 1)
        )  # nearest first (up to epsilon)
        for i in range(len(cfs)):
            for j in range(i):
                n_diff = sum(changed(f, cfs.iloc[i][f.name], cfs.iloc[j][f.name]) for f in schema)
                assert n_diff >= min_diff


# -------------------------------------------------------- oracles & limits
def test_pickles_after_fit_and_parallel(tree_setting):
    train, test, model = tree_setting
    mace = cf.MACE(norm="l1", random_state=0).fit(model, train)
    mace2 = pickle.loads(pickle.dumps(mace))
    X = test.X.iloc[:4]
    a = mace.explain(X)
    b = mace2.explain(X, n_jobs=2)
    pd.testing.assert_frame_equal(a.counterfactuals, b.counterfactuals)


def test_time_limit_statuses(lr_setting):
    train, test, model = lr_setting
    res = (
        cf.MACE(norm="l1", rel_gap=1e-9, time_limit=1e-3).fit(model, train).explain(test.X.iloc[:2])
    )
    assert set(res.status) <= {"feasible", "timeout", "optimal"}
    for qid in res.status.index:
        d = res.diagnostics.loc[qid]
        if res.status[qid] == "feasible":
            assert d["delta_min"] <= d["delta_max"]


def test_time_out_falls_back_to_the_nearest_observed_rows(lr_setting):
    """A search that runs out of time before the oracle answers gives the nearest observed
    counterfactuals: verified like any answer, ``feasible`` (never ``optimal``), and said
    to be a fallback that is not proven nearest."""
    train, test, model = lr_setting
    mace = cf.MACE(norm="l1", time_limit=1e-6, random_state=0).fit(model, train)
    res = mace.explain(test.X.iloc[:2], n_counterfactuals=2)
    assert (res.status == "feasible").all()
    for qid in res.status.index:
        d = res.diagnostics.loc[qid]
        assert "nearest observed" in d["fallback"]
        assert d["n_oracle_calls"] == 0 and d["n_rejected_model"] == 0
        assert d["delta_min"] <= d["delta_max"]
        assert "not proven nearest" in res.certificates[qid]
        cfs = res.for_query(qid)
        assert len(cfs) >= 1
        assert (model.predict(cfs) == res.target[qid]).all()


def test_bad_oracle_and_norm(lr_setting):
    train, _, model = lr_setting
    with pytest.raises(cf.ValidationError, match="solver"):
        cf.MACE(solver="gurobi").fit(model, train)
    with pytest.raises(cf.ValidationError, match="norm"):
        cf.MACE(norm=(0, 0, 0)).fit(model, train)


def test_unsupported_model_raises(lr_setting):
    from sklearn.neighbors import KNeighborsClassifier

    train, _, _ = lr_setting
    knn = KNeighborsClassifier().fit(train.X, train.y)
    with pytest.raises(cf.UnsupportedModelError):
        cf.MACE().fit(knn, train)


# the conformance suite: tests/methods/test_common.py (a linear model and a tree)


def test_multiclass_forest_target_and_warm_start():
    """3-class forest, ``target=`` a chosen class: the per-check pruned ensemble and the
    warm start from observed rows give the same optimum as the cold search, never
    farther than the nearest observed counterfactual."""
    data = _mixed_data(n=450, seed=5, n_classes=3)
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "rf", random_state=0, n_estimators=8, max_depth=4)
    X = test.X.iloc[:6]
    target = 1
    warm = (
        cf.MACE(norm="l1", rel_gap=EPS, solver="z3")
        .fit(model, train)
        .explain(X, target=target, requirements=OWN)
    )
    cold = (
        cf.MACE(norm="l1", rel_gap=EPS, solver="z3", warm_start=0)
        .fit(model, train)
        .explain(X, target=target, requirements=OWN)
    )
    mo = (
        cf.NearestObservable(norm="l1")
        .fit(model, train)
        .explain(X, target=target, requirements=OWN)
    )
    preds = model.predict(X)
    checked = 0
    for qid, p in zip(X.index, preds, strict=True):
        if p == target:
            continue
        for res in (warm, cold):
            assert res.status[qid] == "optimal"
            assert (model.predict(res.for_query(qid)) == target).all()
        dw, dc = warm.diagnostics.loc[qid], cold.diagnostics.loc[qid]
        # both certificates hold: each lower bound is below the other's point
        assert (
            dw["delta_min"] <= dc["delta_max"] + 1e-9 and dc["delta_min"] <= dw["delta_max"] + 1e-9
        )
        assert abs(dw["delta_max"] - dc["delta_max"]) <= EPS + 1e-9
        if len(mo.for_query(qid)):
            assert dw["delta_max"] <= float(mo.diagnostics.loc[qid, "answer_value"]) + 1e-9
        checked += 1
    assert checked >= 3
    assert (warm.diagnostics["warm_starts"].dropna() > 0).any()


def test_polish_keeps_the_certificate():
    """Polishing moves each SAT point toward the query (numpy, then the exact oracle
    certifies it): same optimum within epsilon as without, proposals nearer and
    still counterfactuals of the real model."""
    from counterfact.methods.mace._polish import Polisher
    from counterfact.methods.mace._problem import build_problem, decode, solver_values

    data = _mixed_data(n=400, seed=7)
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "rf", random_state=0, n_estimators=10, max_depth=4)
    X = test.X.iloc[:6]
    on = cf.MACE(norm="l1", rel_gap=EPS).fit(model, train)
    off = cf.MACE(norm="l1", rel_gap=EPS, polish=False).fit(model, train)
    r_on, r_off = on.explain(X), off.explain(X)
    for qid in X.index:
        assert r_on.status[qid] == r_off.status[qid] == "optimal"
        a, b = r_on.diagnostics.loc[qid], r_off.diagnostics.loc[qid]
        assert a["delta_min"] <= b["delta_max"] + 1e-9 and b["delta_min"] <= a["delta_max"] + 1e-9
    # a far counterfactual (an observed row of the target class) is polished nearer
    pred = model.predict(train.X)
    schema = train.schema
    queries, _ = prepare(on, X, 1, None, None)
    improved = 0
    for query in queries:
        problem = build_problem(
            schema, query.bounds, weights=on.weights_, target_index=query.target_index, margin=1e-4
        )
        far = train.X[pred == query.target].iloc[0]
        p = solver_values(schema, far)
        prop = Polisher(problem, on.compiled_)(p)
        if prop is not None:
            improved += 1
            assert problem.distance(prop) < problem.distance(p)
            assert model.predict(pd.DataFrame([decode(schema, prop)]))[0] == query.target
    assert improved >= 1
    assert (r_on.diagnostics["n_polished"] >= 0).all()


# ------------------------------------------- diversity rule, limits, stdout
@pytest.fixture(scope="module")
def forest_setting():
    data = _mixed_data(n=400, seed=3)
    train, test = data.split(test_size=0.2, random_state=0)
    return train, test, cf.models.fit(train, "rf", random_state=0, n_estimators=20, max_depth=5)


def test_diversity_respects_the_shared_step(forest_setting):
    """Default blocking: no two answers of a query are closer than the shared
    diversity step (``income -> 34412`` then ``34413`` is not a second answer)."""
    from counterfact.methods._pipeline import different

    train, test, model = forest_setting
    mace = cf.MACE(norm="l1", random_state=0).fit(model, train)
    X = test.X.iloc[:4]
    res = mace.explain(X, n_counterfactuals=3)
    steps = mace.diversity_steps_
    assert steps[train.schema.index("a")] > 0  # a real feature: the step is a real constraint
    n_multi = 0
    for qid in X.index:
        cfs = res.for_query(qid)
        n_multi += len(cfs) >= 2
        for i in range(len(cfs)):
            for j in range(i):
                assert different(train.schema, cfs.iloc[i], cfs.iloc[j], X.loc[qid], steps)
    assert n_multi >= 2


def test_diversity_features_mode(forest_setting):
    """blocking="features": pairwise different change sets, and no later answer's
    change set contains an earlier one's (CE-OCL's no-good cut)."""
    train, test, model = forest_setting
    X = test.X.iloc[:4]
    res = (
        cf.MACE(norm="l1", blocking="features", random_state=0)
        .fit(model, train)
        .explain(X, n_counterfactuals=3, requirements=OWN)
    )
    schema = train.schema
    n_multi = 0
    for qid in X.index:
        cfs = res.for_query(qid)
        x = X.loc[qid]
        sets = [
            frozenset(f.name for f in schema if changed(f, x[f.name], r[f.name]))
            for _, r in cfs.iterrows()
        ]
        n_multi += len(sets) >= 2
        for i in range(len(sets)):
            for j in range(i):
                assert sets[i] != sets[j] and not sets[j] <= sets[i]
    assert n_multi >= 2
    with pytest.raises(cf.exceptions.ValidationError):
        cf.MACE(blocking="nope").fit(model, train)


def test_time_limit_holds_on_a_forest(forest_setting):
    """An expired search still returns a verified answer or times out (the wall time
    against the limit is measured by ``benchmarks/time_limits.py``)."""
    train, test, model = forest_setting
    mace = cf.MACE(norm="linf", rel_gap=1e-9, time_limit=0.5, random_state=0).fit(model, train)
    for i in range(3):
        res = mace.explain(test.X.iloc[[i]], n_counterfactuals=2)
        assert res.status.iloc[0] in {"optimal", "feasible", "timeout", "failed"}
        cfs = res.for_query(test.X.index[i])
        assert (model.predict(cfs) == res.target.iloc[0]).all()


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_nothing_on_stdout(forest_setting, capfd):
    """Solver output never reaches file descriptor 1 (the CLI's JSON/CSV stream);
    ``tests/methods/test_ceocl_limits.py`` checks the same in a fresh process, where HiGHS
    prints its once-per-process banner."""
    train, test, model = forest_setting
    X = test.X.iloc[:2]
    cf.MACE(norm="l1", random_state=0).fit(model, train).explain(X)
    mlp = cf.models.fit(train, "mlp", random_state=0, hidden_layer_sizes=(6,), max_iter=300)
    cf.MACE(norm="l1", solver="highs", random_state=0).fit(mlp, train).explain(X)
    out, _ = capfd.readouterr()
    assert out == ""
