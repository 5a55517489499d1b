"""The target region of compiled tree ensembles as :class:`~._search.Conditions` over leaves."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from ...exceptions import UnsupportedModelError
from ._flat import FlatForest
from ._search import Conditions

__all__ = ["forest_conditions"]


def forest_conditions(
    forest: FlatForest, views: Sequence[tuple[Any, int]], margin: float
) -> Conditions:
    """Every condition every model's target region asks, over the leaves of ``forest``.

    ``views``: ``(compiled model, target index)`` per model, in the order the
    forest was flattened.  Each condition ``coef @ y >= rhs + margin`` of
    ``y = base + sum_t tree_t / divisor`` becomes ``sum_t (value @ coef) >=
    divisor * (rhs + margin - base @ coef)``, the threshold in exact rationals of
    the floats, as the Z3 encoder states it.  Raises
    :class:`UnsupportedModelError` for a region that is not one conjunction.
    """
    rows, consts, exact, tols = [], [], [], []
    mg = Fraction(float(margin))
    for m, (compiled, target) in enumerate(views):
        region = compiled.rule.region(int(target))
        if len(region) != 1:
            raise UnsupportedModelError(
                "The branch-and-bound oracle needs a decision region of one conjunction."
            )
        est = compiled.estimator
        base = np.asarray(est.base, dtype=float)
        for cnd in region[0]:
            coef = np.asarray(cnd.coef, dtype=float)
            v = forest.leaf_values(m, coef, est.trees)
            q = Fraction(float(est.divisor)) * (
                Fraction(float(cnd.rhs)) + mg - Fraction(float(base @ coef))
            )
            per_tree = np.maximum.reduceat(np.abs(v), forest.tree_start[:-1])
            rows.append(v)
            consts.append(float(q))
            exact.append(q)
            tols.append(1e-9 * (1.0 + float(per_tree.sum()) + abs(float(q))))
    return Conditions(np.vstack(rows), np.asarray(consts), exact, np.asarray(tols))
