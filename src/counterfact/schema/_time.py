"""Checks of a feature's time fields (``per_month``, ``edges``, ``top_coded``; actionability
``"time"``)."""

from __future__ import annotations

import itertools
import math
from typing import Any

from ..exceptions import SchemaError

__all__ = ["check_time_fields"]


def check_time_fields(f: Any) -> None:
    """``per_month`` and ``edges`` of a :class:`Feature` are valid (stored normalised)."""
    if f.actionability == "time" and f.kind in ("binary", "categorical"):
        raise SchemaError(
            f"Feature '{f.name}' is {f.kind} (unordered); time cannot advance it. Make it "
            "numeric or ordinal, or use 'immutable'."
        )
    if f.per_month is not None:
        rate = _rate(f.name, f.per_month)
        object.__setattr__(f, "per_month", rate)
    if f.edges is not None:
        object.__setattr__(f, "edges", _edges(f))
    if (f.per_month is not None or f.edges is not None) and f.actionability != "time":
        raise SchemaError(
            f"Feature '{f.name}' has per_month/edges but its actionability is "
            f"{f.actionability!r}; they describe a feature only time changes: set "
            "actionability='time', or drop them."
        )
    _check_top_coded(f)


def _check_top_coded(f: Any) -> None:
    """``top_coded`` is a bool, set only on a numeric feature only time changes."""
    if not isinstance(f.top_coded, bool):
        raise SchemaError(
            f"Feature '{f.name}': top_coded must be True or False. Got {f.top_coded!r}."
        )
    if f.top_coded and (f.actionability != "time" or f.kind not in ("real", "integer")):
        raise SchemaError(
            f"Feature '{f.name}' is top_coded, but only a numeric feature only time changes "
            "(actionability='time') may be: time then advances it to at most its upper bound. "
            "Drop top_coded, or make the feature numeric with actionability='time'."
        )


def _rate(name: str, value: Any) -> float:
    try:
        r = float(value)
    except (TypeError, ValueError):
        r = math.nan
    if isinstance(value, bool) or not math.isfinite(r) or r <= 0:
        raise SchemaError(
            f"Feature '{name}': per_month must be a positive finite number (how much the "
            f"feature advances per month, e.g. 1/12 for an age in years). Got {value!r}."
        )
    return r


def _edges(f: Any) -> tuple[float, ...]:
    if f.kind != "ordinal":
        raise SchemaError(
            f"Feature '{f.name}' is {f.kind}; only ordinal features take edges (the upper "
            "edge of each level)."
        )
    try:
        edges = tuple(float(e) for e in f.edges)
    except (TypeError, ValueError):
        raise SchemaError(
            f"Feature '{f.name}': edges must be numbers, one per level. Got {f.edges!r}."
        ) from None
    n = len(f.categories or ())
    ordered = all(a < b for a, b in itertools.pairwise(edges))
    if len(edges) not in (n, n + 1) or not ordered or any(math.isnan(e) for e in edges):
        raise SchemaError(
            f"Feature '{f.name}': edges must give the upper edge of each of its {n} levels, "
            "increasing (the last may be inf), optionally after the lowest level's lower edge "
            f"({n + 1} values then). Got {f.edges!r}."
        )
    return edges
