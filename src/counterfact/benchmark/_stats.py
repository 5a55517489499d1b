"""Statistical comparison of methods across datasets (Demšar, JMLR 2006).

Raw means over different coverages mislead, so methods are compared by their
*ranks* per block (a dataset x model pair): the Friedman test says whether the
methods differ at all, and the Nemenyi critical difference says which pairs do.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..exceptions import ValidationError

__all__ = ["all_tied", "average_ranks", "friedman", "nemenyi_cd", "nemenyi_q"]


def average_ranks(table: pd.DataFrame, *, higher_is_better: bool) -> pd.DataFrame:
    """Ranks of the methods (columns) within each block (rows); 1 is best, ties averaged.

    Blocks with a missing value for some method are dropped (a method absent
    from a block cannot be ranked there).
    """
    t = table.dropna(axis=0, how="any")
    if t.empty:
        return t
    return t.rank(axis=1, ascending=not higher_is_better, method="average")


def friedman(table: pd.DataFrame, *, higher_is_better: bool) -> dict[str, float]:
    """Friedman's test over blocks (rows) x methods (columns).

    The statistic and p-value come from :func:`scipy.stats.friedmanchisquare`
    (with its correction for ties); Iman-Davenport's less conservative F is
    derived from it, ``F = (N - 1) chi2 / (N (k - 1) - chi2)`` with
    ``(k - 1, (k - 1)(N - 1))`` degrees of freedom (Demšar 2006, Sec. 3.2.2).
    Needs at least 3 methods and 2 complete blocks; otherwise, or when every
    block ties all methods, the statistics are NaN.

    Returns
    -------
    dict
        ``chi2``, ``p_value``, ``F``, ``p_value_F``, ``N`` (complete blocks) and
        ``k`` (methods).
    """
    from scipy import stats

    ranks = average_ranks(table, higher_is_better=higher_is_better)
    n, k = ranks.shape if len(ranks) else (0, table.shape[1])
    out: dict[str, float] = {"N": float(n), "k": float(k)}
    if n < 2 or k < 3 or all_tied(ranks):
        out.update(chi2=math.nan, p_value=math.nan, F=math.nan, p_value_F=math.nan)
        return out
    t = table.dropna(axis=0, how="any")
    sign = (
        -1.0 if higher_is_better else 1.0
    )  # scipy ranks ascending; the statistic is symmetric anyway
    res = stats.friedmanchisquare(*(sign * t[c].to_numpy(dtype=float) for c in t.columns))
    chi2, p = float(res.statistic), float(res.pvalue)
    denom = n * (k - 1) - chi2
    F = (n - 1) * chi2 / denom if denom > 0 else math.inf
    pF = float(stats.f.sf(F, k - 1, (k - 1) * (n - 1))) if math.isfinite(F) else 0.0
    out.update(chi2=chi2, p_value=p, F=float(F), p_value_F=pF)
    return out


def all_tied(ranks: pd.DataFrame) -> bool:
    """Whether every block gives every method the same rank (nothing to test)."""
    if ranks.empty:
        return True
    r = ranks.to_numpy(dtype=float)
    return bool(np.all(np.abs(r - r[:, :1]) < 1e-12))


def nemenyi_q(k: int, alpha: float = 0.05) -> float:
    """Critical value ``q_alpha`` of the two-tailed Nemenyi test for ``k``
    methods: the studentized range quantile with infinite degrees of freedom
    divided by sqrt(2) (:func:`scipy.stats.studentized_range`; Demšar 2006,
    Table 5a, e.g. 2.343 for k = 3 at alpha = 0.05)."""
    from scipy import stats

    if not isinstance(k, (int, np.integer)) or k < 2:
        raise ValidationError(f"The Nemenyi test needs at least 2 methods. Got k={k!r}.")
    if not 0 < float(alpha) < 1:
        raise ValidationError(f"alpha must be in (0, 1). Got {alpha!r}.")
    return float(stats.studentized_range.ppf(1.0 - float(alpha), int(k), np.inf) / math.sqrt(2.0))


def nemenyi_cd(k: int, n: int, alpha: float = 0.05) -> float:
    """Nemenyi critical difference ``q_alpha * sqrt(k (k + 1) / (6 N))``: two
    methods whose average ranks over ``N`` blocks differ by more are
    significantly different at level ``alpha`` (see :func:`nemenyi_q`)."""
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValidationError(f"Need at least one block. Got N={n!r}.")
    return nemenyi_q(k, alpha) * math.sqrt(k * (k + 1) / (6.0 * n))
