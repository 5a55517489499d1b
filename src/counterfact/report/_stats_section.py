"""The report's statistical tests: Friedman + Nemenyi only where they mean something."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..benchmark._stats import all_tied, average_ranks, friedman, nemenyi_cd
from ._figures import Figure
from ._glossary import KEY_METRICS
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
        "Friedman test (scipy.stats.friedmanchisquare) on the methods' ranks within each block "
        "(a dataset x model pair; each method's mean over its queries and seeds), followed by the Nemenyi "
        f"critical difference at alpha = {alpha} (q from scipy.stats.studentized_range; Dem\u0161ar 2006). "
        f"Run only for a metric with at least {MIN_BLOCKS} complete blocks, at least {MIN_METHODS} methods and "
        "not every block tied; a block counts only where every method has a value. N below is the number of "
        "blocks used. p-values are not corrected across metrics; with few blocks the test has little power, "
        "and a non-significant result is no evidence that the methods are equal."
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
        n, m = len(ranks), blocks.shape[1]
        if m < MIN_METHODS:
            skipped.setdefault(
                f"{m} method{'s' if m != 1 else ''}, the Friedman test needs {MIN_METHODS}", []
            ).append(k.name)
            continue
        if n < min_blocks:
            skipped.setdefault(
                f"N = {n} complete block{'s' if n != 1 else ''}, fewer than {min_blocks}", []
            ).append(k.name)
            continue
        if all_tied(ranks):
            skipped.setdefault("every method ties in every block", []).append(k.name)
            continue
        fr = friedman(blocks, higher_is_better=k.higher)
        cd = nemenyi_cd(m, n, alpha)
        avg = ranks.mean(axis=0)
        rows.append(
            {
                "metric": k.label,
                "test": "Friedman + Nemenyi",
                "N": n,
                "k": m,
                "chi2": fr["chi2"],
                "p": fr["p_value"],
                "CD": cd,
                **{f"rank {c}": v for c, v in avg.items()},
            }
        )
        if len(out["figures"]) < _MAX_CD_FIGURES:
            sig = "differ" if fr["p_value"] < alpha else "do not differ significantly"
            png = cd_diagram(avg, cd)
            out["figures"].append(
                Figure(
                    png,
                    [k.column],
                    f"critical difference: {k.name}",
                    f"Critical-difference diagram for {k.label}: average ranks over N = {n} blocks; methods joined by a "
                    f"bar are within CD = {cd:.2f} of each other. Friedman p = {fr['p_value']:.3g}: the methods {sig} "
                    f"at alpha = {alpha}.",
                )
            )
    if rows:
        out["table"] = plain_table(pd.DataFrame(rows), fmt)
    if skipped:
        out["untested"] = (
            "; ".join(f"{', '.join(names)} ({why})" for why, names in skipped.items()) + "."
        )
    return out
