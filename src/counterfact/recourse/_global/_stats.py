"""Figures of global recourse, all computed from its per-person table.

As for the audit, every number is a function of ``GlobalRecourse.per_row`` (and the
settings), so anyone holding that table can recompute it:

* coverage: share of a group's rejected people for whom one of the chosen actions,
  applied to their own row, reaches the target (Wilson score interval);
* coverage gap: the best-covered group's coverage (among groups not flagged small)
  minus the group's, with Newcombe's hybrid score interval for a difference of two
  proportions (Newcombe, Statistics in Medicine 1998, method 10: built from the two
  Wilson intervals);
* cost ratio: the mean cost of the assigned global action over the mean cost of the
  person's own (per-person) counterfactual, over the covered people who have one
  (a ratio of means, with a seeded paired percentile bootstrap interval);
  ``cost_ratio_median`` is the median of the per-person ratios.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._stats import _rng, bootstrap_ci, group_blocks, wilson

__all__ = ["ACTION_COLUMNS", "action_table", "newcombe", "summarize"]

#: the columns of the action table before the per-group coverages
ACTION_COLUMNS = (
    "description",
    "n_works",
    "coverage",
    "coverage_ci_low",
    "coverage_ci_high",
    "n_new",
    "cumulative_coverage",
    "n_assigned",
    "cost_median",
)


def newcombe(k1: int, n1: int, k2: int, n2: int, confidence: float) -> tuple[float, float]:
    """Newcombe's hybrid score interval of ``k1/n1 - k2/n2`` (NaN when a sample is empty)."""
    if n1 <= 0 or n2 <= 0:
        return float("nan"), float("nan")
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson(k1, n1, confidence)
    l2, u2 = wilson(k2, n2, confidence)
    d = p1 - p2
    return float(d - np.hypot(p1 - l1, u2 - p2)), float(d + np.hypot(u1 - p1, p2 - l2))


def _ratio_ci(
    num: np.ndarray, den: np.ndarray, n_bootstrap: int, confidence: float, rng: np.random.Generator
) -> tuple[float, float]:
    """Paired percentile bootstrap interval of ``mean(num) / mean(den)`` (NaN for fewer than
    two pairs: resampling one pair only returns it, which is no interval)."""
    if num.size < 2 or n_bootstrap < 1:
        return float("nan"), float("nan")
    idx = rng.integers(0, num.size, size=(n_bootstrap, num.size))
    with np.errstate(divide="ignore", invalid="ignore"):
        r = num[idx].mean(axis=1) / den[idx].mean(axis=1)
    a = (1 - confidence) / 2
    lo, hi = np.nanquantile(r, [a, 1 - a])
    return float(lo), float(hi)


def _block(rows: pd.DataFrame, key: tuple[str, str], s: Any) -> dict[str, Any]:
    rej = rows[rows["rejected"]]
    k = len(rej)
    n_ind = int((rej["individual"] == "recourse").sum())
    cov = rej[rej["covered"]]
    n_cov = len(cov)
    lo, hi = wilson(n_cov, k, s.confidence)
    cost = cov["cost"].to_numpy(dtype=float)
    cost = cost[np.isfinite(cost)]
    pair = cov[(cov["individual"] == "recourse") & (cov["individual_cost"] > 0)]
    g, i = pair["cost"].to_numpy(dtype=float), pair["individual_cost"].to_numpy(dtype=float)
    rng = _rng(s.random_state, "global", *key)
    mlo, mhi = bootstrap_ci(cost, "median", s.n_bootstrap, s.confidence, rng)
    rlo, rhi = _ratio_ci(g, i, s.n_bootstrap, s.confidence, rng)
    ind_rate = n_ind / k if k else np.nan
    return {
        "grouping": key[0],
        "group": key[1],
        "n_rejected": k,
        "small": k < s.min_group_size,
        "n_individual": n_ind,
        "individual_rate": ind_rate,
        "n_covered": n_cov,
        "coverage": n_cov / k if k else np.nan,
        "coverage_ci_low": lo,
        "coverage_ci_high": hi,
        "relative_coverage": (n_cov / k) / ind_rate if k and ind_rate > 0 else np.nan,
        "cost_median": float(np.median(cost)) if cost.size else np.nan,
        "cost_median_ci_low": mlo,
        "cost_median_ci_high": mhi,
        "cost_individual_median": float(np.median(i)) if i.size else np.nan,
        "n_paired": int(i.size),
        "cost_ratio": float(g.mean() / i.mean()) if i.size else np.nan,
        "cost_ratio_ci_low": rlo,
        "cost_ratio_ci_high": rhi,
        "cost_ratio_median": float(np.median(g / i)) if i.size else np.nan,
    }


def _gaps(table: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """Coverage gap to the best-covered group of each grouping (not small), with its interval."""
    table = table.copy()
    for col in ("coverage_gap", "coverage_gap_ci_low", "coverage_gap_ci_high"):
        table[col] = np.nan
    table["best_off"] = False
    for _, sub in table[table["grouping"] != ""].groupby("grouping", sort=False):
        ref = sub[~sub["small"]]
        ref = ref if len(ref) else sub
        rates = ref["coverage"].dropna()
        if not len(rates):
            continue
        best = rates.idxmax()
        table.loc[best, "best_off"] = True
        kb, nb = int(table.loc[best, "n_covered"]), int(table.loc[best, "n_rejected"])
        for i in sub.index:
            table.loc[i, "coverage_gap"] = table.loc[best, "coverage"] - table.loc[i, "coverage"]
            if i != best:
                lo, hi = newcombe(
                    kb,
                    nb,
                    int(table.loc[i, "n_covered"]),
                    int(table.loc[i, "n_rejected"]),
                    confidence,
                )
                table.loc[i, "coverage_gap_ci_low"], table.loc[i, "coverage_gap_ci_high"] = lo, hi
    return table


def summarize(per_row: pd.DataFrame, order: dict[str, list[str]], settings: Any) -> pd.DataFrame:
    """One row for everyone (grouping ``""``, group ``"all"``) and one per group."""
    return _gaps(group_blocks(per_row, order, _block, settings), settings.confidence)


def action_table(
    per_row: pd.DataFrame,
    names: Sequence[str],
    descriptions: Sequence[str],
    order: dict[str, list[str]],
    settings: Any,
) -> pd.DataFrame:
    """One row per chosen action: for whom it works (share of the rejected, with its
    interval), whom it adds to the actions before it, to whom it is assigned, its median
    cost over the people it works for, and its coverage in every group."""
    rej = per_row[per_row["rejected"]]
    k = len(rej)
    seen = np.zeros(k, dtype=bool)
    rows = []
    for name, text in zip(names, descriptions, strict=True):
        works = rej[f"works:{name}"].to_numpy(dtype=bool)
        cost = rej.loc[works, f"cost:{name}"].to_numpy(dtype=float)
        lo, hi = wilson(int(works.sum()), k, settings.confidence)
        new = works & ~seen
        seen |= works
        row: dict[str, Any] = {
            "action": name,
            "description": text,
            "n_works": int(works.sum()),
            "coverage": works.sum() / k if k else np.nan,
            "coverage_ci_low": lo,
            "coverage_ci_high": hi,
            "n_new": int(new.sum()),
            "cumulative_coverage": seen.sum() / k if k else np.nan,
            "n_assigned": int((rej["action"] == name).sum()),
            "cost_median": float(np.median(cost)) if cost.size else np.nan,
        }
        for g, levels in order.items():
            col = rej[f"group:{g}"].to_numpy(dtype=object)
            for level in levels:
                m = col == level
                row[f"coverage:{g}={level}"] = works[m].mean() if m.any() else np.nan
        rows.append(row)
    if not rows:
        return pd.DataFrame(columns=list(ACTION_COLUMNS)).rename_axis("action")
    return pd.DataFrame(rows).set_index("action")
