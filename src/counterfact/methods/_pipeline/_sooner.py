"""Verified answers that wait brought forward: :func:`bring_forward` (after sparsify).

A method that searches without the calendar (a heuristic, an observed row) may
propose an age a year older beside changes the model already accepts today;
projected onto the timeline (:mod:`._calendar`) such a candidate waits a year
it does not need, and an answer that acts at once would dominate it.  For every
verified candidate that waits, the same actions are tried at each earlier month
where a feature time alone moves (age) takes another value (the first
:data:`MAX_TRIALS` of them), in one batched check with the model and the
query's constraints, and the earliest that verifies replaces it.  Nothing
else changes: the actions keep their values, and a band or rate that needs the
later month fails the constraints at the earlier one.  Exact methods already
wait no longer than they need; their answers pass unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ._pool import Pool, judge_of, write_rows
from ._protocol import PipelineMethod
from ._query import Query
from ._verify import judge_rows

__all__ = ["MAX_TRIALS", "bring_forward"]

#: the most earlier months tried per answer, earliest first (a feature time moves every
#: month over a long horizon would otherwise make hundreds per answer); an answer whose
#: earliest valid month lies beyond them keeps its wait
MAX_TRIALS = 24


def bring_forward(method: PipelineMethod, pool: Pool, tasks: Sequence[Query]) -> None:
    """Replace every reportable verified row of ``pool`` that waits by the same actions at
    the earliest month at which they verify (see the module docstring)."""
    trials, at, months = [], [], []
    valid = pool.valid
    for i, task in enumerate(tasks):
        qt = task.bounds.timeline
        rows = pool.rows_of[i][valid[pool.rows_of[i]]] if qt is not None else []
        if not len(rows):
            continue
        waits = qt.months(pool.rows.iloc[rows])
        for k, wait in zip(rows, waits, strict=True):
            for month, row in _earlier(method.schema_, qt, pool.rows.iloc[int(k)], int(wait)):
                trials.append(row)
                at.append(int(k))
                months.append(month)
    if not trials:
        return
    frame = pool.schema.coerce(pd.DataFrame(trials, columns=pool.rows.columns))
    own = pool.own[np.asarray(at)]
    sat, flips, conf = judge_rows(judge_of(method, list(tasks)), list(tasks), frame, own)
    _keep_earliest(pool, frame, np.asarray(at), np.asarray(months), sat & flips, conf)


def _earlier(schema: Any, qt: Any, row: pd.Series, wait: int) -> list[tuple[int, pd.Series]]:
    """``row`` at each month before ``wait`` at which the features time alone moves take
    other values than the month after: ``(month, row)`` with its pinned features (age) at
    that month's value and its bands no higher than that month reaches."""
    idx, lo, hi = qt.grid()
    moving = [(c, j) for c, j in enumerate(idx) if qt.rules[j].kind in ("pinned", "band")]
    if wait <= 0 or not moving:
        return []
    cols = [c for c, _ in moving]
    have = qt.units(row.to_frame().T, idx)[0]
    out: list[tuple[int, pd.Series]] = []
    for month in range(wait):
        if (
            month
            and np.array_equal(lo[month, cols], lo[month - 1, cols])
            and np.array_equal(hi[month, cols], hi[month - 1, cols])
        ):
            continue
        moved = row.copy()
        for c, j in moving:
            kind = qt.rules[j].kind
            moved[schema.names[j]] = _at(schema.features[j], kind, month, c, have, lo, hi)
        if any(moved[schema.names[j]] != row[schema.names[j]] for _, j in moving):
            out.append((month, moved))  # the row itself is not tried again
        if len(out) == MAX_TRIALS:
            break
    return out


def _at(f: Any, kind: str, month: int, c: int, have: np.ndarray, lo: Any, hi: Any) -> Any:
    """Feature ``f`` (column ``c`` of the grid) at ``month``: a pinned one's value then, a
    band's level no higher than it reaches then."""
    if kind == "pinned":
        value = float(lo[month, c])
        return round(value) if f.kind == "integer" else value
    rank = int(min(have[c], hi[month, c]))
    return f.categories[rank]


def _keep_earliest(
    pool: Pool,
    frame: pd.DataFrame,
    at: np.ndarray,
    months: np.ndarray,
    ok: np.ndarray,
    conf: np.ndarray,
) -> None:
    """For each pool row with a verified trial, write its earliest one into the pool."""
    best: dict[int, int] = {}
    for t in np.flatnonzero(ok):
        k = int(at[t])
        if k not in best or months[t] < months[best[k]]:
            best[k] = int(t)
    if not best:
        return
    rows = np.array(sorted(best), dtype=int)
    picks = np.array([best[k] for k in rows], dtype=int)
    write_rows(pool, rows, frame.iloc[picks].reset_index(drop=True), conf[picks])
