from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from counterfact.benchmark import load_spec
from counterfact.benchmark._stats import all_tied, average_ranks, friedman, nemenyi_cd, nemenyi_q
from counterfact.exceptions import ValidationError


def test_friedman_hand_computed():
    # 4 blocks, methods A < B < C everywhere (lower is better): ranks 1, 2, 3
    t = pd.DataFrame(
        {"A": [0.1, 0.2, 0.1, 0.3], "B": [0.2, 0.3, 0.2, 0.4], "C": [0.5, 0.6, 0.7, 0.8]}
    )
    r = average_ranks(t, higher_is_better=False)
    assert r.mean().tolist() == [1.0, 2.0, 3.0]
    out = friedman(t, higher_is_better=False)
    # chi2 = 12 N / (k (k+1)) * (sum R^2 - k (k+1)^2 / 4) = 12*4/12 * (14 - 12) = 8
    assert out["chi2"] == pytest.approx(8.0)
    # chi-square with 2 degrees of freedom: sf(x) = exp(-x/2)
    assert out["p_value"] == pytest.approx(math.exp(-4.0))
    # with higher_is_better the ranks reverse
    assert average_ranks(t, higher_is_better=True).mean().tolist() == [3.0, 2.0, 1.0]


def test_ties_and_missing():
    t = pd.DataFrame({"A": [1.0, 1.0, None], "B": [1.0, 2.0, 3.0]})
    r = average_ranks(t, higher_is_better=True)
    assert len(r) == 2  # the block with a missing method is dropped
    assert r.iloc[0].tolist() == [1.5, 1.5]


def test_nemenyi_cd():
    # q_0.05(k=3) = 2.343 (Demsar 2006, Table 5a); CD = 2.343 * sqrt(3*4 / (6*4))
    assert nemenyi_cd(3, 4) == pytest.approx(2.343 * math.sqrt(0.5), abs=1e-3)
    with pytest.raises(ValidationError):
        nemenyi_cd(1, 4)
    with pytest.raises(ValidationError):
        nemenyi_cd(3, 0)
    with pytest.raises(ValidationError):
        nemenyi_q(3, alpha=1.5)


@pytest.mark.parametrize(
    ("k", "q05", "q10"),
    # Demsar (2006), Table 5: two-tailed Nemenyi critical values
    [
        (2, 1.960, 1.645),
        (3, 2.343, 2.052),
        (4, 2.569, 2.291),
        (5, 2.728, 2.459),
        (6, 2.850, 2.589),
        (7, 2.949, 2.693),
        (8, 3.031, 2.780),
        (9, 3.102, 2.855),
        (10, 3.164, 2.920),
    ],
)
def test_nemenyi_q_matches_published_table_and_scipy(k, q05, q10):
    from scipy import stats

    assert nemenyi_q(k, 0.05) == pytest.approx(q05, abs=1.5e-3)
    assert nemenyi_q(k, 0.10) == pytest.approx(q10, abs=1.5e-3)
    assert nemenyi_q(k) == pytest.approx(
        stats.studentized_range.ppf(0.95, k, np.inf) / math.sqrt(2)
    )


def test_nemenyi_beyond_ten_methods():
    # no table limit any more: k = 11 comes from the studentized range distribution
    assert nemenyi_q(11) > nemenyi_q(10)


def test_friedman_matches_scipy_with_ties():
    rng = np.random.default_rng(3)
    t = pd.DataFrame(rng.integers(0, 4, size=(12, 4)).astype(float), columns=list("ABCD"))
    from scipy import stats

    ref = stats.friedmanchisquare(*(t[c] for c in t.columns))
    for hib in (True, False):
        out = friedman(t, higher_is_better=hib)
        assert out["chi2"] == pytest.approx(ref.statistic) and out["p_value"] == pytest.approx(
            ref.pvalue
        )
        assert out["N"] == 12 and out["k"] == 4
        n, k, chi2 = 12, 4, ref.statistic
        assert out["F"] == pytest.approx((n - 1) * chi2 / (n * (k - 1) - chi2))
        assert out["p_value_F"] == pytest.approx(stats.f.sf(out["F"], k - 1, (k - 1) * (n - 1)))


def test_friedman_refuses_what_it_cannot_test():
    tied = pd.DataFrame({"A": [1.0] * 6, "B": [1.0] * 6, "C": [1.0] * 6})
    assert all_tied(average_ranks(tied, higher_is_better=True))
    assert math.isnan(friedman(tied, higher_is_better=True)["chi2"])
    two = pd.DataFrame({"A": [1.0, 2.0, 3.0], "B": [2.0, 3.0, 4.0]})
    assert math.isnan(friedman(two, higher_is_better=True)["p_value"])  # Friedman needs k >= 3


def test_spec_validation(tmp_path):
    s = load_spec(
        {
            "datasets": ["german_credit"],
            "models": ["lr", {"kind": "rf", "params": {"n_estimators": 10}}],
            "methods": ["nearest"],
            "queries": 3,
        }
    )
    assert s.models[1].params == {"n_estimators": 10} and s.queries == 3
    with pytest.raises(ValidationError, match="unknown top-level"):
        load_spec({"datasets": ["a"], "models": ["lr"], "methods": ["nearest"], "querys": 3})
    with pytest.raises(ValidationError, match="non-empty 'methods'"):
        load_spec({"datasets": ["a"], "models": ["lr"], "methods": []})
    with pytest.raises(ValidationError, match="unique"):
        load_spec({"datasets": ["a"], "models": ["lr"], "methods": ["nearest", "nearest"]})
    p = tmp_path / "s.yaml"
    p.write_text(
        "datasets: [adult]\nmodels: [lr]\nmethods:\n  - name: nearest\n    params: {norm: l0}\n"
    )
    s = load_spec(p)
    assert s.name == "s" and s.methods[0].params == {"norm": "l0"}
