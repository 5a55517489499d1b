"""Plots of a benchmark (matplotlib, Agg backend; returned as PNG bytes)."""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd

__all__ = ["cd_diagram", "metric_bars", "time_distribution", "tradeoff"]


def _plt():  # type: ignore[no-untyped-def]
    from .._deps import import_optional

    mpl = import_optional("matplotlib", purpose="report plots")
    mpl.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _png(fig) -> bytes:  # type: ignore[no-untyped-def]
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    _plt().close(fig)
    return buf.getvalue()


def metric_bars(per_query: pd.DataFrame, metric: str) -> bytes:
    """Mean of ``metric`` per method within each dataset/model block, with
    standard-error bars over queries."""
    plt = _plt()
    d = per_query.dropna(subset=[metric])
    d = d.assign(block=d["dataset"].astype(str) + "\n" + d["model"].astype(str))
    g = d.groupby(["block", "method"])[metric]
    mean = g.mean().unstack("method")
    sem = (g.std(ddof=1) / np.sqrt(g.count())).unstack("method").fillna(0.0)
    blocks, meths = list(mean.index), list(mean.columns)
    fig, ax = plt.subplots(figsize=(max(5.0, 1.2 * len(blocks) * max(1, len(meths)) / 2), 3.6))
    width = 0.8 / max(1, len(meths))
    x = np.arange(len(blocks))
    for i, m in enumerate(meths):
        ax.bar(x + i * width - 0.4 + width / 2, mean[m].to_numpy(), width, yerr=sem[m].to_numpy(), capsize=2, label=str(m))
    ax.set_xticks(x)
    ax.set_xticklabels(blocks, fontsize=8)
    ax.set_ylabel(metric)
    ax.set_title(f"{metric} (mean ± s.e. over queries)")
    ax.legend(fontsize=8, ncol=min(4, len(meths)))
    return _png(fig)


def time_distribution(per_query: pd.DataFrame) -> bytes:
    """Seconds per query for each method (box plot, log axis)."""
    plt = _plt()
    meths = sorted(per_query["method"].unique())
    data = [np.clip(per_query.loc[per_query["method"] == m, "time"].dropna().to_numpy(), 1e-6, None) for m in meths]
    fig, ax = plt.subplots(figsize=(max(4.0, 1.1 * len(meths)), 3.4))
    ax.boxplot(data, showfliers=True)
    ax.set_xticks(range(1, len(meths) + 1))
    ax.set_xticklabels(meths, fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("seconds per query (log)")
    ax.set_title("Time per query")
    return _png(fig)


def tradeoff(per_query: pd.DataFrame, x: str, y: str) -> bytes:
    """Mean ``x`` vs mean ``y`` per method and dataset/model (e.g. sparsity vs diversity)."""
    plt = _plt()
    g = per_query.groupby(["method", "dataset", "model"])[[x, y]].mean().reset_index()
    fig, ax = plt.subplots(figsize=(5.0, 3.8))
    for m, sub in g.groupby("method"):
        ax.scatter(sub[x], sub[y], label=str(m), s=30)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.set_title(f"{x} vs {y}")
    ax.legend(fontsize=8)
    return _png(fig)


def cd_diagram(avg_ranks: pd.Series, cd: float, title: str) -> bytes:
    """Critical-difference diagram: average ranks on an axis, methods whose
    ranks differ by less than ``cd`` joined by a bar (Demšar 2006)."""
    plt = _plt()
    r = avg_ranks.sort_values()
    k = len(r)
    fig, ax = plt.subplots(figsize=(6.0, 1.2 + 0.28 * k))
    lo, hi = 1, max(k, 2)
    ax.set_xlim(lo - 0.3, hi + 0.3)
    ax.set_ylim(-k - 1, 1.5)
    ax.hlines(0, lo, hi, color="k")
    for t in range(lo, hi + 1):
        ax.vlines(t, 0, 0.15, color="k")
        ax.text(t, 0.3, str(t), ha="center", fontsize=8)
    for i, (name, v) in enumerate(r.items()):
        y = -(i + 1) * 0.8
        ax.vlines(v, y, 0, color="gray", lw=0.8)
        ax.plot(v, 0, "ko", ms=3)
        ax.text(v + 0.05, y, f"{name} ({v:.2f})", fontsize=8, va="center")
    # cliques: maximal runs whose spread is below cd
    vals = r.to_numpy()
    level = 0
    for i in range(k):
        j = i
        while j + 1 < k and vals[j + 1] - vals[i] < cd:
            j += 1
        if j > i and (i == 0 or vals[j] - vals[i - 1] >= cd):
            yb = 0.6 + 0.15 * level
            ax.hlines(yb, vals[i], vals[j], color="tab:red", lw=3)
            level += 1
    if math.isfinite(cd):
        ax.hlines(1.3, lo, lo + cd, color="k", lw=1.5)
        ax.text(lo + cd / 2, 1.38, f"CD = {cd:.2f}", ha="center", fontsize=8)
    ax.axis("off")
    ax.set_title(title, fontsize=9)
    return _png(fig)
