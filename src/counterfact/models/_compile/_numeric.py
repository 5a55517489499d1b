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

:data:`NUMERIC_TRANSFORMS` maps each transformer class name to its function;
the preprocessing front end (:mod:`._pre`) looks transformers up there.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ...exceptions import ValidationError
from ...schema import Schema
from ._columns import ElementFn
from ._ir import InputSpace, XColumn
from ._ir_inputs import with_op
from ._support import unsupported
from ._xcolumns import as_number, table_column

__all__ = ["MONOTONE_FUNCS", "NUMERIC_TRANSFORMS"]

# increasing numpy functions accepted in FunctionTransformer(func=...)
MONOTONE_FUNCS = ("log1p", "log", "log2", "log10", "sqrt", "cbrt", "exp", "expm1", "arcsinh")


def normalize(col: XColumn, space: InputSpace, where: str) -> XColumn:
    """Collapse a non-affine column of a discrete feature into its table; check the domain."""
    blk = space.block(col.feature)
    if blk.kind in ("real", "integer"):
        vals = col.evaluate(np.array([[blk.lower], [blk.upper]]))
    else:
        zb = (
            np.eye(blk.size)
            if blk.is_indicator
            else np.arange(len(blk.categories or ()), dtype=float)[:, None]
        )
        vals = col.evaluate(zb)
    if not np.isfinite(vals).all():
        raise ValidationError(
            f"Feature '{col.feature}': the transform at {where} is not finite on the feature's "
            f"domain [{blk.lower}, {blk.upper}] (e.g. np.log at 0 or below). Use a transform "
            "defined on the whole domain (np.log1p), or narrow the schema's bounds."
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
        return np.searchsorted(
            self.inner.astype(self.dtype), np.asarray(v, dtype=self.dtype), side="right"
        ).astype(float)


def _cube(v: np.ndarray) -> np.ndarray:
    return np.asarray(v, dtype=float) ** 3


def _exp10(v: np.ndarray) -> np.ndarray:
    return np.power(10.0, np.asarray(v, dtype=float))


_INVERSES: dict[str, Any] = {
    "log1p": np.expm1,
    "log": np.exp,
    "log2": np.exp2,
    "log10": _exp10,
    "sqrt": np.square,
    "cbrt": _cube,
    "exp": np.log,
    "expm1": np.log1p,
    "arcsinh": np.sinh,
}


def _numbers(
    trans: Any, cols: list[XColumn], schema: Schema, space: InputSpace, where: str
) -> list[XColumn]:
    """The columns ``trans`` receives, read as numbers."""
    return [as_number(c, schema, space, type(trans).__name__, where) for c in cols]


def _per_column(trans: Any, attr: str, n: int) -> np.ndarray:
    """A fitted attribute of ``trans`` as one float per input column."""
    return np.broadcast_to(np.asarray(getattr(trans, attr), dtype=float), (n,))


def _center_scale(
    trans: Any,
    cols: list[XColumn],
    schema: Schema,
    space: InputSpace,
    where: str,
    center: tuple[str, str],
    scale: tuple[str, str],
) -> list[XColumn]:
    """``(x - center) / scale`` per column, each step only when its flag is set
    (``center``/``scale``: the flag and the fitted attribute's names)."""
    out = []
    for j, c in enumerate(_numbers(trans, cols, schema, space, where)):
        for (flag, attr), op in ((center, "sub"), (scale, "div")):
            if getattr(trans, flag):
                c = with_op(c, op, _per_column(trans, attr, len(cols))[j])
        out.append(normalize(c, space, where))
    return out


def _standard(
    trans: Any, cols: list[XColumn], schema: Schema, space: InputSpace, where: str
) -> list[XColumn]:
    return _center_scale(
        trans, cols, schema, space, where, ("with_mean", "mean_"), ("with_std", "scale_")
    )


def _min_max(
    trans: Any, cols: list[XColumn], schema: Schema, space: InputSpace, where: str
) -> list[XColumn]:
    cols = _numbers(trans, cols, schema, space, where)
    if trans.clip:
        raise unsupported(
            "MinMaxScaler(clip=True)", where, "clipping is not affine; use clip=False"
        )
    scale, shift = _per_column(trans, "scale_", len(cols)), _per_column(trans, "min_", len(cols))
    return [
        normalize(with_op(with_op(c, "mul", scale[j]), "add", shift[j]), space, where)
        for j, c in enumerate(cols)
    ]


def _max_abs(
    trans: Any, cols: list[XColumn], schema: Schema, space: InputSpace, where: str
) -> list[XColumn]:
    scale = _per_column(trans, "scale_", len(cols))
    return [
        normalize(with_op(c, "div", scale[j]), space, where)
        for j, c in enumerate(_numbers(trans, cols, schema, space, where))
    ]


def _robust(
    trans: Any, cols: list[XColumn], schema: Schema, space: InputSpace, where: str
) -> list[XColumn]:
    return _center_scale(
        trans, cols, schema, space, where, ("with_centering", "center_"), ("with_scaling", "scale_")
    )


def _monotone_map(
    trans: Any, cols: list[XColumn], schema: Schema, space: InputSpace, where: str
) -> list[XColumn]:
    """QuantileTransformer / PowerTransformer: each column through the fitted transformer."""
    name, n = type(trans).__name__, len(cols)
    return [
        normalize(
            with_op(
                c,
                "fn",
                ElementFn(
                    name, _ColumnCall(trans, j, n), inverse=_ColumnCall(trans, j, n, inverse=True)
                ),
            ),
            space,
            where,
        )
        for j, c in enumerate(_numbers(trans, cols, schema, space, where))
    ]


def _function(
    trans: Any, cols: list[XColumn], schema: Schema, space: InputSpace, where: str
) -> list[XColumn]:
    """FunctionTransformer: the identity, or an increasing numpy function."""
    func = trans.func
    if func is None:
        return list(cols)
    fname = getattr(func, "__name__", repr(func))
    if not (isinstance(func, np.ufunc) and fname in MONOTONE_FUNCS) or trans.kw_args:
        raise unsupported(
            f"FunctionTransformer(func={fname})",
            where,
            "only func=None and the increasing numpy functions "
            f"{', '.join('np.' + f for f in MONOTONE_FUNCS)} "
            "(without kw_args) are supported",
        )
    fn = ElementFn(f"np.{fname}", func, inverse=_INVERSES.get(fname))
    return [
        normalize(with_op(c, "fn", fn), space, where)
        for c in _numbers(trans, cols, schema, space, where)
    ]


def _kbins(
    trans: Any, cols: list[XColumn], schema: Schema, space: InputSpace, where: str
) -> list[XColumn]:
    sizes = [int(b) for b in trans.n_bins_]
    out = []
    for j, c in enumerate(_numbers(trans, cols, schema, space, where)):
        inner = np.asarray(trans.bin_edges_[j], dtype=float)[1:-1]
        dtype = (
            np.float32 if getattr(trans, "dtype", None) in (np.float32, "float32") else np.float64
        )
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


def _imputer(
    trans: Any, cols: list[XColumn], schema: Schema, space: InputSpace, where: str
) -> list[XColumn]:
    """SimpleImputer / MissingIndicator: the identity on complete rows (columns entirely
    missing at fit are dropped), then the missing indicators: constant 0."""
    out: list[XColumn] = []
    if type(trans).__name__ == "SimpleImputer":
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
        out.append(
            XColumn(
                name=f"missingindicator_{c.feature}",
                feature=c.feature,
                base="value",
                base_coef=np.zeros(blk.size),
            )
        )
    return out


NumericTransform = Callable[[Any, list[XColumn], Schema, InputSpace, str], list[XColumn]]

#: transformer class name -> columns after it, given the columns it receives
NUMERIC_TRANSFORMS: dict[str, NumericTransform] = {
    "StandardScaler": _standard,
    "MinMaxScaler": _min_max,
    "MaxAbsScaler": _max_abs,
    "RobustScaler": _robust,
    "QuantileTransformer": _monotone_map,
    "PowerTransformer": _monotone_map,
    "FunctionTransformer": _function,
    "KBinsDiscretizer": _kbins,
    "SimpleImputer": _imputer,
    "MissingIndicator": _imputer,
}
