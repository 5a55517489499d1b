"""Building estimator-input columns (:class:`XColumn`) for the preprocessing front ends.

A shared helper of the front ends: the raw column marker :data:`RAW`, the
column that takes given values on a feature's raw values
(:func:`table_column`), and a raw column read as a number
(:func:`as_number`).  It imports the IR and :mod:`._support` only.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ...exceptions import UnsupportedModelError
from ...schema import Schema
from ._ir import InputSpace, XColumn

__all__ = ["RAW", "as_number", "table_column"]

RAW = "raw"  # an XColumn.base meaning "the raw DataFrame column, not yet encoded"


def table_column(name: str, space: InputSpace, feature: str, values: np.ndarray) -> XColumn:
    """The column whose value on each raw value of ``feature`` is ``values``.

    ``values`` is indexed by category (binary / categorical), by rank (ordinal)
    or by ``z - lower`` (integer features).
    """
    blk = space.block(feature)
    vals = np.asarray(values, dtype=float)
    if blk.is_indicator:
        base = "indicator" if set(np.unique(vals)) <= {0.0, 1.0} else "code"
        return XColumn(name=name, feature=feature, base=base, base_coef=vals.copy())
    if blk.kind == "ordinal":
        zb = np.arange(len(vals), dtype=float)[:, None]
        lead: tuple[tuple[str, Any], ...] = ()
    else:  # integer feature: codes are z - lower
        zb = (blk.lower + np.arange(len(vals), dtype=float))[:, None]
        lead = (("sub", float(blk.lower)),)
    step = float(vals[1] - vals[0]) if len(vals) > 1 else 0.0
    const = float(vals[0]) - (step * blk.lower if blk.kind != "ordinal" else 0.0)
    affine = XColumn(
        name=name, feature=feature, base="code", base_coef=np.array([step]), base_const=const
    )
    if np.array_equal(affine.evaluate(zb), vals):
        return affine
    return XColumn(
        name=name, feature=feature, base="code", base_coef=np.ones(1), ops=(*lead, ("table", vals))
    )


def as_number(col: XColumn, schema: Schema, space: InputSpace, element: str, where: str) -> XColumn:
    """A raw column used as a number (passthrough, scaler, estimator input)."""
    if col.base != RAW:
        return col
    f = schema[col.feature]
    if f.is_numeric:
        return replace(col, base="value", base_coef=np.ones(1))
    try:
        vals = np.asarray([float(c) for c in f.categories or ()], dtype=float)
    except (TypeError, ValueError):
        raise UnsupportedModelError(
            f"Feature '{f.name}' is {f.kind} with non-numeric categories and reaches {element} "
            f"({where}) without an encoder, so the model compiler cannot read it as a number "
            "(an estimator's own categorical support is not compiled). Encode it in the "
            "pipeline with OneHotEncoder, OrdinalEncoder or TargetEncoder, or use a "
            "model-agnostic method (e.g. cf.UFCE, cf.MDPSO)."
        ) from None
    return table_column(col.name, space, col.feature, vals)
