"""The nearest observed counterfactuals of a CE-OCL query (the time-limit fallback).

Training rows that the model assigns to the target class and that satisfy the
query's bounds are counterfactuals already.  When the time limit runs out
before the solver has found any incumbent, CE-OCL returns the nearest of them
(under its own objective, approximately) with status ``feasible``; the base
class verifies them with the real model like every other answer.

:meth:`Starts.pick` also selects the nearest row that a set of diversity cuts
allows (its change set contains none of the excluded sets; or it differs from
every earlier answer), for use as a solver start.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["StartPool", "Starts", "objective_values"]

#: observed rows kept per class (a seeded subsample above this)
MAX_POOL = 5000
#: candidates kept per query (nearest first)
MAX_CANDIDATES = 50


class StartPool:
    """Per fitted method: the training rows the model assigns to each class."""

    def __init__(
        self, schema: Any, X: pd.DataFrame, pred: np.ndarray, classes: Any, seed: int
    ) -> None:
        rng = np.random.default_rng(seed)
        self.schema = schema
        self.by_class: dict[int, pd.DataFrame] = {}
        for i, c in enumerate(classes):
            rows = X[pred == c]
            if len(rows) > MAX_POOL:
                rows = rows.iloc[np.sort(rng.choice(len(rows), MAX_POOL, replace=False))]
            self.by_class[i] = rows


class Starts:
    """The candidate starts of one query (computed on first use)."""

    def __init__(
        self, pool: StartPool, query: Any, scales: np.ndarray, norm: str, alpha: float
    ) -> None:
        self.pool, self.query, self.scales, self.norm, self.alpha = pool, query, scales, norm, alpha
        self._frame: pd.DataFrame | None = None
        self._changed: np.ndarray | None = None

    def _prepare(self) -> None:
        schema = self.pool.schema
        frame = self.pool.by_class.get(int(self.query.target_index))
        if frame is None or not len(frame):
            self._frame = pd.DataFrame(columns=schema.names)
            self._changed = np.zeros((0, len(schema)), dtype=bool)
            return
        frame = frame[self.query.bounds.satisfied(frame)]
        cost, changed = objective_values(
            schema,
            self.query.x,
            frame,
            self.scales,
            self.norm,
            self.alpha,
            getattr(self.query, "costs", None),
        )
        order = np.argsort(cost, kind="stable")[:MAX_CANDIDATES]
        self._frame = frame.iloc[order]
        self._changed = changed[order]

    def nearest(self, k: int) -> pd.DataFrame:
        """The ``k`` nearest candidates (fewer if there are fewer)."""
        if self._frame is None:
            self._prepare()
        assert self._frame is not None  # internal invariant: prepared above
        return self._frame.iloc[: max(0, int(k))]

    def pick(self, rule: Any = None) -> pd.Series | None:
        """The nearest candidate that the diversity ``rule`` allows (None: the nearest).

        ``("superset", [set of names, ...])``: its change set contains none of them;
        ``("point", [row, ...])``: it differs from each earlier row.
        """
        if self._frame is None:
            self._prepare()
        frame, changed = self._frame, self._changed
        assert frame is not None and changed is not None  # internal invariant: prepared above
        names = self.pool.schema.names
        for k in range(len(frame)):
            row = frame.iloc[k]
            if rule is not None and rule[0] == "superset":
                s = {names[j] for j in np.flatnonzero(changed[k])}
                if any(ex <= s for ex in rule[1]):
                    continue
            elif rule is not None and rule[0] == "point":
                if any(all(_same(row[n], r[n]) for n in names) for r in rule[1]):
                    continue
            return row
        return None


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(abs(float(a) - float(b)) <= 1e-9 * max(1.0, abs(float(a))))
    except (TypeError, ValueError):
        return bool(a == b)


def objective_values(
    schema: Any,
    x: pd.Series,
    frame: pd.DataFrame,
    scales: np.ndarray,
    norm: str,
    alpha: float,
    costs: Any = None,
) -> tuple[np.ndarray, np.ndarray]:
    """CE-OCL's objective of each row of ``frame`` against the query ``x`` (its
    ``norm`` over the scaled numeric and ordinal deviations, 1 per changed
    categorical feature, or the call's ``costs``; plus ``alpha`` per change), and
    which features each row changes."""
    dev, changed = _deviations(schema, x, frame, scales)
    num = np.array([f.is_numeric or f.kind == "ordinal" for f in schema], dtype=bool)
    if norm == "l0":
        cost = changed.sum(axis=1).astype(float)
    elif norm == "l1":
        cost = np.abs(dev).sum(axis=1)
    else:
        cost = (dev[:, num] ** 2).sum(axis=1) + changed[:, ~num].sum(axis=1)
    if costs is not None:  # the call's costs replace the norm
        cost = np.asarray(costs.evaluate(x, frame), dtype=float) if len(frame) else np.zeros(0)
    return cost + float(alpha) * changed.sum(axis=1), changed


def _deviations(
    schema: Any, x: pd.Series, frame: pd.DataFrame, scales: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per row and feature: the scaled deviation from ``x`` (numeric, ordinal rank;
    1 for a changed categorical) and whether the feature changed."""
    n, J = len(frame), len(schema)
    dev = np.zeros((n, J))
    changed = np.zeros((n, J), dtype=bool)
    for j, f in enumerate(schema):
        col = frame[f.name]
        if f.is_numeric:
            v = pd.to_numeric(col).to_numpy(dtype=float)
            q = float(x[f.name])
            changed[:, j] = np.abs(v - q) > 1e-7 * np.maximum(1.0, np.abs(q))
            dev[:, j] = (v - q) / float(scales[j])
        elif f.kind == "ordinal":
            rank = {c: k for k, c in enumerate(f.categories)}  # type: ignore[arg-type]
            v = col.map(rank).to_numpy(dtype=float)
            q = float(rank[x[f.name]])
            changed[:, j] = v != q
            dev[:, j] = (v - q) / float(scales[j])
        else:
            changed[:, j] = col.astype(object).to_numpy() != x[f.name]
            dev[:, j] = changed[:, j]
    return dev, changed
