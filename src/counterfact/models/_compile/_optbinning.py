"""Front end for optbinning: ``BinningProcess`` in a pipeline, and ``Scorecard``.

A fitted ``BinningProcess`` replaces each selected variable by a step function
of it: the weight of evidence (or event rate, mean, bin index: whatever metric
it transforms to) of the bin the value falls in.

* A numeric variable (``dtype="numerical"``) is binned at its ``splits`` as
  ``np.digitize(x, splits, right=False)`` does: a value equal to a split goes
  to the upper bin.  Its column is that bin code (an ``("fn", f)`` with integer
  codes) followed by a ``("table", T)`` of the bins' values -- the shape of a
  one-hot ``KBinsDiscretizer`` column, so trees split on it and linear models
  and MLPs in front of it compile through :mod:`._steps`.  Special codes
  inside the feature's domain are cells of their own (``[p, p]``).  The values
  ``T`` are computed by the fitted ``BinningProcess`` itself on one value per
  bin and checked on both sides of every split.
* A categorical variable, and any variable of a discrete feature, is a table
  over the feature's categories (ranks, integer values) computed by the fitted
  ``BinningProcess`` on each of them (unknown categories, grouped "others"
  included), as the category encoders are (:mod:`._encoders`).

``Scorecard`` (a ``BinningProcess`` and an estimator, scaled to points) decides
with its estimator on the binning's transform (``predict_proba``), so it
compiles as that two-step pipeline (:func:`compile_scorecard`; its wrapper front
end :class:`ScorecardFrontEnd` is given the dispatcher).  Piecewise-linear
binnings (``OptimalPWBinning``) and ``metric="bins"`` are refused.  It imports
the IR, :mod:`._columns`, :mod:`._encoders`, :mod:`._numeric`, :mod:`._support`
and :mod:`._xcolumns`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ...schema import Schema
from ._columns import ElementFn
from ._encoders import raw_values
from ._frontend import WrapperFrontEnd, register_front_end
from ._ir import CompiledModel, InputSpace, XColumn
from ._ir_inputs import with_op
from ._numeric import normalize
from ._support import unsupported
from ._xcolumns import RAW, as_number, table_column

__all__ = [
    "BINNING_TRANSFORMS",
    "ScorecardBinning",
    "ScorecardFrontEnd",
    "binning_columns",
    "compile_scorecard",
]


class ScorecardBinning:
    """A fitted ``BinningProcess`` with the transform arguments a ``Scorecard`` calls it with
    (a step of the pipeline :func:`compile_scorecard` compiles)."""

    def __init__(self, binning: Any, **transform: Any) -> None:
        self.binning = binning
        self.transform_args = transform
        self.feature_names_in_ = np.asarray(binning.variable_names, dtype=object)


class _BinningCall:
    """``v -> BinningProcess.transform(X)[name]`` with ``v`` in variable ``name`` (the
    other variables hold a filler).  A class, so that compiled models pickle."""

    def __init__(self, binning: Any, name: str, args: dict[str, Any]) -> None:
        self.binning, self.name, self.args = binning, name, args

    def __call__(self, values: list[Any]) -> np.ndarray:
        n = len(values)
        cols: dict[str, Any] = {}
        for var in self.binning.variable_names:
            if var == self.name:
                arr = np.empty(n, dtype=object)
                arr[:] = values
                cols[var] = (
                    arr
                    if any(isinstance(v, str) for v in values)
                    else np.asarray(values, dtype=float)
                )
            elif self.binning.get_binned_variable(var).dtype == "numerical":
                cols[var] = np.zeros(n)
            else:
                cols[var] = np.full(n, "", dtype=object)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = self.binning.transform(pd.DataFrame(cols), **self.args)
        return np.asarray(pd.DataFrame(out)[self.name], dtype=float)


class _StepCode:
    """The code of the cell a value falls in: ``searchsorted(breaks, v, side="right")``
    (a value equal to a break starts the next cell)."""

    def __init__(self, breaks: np.ndarray) -> None:
        self.breaks = breaks

    def __call__(self, v: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.breaks, np.asarray(v, dtype=float), side="right").astype(float)


def _special_points(optb: Any, lo: float, hi: float) -> list[float]:
    """Special codes of a numeric variable inside ``[lo, hi]``."""
    codes = getattr(optb, "special_codes", None)
    if codes is None:
        return []
    items = codes.values() if isinstance(codes, dict) else [codes]
    flat: list[Any] = []
    for it in items:
        flat.extend(it if isinstance(it, list | tuple | np.ndarray) else [it])
    out = []
    for v in flat:
        try:
            f = float(v)
        except (TypeError, ValueError):
            continue
        if lo <= f <= hi:
            out.append(f)
    return out


def _numeric_column(
    col: XColumn,
    optb: Any,
    call: Callable[[list[Any]], np.ndarray],
    schema: Schema,
    space: InputSpace,
    where: str,
    element: str,
) -> XColumn:
    """A numeric variable: its bin code, then the table of the bins' values (module docstring)."""
    blk = space.block(col.feature)
    points = _special_points(optb, blk.lower, blk.upper)
    breaks = np.unique(
        np.concatenate(
            [
                np.asarray(optb.splits, dtype=float),
                points,
                np.nextafter(np.asarray(points, dtype=float), np.inf),
            ]
        )
    )
    first = np.nextafter(breaks[0], -np.inf) if breaks.size else blk.lower
    table = call([float(first), *(float(b) for b in breaks)])
    below = call([float(v) for v in np.nextafter(breaks, -np.inf)]) if breaks.size else np.zeros(0)
    if not np.array_equal(below, table[:-1]):
        raise unsupported(
            element,
            where,
            f"variable '{col.feature}' is not binned as np.digitize(right=False) bins it",
        )
    coded = with_op(
        as_number(col, schema, space, element, where),
        "fn",
        ElementFn(f"{element} bins", _StepCode(breaks), codes=len(breaks) + 1),
    )
    return normalize(with_op(coded, "table", table), space, where)


def binning_columns(
    trans: Any, cols: list[XColumn], schema: Schema, space: InputSpace, where: str
) -> list[XColumn]:
    """Output columns of a fitted ``BinningProcess`` (or :class:`ScorecardBinning`) fed ``cols``."""
    where = where or "the top of the pipeline"
    args = dict(trans.transform_args) if isinstance(trans, ScorecardBinning) else {}
    bp = trans.binning if isinstance(trans, ScorecardBinning) else trans
    element = "BinningProcess"
    per_variable = getattr(bp, "binning_transform_params", None) or {}
    if args.get("metric") == "bins" or any(
        p.get("metric") == "bins" for p in per_variable.values()
    ):
        raise unsupported(
            element, where, "metric='bins' gives labels, not numbers; use 'woe' or 'indices'"
        )
    names = list(bp.variable_names)
    by_name = {c.name: c for c in cols}
    if not all(n in by_name for n in names) and len(cols) != len(names):
        raise unsupported(
            element, where, f"it bins {names} but receives the columns {[c.name for c in cols]}"
        )
    out = []
    for name in bp.get_support(names=True):
        col = by_name.get(name) or cols[names.index(name)]
        optb = bp.get_binned_variable(name)
        if "PW" in type(optb).__name__:
            raise unsupported(
                f"{type(optb).__name__} for '{name}'",
                where,
                "piecewise-linear binning is not a step function",
            )
        if col.base != RAW:
            raise unsupported(
                element,
                where,
                f"it receives feature '{col.feature}' after a transform; bin raw columns",
            )
        call = _BinningCall(bp, str(name), args)
        blk = space.block(col.feature)
        if blk.kind == "real" and optb.dtype != "numerical":
            raise unsupported(
                element, where, f"it bins the real feature '{col.feature}' as categories"
            )
        if blk.kind in ("real", "integer") and optb.dtype == "numerical":
            out.append(_numeric_column(col, optb, call, schema, space, where, element))
            continue
        labels = raw_values(schema, space, col.feature, element, where)
        out.append(table_column(str(name), space, col.feature, call(labels)))
    return out


#: transformer class name -> its front end (the preprocessing table of :mod:`._pre`)
BINNING_TRANSFORMS = {"BinningProcess": binning_columns, "ScorecardBinning": binning_columns}


def compile_scorecard(
    sc: Any, margin: float, where: str, compile_inner: Callable[[Any, str], CompiledModel]
) -> CompiledModel:
    """optbinning's ``Scorecard``: its estimator after its binning process, transformed as
    ``Scorecard.predict_proba`` transforms (the points scaling does not enter the decision)."""
    from sklearn.pipeline import Pipeline

    binning = ScorecardBinning(
        sc.binning_process_,
        metric=None,
        metric_special=getattr(sc, "_metric_special", 0),
        metric_missing=getattr(sc, "_metric_missing", 0),
    )
    return compile_inner(
        Pipeline([("binning", binning), ("estimator", sc.estimator_)]), "the Scorecard's "
    )


@register_front_end
class ScorecardFrontEnd(WrapperFrontEnd):
    """optbinning's ``Scorecard``: :func:`compile_scorecard`."""

    name = "optbinning-scorecard"
    estimators = ("optbinning:Scorecard",)
    supported = ("Scorecard (optbinning) around any of these",)

    def compile_wrapper(
        self,
        est: Any,
        margin: float,
        where: str,
        compile_inner: Callable[[Any, str], CompiledModel],
    ) -> CompiledModel:
        return compile_scorecard(est, margin, where, compile_inner)
