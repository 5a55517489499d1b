"""The preprocessing operators of an ONNX graph, as estimator-input columns.

A value of the ONNX front end's interpreter (:mod:`._onnx`) that is a tensor of
estimator inputs is a :class:`Cols`: one :class:`XColumn` per tensor column
(each a function of one raw feature, as for scikit-learn pipelines) and the
tensor's element type.  :data:`PRE_OPERATORS` maps an operator to its
handler: ``(node, argument values, Context) -> Cols``.

* arithmetic with a constant (``Sub``, ``Add``, ``Mul``, ``Div``; ``Scaler``):
  the column operations of :mod:`._columns`, one per column;
* encoders (``OneHotEncoder``, ``LabelEncoder``) of a discrete or integer
  feature: a table over the feature's values (:func:`._xcolumns.table_column`),
  computed by applying the operator to every value of the domain;
  ``Binarizer``: a two-code step function;
* column plumbing (``Concat``, ``ArrayFeatureExtractor``, ``Gather``,
  ``Reshape``, ``Flatten``, ``Identity``, ``Cast``, ``Imputer`` -- rows without
  missing values pass it unchanged).

Float precision: onnxruntime computes float tensors in float32.  In front of
a tree ensemble (``Context.exact``) every float32 result that is not exactly a
float64 one gets an explicit rounding (``("fn", float32)``, a non-decreasing
map), so the splits' raw cuts are exact; in front of linear models and
networks the columns keep float64 arithmetic, within the tolerance the
faithfulness check states (:mod:`._onnx`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...schema import Schema
from ._columns import ElementFn
from ._ir import InputSpace, RawBlock, XColumn
from ._ir_inputs import with_op
from ._onnx_graph import GraphView, attribute, refuse
from ._xcolumns import RAW, as_number, table_column

__all__ = ["PRE_OPERATORS", "Cols", "Context", "numeric"]

#: onnx Cast targets -> element type names
_CAST = {1: "float32", 11: "float64", 7: "int64", 6: "int32", 8: "string", 9: "bool"}
#: the largest integer domain enumerated to tell whether float32 represents it exactly
_MAX_ENUMERATED = 4096


@dataclass(frozen=True)
class Cols:
    """A tensor of estimator inputs: its columns and its element type."""

    columns: tuple[XColumn, ...]
    dtype: str


@dataclass(frozen=True)
class Context:
    """What the handlers read besides their arguments."""

    view: GraphView
    schema: Schema
    space: InputSpace
    exact: bool  # a tree ensemble reads the columns: float32 rounding made explicit


def _round32(v: np.ndarray) -> np.ndarray:
    return np.asarray(v, dtype=np.float32).astype(float)


#: float32 rounding, the operation onnxruntime applies to every float tensor
FLOAT32 = ElementFn("float32", _round32, inverse=lambda v: v)


def numeric(col: XColumn, ctx: Context, node: Any) -> XColumn:
    """A raw column used as a number (a raw text category refused)."""
    where = f"the ONNX node {node.name or node.output[0]!r}"
    return as_number(col, ctx.schema, ctx.space, node.op_type, where)


def _domain(blk: RawBlock) -> np.ndarray | None:
    """Raw block values of every value of a discrete or small integer domain, in the
    order :func:`table_column` indexes them (None for other domains)."""
    if blk.is_indicator:
        return np.eye(blk.size)
    if blk.kind == "ordinal":
        return np.arange(blk.upper + 1, dtype=float)[:, None]
    if blk.kind == "integer" and blk.upper - blk.lower <= _MAX_ENUMERATED:
        return np.arange(blk.lower, blk.upper + 1, dtype=float)[:, None]
    return None


def _values(col: XColumn, ctx: Context, node: Any) -> tuple[RawBlock, list[Any]]:
    """The column's value on every value of its feature's domain (categories for a
    raw discrete column); refused for a real feature."""
    blk = ctx.space.block(col.feature)
    points = _domain(blk)
    if points is None:
        raise refuse(
            node,
            f"it encodes the {blk.kind} feature '{blk.name}', whose values cannot be enumerated",
        )
    if col.base == RAW and blk.categories is not None:
        return blk, list(blk.categories)
    if col.base == RAW:
        return blk, [float(v) for v in points[:, 0]]
    return blk, [float(v) for v in col.evaluate(points)]


def _rounded(col: XColumn, ctx: Context) -> XColumn:
    """``col`` rounded to float32, when that changes a value (trees only)."""
    if not ctx.exact:
        return col
    points = _domain(ctx.space.block(col.feature))
    if points is not None:
        v = col.evaluate(points)
        if np.array_equal(v, _round32(v)):
            return col
    return with_op(col, "fn", FLOAT32)


def _one(args: list[Any], node: Any) -> Cols:
    if not args or not isinstance(args[0], Cols):
        raise refuse(node, "its input is not a tensor of input columns")
    return args[0]


def _passthrough(node: Any, args: list[Any], ctx: Context) -> Cols:
    return _one(args, node)


def _cast(node: Any, args: list[Any], ctx: Context) -> Cols:
    x = _one(args, node)
    to = _CAST.get(int(attribute(node, "to", 0)))
    if to is None or to in ("string", "bool"):
        raise refuse(node, "a cast to a type other than a number")
    if to.startswith("int") and x.dtype in ("float32", "float64"):
        raise refuse(node, "a cast of floats to integers (it truncates)")
    cols = x.columns
    if to == "float32" and x.dtype != "float32":
        cols = tuple(_rounded(numeric(c, ctx, node), ctx) for c in cols)
    return Cols(cols, to)


def _reshape(node: Any, args: list[Any], ctx: Context) -> Cols:
    x = _one(args, node)
    shape = [int(s) for s in ctx.view.const(node.input[1], node).reshape(-1)]
    if len(shape) > 3 or (shape[-1] not in (-1, len(x.columns)) and len(shape) > 1):
        raise refuse(node, f"a reshape to {shape} of {len(x.columns)} columns")
    return x


def _concat(node: Any, args: list[Any], ctx: Context) -> Cols:
    if int(attribute(node, "axis", 0)) == 0 or not all(isinstance(a, Cols) for a in args):
        raise refuse(node, "only input columns side by side (axis 1) are supported")
    return Cols(tuple(c for a in args for c in a.columns), args[0].dtype)


def _select(node: Any, args: list[Any], ctx: Context) -> Cols:
    """``ArrayFeatureExtractor`` / ``Gather(axis=1)`` by constant indices."""
    x = _one(args, node)
    if node.op_type == "Gather" and int(attribute(node, "axis", 0)) not in (1, -1):
        raise refuse(node, "a Gather of rows")
    idx = ctx.view.const(node.input[1], node).reshape(-1).astype(int)
    return Cols(tuple(x.columns[int(i)] for i in idx), x.dtype)


def _arithmetic(node: Any, args: list[Any], ctx: Context) -> Cols:
    """``Sub``/``Add``/``Mul``/``Div`` of input columns and a constant."""
    if isinstance(args[0], Cols) and ctx.view.is_const(node.input[1]):
        x, c, op = args[0], ctx.view.const(node.input[1], node), node.op_type.lower()
        return _column_ops(x, [(op, c)], ctx, node)
    if node.op_type in ("Add", "Mul") and isinstance(args[1], Cols):
        swapped = [node.input[1], node.input[0]]
        if ctx.view.is_const(swapped[1]):
            c = ctx.view.const(swapped[1], node)
            return _column_ops(args[1], [(node.op_type.lower(), c)], ctx, node)
    if node.op_type == "Sub" and isinstance(args[1], Cols) and ctx.view.is_const(node.input[0]):
        c = ctx.view.const(node.input[0], node)
        return _column_ops(args[1], [("mul", -1.0), ("add", c)], ctx, node)
    raise refuse(node, "only arithmetic between input columns and a constant is supported")


def _column_ops(x: Cols, ops: list[tuple[str, Any]], ctx: Context, node: Any) -> Cols:
    """``ops`` (constants broadcast over the columns) applied to every column."""
    n = len(x.columns)
    out = []
    for j, col in enumerate(x.columns):
        col = numeric(col, ctx, node)
        for op, c in ops:
            arr = np.asarray(c, dtype=float).reshape(-1)
            if arr.size not in (1, n):
                raise refuse(node, f"a constant of {arr.size} values for {n} columns")
            a = arr[0] if arr.size == 1 else arr[j]
            if x.dtype == "float32":
                a = float(np.float32(a))
            col = with_op(col, op, a)
        out.append(_rounded(col, ctx) if x.dtype == "float32" else col)
    return Cols(tuple(out), x.dtype)


def _scaler(node: Any, args: list[Any], ctx: Context) -> Cols:
    """``Scaler``: ``(x - offset) * scale``, in float32."""
    x = _one(args, node)
    offset = np.asarray(attribute(node, "offset", [0.0]), dtype=np.float32)
    scale = np.asarray(attribute(node, "scale", [1.0]), dtype=np.float32)
    rounded = [_rounded(numeric(c, ctx, node), ctx) for c in x.columns]
    y = _column_ops(Cols(tuple(rounded), "float32"), [("sub", offset)], ctx, node)
    return _column_ops(y, [("mul", scale)], ctx, node)


def _binarizer(node: Any, args: list[Any], ctx: Context) -> Cols:
    """``Binarizer``: 1 where ``x > threshold``, else 0 (a step function)."""
    x = _one(args, node)
    t = float(attribute(node, "threshold", 0.0))
    step = ElementFn(f"Binarizer(threshold={t:g})", lambda v: (v > t).astype(float), codes=2)
    return Cols(tuple(with_op(numeric(c, ctx, node), "fn", step) for c in x.columns), x.dtype)


def _matches(value: Any, keys: list[Any], strings: bool) -> list[bool]:
    if strings:
        return [str(value) == k for k in keys]
    try:
        v = float(value)
    except (TypeError, ValueError):
        return [False] * len(keys)
    return [v == float(k) for k in keys]


def _one_hot(node: Any, args: list[Any], ctx: Context) -> Cols:
    """``OneHotEncoder`` of one column: one indicator table per listed category."""
    x = _one(args, node)
    if len(x.columns) != 1:
        raise refuse(node, "a one-hot encoding of several columns at once")
    strings = attribute(node, "cats_strings") is not None
    keys = list(attribute(node, "cats_strings") or attribute(node, "cats_int64s") or [])
    col = x.columns[0]
    blk, values = _values(col, ctx, node)
    hits = np.array([_matches(v, keys, strings) for v in values], dtype=float).reshape(
        -1, len(keys)
    )
    if int(attribute(node, "zeros", 1)) == 0 and not hits.any(axis=1).all():
        unknown = [v for v, h in zip(values, hits, strict=True) if not h.any()]
        raise refuse(node, f"it rejects the values {unknown[:5]} of feature '{blk.name}' (zeros=0)")
    return Cols(
        tuple(
            table_column(f"{blk.name}={k}", ctx.space, blk.name, hits[:, i])
            for i, k in enumerate(keys)
        ),
        "float32",
    )


def _label_encoder(node: Any, args: list[Any], ctx: Context) -> Cols:
    """``LabelEncoder`` of one column into numbers: a table over the feature's values."""
    x = _one(args, node)
    keys = attribute(node, "keys_strings")
    strings = keys is not None
    keys = keys if strings else attribute(node, "keys_int64s") or attribute(node, "keys_floats")
    codes = attribute(node, "values_int64s")
    dtype = "int64"
    if codes is None:
        codes, dtype = attribute(node, "values_floats"), "float32"
    if codes is None or keys is None or len(x.columns) != 1:
        raise refuse(node, "a LabelEncoder to strings, or of several columns")
    default = (
        attribute(node, "default_int64", -1)
        if dtype == "int64"
        else attribute(node, "default_float", -0.0)
    )
    blk, values = _values(x.columns[0], ctx, node)
    out = []
    for v in values:
        hit = _matches(v, list(keys), strings)
        out.append(float(codes[hit.index(True)]) if any(hit) else float(default))
    return Cols((table_column(f"{blk.name} (code)", ctx.space, blk.name, np.array(out)),), dtype)


Handler = Callable[[Any, list[Any], Context], Cols]

#: the preprocessing operators: node, argument values, context -> the output columns
PRE_OPERATORS: dict[str, Handler] = {
    "Identity": _passthrough,
    "Flatten": _passthrough,
    "Imputer": _passthrough,
    "Cast": _cast,
    "Reshape": _reshape,
    "Concat": _concat,
    "ArrayFeatureExtractor": _select,
    "Gather": _select,
    "Sub": _arithmetic,
    "Add": _arithmetic,
    "Mul": _arithmetic,
    "Div": _arithmetic,
    "Scaler": _scaler,
    "Binarizer": _binarizer,
    "OneHotEncoder": _one_hot,
    "LabelEncoder": _label_encoder,
}
