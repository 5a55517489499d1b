"""UFCE: the conformance suite, a known answer for logistic regression, the user's
ranges and features, the three variants, dependency models trained once,
reproducibility and bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.methods.ufce import _search
from counterfact.methods.ufce._feedback import FEEDBACK_LEVELS, feedback_levels, random_feedback
from counterfact.methods.ufce._mi import mutual_information, rank_pairs
from counterfact.methods.ufce._search import prox_euc, prox_jac


# --------------------------------------------------------------------------- data
def _mixed(n: int = 500, seed: int = 1) -> cf.Dataset:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "a": rng.uniform(0, 10, n),
            "b": rng.uniform(-5, 5, n),
            "k": rng.integers(0, 20, n),
            "job": rng.choice(["x", "y", "z"], n),
            "flag": rng.choice([0, 1], n),
        }
    )
    X["c"] = 2 * X["a"] + rng.normal(0, 1, n)
    s = X["a"] - X["b"] + 0.2 * X["k"] + (X["job"] == "y") * 3.0 + X["flag"] - 6
    y = (s + rng.normal(0, 1, n) > 0).astype(int)
    return cf.Dataset.from_frame(X.assign(y=y), target="y", name="mixed")


@pytest.fixture(scope="module")
def mixed():
    data = _mixed()
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    queries = test.X[model.predict(test.X) == 0].iloc[:6]
    method = cf.UFCE(random_state=0, n_grid=8).fit(model, train)
    return train, model, queries, method


def _changed(x: pd.Series, cfs: pd.DataFrame, schema: cf.Schema) -> list[set[str]]:
    out = []
    for _, z in cfs.iterrows():
        out.append(
            {
                f.name
                for f in schema
                if (
                    abs(float(z[f.name]) - float(x[f.name])) > 1e-7
                    if f.is_numeric
                    else z[f.name] != x[f.name]
                )
            }
        )
    return out


# -------------------------------------------------------------------- known answer
def test_single_feature_matches_the_closed_form_boundary():
    """With one changeable feature, UFCE1 finds the LR boundary to the grid's resolution,
    on the valid side."""
    rng = np.random.default_rng(0)
    n = 400
    X = pd.DataFrame({"a": rng.uniform(0, 10, n), "b": rng.uniform(-5, 5, n)})
    y = ((X["a"] - X["b"] - 5 + rng.normal(0, 1, n)) > 0).astype(int)
    data = cf.Dataset.from_frame(X.assign(y=y), target="y")
    model = cf.models.fit(data, "lr", random_state=0)
    pre, clf = model.named_steps["pre"], model.named_steps["clf"]
    sc = pre.named_transformers_["num"]
    w = clf.coef_[0] / sc.scale_
    b = float(clf.intercept_[0] - np.sum(clf.coef_[0] * sc.mean_ / sc.scale_))
    m = cf.UFCE(variant=1, plausibility=None, n_neighbors=n, n_grid=10, n_refine=2).fit(model, data)
    queries = data.X[model.predict(data.X) == 0]
    a_stars = (-b - w[1] * queries["b"]) / w[0]
    hi_a = data.schema["a"].upper
    queries = queries[a_stars < hi_a - 0.1].iloc[:8]  # the boundary lies inside the domain
    r = m.explain(queries, constraints=cf.Constraints(features_to_vary=["a"]))
    assert (r.status == "feasible").all()
    unreachable = m.explain(
        data.X[model.predict(data.X) == 0][a_stars > hi_a + 0.1].iloc[:2],
        constraints=cf.Constraints(features_to_vary=["a"]),
    )
    assert (unreachable.status == "failed").all()
    for q, x in queries.iterrows():
        z = r.for_query(q).iloc[0]
        a_star = a_stars[q]
        step = (hi_a - x["a"]) / 10**3
        assert z["b"] == x["b"]
        assert a_star - 1e-9 <= z["a"] <= a_star + step + 1e-9, (z["a"], a_star, step)


# --------------------------------------------------------------- user feedback
@pytest.mark.parametrize("level", list(FEEDBACK_LEVELS))
def test_results_respect_the_users_ranges_and_features(mixed, level):
    train, model, queries, method = mixed
    features = ["a", "b", "k", "job"]
    mads = dict(zip(train.schema.names, train.mad(), strict=True))
    for q, x in queries.iterrows():
        c = feedback_levels(train, x, level, features=features)
        r = method.explain(x.to_frame().T, n_counterfactuals=3, constraints=c)
        cfs = r.for_query(q)
        assert r.status[q] in ("feasible", "failed", "infeasible")
        if len(cfs) == 0:
            assert "reason" in r.diagnostics.loc[q] and isinstance(
                r.diagnostics.loc[q, "reason"], str
            )
            continue
        assert cf.violations(x, cfs, train.schema, c).empty
        assert (model.predict(cfs) == 1).all()
        for ch in _changed(x, cfs, train.schema):
            assert ch <= set(features)
        for f in ("a", "b", "k"):
            assert (cfs[f] >= x[f] - 1e-9).all()
            assert (cfs[f] <= x[f] + FEEDBACK_LEVELS[level] * mads[f] + 1e-9).all()


def test_feedback_helpers(mixed):
    train, _, queries, _ = mixed
    x = queries.iloc[0]
    mads = dict(zip(train.schema.names, train.mad(), strict=True))
    c = feedback_levels(train, x, "limited")
    assert set(c.features_to_vary) == set(train.schema.names)
    assert set(c.ranges) == {"a", "b", "k", "c"}  # discrete features may flip, unranged
    assert c.ranges["a"] == pytest.approx((x["a"], x["a"] + 0.4 * mads["a"]))
    assert feedback_levels(train, x, 0.5).ranges["b"][1] == pytest.approx(x["b"] + 0.5 * mads["b"])
    assert feedback_levels(train, x, 0.5, two_sided=True).ranges["b"] == pytest.approx(
        (x["b"] - 0.5 * mads["b"], x["b"] + 0.5 * mads["b"])
    )
    r1, r2 = random_feedback(train, x, 3), random_feedback(train, x, 3)
    assert r1 == r2
    for f, (lo, hi) in r1.ranges.items():
        assert lo == pytest.approx(x[f]) and x[f] <= hi <= x[f] + mads[f]
    for bad in ("no_such_level", 0.0, -1, True):
        with pytest.raises(cf.ValidationError, match="level"):
            feedback_levels(train, x, bad)
    with pytest.raises(cf.ValidationError, match="unknown"):
        feedback_levels(train, x, features=["nope"])


def test_feedback_leaves_out_what_only_time_moves():
    """German Credit's age, job tenure and years at the address move only with time: the
    user's default features leave them out, and the constraints resolve (they raised)."""
    credit = cf.datasets.load("german_credit")
    x = credit.X.iloc[0]
    for c in (feedback_levels(credit, x, "limited"), random_feedback(credit, x, 0)):
        assert not {"age", "employment_since", "residence_since"} & set(c.features_to_vary)
        assert "duration_months" in c.features_to_vary
        c.resolve(credit.schema)


def test_a_timeline_keeps_the_answers_found_without_one():
    """A timeline still lets the person act today: German Credit rows 491 and 378 keep
    the answers UFCE finds without one (a guarantor and real estate, cost 4). Age, job
    tenure and years at the address are in no searched pair (they crowded the user's
    pairs out of the top ``n_pairs``: row 491 had no answer, row 378 one of cost 13)."""
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    m = cf.UFCE(random_state=0).fit(model, train)
    timed = {"age", "employment_since", "residence_since"}
    assert not any({m.schema_.names[a], m.schema_.names[b]} & timed for a, b in m._pairs)
    X = test.X.loc[[491, 378]]
    plain = m.explain(X)
    later = m.explain(
        X, constraints=cf.Constraints(timeline=cf.datasets.timeline(train, horizon=24))
    )
    assert (later.found == 1).all()
    assert later.cost().round(6).tolist() == plain.cost().round(6).tolist() == [4.0, 4.0]


# --------------------------------------------------------------------- variants
@pytest.mark.parametrize("variant", [1, 2, 3, "all"])
def test_variants(mixed, variant):
    train, model, queries, _ = mixed
    m = cf.UFCE(variant=variant, random_state=0, n_grid=8).fit(model, train)
    r = m.explain(queries, n_counterfactuals=4)
    assert (r.found > 0).sum() >= len(queries) - 1
    assert (model.predict(r.counterfactuals) == 1).all()
    assert (r.diagnostics["n_rejected_model"] == 0).all()  # screened and re-checked before ranking
    limit = {1: 1, 2: 2, 3: 3, "all": 3}[variant]
    for q, x in queries.iterrows():
        cfs = r.for_query(q)
        assert not cfs.duplicated().any()
        for ch in _changed(x, cfs, train.schema):
            assert 1 <= len(ch) <= limit
    used = set(r.diagnostics["variant"].dropna().astype(int))
    assert used <= ({1, 2, 3} if variant == "all" else {variant})


def test_pairs_move_dependent_features(mixed):
    """UFCE2 moves the top MI partner with its dependency model: a and c (c ~ 2a)."""
    train, model, queries, _ = mixed
    m = cf.UFCE(variant=2, n_pairs=1, random_state=0, n_grid=8).fit(model, train)
    assert {m.pairs_[0][0], m.pairs_[0][1]} == {"a", "c"}
    r = m.explain(
        queries, n_counterfactuals=2, constraints=cf.Constraints(features_to_vary=["a", "c"])
    )
    moved = 0
    for q, x in queries.iterrows():
        for _, z in r.for_query(q).iterrows():
            da, dc = z["a"] - x["a"], z["c"] - x["c"]
            if abs(da) > 1e-9 and abs(dc) > 1e-9:
                moved += 1
                assert np.sign(da) == np.sign(dc)  # c follows a (positive dependence)
    assert moved > 0
    absolute = cf.UFCE(variant=2, n_pairs=1, dependency="absolute", random_state=0, n_grid=8).fit(
        model, train
    )
    r2 = absolute.explain(queries, constraints=cf.Constraints(features_to_vary=["a", "c"]))
    assert (model.predict(r2.counterfactuals) == 1).all()


def test_dependency_models_are_trained_once(mixed):
    train, model, queries, _ = mixed
    m = cf.UFCE(variant="all", random_state=0, n_grid=8).fit(model, train)
    # per-model work is done in fit: one model per feature, none trained by a query
    assert m.n_dependency_fits_ == len(m.dependency_models_) == len(train.schema)
    models = {k: id(v) for k, v in m.dependency_models_.items()}
    for q in range(len(queries)):  # one query per call, as with per-query feedback
        m.explain(queries.iloc[[q]])
    m.explain(queries)
    assert m.n_dependency_fits_ == len(train.schema)
    assert all(id(m.dependency_models_[k]) == v for k, v in models.items())
    # UFCE1 needs none; a later switch to UFCE2 trains the missing ones once, on first use
    single = cf.UFCE(variant=1, random_state=0, n_grid=8).fit(model, train)
    assert single.n_dependency_fits_ == 0
    single.set_params(variant=2)
    single.explain(queries.iloc[:2])
    fits = single.n_dependency_fits_
    assert 0 < fits <= len(train.schema)
    single.explain(queries.iloc[:2])
    assert single.n_dependency_fits_ == fits


def test_parallel_trains_dependencies_before_dispatch(mixed):
    train, model, queries, _ = mixed
    m = cf.UFCE(random_state=0, n_grid=8).fit(model, train)
    par = m.explain(queries, n_counterfactuals=2, n_jobs=2, parallel="threading", chunk_size=2)
    fits = m.n_dependency_fits_
    assert fits > 0
    seq = m.explain(queries, n_counterfactuals=2)
    assert m.n_dependency_fits_ == fits
    pd.testing.assert_frame_equal(par.counterfactuals, seq.counterfactuals)


class _CountingModel:
    """Delegates to a fitted pipeline and counts the calls."""

    def __init__(self, model):
        self.model, self.classes_, self.calls = model, model.classes_, 0

    def predict(self, X):
        self.calls += 1
        return self.model.predict(X)

    def predict_proba(self, X):
        self.calls += 1
        return self.model.predict_proba(X)


def test_candidates_are_evaluated_in_batches(mixed):
    """One model call per search round for all candidates of all queries, not one per candidate."""
    train, model, queries, _ = mixed
    counting = _CountingModel(model)
    m = cf.UFCE(variant="all", n_refine=1, random_state=0, n_grid=8).fit(counting, train)
    m.explain(queries.iloc[:1])  # dependency models trained
    search_calls = []
    batch = m._explain_batch

    def counted(group):
        before = counting.calls
        out = batch(group)
        search_calls.append(counting.calls - before)
        return out

    m._explain_batch = counted
    r = m.explain(queries, n_counterfactuals=2)
    rows = r.diagnostics["n_evaluated"].sum()
    assert rows > 100 * len(queries) > 0
    assert r.diagnostics["n_rounds"].max() <= m.n_refine + 1
    # the search: all queries of a batch together, in blocks of whole paths (the
    # clock is checked between blocks), many candidate rows per model call
    assert len(search_calls) == 1 and 1 <= search_calls[0] <= rows / _search.MIN_BLOCK_ROWS
    assert (r.found > 0).sum() >= len(queries) - 1


def test_blocks_do_not_change_the_answer(mixed, monkeypatch):
    """Blocks hold whole paths: one path per block gives the same answers as the default."""
    _, _, queries, method = mixed
    default = method.explain(queries, n_counterfactuals=2)
    for name in ("FIRST_BLOCK_ROWS", "MIN_BLOCK_ROWS", "MAX_BLOCK_ROWS"):
        monkeypatch.setattr(_search, name, 1)
    tiny = method.explain(queries, n_counterfactuals=2)
    pd.testing.assert_frame_equal(default.counterfactuals, tiny.counterfactuals)
    assert default.status.tolist() == tiny.status.tolist()


def test_batched_equals_one_query_at_a_time(mixed):
    _, _, queries, method = mixed
    together = method.explain(queries, n_counterfactuals=3)
    for q in queries.index:
        alone = method.explain(queries.loc[[q]], n_counterfactuals=3)
        pd.testing.assert_frame_equal(alone.counterfactuals, together.counterfactuals.loc[[q]])


def test_each_users_own_feedback_in_one_call(mixed):
    """One Constraints per row (each user's feedback), searched together: the same
    answers as one call per user, and every answer inside its own user's ranges."""
    train, _, queries, method = mixed
    levels = ["limited", "medium", "flexible"]
    feedback = [
        feedback_levels(train, x, levels[k % 3], features=["a", "b", "k", "job"])
        for k, (_, x) in enumerate(queries.iterrows())
    ]
    together = method.explain(queries, n_counterfactuals=3, constraints=feedback)
    assert together.found.sum() > 0
    for k, (q, x) in enumerate(queries.iterrows()):
        alone = method.explain(queries.loc[[q]], n_counterfactuals=3, constraints=feedback[k])
        a, t = alone.for_query(q), together.for_query(q)
        assert len(a) == len(t)
        if len(a):
            pd.testing.assert_frame_equal(a, t)
        assert cf.violations(x, together.for_query(q), train.schema, feedback[k]).empty
    assert (cf.metrics.violation_counts(together)["total"] == 0).all()


# --------------------------------------------------------------- reproducibility
def test_reproducible_fit_and_explain(mixed):
    train, model, queries, _ = mixed
    a = cf.UFCE(random_state=5, n_grid=8).fit(model, train)
    b = cf.UFCE(random_state=5, n_grid=8).fit(model, train)
    assert a.pairs_ == b.pairs_
    pd.testing.assert_frame_equal(a.mutual_information_, b.mutual_information_)
    pd.testing.assert_frame_equal(
        a.explain(queries).counterfactuals, b.explain(queries).counterfactuals
    )


# --------------------------------------------------------------------- bad input
def test_bad_user_feedback(mixed):
    train, model, queries, method = mixed
    x = queries.iloc[[0]]
    with pytest.raises(cf.ConstraintError, match="features_to_vary is empty"):
        cf.Constraints(features_to_vary=[])
    protected = train.with_schema(train.schema.with_immutable(["job"]))
    m = cf.UFCE(random_state=0, n_grid=8).fit(model, protected)
    with pytest.raises(cf.ConstraintError, match="immutable"):
        m.explain(x, constraints=cf.Constraints(features_to_vary=["job", "a"]))
    # a range that excludes every value of the feature
    r = method.explain(x, constraints=cf.Constraints(ranges={"a": (100.0, 200.0)}))
    assert r.status.iloc[0] == "infeasible" and r.found.iloc[0] == 0
    assert isinstance(r.diagnostics["reason"].iloc[0], str)
    # an integer feature's range without an integer in it
    r = method.explain(
        x, constraints=cf.Constraints(features_to_vary=["k"], ranges={"k": (2.2, 2.8)})
    )
    assert r.status.iloc[0] == "infeasible" and r.found.iloc[0] == 0
    # every feature pinned by the user: infeasible, with a reason
    xc = float(x["c"].iloc[0])
    r = method.explain(
        x, constraints=cf.Constraints(features_to_vary=["c"], ranges={"c": (xc, xc)})
    )
    assert (
        r.status.iloc[0] == "infeasible"
        and "no feature may change" in r.diagnostics["reason"].iloc[0]
    )
    # only a feature the model ignores: nothing flips -> failed with a reason, not an error
    r = method.explain(
        x,
        constraints=cf.Constraints(
            features_to_vary=["c"],
            ranges={"c": (float(x["c"].iloc[0]), float(x["c"].iloc[0]) + 0.01)},
        ),
    )
    assert r.status.iloc[0] == "failed" and "reason" in r.diagnostics


def test_no_desired_rows_near_the_query(mixed):
    train, model, queries, _ = mixed
    m = cf.UFCE(radius=1e-6, random_state=0).fit(model, train)
    r = m.explain(queries.iloc[:2])
    assert (r.status == "failed").all()  # a limit of the search, not a proof
    assert r.diagnostics["reason"].str.contains("radius").all()
    wide = cf.UFCE(radius=5.0, random_state=0, n_grid=8).fit(model, train).explain(queries.iloc[:2])
    assert (wide.found > 0).all()


def test_no_training_row_of_the_target_class():
    """The model knows class 2, the data UFCE was fitted on has none: failed (no proof that
    no answer exists), with a reason naming the class as the model does."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.uniform(0, 10, 300), "b": rng.uniform(0, 10, 300)})
    y = np.where(X["a"] < 3, 0, np.where(X["a"] < 7, 1, 2))
    model = cf.models.fit(cf.Dataset.from_frame(X.assign(y=y), target="y"), "lr", random_state=0)
    partial = cf.Dataset.from_frame(X.assign(y=y)[y < 2], target="y")
    m = cf.UFCE(random_state=0, n_grid=8).fit(model, partial)
    queries = X[model.predict(X) == 0].iloc[:2]
    r = m.explain(queries, target=2)
    assert (r.status == "failed").all() and len(r.counterfactuals) == 0
    assert r.diagnostics["reason"].str.contains("no training row has the target class 2").all()
    assert (m.explain(queries, target=1).found > 0).all()  # a class it has rows of still works


def test_time_limit_gives_timeout_status(mixed):
    train, model, queries, _ = mixed
    r = cf.UFCE(time_limit=1e-9, random_state=0).fit(model, train).explain(queries.iloc[:2])
    assert (r.status == "timeout").all()


def test_first_query_after_fit_stays_within_the_time_limit(mixed):
    """No per-model work is left for the first query: a fresh fit, one query at a
    1 s limit, and no dependency model trained during it (the wall time is
    measured by ``benchmarks/time_limits.py``)."""
    train, model, queries, _ = mixed
    m = cf.UFCE(time_limit=1.0, random_state=0).fit(model, train)
    fits = m.n_dependency_fits_
    r = m.explain(queries.iloc[[0]])
    assert m.n_dependency_fits_ == fits
    assert r.status.iloc[0] in ("feasible", "timeout", "failed")


def test_expiry_mid_search_keeps_what_was_found(mixed, monkeypatch):
    """The clock is checked before every block: when it runs out part-way, the
    queries keep the valid candidates found so far (feasible), the others time out."""
    train, model, queries, _ = mixed
    for name in ("FIRST_BLOCK_ROWS", "MIN_BLOCK_ROWS", "MAX_BLOCK_ROWS"):
        monkeypatch.setattr(_search, name, 1)  # one path per block
    m = cf.UFCE(time_limit=60.0, random_state=0, n_grid=8).fit(model, train)
    checks = []

    def expired_after(queries_):
        def expired():
            checks.append(1)
            return len(checks) > 40  # Single_F paths of the first queries only

        return expired

    monkeypatch.setattr(m, "_expired", expired_after)
    r = m.explain(queries)
    assert len(checks) == 41
    assert set(r.status) <= {"feasible", "timeout"} and "timeout" in set(r.status)
    assert (r.status == "feasible").any()
    found = r.counterfactuals
    assert (model.predict(found) == 1).all()
    timed_out = r.status[r.status == "timeout"].index
    assert r.reason.loc[timed_out].str.contains("time limit").all()


def test_bad_parameters_name_the_parameter(mixed):
    train, model, _, _ = mixed
    for params in (
        {"variant": 4},
        {"radius": 0.0},
        {"n_grid": 0},
        {"lam": -1.0},
        {"dependency": "x"},
        {"regressor": 3},
    ):
        with pytest.raises(cf.ValidationError, match=next(iter(params))):
            cf.UFCE(**params).fit(model, train)


# ---------------------------------------------------------------- the formulas
def test_mutual_information_and_pair_ranking(mixed):
    _, _, _, method = mixed
    mi = method.mutual_information_
    assert np.allclose(mi.to_numpy(), mi.to_numpy().T, equal_nan=True)
    pairs = rank_pairs(mi)
    assert [p[:2] for p in pairs[:1]] == [("a", "c")]
    assert all(pairs[i][2] >= pairs[i + 1][2] for i in range(len(pairs) - 1))
    # a discrete feature that determines a numeric one is found too
    rng = np.random.default_rng(0)
    g = rng.choice(["u", "v"], 400)
    frame = pd.DataFrame(
        {
            "g": g,
            "num": np.where(g == "u", 0.0, 5.0) + rng.normal(0, 0.3, 400),
            "noise": rng.normal(size=400),
            "y": rng.integers(0, 2, 400),
        }
    )
    data = cf.Dataset.from_frame(frame, target="y")
    space_R = np.column_stack([(g == "v").astype(float), frame["num"], frame["noise"]])
    m2 = mutual_information(space_R, data.schema, random_state=0)
    assert m2.loc["g", "num"] > 0.3 > m2.loc["g", "noise"]


def test_distances():
    x = np.array([1.0, 0.0, 5.0, 2.0])
    Z = np.array([[1.0, 0.0, 5.0, 2.0], [2.0, 1.0, 5.0, 0.0], [1.0, 1.0, 7.0, 2.0]])
    numeric = np.array([True, False, True, False])
    mad = np.array([0.5, 1.0, 2.0, 1.0])
    assert prox_euc(Z, x, numeric, mad).tolist() == [0.0, 2.0, 1.0]
    # two discrete features: one differs -> 2*1/(2+1); both -> 1
    assert prox_jac(Z, x, ~numeric) == pytest.approx([0.0, 1.0, 2 / 3])


def test_every_answer_is_plausible_after_the_pipeline_changes_it():
    """plausibility="target": the pipeline's rounding and sparsification change answers
    after the search; each reported answer is still an inlier of the target class's LOF
    (a fresh scikit-learn LOF on the same encoded rows agrees with the method's)."""
    from sklearn.neighbors import LocalOutlierFactor

    data = cf.datasets.load("bupa_liver")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "rf", random_state=0)
    X = cf.rows_to_explain(model, test).head(8)
    m = cf.UFCE(random_state=0, plausibility="target").fit(model, train)
    r = m.explain(X, n_counterfactuals=3)
    answers = r.counterfactuals[list(X.columns)]
    assert len(answers) >= 8
    V = m._space.encode(m._space.to_codes(answers))
    y = m.data_.y.to_numpy()
    targets = r.target.reindex(answers.index.get_level_values(0)).to_numpy()
    for cls in model.classes_:
        ref = np.flatnonzero(y == cls)
        lof = LocalOutlierFactor(n_neighbors=min(20, len(ref) - 1), novelty=True).fit(m._V[ref])
        mine = targets == cls
        if mine.any():
            assert (lof.predict(V[mine]) == 1).all(), cls
