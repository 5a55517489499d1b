"""Front end for numeric column transforms.

* scalers (``StandardScaler``, ``MinMaxScaler``, ``MaxAbsScaler``,
  ``RobustScaler``): affine ops, recorded exactly as scikit-learn applies them;
* monotone element-wise maps (``FunctionTransformer`` with an increasing numpy
  function, ``QuantileTransformer``, ``PowerTransformer``): an ``("fn", f)``
  op evaluated by the fitted transformer itself;
* ``KBinsDiscretizer``: the bin code (an ``("fn", f)`` op with integer codes),
  then for one-hot encodings a ``("table", e_b)`` indicator of bin ``b``;
* ``SimpleImputer`` / ``MissingIndicator``: the identity / the constant 0 on
  rows without missing values (queries with missing values are rejected
  before any model is called).
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from typing import Any

import numpy as np

from ...exceptions import ValidationError
from ...schema import Schema
from ._columns import ElementFn, apply_op
from ._encoders import RAW, table_column
from ._ir import InputSpace, XColumn

# increasing numpy functions accepted in FunctionTransformer(func=...)
MONOTONE_FUNCS = ("log1p", "log", "log2", "log10", "sqrt", "cbrt", "exp", "expm1", "arcsinh")


def with_op(col: XColumn, op: str, a: Any) -> XColumn:
    """``col`` followed by one more operation (scale/offset kept for affine ops)."""
    if op not in ("sub", "div", "mul", "add"):
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


def as_number(col: XColumn, schema: Schema, space: InputSpace, element: str, where: str) -> XColumn:
    """A raw column used as a number (passthrough, scaler, estimator input)."""
    from ._pre import unsupported

    if col.base != RAW:
        return col
    f = schema[col.feature]
    if f.is_numeric:
        return replace(col, base="value", base_coef=np.ones(1))
    try:
        vals = np.asarray([float(c) for c in f.categories or ()], dtype=float)
    except (TypeError, ValueError):
        raise unsupported(
            element, where,
            f"feature '{f.name}' is {f.kind} with non-numeric categories and reaches it without an "
            "encoder; encode it with OneHotEncoder, OrdinalEncoder or TargetEncoder",
        ) from None
    return table_column(col.name, space, col.feature, vals)


def normalize(col: XColumn, space: InputSpace, where: str) -> XColumn:
    """Collapse a non-affine column of a discrete feature into its table; check the domain."""
    blk = space.block(col.feature)
    if blk.kind in ("real", "integer"):
        vals = col.evaluate(np.array([[blk.lower], [blk.upper]]))
    else:
        zb = np.eye(blk.size) if blk.is_indicator else np.arange(len(blk.categories or ()), dtype=float)[:, None]
        vals = col.evaluate(zb)
    if not np.isfinite(vals).all():
        raise ValidationError(
            f"Feature '{col.feature}': the transform at {where} is not finite on the feature's domain "
            f"[{blk.lower}, {blk.upper}] (e.g. np.log at 0 or below). Use a transform defined on the whole "
            "domain (np.log1p), or narrow the schema's bounds."
        )
    if col.is_affine or blk.kind in ("real", "integer"):
        return col
    if blk.is_indicator:
        return XColumn(name=col.name, feature=col.feature, base="code", base_coef=vals)
    return table_column(col.name, space, col.feature, vals)


class _ColumnCall:
    """``v -> trans.transform(X)[:, j]`` with ``v`` in input column ``j`` (others 1.0);
    ``inverse``: through ``inverse_transform`` (others 0.0).  A class, so that compiled
    models pickle (parallel runs)."""

    def __init__(self, trans: Any, j: int, n_in: int, inverse: bool = False) -> None:
        self.trans, self.j, self.n_in, self.inverse = trans, j, n_in, inverse

    def __call__(self, v: np.ndarray) -> np.ndarray:
        X = np.zeros((len(v), self.n_in)) if self.inverse else np.ones((len(v), self.n_in))
        X[:, self.j] = v
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # fitted with feature names, called on an array
            out = self.trans.inverse_transform(X) if self.inverse else self.trans.transform(X)
        out = out.toarray() if hasattr(out, "toarray") else np.asarray(out, dtype=float)
        return np.asarray(out[:, self.j], dtype=float)


class _BinCode:
    """scikit-learn's own bin code: ``searchsorted`` over the inner edges (checked
    against ``KBinsDiscretizer.transform`` by the faithfulness tests)."""

    def __init__(self, inner: np.ndarray, dtype: Any) -> None:
        self.inner, self.dtype = inner, dtype

    def __call__(self, v: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.inner.astype(self.dtype), np.asarray(v, dtype=self.dtype), side="right").astype(float)


def _cube(v: np.ndarray) -> np.ndarray:
    return np.asarray(v, dtype=float) ** 3


def _exp10(v: np.ndarray) -> np.ndarray:
    return np.power(10.0, np.asarray(v, dtype=float))


_INVERSES: dict[str, Any] = {"log1p": np.expm1, "log": np.exp, "log2": np.exp2, "log10": _exp10, "sqrt": np.square,
                             "cbrt": _cube, "exp": np.log, "expm1": np.log1p, "arcsinh": np.sinh}


def _scalers(trans: Any, name: str, cols: list[XColumn], where: str) -> list[XColumn]:
    from ._pre import unsupported

    n = len(cols)

    def vec(attr: str) -> np.ndarray:
        return np.broadcast_to(np.asarray(getattr(trans, attr), dtype=float), (n,))

    out = []
    if name == "StandardScaler":
        for j, c in enumerate(cols):
            if trans.with_mean:
                c = with_op(c, "sub", vec("mean_")[j])
            if trans.with_std:
                c = with_op(c, "div", vec("scale_")[j])
            out.append(c)
    elif name == "MinMaxScaler":
        if trans.clip:
            raise unsupported("MinMaxScaler(clip=True)", where, "clipping is not affine; use clip=False")
        out = [with_op(with_op(c, "mul", vec("scale_")[j]), "add", vec("min_")[j]) for j, c in enumerate(cols)]
    elif name == "MaxAbsScaler":
        out = [with_op(c, "div", vec("scale_")[j]) for j, c in enumerate(cols)]
    else:  # RobustScaler
        for j, c in enumerate(cols):
            if trans.with_centering:
                c = with_op(c, "sub", vec("center_")[j])
            if trans.with_scaling:
                c = with_op(c, "div", vec("scale_")[j])
            out.append(c)
    return out


def _kbins(trans: Any, cols: list[XColumn], space: InputSpace, where: str) -> list[XColumn]:
    n_in = len(cols)
    sizes = [int(b) for b in trans.n_bins_]
    starts = np.concatenate([[0], np.cumsum(sizes)])
    out = []
    del n_in, starts
    for j, c in enumerate(cols):
        inner = np.asarray(trans.bin_edges_[j], dtype=float)[1:-1]
        dtype = np.float32 if getattr(trans, "dtype", None) in (np.float32, "float32") else np.float64
        code = ElementFn("KBinsDiscretizer", _BinCode(inner, dtype), codes=sizes[j])
        coded = with_op(c, "fn", code)
        if trans.encode == "ordinal":
            out.append(normalize(coded, space, where))
            continue
        for b in range(sizes[j]):
            ind = np.zeros(sizes[j])
            ind[b] = 1.0
            out.append(normalize(with_op(coded, "table", ind), space, where))
    return out


def numeric_columns(trans: Any, cols: list[XColumn], schema: Schema, space: InputSpace, where: str) -> list[XColumn] | None:
    """Columns after a numeric transform, or None if ``trans`` is not one of them."""
    from ._pre import unsupported

    name = type(trans).__name__
    if name in ("SimpleImputer", "MissingIndicator"):
        return _imputer(trans, name, cols, space)
    if name == "FunctionTransformer":
        func = trans.func
        if func is None:
            return list(cols)
        fname = getattr(func, "__name__", repr(func))
        if not (isinstance(func, np.ufunc) and fname in MONOTONE_FUNCS) or trans.kw_args:
            raise unsupported(
                f"FunctionTransformer(func={fname})", where,
                f"only func=None and the increasing numpy functions {', '.join('np.' + f for f in MONOTONE_FUNCS)} "
                "(without kw_args) are supported",
            )
        inv = _INVERSES.get(fname)
        fn = ElementFn(f"np.{fname}", func, inverse=inv)
        return [normalize(with_op(as_number(c, schema, space, name, where), "fn", fn), space, where) for c in cols]
    if name not in ("StandardScaler", "MinMaxScaler", "MaxAbsScaler", "RobustScaler", "QuantileTransformer",
                    "PowerTransformer", "KBinsDiscretizer"):
        return None
    cols = [as_number(c, schema, space, name, where) for c in cols]
    if name == "KBinsDiscretizer":
        return _kbins(trans, cols, space, where)
    if name in ("QuantileTransformer", "PowerTransformer"):
        n = len(cols)
        return [normalize(with_op(c, "fn", ElementFn(name, _ColumnCall(trans, j, n),
                                                     inverse=_ColumnCall(trans, j, n, inverse=True))), space, where)
                for j, c in enumerate(cols)]
    return [normalize(c, space, where) for c in _scalers(trans, name, cols, where)]


def _imputer(trans: Any, name: str, cols: list[XColumn], space: InputSpace) -> list[XColumn]:
    """Identity on complete rows (columns entirely missing at fit are dropped), then
    the missing indicators: constant 0."""
    out: list[XColumn] = []
    if name == "SimpleImputer":
        stats = np.asarray(trans.statistics_)
        keep = getattr(trans, "keep_empty_features", False)
        for j, c in enumerate(cols):
            empty = stats.dtype.kind == "f" and np.isnan(stats[j])
            if keep or not empty:
                out.append(c)
        ind = getattr(trans, "indicator_", None)
        features = [] if ind is None else list(ind.features_)
    else:
        features = list(trans.features_)
    for j in features:
        c = cols[int(j)]
        blk = space.block(c.feature)
        out.append(XColumn(name=f"missingindicator_{c.feature}", feature=c.feature, base="value",
                           base_coef=np.zeros(blk.size)))
    return out


__all__ = ["MONOTONE_FUNCS", "apply_op", "as_number", "normalize", "numeric_columns", "with_op"]
