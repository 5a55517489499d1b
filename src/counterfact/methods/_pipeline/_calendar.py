"""Candidates brought onto their query's timeline: :func:`project_time` (part of the snap phase).

A method that searches without the calendar (a heuristic, an observed row) may
propose a candidate whose time-driven features agree on no elapsed month: savings
raised at once, an age a decade older.  The snap phase moves such a candidate onto
the timeline before it is verified: its actions keep their values, the month they
need is the latest first month at which each time-driven value it proposes is
reachable, and every advancing numeric feature (age) takes its value at that month;
a band it cannot reach stays at the query's level.  A rate-bound change the horizon
cannot reach is left as it is, for the checker to reject.  The moved candidate is
then verified with the model like any other: nothing is reported unchecked.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...schema import Schema
from ._query import Query

__all__ = ["project_time"]


def project_time(
    schema: Schema, tasks: Sequence[Query], own: np.ndarray, frame: pd.DataFrame
) -> pd.DataFrame:
    """``frame`` (row ``k`` a candidate of ``tasks[own[k]]``) with every row whose
    time-driven features agree on no elapsed month moved onto its query's timeline (see
    the module docstring); other rows, and rows of queries without one, unchanged."""
    out: pd.DataFrame | None = None
    for i, task in enumerate(tasks):
        qt = task.bounds.timeline
        rows = np.flatnonzero(own == i)
        if qt is None or not len(rows):
            continue
        off = rows[qt.months(frame.iloc[rows]) < 0]
        if not len(off):
            continue
        if out is None:
            out = frame.astype(object).copy()
        out.iloc[off] = _projected(schema, qt, frame.iloc[off]).to_numpy()
    return frame if out is None else schema.coerce(out)


def _projected(schema: Schema, qt: Any, rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` on the timeline ``qt`` (a ``QueryTimeline``): advancing numeric features at
    the month the rest of each row needs, unreachable bands back at the query's level."""
    idx, lo, hi = qt.grid()
    V = qt.units(rows, idx)
    tol = 1e-7 * np.maximum(1.0, np.abs(V))[:, None, :]
    inside = (V[:, None, :] >= lo[None] - tol) & (V[:, None, :] <= hi[None] + tol)
    reached = inside.any(axis=1)
    months = np.where(reached, inside.argmax(axis=1), 0).max(axis=1)
    out = rows.astype(object).copy()
    for c, j in enumerate(idx):
        f, kind = schema.features[j], qt.rules[j].kind
        if kind == "pinned":
            values = lo[months, c]
            out[f.name] = [round(v) if f.kind == "integer" else float(v) for v in values]
        elif kind == "band":
            own_level = f.categories[round(qt.x[j])]  # type: ignore[index]
            out.loc[~reached[:, c], f.name] = own_level
    return out
