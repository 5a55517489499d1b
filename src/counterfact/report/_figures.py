"""The report's figures: a captioned plot, and the plots of the key metrics.

The plots themselves are drawn by :mod:`counterfact.report._plots`; this module
decides which ones a report shows and what each caption says.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

import pandas as pd

from . import _plots
from ._glossary import KEY_METRICS

__all__ = ["Figure", "key_metric_figures"]

#: the trade-off scatter plots: (x, y) key-metric columns
_TRADEOFFS = (("distance_l1", "diversity_count"), ("sparsity", "validity"))


@dataclass
class Figure:
    """A plot of the report: PNG bytes, the metrics it shows, its caption."""

    png_bytes: bytes
    metrics: list[str]
    alt: str
    caption: str
    path: str = ""

    @property
    def png(self) -> str:
        """Base64 text for a data URI."""
        return base64.b64encode(self.png_bytes).decode()


def key_metric_figures(pq: pd.DataFrame, amortized: set[str]) -> list[Figure]:
    """One plot per key metric present in the per-query table ``pq``, then the trade-off plots.

    ``amortized`` names the methods whose time per query is a batch average.
    """
    figs: list[Figure] = []
    for k in KEY_METRICS:
        if k.column not in pq or not pq[k.column].notna().any():
            continue
        if k.column == "time":
            note = (
                " Amortized methods (batch time / n) are single diamonds, not distributions."
                if amortized
                else ""
            )
            figs.append(
                Figure(
                    _plots.time_distribution(pq, amortized),
                    [k.column],
                    k.label,
                    f"{k.label}: seconds per query for each method (log scale, all blocks).{note}",
                )
            )
            continue
        figs.append(
            Figure(
                _plots.metric_bars(pq, k.column, k.label),
                [k.column],
                k.label,
                f"{k.label}: mean per method within each dataset / model block, "
                f"error bars one standard error over queries.",
            )
        )
    by_col = {k.column: k for k in KEY_METRICS}
    for x, y in _TRADEOFFS:
        if x in pq and y in pq and pq[[x, y]].dropna().shape[0]:
            kx, ky = by_col[x], by_col[y]
            figs.append(
                Figure(
                    _plots.tradeoff(pq, x, y, kx.label, ky.label),
                    [x, y],
                    f"{kx.name} vs {ky.name}",
                    f"Trade-off {kx.name} vs {ky.name}: one point per method and block "
                    "(means over queries).",
                )
            )
    return figs
