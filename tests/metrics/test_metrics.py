"""Metrics against hand-computed values on a tiny example, plus edge cases.

The example (J = 5 features; continuous: a, b, e; categorical: c, s)::

    feature  kind         domain            range R_j   MAD (given)
    a        integer      [0, 10]           10          2
    b        real         [0, 4]            4           0.5
    e        ordinal      lo < mid < hi     2 (ranks)   1
    c        categorical  u, v, w           -           1
    s        binary       no, yes           -           1

    query x : a=2, b=1.0, e=lo,  c=u, s=no
    CF1     : a=4, b=1.0, e=mid, c=u, s=no     changes a, e
    CF2     : a=2, b=3.0, e=lo,  c=v, s=yes    changes b, c, s
    CF3     : a=7, b=2.0, e=hi,  c=w, s=no     changes a, b, e, c

The model says class 1 iff a + 2 b > 6.5: x -> 4 (class 0); CF1 -> 6 (0,
invalid); CF2 -> 8 (1); CF3 -> 11 (1).  The target is 1.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact import metrics as M
from counterfact.exceptions import ValidationError
from counterfact.metrics._actionability import actionability, actionable_share, feasibility
from counterfact.metrics._distances import DistanceEncoder, feature_deltas, n_changes
from counterfact.metrics._diversity import (
    harmonic_mean,
    l2c_bins,
    l2c_diversity,
    l2c_score,
    normalized_diversity,
)
from counterfact.metrics._evaluate import METRIC_COLUMNS
from counterfact.metrics._plausibility import lof_score, plausibility
from counterfact.metrics._proximity import (
    l2c_proximity_cat,
    l2c_proximity_num,
    prox_euc,
    prox_jac,
    sparsity,
)
from counterfact.metrics._validity import is_valid
from counterfact.metrics._violations import VIOLATION_KINDS, time_per_counterfactual, time_stats

SCHEMA = cf.Schema(
    (
        cf.Feature("a", "integer", lower=0, upper=10),
        cf.Feature("b", "real", lower=0, upper=4),
        cf.Feature("e", "ordinal", categories=("lo", "mid", "hi")),
        cf.Feature("c", "categorical", categories=("u", "v", "w")),
        cf.Feature("s", "binary", categories=("no", "yes")),
    ),
    target="y",
    classes=(0, 1),
)
MAD = [2.0, 0.5, 1.0, 1.0, 1.0]
X = pd.Series({"a": 2, "b": 1.0, "e": "lo", "c": "u", "s": "no"})
CFS = pd.DataFrame(
    {
        "a": [4, 2, 7],
        "b": [1.0, 3.0, 2.0],
        "e": ["mid", "lo", "hi"],
        "c": ["u", "v", "w"],
        "s": ["no", "yes", "no"],
    }
)
# L2C buckets: a: (0,3], (3,6], (6,10]; b: (0,1.5], (1.5,4]
BINS = {"a": [0.0, 3.0, 6.0, 10.0], "b": [0.0, 1.5, 4.0]}


class Rule:
    """class 1 iff a + 2 b > 6.5"""

    classes_ = np.array([0, 1])

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        p = ((X["a"].astype(float) + 2 * X["b"].astype(float)) > 6.5).astype(float).to_numpy()
        return np.c_[1 - p, p]

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


class StubLOF:
    """Stands in for LOFPlausibility: CF1, CF2 plausible, CF3 not."""

    def plausible(self, frame: pd.DataFrame, target=None) -> np.ndarray:
        return np.array([1.0 if a != 7 else 0.0 for a in frame["a"]])

    def score(self, frame, target=None):
        p = self.plausible(frame)
        return 2.0 - p, p


def approx(v, **kw):
    return pytest.approx(v, rel=1e-9, abs=1e-12, **kw)


# ------------------------------------------------------------------ distances
def test_feature_deltas_and_mace_norms():
    # CF1: a |4-2|/10 = .2, e |1-0|/2 = .5          -> l0 2/5, l1 .7/5, linf .5
    # CF2: b |3-1|/4 = .5, c 1, s 1                 -> l0 3/5, l1 2.5/5, linf 1
    # CF3: a 5/10 = .5, b 1/4 = .25, e 2/2 = 1, c 1 -> l0 4/5, l1 2.75/5, linf 1
    d = feature_deltas(X, CFS, SCHEMA)
    np.testing.assert_allclose(d, [[0.2, 0, 0.5, 0, 0], [0, 0.5, 0, 1, 1], [0.5, 0.25, 1, 1, 0]])
    np.testing.assert_allclose(M.distance(X, CFS, SCHEMA, norm="l0"), [0.4, 0.6, 0.8])
    np.testing.assert_allclose(M.distance(X, CFS, SCHEMA, norm="l1"), [0.14, 0.5, 0.55])
    np.testing.assert_allclose(M.distance(X, CFS, SCHEMA, norm="linf"), [0.5, 1.0, 1.0])
    # l2 = sqrt(sum delta^2 / J): CF1 sqrt((.04 + .25) / 5)
    assert M.distance(X, CFS, SCHEMA, norm="l2")[0] == approx(np.sqrt(0.29 / 5))
    # convex combination .2 l0 + .5 l1 + .3 linf: CF1 .08 + .07 + .15 = .30, CF2 .12 + .25 + .3 =
    # .67,
    # CF3 .16 + .275 + .3 = .735; weights are rescaled to sum 1
    np.testing.assert_allclose(
        M.distance(X, CFS, SCHEMA, norm=(0.2, 0.5, 0.3)), [0.30, 0.67, 0.735]
    )
    np.testing.assert_allclose(M.distance(X, CFS, SCHEMA, norm=[2, 5, 3]), [0.30, 0.67, 0.735])
    # user ranges: R_a = 5 -> CF1 l1 = (.4 + .5) / 5
    assert M.distance(X, CFS, SCHEMA, norm="l1", ranges={"a": 5})[0] == approx(0.18)


def test_gower_and_changes():
    # Gower (MD-PSO eqs. 5-6) with the schema's ranges equals the range-normalised l1
    np.testing.assert_allclose(M.gower(X, CFS, SCHEMA), [0.14, 0.5, 0.55])
    # with observed training ranges: a spans [1, 6] -> R_a = 5, b spans [0, 2] -> R_b = 2
    train = pd.DataFrame(
        {"a": [1, 6], "b": [0.0, 2.0], "e": ["lo", "hi"], "c": ["u", "v"], "s": ["no", "no"]}
    )
    # CF1: (2/5 + 0 + 1/2) / 5 = .18
    assert M.gower(X, CFS, SCHEMA, train=train)[0] == approx(0.18)
    np.testing.assert_array_equal(n_changes(X, CFS, SCHEMA), [2, 3, 4])


def test_distance_encoder_matches_brute_force(rng):
    n = 500
    frame = pd.DataFrame(
        {
            "a": rng.integers(0, 11, n),
            "b": rng.uniform(0, 4, n),
            "e": rng.choice(["lo", "mid", "hi"], n),
            "c": rng.choice(["u", "v", "w"], n),
            "s": rng.choice(["no", "yes"], n),
        }
    )
    enc = DistanceEncoder(SCHEMA)
    mat = enc.transform(frame)
    q = enc.transform(X)[0]
    rank = {"lo": 0, "mid": 1, "hi": 2}
    delta = np.c_[
        np.abs(frame["a"] - 2) / 10,
        np.abs(frame["b"] - 1.0) / 4,
        np.abs(frame["e"].map(rank) - 0) / 2,
        (frame["c"] != "u").astype(float),
        (frame["s"] != "no").astype(float),
    ]
    np.testing.assert_allclose(enc.deltas(mat, q), delta)
    np.testing.assert_allclose(enc.distances(mat, q, "l1"), delta.mean(axis=1))
    np.testing.assert_allclose(enc.distances(mat, q, "l0"), (delta > 0).mean(axis=1))
    np.testing.assert_allclose(enc.distances(mat, q, "linf"), delta.max(axis=1))


def test_distance_tolerance_and_coding():
    # float noise below the relative 1e-7 tolerance is no change; binary 0/1 coded by equality
    schema = cf.Schema(
        (cf.Feature("x", "real", lower=0, upper=1e6), cf.Feature("f", "binary", categories=(0, 1)))
    )
    q = pd.Series({"x": 5e5, "f": 0})
    rows = pd.DataFrame({"x": [5e5 + 1e-6, 5e5 + 1.0], "f": [np.int64(0), 1.0]})
    np.testing.assert_array_equal(n_changes(q, rows, schema), [0, 2])


def test_distance_errors():
    with pytest.raises(ValidationError, match="norm"):
        M.distance(X, CFS, SCHEMA, norm="l3")
    with pytest.raises(ValidationError, match="weights"):
        M.distance(X, CFS, SCHEMA, norm=(-1, 1, 1))
    with pytest.raises(ValidationError, match="not among its categories"):
        DistanceEncoder(SCHEMA).transform(CFS.assign(c=["u", "zz", "v"]))
    with pytest.raises(ValidationError, match="lack the columns"):
        M.distance(X, CFS.drop(columns="s"), SCHEMA)


# ----------------------------------------------------------------- proximity
def test_dice_proximity_and_sparsity():
    # dist_cont = mean over (a, b, e) of |diff| / MAD:
    #   CF1 (2/2 + 0 + 1/1) / 3 = 2/3; CF2 (0 + 2/.5 + 0) / 3 = 4/3; CF3 (5/2 + 1/.5 + 2/1) / 3 =
    # 6.5/3
    # continuous proximity = -(2 + 4 + 6.5) / 9 = -12.5/9
    assert M.continuous_proximity(X, CFS, SCHEMA, mad=MAD) == approx(-12.5 / 9)
    # dist_cat = mean over (c, s) of mismatches: 0, 1, 1/2 -> 1 - 1.5/3 = .5
    assert M.categorical_proximity(X, CFS, SCHEMA) == approx(0.5)
    # sparsity = mean fraction changed = (2 + 3 + 4) / 15 = .6; DiCE's = .4
    assert sparsity(X, CFS, SCHEMA) == approx(0.6)
    assert M.dice_sparsity(X, CFS, SCHEMA) == approx(0.4)


def test_ufce_and_l2c_proximity():
    # prox_Euc = sum |diff| / MAD: 2, 4, 6.5
    np.testing.assert_allclose(prox_euc(X, CFS, SCHEMA, mad=MAD), [2.0, 4.0, 6.5])
    # prox_Jac = 2c / (m + c), m = 2 categorical features, c = 0, 2, 1 changed
    np.testing.assert_allclose(prox_jac(X, CFS, SCHEMA), [0.0, 1.0, 2 / 3])
    # L2C Prox Num in raw units: CF1 2 + 0 + 1, CF2 0 + 2 + 0, CF3 5 + 1 + 2 -> 13/3
    assert l2c_proximity_num(X, CFS, SCHEMA, scale=1.0 * np.ones(5)) == approx(13 / 3)
    # scaled by the training standard deviations: std(a) = 2, std(b) = 1 over [0, 4] / [0, 2], std(e
    # ranks) = 1
    train = pd.DataFrame(
        {"a": [0, 4], "b": [0.0, 2.0], "e": ["lo", "hi"], "c": ["u", "u"], "s": ["no", "no"]}
    )
    # CF1 2/2 + 0 + 1/1 = 2; CF2 0 + 2/1 + 0 = 2; CF3 5/2 + 1 + 2 = 5.5 -> 9.5/3
    assert l2c_proximity_num(X, CFS, SCHEMA, train=train) == approx(9.5 / 3)
    # L2C Prox Cat = mean Hamming count over (c, s): (0 + 2 + 1) / 3
    assert l2c_proximity_cat(X, CFS, SCHEMA) == approx(1.0)


def test_a_categorical_features_mad_is_not_read_and_no_negative_zero():
    """A MAD given for a categorical feature is never used (a category change moves 1),
    so zero there is accepted; a zero MAD on a feature that is read is refused. A set
    that changes no continuous feature has proximity 0.0, not -0.0."""
    loose = [2.0, 0.5, 1.0, 0.0, -1.0]  # c and s are categorical
    assert M.continuous_proximity(X, CFS, SCHEMA, mad=loose) == approx(-12.5 / 9)
    with pytest.raises(ValidationError, match=r"non-positive values for \['e'\]"):
        M.continuous_proximity(X, CFS, SCHEMA, mad=[2.0, 0.5, 0.0, 1.0, 1.0])
    only_cat = CFS.assign(a=2, b=1.0, e="lo")
    value = M.continuous_proximity(X, only_cat, SCHEMA, mad=MAD)
    assert value == 0.0 and not np.signbit(value)


def test_mad_is_required():
    with pytest.raises(ValidationError, match="mad="):
        M.continuous_proximity(X, CFS, SCHEMA)
    with pytest.raises(ValidationError, match="train="):
        l2c_proximity_num(X, CFS, SCHEMA)


# ----------------------------------------------------------------- diversity
def test_dice_diversity():
    # pairwise dist_cont (a, b, e over MAD 2, .5, 1):
    #   (1,2) (1 + 4 + 1)/3 = 2; (1,3) (1.5 + 2 + 1)/3 = 1.5; (2,3) (2.5 + 2 + 2)/3 = 6.5/3
    assert M.continuous_diversity(CFS, SCHEMA, mad=MAD) == approx((2 + 1.5 + 6.5 / 3) / 3)
    # pairwise categorical mismatch fraction over (c, s): (1,2) 1, (1,3) .5, (2,3) 1
    assert M.categorical_diversity(CFS, SCHEMA) == approx(2.5 / 3)
    # count diversity over all 5 features: (1,2) 5/5, (1,3) 4/5 (s equal), (2,3) 5/5
    assert M.count_diversity(CFS, SCHEMA) == approx(2.8 / 3)


def test_l2c_diversity_and_score():
    # buckets: CF1 (a 1, b 0, mid, u, no); CF2 (a 0, b 1, lo, v, yes); CF3 (a 2, b 1, hi, w, no)
    # Hamming fraction: (1,2) 5/5; (1,3) 4/5 (s); (2,3) 4/5 (b in the same bucket) -> 2.6/3
    assert l2c_diversity(CFS, SCHEMA, bins=BINS) == approx(2.6 / 3)
    # only valid counterfactuals (CF2, CF3): one pair, 4/5
    assert l2c_diversity(CFS, SCHEMA, bins=BINS, model=Rule(), target=1) == approx(0.8)
    # harmonic mean of D = .8 and 1 - S = .4: 2 * .8 * .4 / 1.2
    assert l2c_score(X, CFS, SCHEMA, bins=BINS, model=Rule(), target=1) == approx(0.64 / 1.2)
    assert harmonic_mean(0.0, 1.0) == 0.0
    assert np.isnan(harmonic_mean(np.nan, 0.5))
    # buckets from training data: 4 quantile buckets
    train = pd.DataFrame(
        {"a": np.arange(11), "b": np.linspace(0, 4, 11), "e": "lo", "c": "u", "s": "no"}
    )
    bins = l2c_bins(SCHEMA, train)
    np.testing.assert_allclose(bins["a"], [0, 2.5, 5, 7.5, 10])


def test_normalized_diversity():
    # d = dist_cont + dist_cat; prox = d(cf, x) = 2/3, 4/3 + 1, 6.5/3 + .5
    # pairs: (1,2) (2 + 1) / (2/3 + 7/3) = 1; (1,3) (1.5 + .5) / (2/3 + 8/3) = .6;
    #        (2,3) (6.5/3 + 1) / (7/3 + 8/3) = (9.5/3) / 5
    expected = (1 + 0.6 + 9.5 / 15) / 3
    assert normalized_diversity(X, CFS, SCHEMA, mad=MAD) == approx(expected)
    # Gower version: pair Gower (1,2) 3.2/5, (1,3) 2.05/5, (2,3) 3.75/5; prox = l1 = .14, .5, .55
    expected_g = (0.64 / 0.64 + 0.41 / 0.69 + 0.75 / 1.05) / 3
    assert normalized_diversity(X, CFS, SCHEMA, metric="gower") == approx(expected_g)


def test_diversity_edge_cases():
    one = CFS.iloc[:1]
    assert np.isnan(M.count_diversity(one, SCHEMA))
    assert np.isnan(M.categorical_diversity(CFS.iloc[:0], SCHEMA))
    assert np.isnan(M.continuous_diversity(one, SCHEMA, mad=MAD))
    assert np.isnan(l2c_diversity(one, SCHEMA, bins=BINS))
    assert np.isnan(normalized_diversity(X, one, SCHEMA, mad=MAD))
    # identical counterfactuals: zero diversity (not NaN)
    assert M.count_diversity(pd.concat([one, one]), SCHEMA) == 0.0


# ------------------------------------------------------- validity, UFCE metrics
def test_validity_and_coverage():
    np.testing.assert_array_equal(is_valid(CFS, Rule(), 1), [False, True, True])
    assert M.validity(CFS, Rule(), 1) == approx(2 / 3)
    # DiCE: unique valid / requested
    assert M.validity(pd.concat([CFS, CFS.iloc[[1]]]), Rule(), 1, n_requested=4) == approx(2 / 4)
    assert M.coverage(CFS, Rule(), 1) == 1.0
    assert M.coverage(CFS.iloc[:1], Rule(), 1) == 0.0
    assert np.isnan(M.validity(CFS.iloc[:0], Rule(), 1))
    assert M.validity(CFS.iloc[:0], Rule(), 1, n_requested=3) == 0.0


def test_actionability_and_feasibility():
    # user list {a, b}: shares CF1 1/2 (a of a, e), CF2 1/3 (b of b, c, s), CF3 2/4
    np.testing.assert_allclose(
        actionable_share(X, CFS, SCHEMA, features_to_vary=["a", "b"]), [0.5, 1 / 3, 0.5]
    )
    assert actionability(X, CFS, SCHEMA, features_to_vary=["a", "b"]) == approx(
        (0.5 + 1 / 3 + 0.5) / 3
    )
    # default list: every non-immutable feature -> all changes actionable
    assert actionability(X, CFS, SCHEMA) == 1.0
    assert actionability(X, CFS, SCHEMA, constraints=cf.Constraints(immutable=["c"])) == approx(
        (1 + 2 / 3 + 3 / 4) / 3
    )
    # eq. 9: valid (F, T, T) & plausible (T, T, F) & share >= .3 (T, T, T) -> only CF2
    kw = {"model": Rule(), "target": 1, "features_to_vary": ["a", "b"], "lof": StubLOF()}
    assert feasibility(X, CFS, SCHEMA, threshold=0.3, **kw) == approx(1 / 3)
    # threshold .4 drops CF2 (share 1/3)
    assert feasibility(X, CFS, SCHEMA, threshold=0.4, **kw) == 0.0


def test_lof_plausibility():
    # class 0 scattered in a unit square around (1, 1), class 1 around (8, 8) (no distance ties)
    pts = np.random.default_rng(0).uniform(-0.5, 0.5, (36, 2))
    frame = pd.DataFrame(np.r_[pts + 1, pts + 8], columns=["x1", "x2"])
    frame["y"] = [0] * 36 + [1] * 36
    data = cf.Dataset.from_frame(frame, target="y", bounds={"x1": (0, 10), "x2": (0, 10)})
    near0 = pd.DataFrame({"x1": [1.1], "x2": [0.9]})
    far = pd.DataFrame({"x1": [5.0], "x2": [5.0]})
    # against the target class 1, a point in the class-0 cluster is an outlier; against all rows it
    # is not
    assert plausibility(near0, 1, train=data) == 0.0
    assert plausibility(near0, 1, train=data, reference="all") == 1.0
    assert plausibility(near0, 0, train=data) == 1.0
    assert plausibility(far, 0, train=data, reference="all") == 0.0
    # the same numbers as scikit-learn's LOF on the min-max encoded rows
    from sklearn.neighbors import LocalOutlierFactor

    enc = cf.Encoder(data.schema)
    ref = LocalOutlierFactor(n_neighbors=20, novelty=True).fit(enc.transform(data.X[data.y == 1]))
    rows = pd.concat([near0, far, pd.DataFrame({"x1": [8.2], "x2": [7.9]})])
    np.testing.assert_allclose(
        lof_score(rows, 1, train=data), -ref.score_samples(enc.transform(rows))
    )
    with pytest.raises(ValidationError, match="train="):
        plausibility(near0, 1)


def test_violation_counts():
    cons = cf.Constraints(immutable=["c"], increasing=["b"], ranges={"a": (0, 6)}, max_changes=3)
    # CF1 fine; CF2 changes c (immutable); CF3 changes c (immutable), a = 7 > 6 (ranges), 4 > 3
    # changes
    got = M.violation_counts(X, CFS, SCHEMA, cons)
    assert got["immutable"] == 2 and got["ranges"] == 1 and got["max_changes"] == 1
    assert got["increasing"] == 0 and got["domain"] == 0 and got["total"] == 4
    assert set(VIOLATION_KINDS) <= set(got)
    assert M.violation_counts(X, CFS.iloc[:0], SCHEMA, cons)["total"] == 0


def test_time_stats():
    # runtimes 1, 3, 2 s; found 2, 0, 4
    s = time_stats([1.0, 3.0, 2.0], [2, 0, 4])
    assert s["mean_per_query"] == 2.0 and s["median_per_query"] == 2.0
    assert s["mean_per_counterfactual"] == 1.0  # 6 s / 6 counterfactuals
    assert s["median_per_counterfactual"] == 0.5  # median of 1/2, 2/4
    np.testing.assert_array_equal(
        time_per_counterfactual([1.0, 3.0, 2.0], [2, 0, 4]), [0.5, np.nan, 0.5]
    )


# ---------------------------------------------------------------- result level
def _result(model=None, constraints=None):
    from counterfact.result import CounterfactualResult

    qidx = pd.Index(["q0", "q1", "q2"], name="query")
    queries = pd.DataFrame([X, X, X], index=qidx)
    rows = pd.concat([CFS, CFS.iloc[[2]]], ignore_index=True)
    rows.index = pd.MultiIndex.from_tuples(
        [("q0", 0), ("q0", 1), ("q0", 2), ("q2", 0)], names=["query", "rank"]
    )
    return CounterfactualResult(
        queries=queries,
        counterfactuals=rows,
        status=pd.Series(["feasible", "failed", "feasible"], index=qidx),
        runtime=pd.Series([1.0, 3.0, 2.0], index=qidx),
        diagnostics=pd.DataFrame(index=qidx),
        schema=SCHEMA,
        target=pd.Series([1, 1, 1], index=qidx),
        constraints=constraints,
        model=model,
        n_counterfactuals=3,
    )


def test_result_level_functions():
    r = _result(Rule())
    d = M.distance(r, norm="l1")
    assert list(d.index) == list(r.counterfactuals.index)
    np.testing.assert_allclose(d, [0.14, 0.5, 0.55, 0.55])
    assert feature_deltas(r).shape == (4, 5)
    v = M.validity(r)
    assert v["q0"] == approx(2 / 3) and np.isnan(v["q1"]) and v["q2"] == 1.0
    assert M.coverage(r) == approx(2 / 3)  # q1 has none
    sp = sparsity(r)
    assert sp["q0"] == approx(0.6) and np.isnan(sp["q1"]) and sp["q2"] == approx(0.8)
    div = M.count_diversity(r)
    assert div["q0"] == approx(2.8 / 3) and np.isnan(div["q1"]) and np.isnan(div["q2"])
    assert M.continuous_proximity(r, mad=MAD)["q0"] == approx(-12.5 / 9)
    assert l2c_score(r, bins=BINS)["q0"] == approx(0.64 / 1.2)  # valid CF2, CF3 only
    assert time_stats(r)["mean_per_counterfactual"] == approx(6 / 4)
    vc = M.violation_counts(_result(constraints=cf.Constraints(immutable=["c"])))
    assert (
        vc.loc["q0", "immutable"] == 2
        and vc.loc["q1", "total"] == 0
        and vc.loc["q2", "immutable"] == 1
    )


def test_evaluate_hand_values():
    r = _result(Rule(), constraints=cf.Constraints(features_to_vary=["a", "b"]))
    ev = M.evaluate(r, mad=MAD, bins=BINS)
    assert list(ev.columns) == list(METRIC_COLUMNS)
    q0 = ev.loc["q0"]
    assert q0["found"] == 3 and q0["validity"] == approx(2 / 3) and q0["coverage"] == 1.0
    assert q0["distance_l1"] == approx((0.14 + 0.5 + 0.55) / 3) and q0["nearest_l1"] == approx(0.14)
    assert q0["distance_l0"] == approx(0.6) and q0["distance_linf"] == approx(2.5 / 3)
    assert q0["gower"] == approx((0.14 + 0.5 + 0.55) / 3)
    assert q0["proximity_cont"] == approx(-12.5 / 9) and q0["proximity_cat"] == approx(0.5)
    assert q0["prox_euc"] == approx(12.5 / 3) and q0["prox_jac"] == approx((0 + 1 + 2 / 3) / 3)
    assert q0["sparsity"] == approx(0.6) and q0["changes"] == approx(3.0)
    assert q0["diversity_cont"] == approx((2 + 1.5 + 6.5 / 3) / 3)
    assert q0["diversity_cat"] == approx(2.5 / 3) and q0["diversity_count"] == approx(2.8 / 3)
    assert q0["diversity_l2c"] == approx(0.8) and q0["l2c_harmonic"] == approx(0.64 / 1.2)
    assert q0["diversity_normalized"] == approx((1 + 0.6 + 9.5 / 15) / 3)
    assert q0["actionability"] == approx((0.5 + 1 / 3 + 0.5) / 3)
    # features_to_vary {a, b}: CF1 changes e, CF2 c and s, CF3 e and c -> 5 violations
    assert q0["violations"] == 5 and q0["violations_features_to_vary"] == 5
    assert q0["time"] == 1.0 and q0["time_per_counterfactual"] == approx(1 / 3)
    # needs train: NaN
    assert (
        np.isnan(q0["plausibility"])
        and np.isnan(q0["l2c_distance_num"])
        and np.isnan(q0["feasibility"])
    )
    # a query without counterfactuals
    q1 = ev.loc["q1"]
    assert (
        q1["found"] == 0 and q1["coverage"] == 0.0 and q1["violations"] == 0 and q1["time"] == 3.0
    )
    assert np.isnan(
        q1[["validity", "distance_l1", "sparsity", "diversity_count", "time_per_counterfactual"]]
    ).all()
    # one counterfactual: diversities undefined
    q2 = ev.loc["q2"]
    assert q2["found"] == 1 and q2["distance_l1"] == approx(0.55)
    assert np.isnan(
        q2[["diversity_cont", "diversity_cat", "diversity_count", "diversity_l2c", "l2c_harmonic"]]
    ).all()


def test_evaluate_without_model_or_train():
    ev = M.evaluate(_result())
    assert (
        np.isnan(ev["validity"]).all()
        and np.isnan(ev["coverage"]).all()
        and np.isnan(ev["feasibility"]).all()
    )
    assert np.isnan(ev["proximity_cont"]).all() and np.isnan(ev["diversity_l2c"]).all()
    assert ev.loc["q0", "sparsity"] == approx(0.6)
    with pytest.raises(ValidationError, match="CounterfactualResult"):
        M.evaluate(CFS)


def test_evaluate_real_result_matches_functions():
    data = cf.datasets.load("german_credit")
    data = data.with_schema(
        data.schema.with_actionability(**dict.fromkeys(data.schema.names, "free"))
    )
    train, test = data.subset(data.frame.index[:400]).split(test_size=0.25, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    r = cf.NearestObservable().fit(model, train).explain(test.X.iloc[:3], n_counterfactuals=3)
    ev = r.evaluate(train)
    assert (ev["found"] > 0).any()
    assert (ev.loc[ev["found"] > 0, "validity"] == 1.0).all() and (ev["violations"] == 0).all()
    assert (ev["coverage"] == (ev["found"] > 0)).all()
    pd.testing.assert_series_equal(ev["sparsity"], sparsity(r), check_names=False)
    pd.testing.assert_series_equal(
        ev["plausibility"], plausibility(r, train=train), check_names=False
    )
    pd.testing.assert_series_equal(
        ev["feasibility"], feasibility(r, train=train), check_names=False
    )
    pd.testing.assert_series_equal(
        ev["diversity_cont"], M.continuous_diversity(r, train=train), check_names=False
    )
    pd.testing.assert_series_equal(
        ev["diversity_l2c"], l2c_diversity(r, train=train), check_names=False
    )
    pd.testing.assert_series_equal(
        ev["l2c_distance_num"], l2c_proximity_num(r, train=train), check_names=False
    )
    nearest = M.distance(r, norm="l1").groupby(level=0).min().reindex(r.queries.index)
    np.testing.assert_allclose(ev["nearest_l1"], nearest)
    # the nearest observed row's cost, or less once the changes it does not need are reverted
    cheapest = r.cost().groupby(level=0).min().reindex(r.queries.index)
    assert (cheapest <= r.diagnostics["nearest_value"].astype(float) + 1e-9).all()
    lof = lof_score(r, train=train).groupby(level=0).mean().reindex(r.queries.index)
    np.testing.assert_allclose(ev["lof"], lof)
    # a shared detector gives the same columns, and a wrong object is refused
    det = M.LOFPlausibility(train)
    pd.testing.assert_frame_equal(r.evaluate(train, lof=det), ev)
    assert det._models  # fitted once, kept for the next call
    with pytest.raises(cf.ValidationError, match="LOFPlausibility"):
        r.evaluate(train, lof="lof")
