"""The verify phase: every candidate checked with the real model and its query's constraints.

The snapped candidates (:mod:`._snap`) are checked *after* that rounding, in
one batched model call, so that the value reported is the value verified: the
query's constraints, then the call's :class:`~._judge.Judge` (the model's
decision, and any margin or other model asked for).  A moved row that fails is
tried in its other rounding, in the same call; a moved row for which neither
verifies is counted (``diagnostics["n_snap_failed"]``) and not reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...constraints._bounds import satisfied_many
from ._judge import Judge
from ._pool import Pool, judge_of
from ._protocol import PipelineMethod
from ._query import Query

__all__ = ["check_rows", "judge_rows", "verify"]


def check_rows(
    schema: Any, judge: Judge, query: Query, frame: pd.DataFrame
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Check raw candidate rows of one query with the real model(s) and the constraints.

    Returns ``(valid, flips, satisfies)`` boolean arrays; ``valid`` is both.
    Rows that cannot be coerced to the schema's types count as invalid.
    """
    n = len(frame)
    if n == 0:
        z = np.zeros(0, dtype=bool)
        return z, z, z
    try:
        rows = schema.coerce(frame)
    except (TypeError, ValueError, KeyError):
        z = np.zeros(n, dtype=bool)
        return z, z, z
    sat = query.bounds.satisfied(rows)
    flips = np.zeros(n, dtype=bool)
    if sat.any():
        n_sat = int(sat.sum())
        flips[sat] = judge(rows[sat], [query.target] * n_sat, [query.target_index] * n_sat)[0]
    return flips & sat, flips, sat


def judge_rows(
    judge: Judge, tasks: Sequence[Query], rows: pd.DataFrame, own: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(satisfied, reaches, confidence)`` for each row of ``rows`` (row ``k`` belongs
    to ``tasks[own[k]]``): its query's constraints hold; it reaches the target in
    the judge's eyes (the model's decision, and any margin or other model asked
    for); the explained model's probability of the target."""
    n = len(rows)
    sat = satisfied_many([t.bounds for t in tasks], rows, own) if n else np.zeros(0, dtype=bool)
    flips = np.zeros(n, dtype=bool)
    conf = np.full(n, np.nan)
    if sat.any():
        sub = rows[sat]
        tgt_idx = [tasks[i].target_index for i in own[sat]]
        tgt = [tasks[i].target for i in own[sat]]
        flips[sat], conf[sat] = judge(sub, tgt, tgt_idx)
    return sat, flips, conf


def verify(method: PipelineMethod, pool: Pool, tasks: list[Query]) -> None:
    """Check every row of ``pool`` with the call's judge and its query's constraints;
    a moved row that fails in its first rounding is replaced by its other rounding
    when that one verifies (both checked in one model call)."""
    n, alt = len(pool.rows), pool.alt
    if alt.size:
        both = pool.schema.coerce(pd.concat([pool.rows, pool.second], ignore_index=True))
    else:
        both = pool.rows
    owners = np.concatenate([pool.own, pool.own[alt]])
    s_all, f_all, c_all = judge_rows(judge_of(method, tasks), tasks, both, owners)
    sat, flips, conf = s_all[:n].copy(), f_all[:n].copy(), c_all[:n].copy()
    use = ~(sat & flips)[alt] & (s_all[n:] & f_all[n:])
    if use.any():
        take, second = alt[use], n + np.flatnonzero(use)
        out = both.iloc[:n].reset_index(drop=True).astype(object)
        out.iloc[take] = both.iloc[second].astype(object).to_numpy()
        pool.rows = pool.schema.coerce(out)
        sat[take], flips[take], conf[take] = True, True, c_all[second]
    pool.sat, pool.flips, pool.conf = sat, flips, conf
    pool.snap_failed = pool.moved & ~(sat & flips)
