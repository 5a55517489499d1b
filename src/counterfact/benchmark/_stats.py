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

__all__ = ["average_ranks", "friedman", "nemenyi_cd"]

# Critical values q_alpha of the Studentized range statistic divided by sqrt(2),
# for the two-tailed Nemenyi test (Demšar 2006, Table 5a), k = 2..10.
_Q_005 = {2: 1.960, 3: 2.343, 4: 2.569, 5: 2.728, 6: 2.850, 7: 2.949, 8: 3.031, 9: 3.102, 10: 3.164}
_Q_010 = {2: 1.645, 3: 2.052, 4: 2.291, 5: 2.459, 6: 2.589, 7: 2.693, 8: 2.780, 9: 2.855, 10: 2.920}


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

    Returns the chi-square statistic, its p-value, Iman-Davenport's F and its
    p-value, the number of blocks N and methods k, and the average ranks.
    """
    from scipy import stats

    ranks = average_ranks(table, higher_is_better=higher_is_better)
    n, k = ranks.shape
    out: dict[str, float] = {"N": float(n), "k": float(k)}
    if n < 2 or k < 2:
        out.update(chi2=math.nan, p_value=math.nan, F=math.nan, p_value_F=math.nan)
        return out
    R = ranks.mean(axis=0).to_numpy()
    chi2 = 12 * n / (k * (k + 1)) * (np.sum(R**2) - k * (k + 1) ** 2 / 4)
    p = float(stats.chi2.sf(chi2, k - 1))
    denom = n * (k - 1) - chi2
    F = (n - 1) * chi2 / denom if denom > 0 else math.inf
    pF = float(stats.f.sf(F, k - 1, (k - 1) * (n - 1))) if math.isfinite(F) else 0.0
    out.update(chi2=float(chi2), p_value=p, F=float(F), p_value_F=pF)
    return out


def nemenyi_cd(k: int, n: int, alpha: float = 0.05) -> float:
    """Nemenyi critical difference ``q_alpha * sqrt(k (k + 1) / (6 N))``."""
    table = {0.05: _Q_005, 0.10: _Q_010}.get(alpha)
    if table is None:
        raise ValidationError(f"alpha must be 0.05 or 0.10. Got {alpha}.")
    if k not in table:
        raise ValidationError(f"The Nemenyi table covers 2..10 methods. Got k={k}.")
    if n < 1:
        raise ValidationError(f"Need at least one block. Got N={n}.")
    return table[k] * math.sqrt(k * (k + 1) / (6.0 * n))
