"""The self-contained HTML report of an audit (Jinja2 template + embedded PNG plots)."""

from __future__ import annotations

import base64
import math
from importlib import resources
from typing import Any

import pandas as pd

from .._utils._deps import import_optional
from ..constraints import Timeline
from ..exceptions import CounterfactError
from . import _plots
from ._global import _report as _global_report
from ._text import GLOSSARY, measure_words

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


#: shown after the recourse rate when the audit asked for robustness
_HOLDING = ("holding_rate", "recourse that holds", "holding_rate", "pct_ci:holding")


def _columns(summary: pd.DataFrame) -> list[tuple[str, str, str, str]]:
    """The columns of the group tables: :data:`_COLUMNS`, with :data:`_HOLDING` after the
    recourse rate under robustness."""
    if "holding_rate" not in summary.columns:
        return _COLUMNS
    at = [c for c, *_ in _COLUMNS].index("recourse_rate") + 1
    return [*_COLUMNS[:at], _HOLDING, *_COLUMNS[at:]]


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
            if pd.isna(v) or pd.isna(row[f"{p}_ci_low"])
            else f"{_num(v)} [{_num(row[f'{p}_ci_low'])}, {_num(row[f'{p}_ci_high'])}]"
        )
    return _num(v)


def _interval(ci: Any, fmt: Any) -> str:
    """``[low, high]`` with both ends formatted by ``fmt``."""
    return f"[{fmt(ci[0])}, {fmt(ci[1])}]"


def _img(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode()


def _cost_label(result: Any) -> str:
    """The aggregated cost's measure and unit, in words."""
    return measure_words(result.meta)


def _constraints_text(c: Any) -> str:
    """The audit's constraints in one line: only the fields that constrain something ("" for
    none)."""
    if c is None:
        return ""
    if hasattr(c, "to_dict"):
        c = c.to_dict()
    if not isinstance(c, dict):
        return str(c)
    return "; ".join(
        f"{k}: {_timeline_words(v) if k == 'timeline' else v}"
        for k, v in c.items()
        if v not in (None, [], {}, ())
    )


def _timeline_words(timeline: Any) -> str:
    """A timeline (object or its dict) in a person's words; anything else as it is."""
    try:
        return Timeline.from_dict(timeline).words()
    except (TypeError, ValueError, CounterfactError):
        return str(timeline)


def _context(result: Any) -> dict[str, Any]:
    """Everything the audit's template shows."""
    s = result.summary()
    meta = result.meta
    settings = result._settings
    overall = s.iloc[0]
    cost_label = _cost_label(result)
    acts = result.actions()
    return {
        "meta": meta,
        "method": result.method,
        "guarantee": result.guarantee,
        "exact": result.proves_infeasibility,
        "settings": settings,
        "confidence": f"{100 * settings.confidence:g}%",
        "cost_label": cost_label,
        "constraints": _constraints_text(meta.get("constraints")),
        "overall": _overall(overall),
        "headers": [{"label": h, "key": k, "title": GLOSSARY[k][1]} for _, h, k, _ in _columns(s)],
        "groupings": [_grouping(result, s, g, cost_label) for g in result.groupings],
        "reasons": _unknown_reasons(result.per_row),
        "actions_png": _img(_plots.actions_plot(acts)) if overall["n_recourse"] else None,
        "change_sets": [
            {"features": r["features"], "n": int(r["n"]), "share": _pct(r["share"])}
            for _, r in result.change_sets().iterrows()
        ],
        "sens": _sensitivity(result.sensitivity()),
        "sens_png": _sensitivity_png(result, cost_label),
        "gl": {k: d for k, (_, d) in GLOSSARY.items()},
        "glossary": [{"key": k, "name": n, "definition": d} for k, (n, d) in GLOSSARY.items()],
        "seconds": f"{float(meta.get('seconds', 0.0)):.1f}",
    }


def _overall(overall: pd.Series) -> dict[str, Any]:
    """The headline figures of the whole population."""
    return {
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
        "holding": (
            _cell(overall, "holding_rate", "pct_ci:holding") if "holding_rate" in overall else None
        ),
        "n_holding": int(overall["n_holding"]) if "n_holding" in overall else 0,
    }


def _grouping(result: Any, s: pd.DataFrame, g: str, cost_label: str) -> dict[str, Any]:
    """One grouping's table rows, bin edges and figures."""
    rows = s[s["grouping"] == g]
    edges = result.meta["groups"][g].get("edges")
    ecdf = None
    if s.iloc[0]["n_recourse"]:
        ecdf = _img(_plots.cost_ecdf(result.per_row, g, list(rows["group"]), cost_label))
    return {
        "name": g,
        "edges": [f"{float(e):.6g}" for e in edges] if edges else None,
        "all_small": bool(len(rows)) and bool(rows["small"].all()),
        "rows": [
            {
                "group": r["group"],
                "small": bool(r["small"]),
                "best": bool(r["best_off"]),
                "cells": [_cell(r, c, kind) for c, _, _, kind in _columns(s)],
            }
            for _, r in rows.iterrows()
        ],
        "rates_png": _img(_plots.recourse_rates(s, g)),
        "ecdf_png": ecdf,
    }


def _unknown_reasons(pr: pd.DataFrame) -> list[dict[str, Any]]:
    """The ten most common reasons of the rejected rows whose outcome is unknown."""
    unknown = pr[pr["rejected"] & (pr["outcome"] == "unknown")]
    reasons = unknown["reason"].replace("", "(no reason given)").value_counts().head(10)
    return [{"reason": k, "n": int(v)} for k, v in reasons.items()]


def _sensitivity(sens: dict[str, Any] | None) -> dict[str, Any] | None:
    """The protected-feature sensitivity, formatted (None without one)."""
    if sens is None:
        return None
    return {
        **{k: v for k, v in sens.items() if not isinstance(v, float)},
        "share_changed": _pct(sens["share_changed"]),
        "share_ci": _interval(sens["share_changed_ci"], _pct),
        "increase_mean": _num(sens["increase_mean"]),
        "increase_ci": _interval(sens["increase_mean_ci"], _num),
        "increase_median": _num(sens["increase_median"]),
        "rel_increase": _pct(sens["rel_increase_mean"]),
    }


def _sensitivity_png(result: Any, cost_label: str) -> str | None:
    """The paired-cost scatter of the sensitivity (None without frozen answers)."""
    sens = result.sensitivity()
    if sens is None or result.sensitivity_rows is None or not sens["n_recourse_frozen"]:
        return None
    return _img(_plots.sensitivity_plot(result.sensitivity_rows, sens["protected"], cost_label))


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
