"""The self-contained HTML report of an audit (Jinja2 template + embedded PNG plots)."""

from __future__ import annotations

import base64
import math
from importlib import resources
from typing import Any

import pandas as pd

from .._utils._deps import import_optional
from . import _plots
from ._global import _report as _global_report
from ._text import GLOSSARY

__all__ = ["render"]

#: summary columns shown per group: (column, header, glossary key, kind)
_COLUMNS = [
    ("n", "rows", "n", "int"),
    ("n_rejected", "rejected", "n_rejected", "int"),
    ("rejection_rate", "rejection rate", "rejection_rate", "pct"),
    ("recourse_rate", "recourse rate", "recourse_rate", "pct_ci:recourse"),
    ("proven_none_rate", "proven no recourse", "proven_none_rate", "pct"),
    ("unknown_rate", "unknown", "unknown_rate", "pct"),
    ("cost_median", "median cost", "cost_median", "num_ci:cost_median"),
    ("cost_mean", "mean cost", "cost_mean", "num_ci:cost_mean"),
    ("burden", "burden", "burden", "num"),
    ("burden_ratio", "burden ratio", "burden_ratio", "ratio"),
    ("recourse_gap", "recourse gap", "recourse_gap", "pp"),
]


def _num(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return f"{float(v):.4g}"


def _pct(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return f"{100 * float(v):.1f}%"


def _cell(row: pd.Series, col: str, kind: str) -> str:
    v = row[col]
    if kind == "int":
        return str(int(v))
    if kind == "pct":
        return _pct(v)
    if kind == "pp":
        return "–" if pd.isna(v) else f"{100 * float(v):+.1f} pp"
    if kind == "ratio":
        return "–" if pd.isna(v) else f"{float(v):.2f}×"
    if kind.startswith("pct_ci:"):
        p = kind.split(":")[1]
        return (
            _pct(v)
            if pd.isna(v)
            else f"{_pct(v)} [{_pct(row[f'{p}_ci_low'])}, {_pct(row[f'{p}_ci_high'])}]"
        )
    if kind.startswith("num_ci:"):
        p = kind.split(":")[1]
        return (
            _num(v)
            if pd.isna(v)
            else f"{_num(v)} [{_num(row[f'{p}_ci_low'])}, {_num(row[f'{p}_ci_high'])}]"
        )
    return _num(v)


def _img(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode()


def _cost_label(result: Any) -> str:
    cost = result.meta.get("cost", "l1")
    if cost == "method":
        return str(result.meta.get("cost_method_name") or "method's distance")
    if cost == "costs":  # audit(costs=...): in the costs' unit
        return f"cost in {result.meta.get('cost_unit') or 'cost units'}"
    return {"l1": "normalised l1 distance", "n_changed": "number of changed features"}.get(
        cost, str(cost)
    )


def _constraints_text(c: Any) -> str:
    """The audit's constraints in one line: only the fields that constrain something ("" for none)."""
    if c is None:
        return ""
    if hasattr(c, "to_dict"):
        c = c.to_dict()
    if not isinstance(c, dict):
        return str(c)
    return "; ".join(f"{k}: {v}" for k, v in c.items() if v not in (None, [], {}, ()))


def _context(result: Any) -> dict[str, Any]:
    s = result.summary()
    meta = result.meta
    settings = result._settings
    overall = s.iloc[0]
    cost_label = _cost_label(result)
    headers = [{"label": h, "key": k, "title": GLOSSARY[k][1]} for _, h, k, _ in _COLUMNS]
    groupings = []
    for g in result.groupings:
        rows = s[s["grouping"] == g]
        groupings.append(
            {
                "name": g,
                "edges": [f"{float(e):.6g}" for e in edges]
                if (edges := meta["groups"][g].get("edges"))
                else None,
                "all_small": bool(len(rows)) and bool(rows["small"].all()),
                "rows": [
                    {
                        "group": r["group"],
                        "small": bool(r["small"]),
                        "best": bool(r["best_off"]),
                        "cells": [_cell(r, c, kind) for c, _, _, kind in _COLUMNS],
                    }
                    for _, r in rows.iterrows()
                ],
                "rates_png": _img(_plots.recourse_rates(s, g)),
                "ecdf_png": _img(
                    _plots.cost_ecdf(result.per_row, g, list(rows["group"]), cost_label)
                )
                if overall["n_recourse"]
                else None,
            }
        )
    pr = result.per_row
    unknown = pr[pr["rejected"] & (pr["outcome"] == "unknown")]
    reasons = unknown["reason"].replace("", "(no reason given)").value_counts().head(10)
    acts = result.actions()
    sens = result.sensitivity()
    sens_png = None
    if sens is not None and result.sensitivity_rows is not None and sens["n_recourse_frozen"]:
        sens_png = _img(
            _plots.sensitivity_plot(result.sensitivity_rows, sens["protected"], cost_label)
        )
    c = meta.get("constraints")
    return {
        "meta": meta,
        "method": result.method,
        "guarantee": result.guarantee,
        "exact": result.proves_infeasibility,
        "settings": settings,
        "confidence": f"{100 * settings.confidence:g}%",
        "cost_label": cost_label,
        "constraints": _constraints_text(c),
        "overall": {
            "n": int(overall["n"]),
            "n_rejected": int(overall["n_rejected"]),
            "n_recourse": int(overall["n_recourse"]),
            "n_proven_none": int(overall["n_proven_none"]),
            "n_unknown": int(overall["n_unknown"]),
            "rejection_rate": _pct(overall["rejection_rate"]),
            "recourse": _cell(overall, "recourse_rate", "pct_ci:recourse"),
            "proven_none": _pct(overall["proven_none_rate"]),
            "unknown": _pct(overall["unknown_rate"]),
            "cost_median": _cell(overall, "cost_median", "num_ci:cost_median"),
            "burden": _num(overall["burden"]),
        },
        "headers": headers,
        "groupings": groupings,
        "reasons": [{"reason": k, "n": int(v)} for k, v in reasons.items()],
        "actions_png": _img(_plots.actions_plot(acts)) if overall["n_recourse"] else None,
        "change_sets": [
            {"features": r["features"], "n": int(r["n"]), "share": _pct(r["share"])}
            for _, r in result.change_sets().iterrows()
        ],
        "sens": None
        if sens is None
        else {
            **{k: v for k, v in sens.items() if not isinstance(v, float)},
            "share_changed": _pct(sens["share_changed"]),
            "share_ci": f"[{_pct(sens['share_changed_ci'][0])}, {_pct(sens['share_changed_ci'][1])}]",
            "increase_mean": _num(sens["increase_mean"]),
            "increase_ci": f"[{_num(sens['increase_mean_ci'][0])}, {_num(sens['increase_mean_ci'][1])}]",
            "increase_median": _num(sens["increase_median"]),
            "rel_increase": _pct(sens["rel_increase_mean"]),
        },
        "sens_png": sens_png,
        "gl": {k: d for k, (_, d) in GLOSSARY.items()},
        "glossary": [{"key": k, "name": n, "definition": d} for k, (n, d) in GLOSSARY.items()],
        "seconds": f"{float(meta.get('seconds', 0.0)):.1f}",
    }


def render(result: Any, global_recourse: Any = None) -> str:
    """The report as one HTML string (with a :class:`GlobalRecourse` section when given)."""
    jinja2 = import_optional("jinja2", purpose="the audit's HTML report")
    text = (
        resources.files("counterfact.recourse")
        .joinpath("templates/audit.html.j2")
        .read_text(encoding="utf-8")
    )
    env = jinja2.Environment(
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True
    )
    extra = _global_report.section(global_recourse) if global_recourse is not None else ""
    return str(env.from_string(text).render(**_context(result), global_section=extra))
