"""Front end for interpret's Explainable Boosting Machines (``ExplainableBoostingClassifier``).

An EBM's logit is ``intercept_ + sum_t f_t(x)``: each term ``t`` a step
function of one feature (a main effect) or of two (a pairwise interaction),
constant on the feature's bins (``bins_``: the cut points of a continuous
feature, a category -> bin map of a nominal one; a pair may use coarser bins
than the main effect).  Each term is one tree over the cells of its features
(:mod:`._cells`), so the EBM compiles to a :class:`TreeEnsemble`
(``"sum_margin"``, base the intercept), and class 1 iff the logit is > 0.

Exact by construction: a continuous feature's cells are the intervals between
its cut points (a value equal to a cut goes to the upper bin, as interpret's
``Discretize`` does; checked on every cut of every main effect), and each
term's value on every cell (pair of cells) is computed by the EBM itself
(``eval_terms`` on one raw row per cell), so category maps, unknown categories
and integer features the EBM typed as nominal come out as interpret computes
them.  Binary classification (logit link) and terms of at most two features.

The estimator input columns (:func:`ebm_inputs`) are the raw value, rank or
category index of each feature, which the trees split on; :class:`EBMFrontEnd`
registers both.  It imports the IR, the registry, :mod:`._cells`, :mod:`._splits`,
:mod:`._support` and :mod:`._xcolumns`.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from ...exceptions import UnsupportedModelError
from ...schema import Schema
from ._cells import Cells, add_step_tree, constant_value, feature_cells, split_column
from ._frontend import FrontEnd, register_front_end
from ._ir import AffineMap, DecisionRule, InputSpace, RawBlock, TreeEnsemble, XColumn
from ._splits import TreeBuilder
from ._xcolumns import RAW

__all__ = ["EBMFrontEnd", "compile_ebm", "ebm_inputs"]

#: the most rows one term is evaluated on (cells of a pair's two features multiplied)
MAX_TERM_CELLS = 250_000


def _refuse(why: str) -> UnsupportedModelError:
    return UnsupportedModelError(
        f"The model compiler supports ExplainableBoostingClassifier {why}. Use a model-agnostic "
        "method (cf.UFCE, cf.MDPSO, cf.NearestObservable) for this model."
    )


def ebm_inputs(est: Any, cols: list[XColumn], schema: Schema, space: InputSpace) -> list[XColumn]:
    """The columns the EBM reads: each raw feature's value, rank or category index."""
    out = []
    for col in cols:
        if col.base != RAW:
            raise _refuse(
                f"fitted on the raw columns only (it receives '{col.name}' after preprocessing); "
                "fit it on the DataFrame of the schema's features"
            )
        out.append(split_column(space.block(col.feature), name=col.feature))
    return out


def _cells(est: Any, blk: RawBlock, i: int, column: int, order: int) -> Cells:
    """The cells of feature ``i`` at the bin level a term of ``order`` features uses."""
    if blk.kind not in ("real", "integer"):
        return feature_cells(blk, column)  # one cell per category / rank: the EBM maps them itself
    levels = est.bins_[i]
    bins = levels[min(len(levels), order) - 1]
    if isinstance(bins, dict):  # a number the EBM typed as nominal: one cell per value
        if blk.kind == "real" or blk.upper - blk.lower >= MAX_TERM_CELLS:
            raise _refuse(
                f"with the numeric feature '{blk.name}' typed as nominal only on small integer "
                "domains"
            )
        return feature_cells(blk, column, np.arange(blk.lower, blk.upper))
    # left of cut c iff z < c: the largest value going left is the float below c
    return feature_cells(blk, column, np.nextafter(np.asarray(bins, dtype=float), -np.inf))


class _Probe:
    """Rows the EBM evaluates: its own input columns (names, order), each holding one raw
    feature; only the features of the term evaluated vary, the others hold one value."""

    def __init__(self, est: Any, affine: AffineMap) -> None:
        self.est = est
        self.space = affine.space
        self.names = [str(n) for n in est.feature_names_in_]
        self.features = [affine.columns[j].feature for j in range(len(self.names))]

    def frame(self, rows: dict[str, list[Any]], n: int) -> pd.DataFrame:
        cols: dict[str, Any] = {}
        for name, f in zip(self.names, self.features, strict=True):
            blk = self.space.block(f)
            vals = rows.get(f, [blk.categories[0] if blk.categories else blk.lower] * n)
            if blk.kind == "integer":
                cols[name] = np.asarray(vals, dtype=float).astype(np.int64)
            elif blk.kind == "real":
                cols[name] = np.asarray(vals, dtype=float)
            else:
                arr = np.empty(n, dtype=object)
                arr[:] = vals
                cols[name] = arr
        return pd.DataFrame(cols)

    def term(self, t: int, cells: list[Cells], points: list[list[Any]]) -> np.ndarray:
        """Term ``t`` on every combination of ``points`` (one list per feature of the term)."""
        sizes = [len(p) for p in points]
        grid = np.indices(sizes).reshape(len(sizes), -1)
        rows = {
            c.feature: [p[int(k)] for k in g] for c, p, g in zip(cells, points, grid, strict=True)
        }
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scores = np.asarray(self.est.eval_terms(self.frame(rows, grid.shape[1])), dtype=float)
        return scores[:, t].reshape(*sizes, 1)


def _check_cuts(probe: _Probe, t: int, cells: Cells, table: np.ndarray) -> None:
    """The first value right of every cut of a continuous main effect falls in the next cell."""
    blk = probe.space.block(cells.feature)
    if cells.kind != "numeric" or not cells.cuts.size:
        return
    above = cells.cuts + 1 if blk.kind == "integer" else np.nextafter(cells.cuts, np.inf)
    got = probe.term(t, [cells], [[float(v) for v in above]])
    if not np.array_equal(got, table[1:]):
        raise _refuse(
            "whose binning puts a value equal to a cut point in the upper bin; feature "
            f"'{cells.feature}' does not (an unsupported version of interpret?)"
        )


def compile_ebm(est: Any, affine: AffineMap, margin: float) -> tuple[TreeEnsemble, DecisionRule]:
    """ExplainableBoostingClassifier (binary): one tree per term (module docstring)."""
    if len(est.classes_) != 2 or getattr(est, "link_", "logit") != "logit":
        raise _refuse(
            f"for binary classification with the logit link only; this one has {len(est.classes_)} "
            f"classes and link {getattr(est, 'link_', '?')!r}"
        )
    space = affine.space
    probe = _Probe(est, affine)
    builder = TreeBuilder(affine, "float64", 1)
    base = np.asarray(est.intercept_, dtype=float).reshape(1).copy()
    for t, feats in enumerate(est.term_features_):
        if len(feats) > 2:
            raise _refuse(f"with terms of one or two features; term {t} has {len(feats)}")
        cells = [
            _cells(est, space.block(probe.features[i]), int(i), int(i), len(feats)) for i in feats
        ]
        if int(np.prod([c.n for c in cells])) > MAX_TERM_CELLS:
            raise _refuse(f"with at most {MAX_TERM_CELLS} cells per term; term {t} has more")
        points = [c.raw_values(space.block(c.feature).categories) for c in cells]
        table = probe.term(t, cells, points)
        if len(cells) == 1:
            _check_cuts(probe, t, cells[0], table)
        const = constant_value(table)
        if const is not None:
            base += const
        else:
            add_step_tree(builder, cells, table)
    return builder.build(base, divisor=1.0, aggregation="sum_margin"), DecisionRule(
        "threshold", 2, 1, margin
    )


@register_front_end
class EBMFrontEnd(FrontEnd):
    """interpret's ``ExplainableBoostingClassifier``: :func:`compile_ebm` over
    :func:`ebm_inputs`."""

    name = "interpret-ebm"
    estimators = ("interpret.glassbox:ExplainableBoostingClassifier",)
    supported = ("ExplainableBoostingClassifier (interpret), binary",)
    trees = True

    def compile(
        self, est: Any, affine: AffineMap, margin: float
    ) -> tuple[TreeEnsemble, DecisionRule]:
        return compile_ebm(est, affine, margin)

    def inputs(
        self, est: Any, cols: list[XColumn], schema: Schema, space: InputSpace
    ) -> list[XColumn]:
        return ebm_inputs(est, cols, schema, space)
