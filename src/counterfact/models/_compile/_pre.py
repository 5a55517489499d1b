"""Front end for pipelines and preprocessing: scikit-learn transformers -> :class:`AffineMap`.

Every supported transformer acts column by column, so each estimator input is
a function of exactly one raw feature; we track that function as an
:class:`XColumn` (base value + scikit-learn's exact elementwise operations,
:mod:`._columns` for the non-affine ones).  :func:`apply_transformer` looks a
transformer up in a table by class name: ``ColumnTransformer`` and nested
``Pipeline`` are handled here, encoders in :mod:`._encoders`, numeric
transforms in :mod:`._numeric`, optbinning's ``BinningProcess`` in
:mod:`._optbinning`.  :func:`split_pipeline` takes a model pipeline
apart into its preprocessing steps and its final estimator, which the
dispatcher compiles.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...exceptions import ValidationError
from ...schema import Schema
from ._encoders import ENCODERS, encode_columns
from ._ir import AffineMap, InputSpace, XColumn
from ._numeric import NUMERIC_TRANSFORMS
from ._optbinning import BINNING_TRANSFORMS
from ._support import unsupported
from ._xcolumns import RAW, as_number

__all__ = ["apply_transformer", "build_affine", "input_columns", "sparse_output", "split_pipeline"]


def split_pipeline(model: Any, where: str = "") -> tuple[Any, list[tuple[str, Any]]]:
    """``(final estimator, [(position, preprocessing step), ...])``, nested pipelines flattened.

    A model that is not a ``Pipeline`` is its own final estimator, without
    preprocessing.  ``where`` prefixes the positions (for messages).
    """
    if type(model).__name__ != "Pipeline":
        return model, []
    pre: list[tuple[str, Any]] = []
    steps = list(model.steps)
    for k, (name, step) in enumerate(steps[:-1]):
        pos = f"{where}step {k} ('{name}') of the pipeline"
        if type(step).__name__ == "Pipeline":
            inner_est, inner_pre = split_pipeline(step, f"{pos} > ")
            pre.extend(inner_pre)
            pre.append((f"{pos} > its last step", inner_est))
        elif step is None or (isinstance(step, str) and step == "passthrough"):
            continue
        else:
            pre.append((pos, step))
    name, last = steps[-1]
    if type(last).__name__ == "Pipeline":
        inner_est, inner_pre = split_pipeline(
            last, f"{where}step {len(steps) - 1} ('{name}') of the pipeline > "
        )
        return inner_est, pre + inner_pre
    return last, pre


def sparse_output(step: Any) -> bool:
    """Whether a fitted preprocessing step outputs a scipy sparse matrix."""
    name = type(step).__name__
    if name == "ColumnTransformer":
        return bool(getattr(step, "sparse_output_", False))
    if name == "Pipeline":
        return sparse_output(step.steps[-1][1])
    if name == "OneHotEncoder":
        return bool(step.sparse_output)
    if name == "KBinsDiscretizer":
        return step.encode == "onehot"
    return False


def _raw_column(schema: Schema, space: InputSpace, name: str) -> XColumn:
    if name not in schema:
        raise ValidationError(
            f"The model uses the column '{name}', which is not a feature of the schema "
            f"{schema.names}. Compile against the schema the model was trained with."
        )
    blk = space.block(name)
    return XColumn(name=name, feature=name, base=RAW, base_coef=np.zeros(blk.size))


#: transformers the compiler rejects with a specific hint
_HINTS = {"FeatureUnion": "put the parts side by side in a ColumnTransformer instead"}


def apply_transformer(
    trans: Any, cols: list[XColumn], schema: Schema, space: InputSpace, where: str = ""
) -> list[XColumn]:
    """Columns after ``trans`` (fitted), given the columns it receives."""
    if trans is None or (isinstance(trans, str) and trans == "passthrough"):
        return list(cols)
    if isinstance(trans, str):
        raise unsupported(repr(trans), where)
    name = type(trans).__name__
    front_end = _TRANSFORMERS.get(name)
    if front_end is None:
        raise unsupported(name, where, _HINTS.get(name, ""))
    return front_end(trans, cols, schema, space, where)


def _pipeline(
    pipe: Any, cols: list[XColumn], schema: Schema, space: InputSpace, where: str
) -> list[XColumn]:
    """A ``Pipeline`` used as a transformer: its steps in order."""
    for k, (sname, step) in enumerate(pipe.steps):
        cols = apply_transformer(step, cols, schema, space, f"{where} > step {k} ('{sname}')")
    return cols


def _column_transformer(
    ct: Any, cols: list[XColumn], schema: Schema, space: InputSpace, where: str
) -> list[XColumn]:
    idx_map = getattr(ct, "_transformer_to_input_indices", None)
    out_idx = getattr(ct, "output_indices_", None)
    if idx_map is None or out_idx is None:
        raise unsupported(
            "ColumnTransformer", where, "not fitted, or from an unsupported scikit-learn version"
        )
    n_out = max((s.stop for s in out_idx.values()), default=0)
    result: list[XColumn | None] = [None] * n_out
    for name, trans, _ in ct.transformers_:
        if isinstance(trans, str) and trans == "drop":
            continue
        indices = list(idx_map.get(name, []))
        sl = out_idx.get(name, slice(0, 0))
        if not indices and sl.stop == sl.start:
            continue
        sub = apply_transformer(
            trans,
            [cols[i] for i in indices],
            schema,
            space,
            f"{where} > ColumnTransformer part '{name}'",
        )
        if len(sub) != sl.stop - sl.start:
            raise unsupported(
                f"ColumnTransformer part '{name}'",
                where,
                f"expected {sl.stop - sl.start} output columns, compiled {len(sub)}",
            )
        result[sl] = sub
    if any(c is None for c in result):
        raise unsupported("ColumnTransformer", where, "could not account for every output column")
    return [c for c in result if c is not None]


Transform = Callable[[Any, list[XColumn], Schema, InputSpace, str], list[XColumn]]

#: transformer class name -> its front end: columns after it, given the columns it receives
_TRANSFORMERS: dict[str, Transform] = {
    "ColumnTransformer": _column_transformer,
    "Pipeline": _pipeline,
    **dict.fromkeys(ENCODERS, encode_columns),
    **NUMERIC_TRANSFORMS,
    **BINNING_TRANSFORMS,
}


def input_columns(first_step: Any, schema: Schema, space: InputSpace) -> list[XColumn]:
    """The raw columns the model receives (in the order of ``feature_names_in_``)."""
    names = getattr(first_step, "feature_names_in_", None)
    if names is None:
        names = schema.names
        n_in = getattr(first_step, "n_features_in_", None)
        if n_in is not None and int(n_in) != len(names):
            raise ValidationError(
                f"The model was fitted on {n_in} unnamed columns (a numpy array) but the schema "
                f"has {len(names)} features; fit it on a DataFrame, or on an array whose columns "
                "are the schema's features in schema order."
            )
    return [_raw_column(schema, space, str(n)) for n in names]


def build_affine(
    cols: list[XColumn], schema: Schema, space: InputSpace, estimator_name: str
) -> AffineMap:
    """Finish columns (raw -> number) and fold them into ``x = A z + c``.

    Non-affine columns get a zero row (see :mod:`._columns`).
    """
    cols = [
        as_number(c, schema, space, f"the estimator {estimator_name}", "the estimator's input")
        for c in cols
    ]
    A = np.zeros((len(cols), space.n))
    c_vec = np.zeros(len(cols))
    for j, col in enumerate(cols):
        if not col.is_affine:
            continue
        blk = space.block(col.feature)
        A[j, blk.columns] = col.scale * col.base_coef
        c_vec[j] = col.scale * col.base_const + col.offset
    return AffineMap(A=A, c=c_vec, columns=tuple(cols), space=space)
