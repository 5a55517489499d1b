"""Plots of a benchmark (matplotlib, Agg backend; returned as PNG bytes).

Figures carry no title: the report writes a caption beside each one.
"""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd

from .._utils._deps import import_optional

__all__ = ["cd_diagram", "metric_bars", "time_distribution", "tradeoff"]


def _plt():  # type: ignore[no-untyped-def]
    mpl = import_optional("matplotlib", purpose="report plots")
    mpl.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _png(fig) -> bytes:  # type: ignore[no-untyped-def]
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    _plt().close(fig)
    return buf.getvalue()


def _legend_outside(ax) -> None:  # type: ignore[no-untyped-def]
    """Legend to the right of the axes, so it never covers the data."""
    ax.legend(
        fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False
    )


def metric_bars(per_query: pd.DataFrame, metric: str, label: str | None = None) -> bytes:
    """Mean of ``metric`` per method within each dataset/model block, with
    standard-error bars over queries; the legend sits outside the axes."""
    plt = _plt()
    d = per_query.dropna(subset=[metric])
    d = d.assign(block=d["dataset"].astype(str) + "\n" + d["model"].astype(str))
    g = d.groupby(["block", "method"])[metric]
    mean = g.mean().unstack("method")
    sem = (g.std(ddof=1) / np.sqrt(g.count())).unstack("method").fillna(0.0)
    blocks, meths = list(mean.index), list(mean.columns)
    fig, ax = plt.subplots(
        figsize=(min(11.0, max(4.5, 0.45 * len(blocks) * max(1, len(meths)) + 1.5)), 3.2)
    )
    width = 0.8 / max(1, len(meths))
    x = np.arange(len(blocks))
    for i, m in enumerate(meths):
        ax.bar(
            x + i * width - 0.4 + width / 2,
            mean[m].to_numpy(),
            width,
            yerr=sem[m].to_numpy(),
            capsize=2,
            label=str(m),
        )
    ax.set_xticks(x)
    ax.set_xticklabels(blocks, fontsize=8)
    ax.set_ylabel(label or metric)
    _legend_outside(ax)
    return _png(fig)


def time_distribution(
    per_query: pd.DataFrame, amortized: set[str] | frozenset[str] = frozenset()
) -> bytes:
    """Seconds per query for each method (box plot, log axis).  Methods in
    ``amortized`` only have a batch time divided by the batch size: they are
    drawn as single diamonds (their mean), not as a distribution."""
    plt = _plt()
    meths = sorted(per_query["method"].unique())
    fig, ax = plt.subplots(figsize=(max(4.5, 1.1 * len(meths) + 1.0), 3.2))
    shown: list[float] = []
    for i, m in enumerate(meths, start=1):
        t = np.clip(
            per_query.loc[per_query["method"] == m, "time"].dropna().to_numpy(dtype=float),
            1e-6,
            None,
        )
        if t.size == 0:
            continue
        shown += [float(t.min()), float(t.max())]
        if m in amortized:
            ax.plot(
                [i], [float(np.mean(t))], marker="D", color="tab:orange", ms=7, linestyle="none"
            )
        else:
            ax.boxplot([t], positions=[i], widths=0.5, showfliers=True)
    ax.set_xticks(range(1, len(meths) + 1))
    ax.set_xticklabels([f"{m}\n(amortized)" if m in amortized else m for m in meths], fontsize=8)
    ax.set_xlim(0.4, len(meths) + 0.6)
    ax.set_yscale("log")
    if shown:  # a lone diamond at the top or bottom stays inside the axes
        ax.set_ylim(min(shown) / 2, max(shown) * 2)
    ax.set_ylabel("seconds per query (log)")
    return _png(fig)


def tradeoff(
    per_query: pd.DataFrame, x: str, y: str, xlabel: str | None = None, ylabel: str | None = None
) -> bytes:
    """Mean ``x`` vs mean ``y`` per method and dataset/model block (one point
    per method and block, one colour per method); the legend sits outside."""
    plt = _plt()
    d = (
        per_query.groupby(["dataset", "model", "method"])[[x, y]]
        .mean()
        .reset_index()
        .dropna(subset=[x, y])
    )
    fig, ax = plt.subplots(figsize=(5.8, 3.6))
    for m, sub in d.groupby("method"):
        ax.scatter(sub[x], sub[y], label=str(m), s=32)
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel or y)
    _legend_outside(ax)
    return _png(fig)


def cd_diagram(avg_ranks: pd.Series, cd: float, title: str = "") -> bytes:
    """Critical-difference diagram: average ranks on an axis (1 = best), methods
    whose ranks differ by less than ``cd`` joined by a red bar below the axis
    (Demšar 2006); the length of ``cd`` drawn above the axis."""
    plt = _plt()
    r = avg_ranks.sort_values()
    k = len(r)
    fig, ax = plt.subplots(figsize=(6.0, 1.6 + 0.3 * k))
    lo, hi = 1, max(k, 2)
    ax.set_xlim(lo - 0.3, hi + 1.2)
    vals = r.to_numpy()
    # cliques: maximal runs whose spread is below cd
    cliques = []
    for i in range(k):
        j = i
        while j + 1 < k and vals[j + 1] - vals[i] < cd:
            j += 1
        if j > i and (i == 0 or vals[j] - vals[i - 1] >= cd):
            cliques.append((vals[i], vals[j]))
    label_top = -0.5 - 0.2 * len(cliques)
    ax.set_ylim(label_top - 0.45 * k - 0.3, 1.4)
    ax.hlines(0, lo, hi, color="k")
    for t in range(lo, hi + 1):
        ax.vlines(t, 0, 0.12, color="k")
        ax.text(t, 0.22, str(t), ha="center", fontsize=8)
    for level, (a, b) in enumerate(cliques):
        yb = -0.3 - 0.2 * level
        ax.hlines(yb, a - 0.03, b + 0.03, color="tab:red", lw=3)
    for i, (name, v) in enumerate(r.items()):
        y = label_top - 0.45 * i
        ax.vlines(v, y, 0, color="gray", lw=0.8)
        ax.plot(v, 0, "ko", ms=3)
        ax.text(v + 0.06, y, f"{name} ({v:.2f})", fontsize=8, va="center")
    if math.isfinite(cd):
        ax.hlines(0.95, lo, lo + cd, color="k", lw=1.5)
        ax.vlines([lo, lo + cd], 0.88, 1.02, color="k", lw=1.5)
        ax.text(lo + cd + 0.08, 0.95, f"CD = {cd:.2f}", va="center", fontsize=8)
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=9)
    return _png(fig)
