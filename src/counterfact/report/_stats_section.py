"""The report's statistical tests: Friedman + Nemenyi only where they mean something."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..benchmark._stats import all_tied, average_ranks, friedman, nemenyi_cd
from ._figures import Figure
from ._glossary import KEY_METRICS, KeyMetric
from ._plots import cd_diagram
from ._tables import plain_table

__all__ = ["MIN_BLOCKS", "stats_section"]

#: Fewest complete blocks (dataset x model pairs) for which a test is run.
MIN_BLOCKS = 5
#: Fewest methods: Friedman's test compares three or more.
MIN_METHODS = 3
ALPHA = 0.05
_MAX_CD_FIGURES = 4


def _caveat(alpha: float) -> str:
    return (
        "Friedman test (scipy.stats.friedmanchisquare) on the methods' ranks within each "
        "block (a dataset x model pair; each method's mean over its queries and seeds), "
        f"followed by the Nemenyi critical difference at alpha = {alpha} (q from "
        "scipy.stats.studentized_range; Dem\u0161ar 2006). Run only for a metric with at "
        f"least {MIN_BLOCKS} complete blocks, at least {MIN_METHODS} methods and not every "
        "block tied; a block counts only where every method has a value. N below is the "
        "number of blocks used. p-values are not corrected across metrics; with few blocks "
        "the test has little power, and a non-significant result is no evidence that the "
        "methods are equal."
    )


def stats_section(
    per_query: pd.DataFrame, fmt: str, *, min_blocks: int = MIN_BLOCKS, alpha: float = ALPHA
) -> dict[str, Any]:
    """Tests per key metric.

    Returns a mapping with ``caveat`` (the text shown next to the tests),
    ``table`` (one row per tested metric: test, N, k, chi2, p, CD and the
    average ranks; empty text when nothing was tested), ``figures`` (CD
    diagrams of up to four tested metrics) and ``untested`` (why each other
    metric was not tested).
    """
    out: dict[str, Any] = {"caveat": _caveat(alpha), "table": "", "figures": [], "untested": ""}
    if per_query.empty:
        out["untested"] = "no finished cell."
        return out
    rows: list[dict[str, Any]] = []
    skipped: dict[str, list[str]] = {}
    for k in KEY_METRICS:
        if k.column not in per_query or not per_query[k.column].notna().any():
            continue
        blocks = (
            per_query.groupby(["dataset", "model", "method"])[k.column].mean().unstack("method")
        )
        ranks = average_ranks(blocks, higher_is_better=k.higher)
        why = _why_untested(len(ranks), blocks.shape[1], ranks, min_blocks)
        if why is not None:
            skipped.setdefault(why, []).append(k.name)
            continue
        row, figure = _tested(k, blocks, ranks, alpha, len(out["figures"]) < _MAX_CD_FIGURES)
        rows.append(row)
        if figure is not None:
            out["figures"].append(figure)
    if rows:
        out["table"] = plain_table(pd.DataFrame(rows), fmt)
    if skipped:
        out["untested"] = (
            "; ".join(f"{', '.join(names)} ({why})" for why, names in skipped.items()) + "."
        )
    return out


def _why_untested(n: int, m: int, ranks: Any, min_blocks: int) -> str | None:
    """Why a metric with ``n`` complete blocks of ``m`` methods is not tested (None: it is)."""
    if m < MIN_METHODS:
        return f"{m} method{'s' if m != 1 else ''}, the Friedman test needs {MIN_METHODS}"
    if n < min_blocks:
        return f"N = {n} complete block{'s' if n != 1 else ''}, fewer than {min_blocks}"
    if all_tied(ranks):
        return "every method ties in every block"
    return None


def _tested(
    k: KeyMetric, blocks: pd.DataFrame, ranks: Any, alpha: float, draw: bool
) -> tuple[dict[str, Any], Figure | None]:
    """The Friedman + Nemenyi row of the table and (if ``draw``) the critical-difference
    diagram."""
    n, m = len(ranks), blocks.shape[1]
    fr = friedman(blocks, higher_is_better=k.higher)
    cd = nemenyi_cd(m, n, alpha)
    avg = ranks.mean(axis=0)
    row = {
        "metric": k.label,
        "test": "Friedman + Nemenyi",
        "N": n,
        "k": m,
        "chi2": fr["chi2"],
        "p": fr["p_value"],
        "CD": cd,
        **{f"rank {c}": v for c, v in avg.items()},
    }
    if not draw:
        return row, None
    sig = "differ" if fr["p_value"] < alpha else "do not differ significantly"
    figure = Figure(
        cd_diagram(avg, cd),
        [k.column],
        f"critical difference: {k.name}",
        f"Critical-difference diagram for {k.label}: average ranks over N = {n} "
        f"blocks; methods joined by a bar are within CD = {cd:.2f} of each "
        f"other. Friedman p = {fr['p_value']:.3g}: the methods {sig} at alpha = "
        f"{alpha}.",
    )
    return row, figure
