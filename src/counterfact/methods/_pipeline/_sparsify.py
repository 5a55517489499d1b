"""The sparsify phase: revert every change the model does not need.

For methods that sparsify (``_sparsifies()``: UFCE, MD-PSO, L2C by default,
``nearest(sparsify=True)``) every change of a query's leading valid answers that
the model does not need is reverted, greedily and checked with the call's judge
and the query's constraints (:func:`revert_changes`).  Only the first
:func:`~._pool.sparsify_cap` valid candidates of a query are sparsified, and
only they can be reported.  Under a time limit it stops at the deadline of the
``explain`` call, keeping the reverts made so far (each one verified);
``diagnostics["sparsify_stopped"]`` marks those queries.

Then, with ``alternatives="distinct"`` (the default, every method), a numeric
move smaller than its feature's meaningful step (:func:`._diversity.substep_mask`)
is reverted when the row stays valid, in the same way; not for a method that
searches a region of its own (``_own_region()``, CE-OCL's trust region).  A row
that still needs such a move may only be its query's first answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..._utils._deadline import Deadline
from ..._utils._values import _py_array
from ...constraints._bounds import satisfied_many
from ...schema import Schema
from ._diversity import substep_mask
from ._pool import Pool, judge_of, leading_valid, write_rows
from ._protocol import PipelineMethod
from ._query import Query
from ._values import TOL

__all__ = ["revert_changes", "sparsify"]

Judgement = Callable[[pd.DataFrame, Sequence[Any], Sequence[int]], tuple[np.ndarray, np.ndarray]]


# ------------------------------------------------------------------- the phase
def sparsify(
    method: PipelineMethod,
    pool: Pool,
    tasks: list[Query],
    n_cf: int,
    deadline: Deadline | None,
) -> None:
    """Sparsify the leading valid rows of each query (methods that sparsify), then
    revert the sub-step moves (``alternatives="distinct"``); see the module docstring."""
    pool.sparsified = bool(len(pool.rows)) and bool(method._sparsifies())
    if pool.sparsified:
        _sparsify_leading(method, pool, tasks, n_cf, deadline)
    if not tasks or tasks[0].alternatives == "distinct":
        _trim_substeps(method, pool, tasks, n_cf, deadline)


def _sparsify_leading(
    method: PipelineMethod, pool: Pool, tasks: list[Query], n_cf: int, deadline: Deadline | None
) -> None:
    """Sparsify the leading valid rows of each query in place; only they may be
    reported (a later, untouched row could keep changes the model does not need)."""
    lead = leading_valid(pool, n_cf)
    pool.reportable = np.zeros(len(pool.rows), dtype=bool)
    pool.reportable[lead] = True
    if not lead.size:
        return
    new, n_rev, p_new, cut = revert_changes(
        pool.schema,
        pool.rows.iloc[lead],
        pool.own[lead],
        tasks,
        judge_of(method, tasks),
        deadline=deadline,
    )
    pool.stopped[np.unique(pool.own[lead[cut]])] = True
    hit = n_rev > 0
    if hit.any():  # the reverted rows were checked by the pass (constraints, real model)
        write_rows(pool, lead[hit], new[hit], p_new[hit])
        pool.reverted[lead[hit]] = n_rev[hit]


def _trim_substeps(
    method: PipelineMethod, pool: Pool, tasks: list[Query], n_cf: int, deadline: Deadline | None
) -> None:
    """Revert the moves smaller than their feature's step in the leading valid rows
    of each query while the row stays valid; then mark every valid row that still
    has such a move."""
    steps = method.diversity_steps_
    pool.trimmed = np.zeros(len(pool.rows), dtype=int)
    pool.substep = np.zeros(len(pool.rows), dtype=bool)
    if not len(pool.rows):
        return
    # a method's own region is not the pipeline's to check: its answers keep their
    # moves, and those with a sub-step one may only come first
    lead = np.zeros(0, dtype=int) if method._own_region() else leading_valid(pool, n_cf)
    if lead.size:
        queries = pool.queries.iloc[pool.own[lead]]
        mask = substep_mask(pool.schema, pool.rows.iloc[lead], queries, steps)
        hit = mask.any(axis=1)
        if hit.any():
            at = lead[hit]
            new, n_rev, p_new, _cut = revert_changes(
                pool.schema,
                pool.rows.iloc[at],
                pool.own[at],
                tasks,
                judge_of(method, tasks),
                deadline=deadline,
                revertible=mask[hit],
            )
            done = n_rev > 0
            if done.any():
                write_rows(pool, at[done], new[done], p_new[done])
                pool.trimmed[at[done]] = n_rev[done]
    valid = np.flatnonzero(pool.valid)
    if valid.size:
        queries = pool.queries.iloc[pool.own[valid]]
        left = substep_mask(pool.schema, pool.rows.iloc[valid], queries, steps)
        pool.substep[valid] = left.any(axis=1)


# -------------------------------------------------------------- sparsification
def revert_changes(
    schema: Schema,
    rows: pd.DataFrame,
    owners: np.ndarray,
    tasks: Sequence[Query],
    judge: Judgement,
    *,
    deadline: Deadline | None = None,
    revertible: np.ndarray | None = None,
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, np.ndarray]:
    """Revert every change that the model does not need, greedily, with batched model calls.

    ``rows`` are verified counterfactuals (schema types); ``owners[k]`` the
    index into ``tasks`` of row ``k``'s query.  Each round builds, for every row
    still being sparsified, one variant per changed feature with that feature
    set back to the query's value, checks them all (the query's constraints,
    then one call to ``judge``, which returns whether each row reaches its
    target -- the model's decision and any margin or other model asked for --
    and the model's probability of it), and for each row takes the valid
    variant that reverts its largest change (in units of the feature's range).
    A row stops when no single revert keeps it valid, so in the returned rows
    no single change can be undone.  ``deadline``: no round starts after it;
    the rows keep the reverts made so far (every one verified), and the last
    array returned marks the rows still being sparsified when it stopped.
    ``revertible`` (rows x features, optional): the only changes that may be
    reverted (the pipeline's sub-step moves, :func:`._diversity.substep_mask`).
    Returns the rows, the number of reverted features per row, the model's
    probability of the target for rows that changed (NaN elsewhere), and that mask.
    """
    work = _Reverts(schema, rows, owners, tasks, judge)
    active = np.arange(len(rows))
    for _ in range(len(schema.names)):
        if active.size == 0:
            break
        if deadline is not None and deadline.expired():
            work.cut[active] = True
            break
        active = work.round(active, revertible)
    out = schema.coerce(pd.DataFrame(work.out, columns=schema.names))
    return out, work.n_rev, work.conf, work.cut


class _Reverts:
    """The state of :func:`revert_changes`: the rows as reverted so far, per row the
    reverts made, the last probability of the target and whether it was cut short."""

    def __init__(
        self,
        schema: Schema,
        rows: pd.DataFrame,
        owners: np.ndarray,
        tasks: Sequence[Query],
        judge: Judgement,
    ) -> None:
        n, names = len(rows), schema.names
        self.schema, self.tasks, self.judge = schema, tasks, judge
        self.owners = np.asarray(owners, dtype=int)
        self.n_rev = np.zeros(n, dtype=int)
        self.conf = np.full(n, np.nan)
        self.cut = np.zeros(n, dtype=bool)
        self.numeric = np.array([f.is_numeric for f in schema], dtype=bool)
        self.span = schema.ranges()
        self.out = rows.reset_index(drop=True).loc[:, names].to_numpy(dtype=object).copy()
        qmat = np.empty((len(tasks), len(names)), dtype=object)
        for i, t in enumerate(tasks):
            qmat[i] = t.x.loc[names].to_numpy(dtype=object)
        self.qv = qmat[self.owners] if n else np.empty((0, len(names)), dtype=object)

    def round(self, active: np.ndarray, revertible: np.ndarray | None) -> np.ndarray:
        """One revert for each active row that has a valid one; returns those rows."""
        cur, qcur = self.out[active], self.qv[active]
        ch = _changed_values(cur, qcur, self.numeric)
        if revertible is not None:
            ch &= revertible[active]
        rr, jj = np.nonzero(ch)  # one variant per changed feature of each active row
        if rr.size == 0:
            return active[:0]
        var = cur[rr].copy()
        var[np.arange(rr.size), jj] = qcur[rr, jj]
        good, p_target = self._check(var, self.owners[active[rr]])
        if good.size == 0:
            return active[:0]
        size = self._sizes(cur, qcur, rr, jj)
        best: dict[int, int] = {}
        for g in good.tolist():  # per row, the valid revert of its largest change
            r = int(rr[g])
            if r not in best or size[g] > size[best[r]]:
                best[r] = g
        rows_r = np.array(sorted(best), dtype=int)
        picks = np.array([best[r] for r in rows_r], dtype=int)
        self.out[active[rows_r]] = var[picks]
        self.n_rev[active[rows_r]] += 1
        self.conf[active[rows_r]] = p_target[picks]
        return active[rows_r]

    def _check(self, var: np.ndarray, own: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The variants that stay valid, and each checked variant's probability of the target."""
        frame = _typed_frame(self.schema, var, self.numeric)
        ok = satisfied_many([t.bounds for t in self.tasks], frame, own)
        p_target = np.full(len(var), np.nan)
        if not ok.any():
            return np.zeros(0, dtype=int), p_target
        tgt = [self.tasks[int(o)].target for o in own[ok]]
        cols = [self.tasks[int(o)].target_index for o in own[ok]]
        reaches, proba = self.judge(frame[ok], tgt, cols)
        p_target[np.flatnonzero(ok)] = proba
        return np.flatnonzero(ok)[reaches], p_target

    def _sizes(
        self, cur: np.ndarray, qcur: np.ndarray, rr: np.ndarray, jj: np.ndarray
    ) -> np.ndarray:
        """Each variant's reverted change, in units of the feature's range (discrete: 1)."""
        size = np.ones(rr.size)
        num = self.numeric[jj]
        if num.any():
            a = np.array([float(v) for v in cur[rr[num], jj[num]]])
            b = np.array([float(v) for v in qcur[rr[num], jj[num]]])
            size[num] = np.abs(a - b) / self.span[jj[num]]
        return size


def _typed_frame(schema: Schema, var: np.ndarray, numeric: np.ndarray) -> pd.DataFrame:
    """``schema.coerce(pd.DataFrame(var, columns=schema.names))`` for an object
    matrix ``var``, without building the object frame first: the numeric
    columns are cast in one go when they hold plain numbers."""
    block = var[:, numeric]
    kind = pd.api.types.infer_dtype(block.ravel(), skipna=False) if block.size else "floating"
    if kind not in ("integer", "floating", "mixed-integer-float"):
        return schema.coerce(pd.DataFrame(var, columns=schema.names))
    try:
        V = np.asarray(block, dtype=float)
    except (OverflowError, TypeError, ValueError):
        return schema.coerce(pd.DataFrame(var, columns=schema.names))
    index = pd.RangeIndex(len(var))
    cols: dict[str, Any] = {}
    k = 0
    for j, f in enumerate(schema.features):
        if f.kind in ("integer", "real"):
            v = V[:, k]
            k += 1
            cols[f.name] = np.round(v).astype(np.int64) if f.kind == "integer" else v
        else:
            cols[f.name] = pd.Series(_py_array(var[:, j]), index=index, dtype=object)
    return pd.DataFrame(cols, index=index)


def _changed_values(cur: np.ndarray, q: np.ndarray, numeric: np.ndarray) -> np.ndarray:
    """``changed`` element-wise on object arrays (rows x features)."""
    ch = np.zeros(cur.shape, dtype=bool)
    for j in range(cur.shape[1]):
        if numeric[j]:
            v = cur[:, j].astype(float)
            w = q[:, j].astype(float)
            ch[:, j] = ~(np.abs(v - w) <= TOL * np.maximum(1.0, np.maximum(np.abs(v), np.abs(w))))
        else:
            ch[:, j] = cur[:, j] != q[:, j]
    return ch
