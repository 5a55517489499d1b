"""The HTML of global recourse: a section of the audit's report, or a page of its own
(Jinja2 templates, the coverage plot embedded as PNG)."""

from __future__ import annotations

import base64
import math
from importlib import resources
from typing import Any

import numpy as np
import pandas as pd

from ..._utils._deps import import_optional
from .._plots import _plt, _png
from ._text import GLOBAL_GLOSSARY

__all__ = ["coverage_plot", "page", "section"]

_PALETTE = ["#1565c0", "#2e7d32", "#ef6c00", "#6a1b9a", "#00838f", "#ad1457", "#5d4037", "#9e9d24"]


def _pct(v: Any) -> str:
    return (
        "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{100 * float(v):.1f}%"
    )


def _num(v: Any) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{float(v):.4g}"


def _ci(row: Any, col: str, fmt: Any) -> str:
    v = row[col]
    if pd.isna(v):
        return fmt(v)
    lo, hi = row[f"{col}_ci_low"], row[f"{col}_ci_high"]
    return f"{fmt(v)} [{fmt(lo)}, {fmt(hi)}]" if pd.notna(lo) else fmt(v)


def _ratio(v: Any) -> str:
    return "–" if pd.isna(v) else f"{float(v):.2f}×"


def _gap(row: Any) -> str:
    v = row["coverage_gap"]
    if pd.isna(v):
        return "–"
    text = f"{100 * float(v):+.1f} pp"
    lo, hi = row["coverage_gap_ci_low"], row["coverage_gap_ci_high"]
    return f"{text} [{100 * lo:+.1f}, {100 * hi:+.1f}]" if pd.notna(lo) else text


def coverage_plot(g: Any, grouping: str | None) -> bytes:
    """Per group (and everyone): the share of rejected people covered, split by the first
    chosen action that works for them (in the order listed), with a tick at the
    per-person recourse rate."""
    plt = _plt()
    pr = g.per_row[g.per_row["rejected"]]
    s = g.summary()
    blocks = [("all rejected", pr, s.iloc[0])]
    if grouping is not None:
        for _, r in s[s["grouping"] == grouping].iterrows():
            blocks.append(
                (
                    str(r["group"]) + (" (small)" if r["small"] else ""),
                    pr[pr[f"group:{grouping}"] == r["group"]],
                    r,
                )
            )
    blocks = blocks[::-1]
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(blocks) + 1.6))
    y = np.arange(len(blocks))
    left = np.zeros(len(blocks))
    seen = [np.zeros(len(b[1]), dtype=bool) for b in blocks]
    for k, name in enumerate(g.names):
        share = np.zeros(len(blocks))
        for i, (_, rows, _) in enumerate(blocks):
            w = rows[f"works:{name}"].to_numpy(dtype=bool)
            share[i] = (w & ~seen[i]).sum() / max(len(rows), 1)
            seen[i] |= w
        ax.barh(y, share, left=left, height=0.7, color=_PALETTE[k % len(_PALETTE)], label=name)
        left += share
    ind = np.array(
        [
            float(r["individual_rate"]) if pd.notna(r["individual_rate"]) else np.nan
            for _, _, r in blocks
        ]
    )
    ax.scatter(ind, y, marker="|", s=260, color="black", zorder=3, label="per-person recourse")
    ax.set_yticks(y, [b[0] for b in blocks])
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of rejected people")
    ax.set_title(
        f"Coverage of the common actions by {grouping}"
        if grouping
        else "Coverage of the common actions"
    )
    ax.legend(
        loc="lower center",
        bbox_to_anchor=(0.5, 1.08),
        ncol=min(len(g.names) + 1, 6),
        frameon=False,
        fontsize=8,
    )
    return _png(fig)


def _img(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode()


def _context(g: Any) -> dict[str, Any]:
    """Everything the global-recourse section shows."""
    o = g.summary().iloc[0]
    meta = g.meta
    seconds = meta.get("seconds") or {}
    return {
        "conf": f"{100 * g._settings.confidence:g}%",
        "k": len(g.rules),
        "meta": meta,
        "findings": g.findings(),
        "overall": {
            "coverage": _ci(o, "coverage", _pct),
            "n_covered": g.n_covered,
            "n_rejected": g.n_rejected,
            "relative": _pct(o["relative_coverage"]),
            "ratio": _ci(o, "cost_ratio", _ratio),
            "individual": _pct(o["individual_rate"]),
        },
        "actions": _actions(g.actions),
        "names": g.names,
        "groupings": [_grouping(g, name) for name in g.groupings],
        "overall_png": _img(coverage_plot(g, None)) if g.n_rejected and not g.groupings else None,
        "curve": _curve(g.curve),
        "guarantee": meta.get("guarantee", {}).get("recourse", ""),
        "lower_bound": bool(meta.get("individual_lower_bound")),
        "candidates": meta.get("candidates", {}),
        "seconds": {k: f"{float(v):.1f}" for k, v in seconds.items()},
        "gl": {k: d for k, (_, d) in GLOBAL_GLOSSARY.items()},
        "glossary": [
            {"key": k, "name": n, "definition": d} for k, (n, d) in GLOBAL_GLOSSARY.items()
        ],
    }


def _actions(a: Any) -> list[dict[str, Any]]:
    """One row per chosen action: what to do, for whom it works, what it adds and costs."""
    return [
        {
            "name": n,
            "text": r["description"],
            "works": _ci(r, "coverage", _pct),
            "new": int(r["n_new"]),
            "cum": _pct(r["cumulative_coverage"]),
            "assigned": int(r["n_assigned"]),
            "cost": _num(r["cost_median"]),
        }
        for n, r in a.iterrows()
    ]


def _curve(curve: Any) -> list[dict[str, Any]]:
    """Per number of actions: the people covered, the bound and whether it is proven."""
    return [
        {
            "k": int(r["k"]),
            "n": int(r["n_covered"]),
            "coverage": _pct(r["coverage"]),
            "bound": int(r["bound"]),
            "proof": "proven optimal" if r["optimal"] else str(r["solver"]),
        }
        for _, r in curve.iterrows()
    ]


def _grouping(g: Any, name: str) -> dict[str, Any]:
    """One grouping's table rows and coverage figure."""
    s = g.summary()
    rows = s[s["grouping"] == name]
    return {
        "name": name,
        "rows": [
            {
                "group": r["group"],
                "small": bool(r["small"]),
                "best": bool(r["best_off"]),
                "cells": _group_cells(g, name, r),
            }
            for _, r in rows.iterrows()
        ],
        "png": _img(coverage_plot(g, name)) if g.n_rejected else None,
    }


def _group_cells(g: Any, name: str, r: Any) -> list[str]:
    """One group's cells: rejected, per-person rate, coverage, gap, cost, ratio, per action."""
    a = g.actions
    column = f"coverage:{name}={r['group']}"
    per_action = [_pct(a.loc[n, column]) if column in a.columns else "–" for n in g.names]
    return [
        str(int(r["n_rejected"])),
        _pct(r["individual_rate"]),
        _ci(r, "coverage", _pct),
        _gap(r),
        _num(r["cost_median"]),
        _ci(r, "cost_ratio", _ratio),
        *per_action,
    ]


def _render(name: str, **context: Any) -> str:
    jinja2 = import_optional("jinja2", purpose="the global-recourse HTML")
    text = (
        resources.files("counterfact.recourse")
        .joinpath(f"templates/{name}")
        .read_text(encoding="utf-8")
    )
    env = jinja2.Environment(
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True
    )
    return str(env.from_string(text).render(**context))


def section(g: Any) -> str:
    """The section of the audit's report (an HTML fragment)."""
    return _render("global_section.html.j2", **_context(g))


def page(g: Any) -> str:
    """A page of its own around :func:`section`."""
    return _render("global.html.j2", section=section(g), method=g.meta.get("method", ""))
