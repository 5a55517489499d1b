"""Sparsification: revert every change the model does not need."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..._utils._deadline import Deadline
from ..._utils._values import _py_array
from ...constraints import QueryBounds, satisfied_many
from ...schema import Schema
from ._values import TOL

__all__ = ["sparsify"]


# -------------------------------------------------------------- sparsification
def sparsify(
    schema: Schema,
    rows: pd.DataFrame,
    owners: np.ndarray,
    bounds: Sequence[QueryBounds],
    queries: Sequence[pd.Series],
    targets: Sequence[Any],
    judge: Callable[[pd.DataFrame, Sequence[Any], Sequence[int]], tuple[np.ndarray, np.ndarray]],
    target_index: Sequence[int],
    *,
    deadline: Deadline | None = None,
    revertible: np.ndarray | None = None,
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, np.ndarray]:
    """Revert every change that the model does not need, greedily, with batched model calls.

    ``rows`` are verified counterfactuals (schema types); ``owners[k]`` the
    index (into ``bounds``, ``queries``, ``targets``, ``target_index``) of row
    ``k``'s query.  Each round builds, for every row still being sparsified, one
    variant per changed feature with that feature set back to the query's value,
    checks them all (the query's constraints, then one call to ``judge``, which
    returns whether each row reaches its target -- the model's decision and any
    margin or other model asked for -- and the model's probability of it), and
    for each row takes the valid variant that reverts its largest change (in
    units of the feature's range).  A row stops when no single revert keeps it
    valid, so in the returned rows no single change can be undone.
    ``deadline``: no round starts after it; the rows keep the reverts made so
    far (every one verified), and the last array returned marks the rows still
    being sparsified when it stopped.  ``revertible`` (rows x features, optional):
    the only changes that may be reverted (the pipeline's sub-step moves,
    :func:`._diversity.substep_mask`).  Returns the rows, the number of reverted
    features per row, for rows that changed the model's probability of the
    target (NaN elsewhere), and that mask.
    """
    n = len(rows)
    n_rev = np.zeros(n, dtype=int)
    conf = np.full(n, np.nan)
    cut = np.zeros(n, dtype=bool)
    if n == 0:
        return schema.coerce(rows.reset_index(drop=True)), n_rev, conf, cut
    names = schema.names
    numeric = np.array([f.is_numeric for f in schema], dtype=bool)
    span = schema.ranges()
    out = rows.reset_index(drop=True).loc[:, names].to_numpy(dtype=object).copy()
    qmat = np.empty((len(queries), len(names)), dtype=object)
    for i, x in enumerate(queries):
        qmat[i] = x.loc[names].to_numpy(dtype=object)
    qv = qmat[np.asarray(owners, dtype=int)]
    active = np.arange(n)
    for _ in range(len(names)):
        if active.size == 0:
            break
        if deadline is not None and deadline.expired():
            cut[active] = True
            break
        cur, qcur = out[active], qv[active]
        ch = _changed_values(cur, qcur, numeric)
        if revertible is not None:
            ch &= revertible[active]
        rr, jj = np.nonzero(ch)  # one variant per changed feature of each active row
        if rr.size == 0:
            break
        var = cur[rr].copy()
        var[np.arange(rr.size), jj] = qcur[rr, jj]
        frame = _typed_frame(schema, var, numeric)
        own = owners[active[rr]]
        ok = satisfied_many(bounds, frame, own)
        good = np.zeros(0, dtype=int)
        p_target = np.full(rr.size, np.nan)
        if ok.any():
            tgt = [targets[int(o)] for o in own[ok]]
            cols = [target_index[int(o)] for o in own[ok]]
            reaches, proba = judge(frame[ok], tgt, cols)
            good = np.flatnonzero(ok)[reaches]
            p_target[np.flatnonzero(ok)] = proba
        if good.size == 0:
            break
        # per row, the valid revert of its largest normalised change (discrete: 1)
        size = np.ones(rr.size)
        num = numeric[jj]
        a = np.array([float(v) for v in cur[rr[num], jj[num]]]) if num.any() else np.zeros(0)
        b = np.array([float(v) for v in qcur[rr[num], jj[num]]]) if num.any() else np.zeros(0)
        size[num] = np.abs(a - b) / span[jj[num]]
        best: dict[int, int] = {}
        for g in good.tolist():
            r = int(rr[g])
            if r not in best or size[g] > size[best[r]]:
                best[r] = g
        rows_r = np.array(sorted(best), dtype=int)
        picks = np.array([best[r] for r in rows_r], dtype=int)
        out[active[rows_r]] = var[picks]
        n_rev[active[rows_r]] += 1
        conf[active[rows_r]] = p_target[picks]
        active = active[rows_r]
    return schema.coerce(pd.DataFrame(out, columns=names)), n_rev, conf, cut


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
