"""MD-PSO's proximity term under the call's costs (``explain(costs=...)``).

The paper's proximity is Gower's distance, a mean of per-feature changes in
[0, 1].  With costs, each particle's proximity is its cost divided by an upper
bound of the cost over the query's box (the larger end of each ordered
feature's interval, the dearest allowed category), so it stays in [0, 1]:
the weights of eq. (3) keep their meaning, every valid particle still ranks
before every invalid one (Deb's rule), and valid particles are ranked by cost.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._problem import Problem

__all__ = ["CostProximity"]


class CostProximity:
    """Per-particle cost / the box's largest cost, for one query (see the module docstring)."""

    def __init__(self, costs: Any, x: Any, problem: Problem, schema: Any) -> None:
        self.costs = costs
        self.problem = problem
        self.schema = schema
        self.q = costs.code(x.to_frame().T)[0]
        self.cols = [schema.index(f.name) for f in problem.features]
        self.lookup = [
            None
            if schema[f.name].is_numeric
            else {c: i for i, c in enumerate(schema[f.name].categories)}
            for f in problem.features
        ]
        corners = self._coded(np.vstack([problem.lo, problem.hi]))
        per = costs.matrix(corners, self.q, per_feature=True)
        top = np.where(np.isfinite(per), per, 0.0).max(axis=0)
        for f, j in zip(problem.features, self.cols, strict=True):
            if f.kind == "categorical":
                row = np.asarray(costs.tables[j][int(self.q[j])])
                top[j] = float(np.max(row[np.isfinite(row)], initial=0.0))
        total = float(top.sum())
        self.scale = total if total > 0 else 1.0

    def _coded(self, X: np.ndarray) -> np.ndarray:
        """Positions as coded rows (the query's codes where a feature is inactive)."""
        raw = self.problem.decode(X)
        M = np.tile(self.q, (X.shape[0], 1))
        for f, j, lookup in zip(self.problem.features, self.cols, self.lookup, strict=True):
            col = raw[f.name]
            M[:, j] = (
                np.asarray(col, dtype=float)
                if lookup is None
                else [lookup.get(v, np.nan) for v in col.tolist()]
            )
        return M

    def __call__(self, X: np.ndarray) -> np.ndarray:
        cost = self.costs.matrix(self._coded(np.asarray(X, dtype=float)), self.q)
        scaled = np.nan_to_num(cost / self.scale, nan=1.0, posinf=1.0)
        return np.minimum(scaled, 1.0)  # type: ignore[no-any-return]
