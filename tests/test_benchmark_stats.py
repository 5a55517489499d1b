from __future__ import annotations

import math

import pandas as pd
import pytest

from counterfact.benchmark import average_ranks, friedman, load_spec, nemenyi_cd
from counterfact.exceptions import ValidationError


def test_friedman_hand_computed():
    # 4 blocks, methods A < B < C everywhere (lower is better): ranks 1, 2, 3
    t = pd.DataFrame({"A": [0.1, 0.2, 0.1, 0.3], "B": [0.2, 0.3, 0.2, 0.4], "C": [0.5, 0.6, 0.7, 0.8]})
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
    # q_0.05(k=3) = 2.343; CD = 2.343 * sqrt(3*4 / (6*4))
    assert nemenyi_cd(3, 4) == pytest.approx(2.343 * math.sqrt(0.5))
    with pytest.raises(ValidationError):
        nemenyi_cd(11, 4)


def test_spec_validation(tmp_path):
    s = load_spec({"datasets": ["german_credit"], "models": ["lr", {"kind": "rf", "params": {"n_estimators": 10}}], "methods": ["nearest"], "queries": 3})
    assert s.models[1].params == {"n_estimators": 10} and s.queries == 3
    with pytest.raises(ValidationError, match="unknown top-level"):
        load_spec({"datasets": ["a"], "models": ["lr"], "methods": ["nearest"], "querys": 3})
    with pytest.raises(ValidationError, match="non-empty 'methods'"):
        load_spec({"datasets": ["a"], "models": ["lr"], "methods": []})
    with pytest.raises(ValidationError, match="unique"):
        load_spec({"datasets": ["a"], "models": ["lr"], "methods": ["nearest", "nearest"]})
    p = tmp_path / "s.yaml"
    p.write_text("datasets: [adult]\nmodels: [lr]\nmethods:\n  - name: nearest\n    params: {norm: l0}\n")
    s = load_spec(p)
    assert s.name == "s" and s.methods[0].params == {"norm": "l0"}
