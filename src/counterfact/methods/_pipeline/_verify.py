"""Verification: every candidate checked with the real model and its query's constraints.

Candidates are coerced to the schema's types, snapped to each numeric feature's
grid (:mod:`._snap`) and checked *after* that rounding, in one batched model
call, so that the value reported is the value verified.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...constraints import satisfied_many
from ._judge import Judge
from ._query import Query
from ._snap import snap_columns, snap_matrix

__all__ = ["allowed_cells", "check_rows", "coerce_rows", "snap_and_verify", "verify"]


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


def coerce_rows(schema: Any, frame: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    """``frame`` in the schema's types, and which rows could be coerced (the
    others are dropped from the returned frame)."""
    ok = np.ones(len(frame), dtype=bool)
    try:
        return schema.coerce(frame), ok
    except (TypeError, ValueError):
        good = []
        for k in range(len(frame)):
            try:
                schema.coerce(frame.iloc[[k]])
                good.append(True)
            except (TypeError, ValueError):
                good.append(False)
        ok = np.array(good, dtype=bool)
        return schema.coerce(frame[ok].reset_index(drop=True)), ok


def verify(
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


def snap_and_verify(
    schema: Any,
    judge: Judge,
    tasks: Sequence[Query],
    claims: Sequence[str | None],
    rows: pd.DataFrame,
    own: np.ndarray,
    qrows: pd.DataFrame,
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rows on the grid; returns ``(rows, moved, failed, sat, flips, conf)``.

    Both roundings are computed on one numeric matrix; the second one of the
    rows that moved is checked in the same model call as the first.
    """
    n = len(rows)
    cols, res, lower, upper = snap_columns(schema)
    if not cols or n == 0:
        sat, flips, conf = verify(judge, tasks, rows, own)
        return rows, np.zeros(n, dtype=bool), np.zeros(n, dtype=bool), sat, flips, conf
    exact = np.array([claims[i] == "optimal" for i in own], dtype=bool)[:, None]
    V = rows[cols].to_numpy(dtype=float)
    Q = qrows[cols].to_numpy(dtype=float)
    S_out = snap_matrix(V, Q, res, lower, upper, "outward")
    S_in = snap_matrix(V, Q, res, lower, upper, "inward")
    S1, S2 = np.where(exact, S_out, S_in), np.where(exact, S_in, S_out)
    keep = allowed_cells(tasks, own, cols, V)
    if keep is not None:  # a value the user allowed explicitly stays as it is, grid or not
        S1, S2 = np.where(keep, V, S1), np.where(keep, V, S2)
    moved = (~(np.abs(S1 - V) <= 1e-12 * np.maximum(1.0, np.abs(V))) & np.isfinite(V)).any(axis=1)
    alt = np.flatnonzero(moved & (np.abs(S2 - S1) > 0).any(axis=1))
    first = rows.copy()
    first[cols] = S1
    if alt.size:
        second = rows.iloc[alt].copy()
        second[cols] = S2[alt]
        both = schema.coerce(pd.concat([first, second], ignore_index=True))
    else:
        both = schema.coerce(first.reset_index(drop=True))
    s_all, f_all, c_all = verify(judge, tasks, both, np.concatenate([own, own[alt]]))
    sat, flips, conf = s_all[:n].copy(), f_all[:n].copy(), c_all[:n].copy()
    out = both.iloc[:n].reset_index(drop=True)
    ok1 = sat & flips
    ok2 = s_all[n:] & f_all[n:]
    use = ~ok1[alt] & ok2
    if use.any():
        take = alt[use]
        out = out.astype(object)
        out.iloc[take] = both.iloc[n + np.flatnonzero(use)].astype(object).to_numpy()
        out = schema.coerce(out)
        sat[take], flips[take], conf[take] = True, True, c_all[n + np.flatnonzero(use)]
    failed = moved & ~(sat & flips)
    return out, moved, failed, sat, flips, conf


def allowed_cells(
    tasks: Sequence[Query], own: np.ndarray, cols: list[str], V: np.ndarray
) -> np.ndarray | None:
    """Cells of ``V`` equal to one of their query's explicitly allowed numeric values
    (``Constraints.allowed_values`` on a numeric feature), or None when no query has any."""
    keep: np.ndarray | None = None
    where = {name: j for j, name in enumerate(cols)}
    for i, t in enumerate(tasks):
        for name in getattr(t.constraints, "allowed_values", {}):
            if name not in where:
                continue
            j = where[name]
            vals = t.bounds[name].values
            if vals is None:
                continue
            if keep is None:
                keep = np.zeros(V.shape, dtype=bool)
            r = np.flatnonzero(own == i)
            allowed = np.asarray(vals, dtype=float)
            keep[r, j] = (
                np.abs(V[r, j][:, None] - allowed[None, :])
                <= 1e-9 * np.maximum(1.0, np.abs(allowed))
            ).any(axis=1)
    return keep
