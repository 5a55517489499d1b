"""Plots of an audit (matplotlib, Agg backend; returned as PNG bytes)."""

from __future__ import annotations

import io
import textwrap
from typing import Any

import numpy as np
import pandas as pd

from .._utils._deps import import_optional

__all__ = ["actions_plot", "cost_ecdf", "recourse_rates", "sensitivity_plot"]

_COLORS = {"recourse": "#2e7d32", "proven_none": "#8e1b1b", "unknown": "#9e9e9e"}


def _plt() -> Any:
    mpl = import_optional("matplotlib", purpose="the audit report's plots")
    mpl.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    _plt().close(fig)
    return buf.getvalue()


def recourse_rates(summary: pd.DataFrame, grouping: str) -> bytes:
    """Stacked shares of recourse / proven none / unknown per group, with the recourse rate's
    interval."""
    plt = _plt()
    rows = summary[summary["grouping"].isin(["", grouping])].iloc[::-1]
    labels = [
        ("all rows" if g == "" else str(v)) + (" (small)" if s else "")
        for g, v, s in zip(rows["grouping"], rows["group"], rows["small"], strict=True)
    ]
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(rows) + 1.3))
    y = np.arange(len(rows))
    left = np.zeros(len(rows))
    for key, name in (
        ("recourse_rate", "recourse"),
        ("proven_none_rate", "proven_none"),
        ("unknown_rate", "unknown"),
    ):
        v = rows[key].fillna(0).to_numpy(dtype=float)
        ax.barh(y, v, left=left, color=_COLORS[name], label=name.replace("_", " "), height=0.7)
        left += v
    r = rows["recourse_rate"].to_numpy(dtype=float)
    err = np.vstack(
        [
            r - rows["recourse_ci_low"].to_numpy(dtype=float),
            rows["recourse_ci_high"].to_numpy(dtype=float) - r,
        ]
    )
    ax.errorbar(r, y, xerr=np.nan_to_num(err), fmt="none", ecolor="black", capsize=3, lw=1)
    ax.set_yticks(y, labels)
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of rejected rows")
    ax.set_title(f"Recourse by {grouping}" if grouping else "Recourse")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.08), ncol=3, frameon=False, fontsize=8)
    return _png(fig)


def cost_ecdf(per_row: pd.DataFrame, grouping: str, order: list[str], cost_label: str) -> bytes:
    """Empirical CDF of the cost per group (rows with recourse)."""
    plt = _plt()
    rec = per_row[per_row["rejected"] & (per_row["outcome"] == "recourse")]
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    for level in order:
        v = np.sort(
            rec.loc[rec[f"group:{grouping}"] == level, "cost"].dropna().to_numpy(dtype=float)
        )
        if v.size:
            xs = np.concatenate([[v[0]], v])
            ys = np.concatenate([[0.0], np.arange(1, v.size + 1) / v.size])
            ax.step(
                xs,
                ys,
                where="post",
                marker="." if v.size < 5 else None,
                label=f"{level} (n={v.size})",
            )
    ax.set_xlabel(textwrap.fill(cost_label, 90))
    ax.set_ylabel("share of rows with recourse")
    ax.set_ylim(0, 1.02)
    if (rec["cost"] > 0).any() and rec["cost"].max() / max(
        rec.loc[rec["cost"] > 0, "cost"].min(), 1e-300
    ) > 100:
        ax.set_xscale("log")
    ax.set_title(f"Cost of recourse by {grouping}: empirical CDF")
    ax.legend(fontsize=8, frameon=False)
    return _png(fig)


def actions_plot(actions: pd.DataFrame) -> bytes:
    """Share of rows with recourse whose counterfactual changes each feature."""
    plt = _plt()
    a = actions[actions["n_changed"] > 0].iloc[::-1]
    fig, ax = plt.subplots(figsize=(7.5, 0.35 * max(len(a), 1) + 1.2))
    ax.barh(np.arange(len(a)), a["share"].to_numpy(dtype=float), color="#1565c0")
    ax.set_yticks(np.arange(len(a)), a["feature"].tolist())
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of rows with recourse that change the feature")
    ax.set_title("Action frequencies")
    return _png(fig)


def sensitivity_plot(paired: pd.DataFrame, protected: str, cost_label: str) -> bytes:
    """Paired cost per row: protected feature allowed vs frozen (rows with recourse both times)."""
    plt = _plt()
    both = paired[paired["outcome_frozen"] == "recourse"]
    fig, ax = plt.subplots(figsize=(5.2, 4.6))
    x = both["cost_allowed"].to_numpy(dtype=float)
    y = both["cost_frozen"].to_numpy(dtype=float)
    ax.scatter(x, y, s=12, alpha=0.7, color="#6a1b9a")
    hi = float(np.nanmax(np.concatenate([x, y]))) if x.size else 1.0
    ax.plot([0, hi], [0, hi], color="grey", lw=1, ls="--", label="no increase")
    ax.set_xlabel(f"cost, {protected} allowed to change")
    ax.set_ylabel(f"cost, {protected} frozen")
    fig.text(
        0.5, -0.02, textwrap.fill(f"cost: {cost_label}", 70), ha="center", va="top", fontsize=8
    )
    stuck = int((paired["outcome_frozen"] != "recourse").sum())
    ax.set_title(
        f"Freezing {protected}: {len(both)} rows paired, {stuck} without recourse", fontsize=10
    )
    ax.legend(frameon=False, fontsize=8)
    return _png(fig)
