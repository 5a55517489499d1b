"""Non-affine column functions of the IR: element-wise monotone maps and code tables.

An estimator input column (:class:`~counterfact.models._compile.XColumn`) is a
function of one raw feature.  Most are affine (scalers, one-hot indicators of
a categorical, ordinal codes); this module adds the two non-affine operations
the preprocessing front end needs, as entries of ``XColumn.ops``:

``("fn", ElementFn)``
    an element-wise **non-decreasing** map computed by the fitted transformer
    itself (``np.log1p``, ``QuantileTransformer``, ``PowerTransformer``, the bin
    code of ``KBinsDiscretizer``...), so evaluation is bit-faithful.  With
    ``ElementFn.codes = n`` its values are the integer codes ``0 .. n-1``.
``("table", T)``
    ``v -> T[clip(floor(v), 0, len(T) - 1)]``: a lookup over an integer code
    (an ordinal rank, a bin code, an integer feature's offset from its lower
    bound).  Arbitrary (non-monotone) values: one-hot indicators of a level,
    target encodings, ...

A column is one of three *shapes* (:func:`shape`):

* ``"affine"`` -- only ``sub/div/mul/add``: ``x = scale * v + offset`` and the
  column's row of ``AffineMap.A`` is exact;
* ``"monotone"`` -- non-decreasing in the raw value (``fn`` ops and positive
  affine ops): a tree split on it is one raw cut, found by bisection;
* ``"table"`` -- ends with a table over an integer code of a monotone prefix:
  piecewise constant; tree splits become sets of codes (``left_categories``
  for ordinals, chains of raw cuts for numeric features) and linear models /
  MLPs see it through exact step units (:mod:`._lift`).

Non-affine columns have a zero row in ``AffineMap.A`` (and ``c = 0``): solver
back ends reach them only through tree splits' raw forms or after lifting.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

AFFINE_OPS = ("sub", "div", "mul", "add")


@dataclass(frozen=True, eq=False)
class ElementFn:
    """An element-wise non-decreasing map ``float64 array -> float64 array``.

    Attributes
    ----------
    name : str
        What it is (for messages), e.g. ``"log1p"``, ``"QuantileTransformer"``.
    func : callable
        The map, computed by the fitted transformer (bit-faithful).
    codes : int or None
        When set, the map's values are the integer codes ``0 .. codes-1``
        (a discretisation, e.g. ``KBinsDiscretizer``'s bin index).
    inverse : callable or None
        An approximate inverse, only used to start the bisections near the answer
        (every result is checked against ``func``).
    """

    name: str
    func: Callable[[np.ndarray], np.ndarray] = field(repr=False)
    codes: int | None = None
    inverse: Callable[[np.ndarray], np.ndarray] | None = field(default=None, repr=False)

    def __call__(self, v: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return np.asarray(self.func(np.asarray(v, dtype=float)), dtype=float).reshape(-1)


def apply_op(v: np.ndarray, op: str, a: Any) -> np.ndarray:
    """One operation of ``XColumn.ops`` on base values ``v`` (float64, modified in place
    when affine)."""
    if op == "sub":
        v -= a
    elif op == "div":
        v /= a
    elif op == "mul":
        v *= a
    elif op == "add":
        v += a
    elif op == "fn":
        v = a(v)
    elif op == "table":
        t = np.asarray(a, dtype=float)
        with np.errstate(invalid="ignore"):
            idx = np.clip(np.floor(np.nan_to_num(v, nan=0.0)), 0, len(t) - 1).astype(np.int64)
        v = t[idx]
    else:  # pragma: no cover - the front end only emits the ops above
        raise ValueError(f"unknown column operation {op!r}")
    return v


def shape(ops: tuple[tuple[str, Any], ...]) -> str:
    """``"affine"``, ``"monotone"`` or ``"table"`` (see the module docstring)."""
    if any(op == "table" for op, _ in ops):
        return "table"
    if any(op == "fn" for op, _ in ops):
        return "monotone"
    return "affine"


def increasing_affine(ops: tuple[tuple[str, Any], ...]) -> bool:
    """Whether every affine op keeps the order (no division or product by a negative number)."""
    return all(not (op in ("div", "mul") and float(a) <= 0) for op, a in ops if op in AFFINE_OPS)


def split_at_table(
    ops: tuple[tuple[str, Any], ...],
) -> tuple[tuple[tuple[str, Any], ...], np.ndarray]:
    """``(prefix ops producing the code, table values after every later op)``.

    The later ops are applied to the table entries (element-wise, so the values
    are exactly what evaluating the column gives).
    """
    i = next(k for k, (op, _) in enumerate(ops) if op == "table")
    vals = np.asarray(ops[i][1], dtype=float).copy()
    for op, a in ops[i + 1 :]:
        vals = apply_op(vals, op, a)
    return ops[:i], vals


def approximate_preimage(ops: tuple[tuple[str, Any], ...], x: np.ndarray) -> np.ndarray | None:
    """Raw base values ``v`` with ``ops(v)`` close to ``x`` (NaN where unknown); None if an
    op has no inverse.  A starting point for bisection only."""
    v = np.array(x, dtype=float, copy=True)
    with np.errstate(all="ignore"):
        for op, a in reversed(ops):
            if op == "sub":
                v = v + a
            elif op == "add":
                v = v - a
            elif op == "div":
                v = v * a
            elif op == "mul":
                v = v / a
            elif op == "fn" and getattr(a, "inverse", None) is not None:
                v = np.asarray(a.inverse(v), dtype=float).reshape(-1)
            else:
                return None
    return v
