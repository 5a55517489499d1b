"""Aggregates of an audit, all computed from its per-row table.

Every number here is a function of ``AuditResult.per_row`` (and the audit's
settings), so that it can be recomputed and checked by anyone holding that
table.  Definitions (also in :data:`GLOSSARY`):

* rates over the *rejected* rows of a group, with Wilson score intervals;
* costs over the rejected rows *with recourse*, with seeded percentile
  bootstrap intervals (each group's generator is seeded from
  ``(random_state, grouping, group)``, so a group's interval does not depend on
  which other groups exist);
* burden (Sharma, Henderson & Ghosh, CERTIFAI, AIES 2020): the mean normalised
  l1 distance between a group's rejected members and their counterfactuals;
* gaps and ratios against the best-off group of the same grouping (highest
  recourse rate, lowest burden) among the groups that are not flagged small
  (Gupta et al. 2019 call the burden difference the *recourse gap*).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sstats

__all__ = ["actions", "bootstrap_ci", "change_sets", "sensitivity_summary", "summarize", "wilson"]

OUTCOMES: tuple[str, ...] = ("recourse", "proven_none", "unknown")


def wilson(k: int, n: int, confidence: float) -> tuple[float, float]:
    """Wilson score interval of a proportion ``k / n`` (NaN when ``n == 0``)."""
    if n <= 0:
        return float("nan"), float("nan")
    z = float(sstats.norm.ppf(0.5 + confidence / 2))
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    lo = 0.0 if k == 0 else max(0.0, centre - half)
    hi = 1.0 if k == n else min(1.0, centre + half)
    return float(lo), float(hi)


def _rng(random_state: int, *keys: str) -> np.random.Generator:
    return np.random.default_rng([int(random_state), *(zlib.crc32(k.encode()) for k in keys)])


def bootstrap_ci(
    values: np.ndarray, stat: str, n_bootstrap: int, confidence: float, rng: np.random.Generator
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``stat`` (``"mean"`` or ``"median"``) of ``values``
    (NaN for fewer than two values: resampling one value only returns it)."""
    v = np.asarray(values, dtype=float)
    if v.size < 2 or n_bootstrap < 1:
        return float("nan"), float("nan")
    fn = np.mean if stat == "mean" else np.median
    out = np.empty(n_bootstrap)
    step = max(1, int(4_000_000 // max(v.size, 1)))
    for s in range(0, n_bootstrap, step):
        b = min(step, n_bootstrap - s)
        out[s : s + b] = fn(v[rng.integers(0, v.size, size=(b, v.size))], axis=1)
    a = (1 - confidence) / 2
    lo, hi = np.quantile(out, [a, 1 - a])
    return float(lo), float(hi)


def _block(rows: pd.DataFrame, key: tuple[str, str], s: Any) -> dict[str, Any]:
    n = len(rows)
    rej = rows[rows["rejected"]]
    k = len(rej)
    counts = rej["outcome"].value_counts()
    n_rec = int(counts.get("recourse", 0))
    n_none = int(counts.get("proven_none", 0))
    n_unk = int(counts.get("unknown", 0))
    rec = rej[rej["outcome"] == "recourse"]
    cost = rec["cost"].to_numpy(dtype=float)
    cost = cost[np.isfinite(cost)]
    l1 = rec["cost_l1"].to_numpy(dtype=float)
    l1 = l1[np.isfinite(l1)]
    rlo, rhi = wilson(n_rec, k, s.confidence)
    plo, phi = wilson(n_none, k, s.confidence)
    rng = _rng(s.random_state, *key)
    mlo, mhi = bootstrap_ci(cost, "median", s.n_bootstrap, s.confidence, rng)
    alo, ahi = bootstrap_ci(cost, "mean", s.n_bootstrap, s.confidence, rng)
    out: dict[str, Any] = {
        "grouping": key[0],
        "group": key[1],
        "n": n,
        "n_rejected": k,
        "small": k < s.min_group_size,
        "rejection_rate": k / n if n else np.nan,
        "n_recourse": n_rec,
        "recourse_rate": n_rec / k if k else np.nan,
        "recourse_ci_low": rlo,
        "recourse_ci_high": rhi,
        "n_proven_none": n_none,
        "proven_none_rate": n_none / k if k else np.nan,
        "proven_none_ci_low": plo,
        "proven_none_ci_high": phi,
        "n_unknown": n_unk,
        "unknown_rate": n_unk / k if k else np.nan,
        "cost_median": float(np.median(cost)) if cost.size else np.nan,
        "cost_median_ci_low": mlo,
        "cost_median_ci_high": mhi,
        "cost_mean": float(np.mean(cost)) if cost.size else np.nan,
        "cost_mean_ci_low": alo,
        "cost_mean_ci_high": ahi,
        "burden": float(np.mean(l1)) if l1.size else np.nan,
        "n_changed_mean": float(rec["n_changed"].mean()) if len(rec) else np.nan,
    }
    if "robustness_reached" in rows.columns:
        _held(out, rec, k, s)
    if "protected_changed" in rows.columns:
        pc = rec["protected_changed"].astype(float)
        out["protected_changed_rate"] = float(pc.mean()) if len(pc) else np.nan
    return out


def _held(out: dict[str, Any], rec: pd.DataFrame, k: int, s: Any) -> None:
    """Under ``Requirements(robustness=p)``: the group's rejected rows whose recourse is
    said to reach ``p`` (``robustness_reached``), their share of the rejected rows and its
    Wilson interval; a row short of ``p`` keeps its most robust answer and counts in
    ``recourse_rate``, not here."""
    n_held = int(rec["robustness_reached"].fillna(False).astype(bool).sum())
    lo, hi = wilson(n_held, k, s.confidence)
    out["n_holding"] = n_held
    out["holding_rate"] = n_held / k if k else np.nan
    out["holding_ci_low"], out["holding_ci_high"] = lo, hi


def _gaps(table: pd.DataFrame) -> pd.DataFrame:
    table = table.copy()
    for col in ("recourse_gap", "recourse_ratio", "burden_gap", "burden_ratio"):
        table[col] = np.nan
    table["best_off"] = False
    for g, sub in table[table["grouping"] != ""].groupby("grouping", sort=False):
        ref = sub[~sub["small"]]
        ref = ref if len(ref) else sub
        rates = ref["recourse_rate"].dropna()
        if len(rates):
            best = float(rates.max())
            m = table["grouping"] == g
            table.loc[m, "recourse_gap"] = best - table.loc[m, "recourse_rate"]
            table.loc[m, "recourse_ratio"] = (
                table.loc[m, "recourse_rate"] / best if best > 0 else np.nan
            )
        burdens = ref["burden"].dropna()
        if len(burdens):
            best_b = float(burdens.min())
            m = table["grouping"] == g
            table.loc[m, "burden_gap"] = table.loc[m, "burden"] - best_b
            table.loc[m, "burden_ratio"] = table.loc[m, "burden"] / best_b if best_b > 0 else np.nan
            table.loc[burdens.idxmin(), "best_off"] = True
    return table


class Settings:
    """An audit's settings read back from its metadata (defaults for keys a document lacks);
    ``top_change_sets`` is the per-person audit's, ``max_actions`` the global one's."""

    def __init__(self, d: dict[str, Any]) -> None:
        self.confidence = float(d.get("confidence", 0.95))
        self.n_bootstrap = int(d.get("n_bootstrap", 1000))
        self.random_state = int(d.get("random_state", 0))
        self.min_group_size = int(d.get("min_group_size", 30))
        self.top_change_sets = int(d.get("top_change_sets", 10))
        self.max_actions = int(d.get("max_actions", 3))


def group_blocks(
    per_row: pd.DataFrame, order: dict[str, list[str]], block: Any, settings: Any
) -> pd.DataFrame:
    """``block(rows, (grouping, group), settings)`` for everyone (grouping ``""``, group
    ``"all"``) and for each non-empty group of each grouping, one row each."""
    blocks = [block(per_row, ("", "all"), settings)]
    for g, levels in order.items():
        col = per_row[f"group:{g}"]
        for level in levels:
            sub = per_row[col == level]
            if len(sub):
                blocks.append(block(sub, (g, str(level)), settings))
    return pd.DataFrame(blocks)


def summarize(per_row: pd.DataFrame, order: dict[str, list[str]], settings: Any) -> pd.DataFrame:
    """One row for the whole population (grouping ``""``, group ``"all"``) and one per group."""
    return _gaps(group_blocks(per_row, order, _block, settings))


def actions(per_row: pd.DataFrame, features: Sequence[str], by: str | None = None) -> pd.DataFrame:
    """How often each feature is changed, over the rejected rows with recourse.

    Columns ``feature, n_changed, share`` (share of rows with recourse whose
    counterfactual changes the feature); with ``by`` a grouping name, one
    block per group (column ``group``).
    """
    rec = per_row[per_row["rejected"] & (per_row["outcome"] == "recourse")]
    parts = []
    keys = [("all", rec)] if by is None else list(rec.groupby(f"group:{by}", sort=True))
    for key, sub in keys:
        n = len(sub)
        counts = {f: 0 for f in features}
        for ch in sub["changed"]:
            for f in ch:
                counts[f] = counts.get(f, 0) + 1
        for f, c in counts.items():
            parts.append(
                {
                    "group": key,
                    "feature": f,
                    "n_changed": c,
                    "share": c / n if n else np.nan,
                    "n_recourse": n,
                }
            )
    out = pd.DataFrame(parts, columns=["group", "feature", "n_changed", "share", "n_recourse"])
    out = out.sort_values(
        ["group", "n_changed", "feature"], ascending=[True, False, True], kind="stable"
    )
    if by is None:
        out = out.drop(columns="group")
    return out.reset_index(drop=True)


def change_sets(per_row: pd.DataFrame, top: int = 10) -> pd.DataFrame:
    """The most common sets of changed features among the rows with recourse ("(waiting
    only)": an answer under a timeline that asks for no action, only time)."""
    rec = per_row[per_row["rejected"] & (per_row["outcome"] == "recourse")]
    n = len(rec)
    counts = rec["changed"].map(lambda t: tuple(sorted(t))).value_counts()
    rows = [
        {"features": " + ".join(k) if k else "(waiting only)", "n": int(v), "share": v / n}
        for k, v in counts.items()
    ]
    out = pd.DataFrame(rows, columns=["features", "n", "share"])
    return (
        out.sort_values(["n", "features"], ascending=[False, True], kind="stable")
        .head(top)
        .reset_index(drop=True)
    )


def sensitivity_summary(
    per_row: pd.DataFrame, paired: pd.DataFrame, settings: Any, protected: str
) -> dict[str, Any]:
    """MACE Table 4, generalised: how often answers change ``protected``, and what freezing it
    costs.

    ``paired`` holds, for every row whose answer changed the protected
    feature, its cost with the feature allowed to change (``cost_allowed``) and
    frozen (``cost_frozen``, NaN without recourse).  The increase is paired per
    row: ``cost_frozen - cost_allowed`` over the rows with recourse both times;
    ``rel_increase_mean`` is MACE's ``E[d_frozen / d_allowed - 1]`` over those
    with ``d_allowed > 0``.
    """
    rec = per_row[per_row["rejected"] & (per_row["outcome"] == "recourse")]
    n_rec = len(rec)
    n_ch = int(rec["protected_changed"].astype(bool).sum()) if n_rec else 0
    lo, hi = wilson(n_ch, n_rec, settings.confidence)
    both = paired[paired["outcome_frozen"] == "recourse"]
    inc = (both["cost_frozen"] - both["cost_allowed"]).to_numpy(dtype=float)
    pos = both[both["cost_allowed"] > 0]
    rel = (pos["cost_frozen"] / pos["cost_allowed"] - 1).to_numpy(dtype=float)
    ilo, ihi = bootstrap_ci(
        inc,
        "mean",
        settings.n_bootstrap,
        settings.confidence,
        _rng(settings.random_state, "sensitivity", protected),
    )
    counts = paired["outcome_frozen"].value_counts()
    return {
        "protected": protected,
        "n_recourse": n_rec,
        "n_changed": n_ch,
        "share_changed": n_ch / n_rec if n_rec else float("nan"),
        "share_changed_ci": [lo, hi],
        "n_rerun": len(paired),
        "n_recourse_frozen": int(counts.get("recourse", 0)),
        "n_proven_none_frozen": int(counts.get("proven_none", 0)),
        "n_unknown_frozen": int(counts.get("unknown", 0)),
        "increase_mean": float(inc.mean()) if inc.size else float("nan"),
        "increase_mean_ci": [ilo, ihi],
        "increase_median": float(np.median(inc)) if inc.size else float("nan"),
        "rel_increase_mean": float(rel.mean()) if rel.size else float("nan"),
    }
