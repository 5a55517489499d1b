"""IR classes for the raw inputs and the preprocessing (:mod:`._ir`, sections 1-2).

Part of the IR layer: of the compiler's modules it imports only :mod:`._columns`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from ...exceptions import ValidationError
from ...schema import Schema
from ._columns import AFFINE_OPS, apply_op, shape

__all__ = ["AffineMap", "InputSpace", "RawBlock", "XColumn", "with_op"]

# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class RawBlock:
    """The raw variables of one schema feature (see module docstring, section 1).

    Attributes
    ----------
    name : str
        Feature name.
    kind : str
        Schema kind: real | integer | binary | categorical | ordinal.
    start, size : int
        Columns ``z[start:start + size]``.  ``size`` is 1 for numeric and
        ordinal features, the number of categories otherwise.
    lower, upper : float
        Domain of each variable of the block: the schema bounds for numeric
        features, ``0 .. k-1`` for ordinal ranks, ``0 .. 1`` for indicators.
    categories : tuple or None
        Categories (discrete kinds), in schema order.
    """

    name: str
    kind: str
    start: int
    size: int
    lower: float
    upper: float
    categories: tuple[Any, ...] | None = None

    @property
    def columns(self) -> slice:
        """``slice(start, start + size)`` into ``z``."""
        return slice(self.start, self.start + self.size)

    @property
    def is_indicator(self) -> bool:
        """One-hot indicators (binary / categorical)."""
        return self.kind in ("binary", "categorical")

    @property
    def integral(self) -> bool:
        """Whether the block's variables take integer values."""
        return self.kind != "real"


@dataclass(frozen=True)
class InputSpace:
    """Raw-variable layout of a schema (see module docstring, section 1)."""

    blocks: tuple[RawBlock, ...]
    n: int

    @classmethod
    def from_schema(cls, schema: Schema) -> InputSpace:
        """Lay out one block per schema feature, in schema order."""
        blocks = []
        start = 0
        for f in schema.features:
            if f.is_numeric:
                lower, upper = float(f.lower), float(f.upper)  # type: ignore[arg-type]
                b = RawBlock(f.name, f.kind, start, 1, lower, upper)
            elif f.kind == "ordinal":
                k = len(f.categories)  # type: ignore[arg-type]
                b = RawBlock(f.name, f.kind, start, 1, 0.0, float(k - 1), f.categories)
            else:
                k = len(f.categories)  # type: ignore[arg-type]
                b = RawBlock(f.name, f.kind, start, k, 0.0, 1.0, f.categories)
            blocks.append(b)
            start += b.size
        return cls(tuple(blocks), start)

    @property
    def names(self) -> list[str]:
        """Feature names, in block order."""
        return [b.name for b in self.blocks]

    @cached_property
    def _by_name(self) -> dict[str, RawBlock]:
        return {b.name: b for b in self.blocks}

    def block(self, name: str) -> RawBlock:
        """The block of feature ``name``."""
        b = self._by_name.get(name)
        if b is not None:
            return b
        raise ValidationError(f"Unknown feature '{name}'. Known features: {self.names}.")

    def lower(self) -> np.ndarray:
        """Per-variable lower bounds of the domain, shape ``(n,)``."""
        out = np.empty(self.n)
        for b in self.blocks:
            out[b.columns] = b.lower
        return out

    def upper(self) -> np.ndarray:
        """Per-variable upper bounds of the domain, shape ``(n,)``."""
        out = np.empty(self.n)
        for b in self.blocks:
            out[b.columns] = b.upper
        return out

    def spread(self, n: int, seed: int = 0) -> np.ndarray:
        """``n`` seeded raw vectors spread over the domain (one category per indicator
        block, integral blocks integral, real blocks uniform): the rows a compiled model
        is checked on against its runtime when no data is at hand."""
        rng = np.random.default_rng(seed)
        Z = np.zeros((n, self.n))
        for b in self.blocks:
            if b.is_indicator:
                Z[np.arange(n), b.start + rng.integers(0, b.size, n)] = 1.0
            elif b.integral:
                Z[:, b.start] = rng.integers(int(b.lower), int(b.upper) + 1, n)
            else:
                Z[:, b.start] = rng.uniform(b.lower, b.upper, n)
        return Z

    def encode(self, frame: pd.DataFrame) -> np.ndarray:
        """Raw DataFrame (schema columns) -> ``z`` matrix of shape ``(n_rows, n)``."""
        missing = [b.name for b in self.blocks if b.name not in frame.columns]
        if missing:
            raise ValidationError(f"The frame lacks the columns {missing}; expected {self.names}.")
        Z = np.zeros((len(frame), self.n))
        for b in self.blocks:
            col = frame[b.name]
            if b.kind in ("real", "integer"):
                Z[:, b.start] = pd.to_numeric(col).to_numpy(dtype=float)
                continue
            lookup = {c: i for i, c in enumerate(b.categories)}  # type: ignore[arg-type]
            vals = [v.item() if isinstance(v, np.generic) else v for v in col.tolist()]
            bad = sorted({repr(v) for v in vals if v not in lookup})
            if bad:
                raise ValidationError(
                    f"Column '{b.name}' has values {bad[:5]} that are not among its categories "
                    f"{list(b.categories)}."  # type: ignore[arg-type]
                )
            idx = np.array([lookup[v] for v in vals], dtype=int)
            if b.kind == "ordinal":
                Z[:, b.start] = idx
            else:
                Z[np.arange(len(frame)), b.start + idx] = 1.0
        return Z

    def decode(self, Z: np.ndarray) -> pd.DataFrame:
        """``z`` matrix -> raw DataFrame (integers rounded, argmax indicator, ranks clipped)."""
        Z = np.atleast_2d(np.asarray(Z, dtype=float))
        cols: dict[str, Any] = {}
        for b in self.blocks:
            v = Z[:, b.columns]
            if b.kind == "real":
                cols[b.name] = v[:, 0].astype(float)
            elif b.kind == "integer":
                cols[b.name] = np.round(v[:, 0]).astype(np.int64)
            elif b.kind == "ordinal":
                cats = b.categories or ()
                r = np.clip(np.round(v[:, 0]).astype(int), 0, len(cats) - 1)
                cols[b.name] = pd.Series([cats[i] for i in r], dtype=object)
            else:
                cats = b.categories or ()
                r = np.argmax(v, axis=1)
                cols[b.name] = pd.Series([cats[i] for i in r], dtype=object)
        return pd.DataFrame(
            {k: (c.to_numpy() if isinstance(c, pd.Series) else c) for k, c in cols.items()}
        )


# --------------------------------------------------------------------------- preprocessing


@dataclass(frozen=True, eq=False)
class XColumn:
    """One estimator input column (see module docstring, section 2).

    Attributes
    ----------
    name : str
        Output name (``num__age``, ``cat__job_A``...).
    feature : str
        The raw feature the column is a function of.
    base : {"value", "indicator", "code"}
        What the base value is: the raw number (numeric features; numeric
        categories passed through), a one-hot indicator, or an ordinal code.
    base_coef : ndarray
        Coefficients over the feature's raw block (length ``block.size``).
    base_const : float
        Constant added to the base value (e.g. a one-hot column for a category
        not in the schema is the constant 0).
    ops : tuple of (str, object)
        scikit-learn's elementwise operations, applied in order to the base
        value: ``"sub"``, ``"div"``, ``"mul"``, ``"add"`` (a float), and the
        non-affine ``"fn"`` (an element-wise non-decreasing
        :class:`~counterfact.models._compile._columns.ElementFn`) and
        ``"table"`` (a lookup over an integer code); see :mod:`._columns`.
    scale, offset : float
        The composition of the affine ops: ``x = scale * v + offset`` (only
        meaningful when :attr:`is_affine`).
    """

    name: str
    feature: str
    base: str
    base_coef: np.ndarray
    base_const: float = 0.0
    ops: tuple[tuple[str, Any], ...] = ()
    scale: float = 1.0
    offset: float = 0.0

    def evaluate(self, zb: np.ndarray) -> np.ndarray:
        """Column values from the feature's raw block values ``zb`` (shape ``(n, size)``)."""
        zb = np.atleast_2d(np.asarray(zb, dtype=float))
        nz = np.flatnonzero(self.base_coef)
        if nz.size == 1 and self.base_coef[nz[0]] == 1.0 and self.base_const == 0.0:
            v = zb[:, nz[0]]
        else:
            v = (zb * self.base_coef).sum(axis=1) + self.base_const
        return self.apply_ops(v)

    def apply_ops(self, v: np.ndarray) -> np.ndarray:
        """Apply :attr:`ops` to base values with scikit-learn's float operations."""
        v = np.array(v, dtype=float, copy=True)
        for op, a in self.ops:
            v = apply_op(v, op, a)
        return v

    @property
    def shape(self) -> str:
        """``"affine"``, ``"monotone"`` or ``"table"`` (:mod:`._columns`)."""
        return shape(self.ops)

    @property
    def is_affine(self) -> bool:
        """Whether ``x = scale * v + offset`` holds (the column's row of ``A`` is exact)."""
        return self.shape == "affine"


def with_op(col: XColumn, op: str, a: Any) -> XColumn:
    """``col`` followed by one more operation (``scale``/``offset`` kept for affine ops)."""
    if op not in AFFINE_OPS:
        return replace(col, ops=(*col.ops, (op, a)))
    a = float(a)
    s, o = col.scale, col.offset
    if op == "sub":
        o = o - a
    elif op == "div":
        s, o = s / a, o / a
    elif op == "mul":
        s, o = s * a, o * a
    else:
        o = o + a
    return replace(col, ops=(*col.ops, (op, a)), scale=s, offset=o)


@dataclass(frozen=True, eq=False)
class AffineMap:
    """``x = A @ z + c``: the preprocessing, folded (module docstring, section 2).

    ``code_columns`` maps a numeric *table* column (a piecewise-constant
    function of a numeric raw feature, e.g. a one-hot bin indicator) to an
    appended x-column holding its monotone integer code; tree splits on the
    former are rewritten into splits on the latter (trees only).
    """

    A: np.ndarray
    c: np.ndarray
    columns: tuple[XColumn, ...]
    space: InputSpace
    code_columns: dict[int, int] = field(default_factory=dict)

    @property
    def n_x(self) -> int:
        """Number of estimator inputs."""
        return len(self.columns)

    def apply(self, Z: np.ndarray) -> np.ndarray:
        """Bit-faithful evaluation of the preprocessing on raw vectors ``Z``."""
        Z = np.atleast_2d(np.asarray(Z, dtype=float))
        X = np.empty((Z.shape[0], self.n_x))
        for j, col in enumerate(self.columns):
            X[:, j] = col.evaluate(Z[:, self.space.block(col.feature).columns])
        return X
