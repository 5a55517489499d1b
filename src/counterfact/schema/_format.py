"""Values as a person reads them: numbers at their feature's resolution, categories as text."""

from __future__ import annotations

import math
from typing import Any

from .._utils._values import _is_missing, _py
from ._feature import Feature
from ._resolution import decimals

__all__ = ["format_value"]


def format_value(feature: Feature, value: Any, *, unit: bool = False) -> str:
    """``value`` as a person reads it: a number at the feature's resolution
    (``1031``, ``0.57``), a category as its text.

    Integer features print whole numbers; real features with a resolution print
    as many decimals as the resolution has (``0.01`` -> two; ``1`` -> none);
    real features without one use six significant digits.  Missing values print
    as ``"?"``.  ``unit=True`` appends the feature's unit, where it has one
    (``24 months``).
    """
    text = _format(feature, value)
    return f"{text} {feature.unit}" if unit and feature.unit and text != "?" else text


def _format(feature: Feature, value: Any) -> str:
    value = _py(value)
    if _is_missing(value):
        return "?"
    if not feature.is_numeric:
        return str(value)
    try:
        v = float(value)
    except (TypeError, ValueError):
        return str(value)
    if not math.isfinite(v):
        return str(v)
    if feature.kind == "integer" and feature.resolution is not None and feature.resolution >= 1:
        return str(round(v))
    if feature.resolution is None:
        return f"{v:.6g}"
    d = decimals(feature.resolution)
    return _strip_negative_zero(f"{round(v, d):.{d}f}")


def _strip_negative_zero(text: str) -> str:
    if text.startswith("-") and set(text[1:]) <= {"0", "."}:
        return text[1:]
    return text
