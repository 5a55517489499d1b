"""The select phase: each query's reported counterfactuals, its status and its diagnostics.

Valid rows are kept in the method's order, without duplicates or the query
itself; a row that still needs a move smaller than its feature's step only as
the query's first row; each *different* from every earlier kept one under the
diversity rule (:func:`._diversity.keep_different`), up to ``n_counterfactuals``,
then listed nearest first (:func:`nearest_first`).  With
``alternatives="method"``: the first distinct rows, in the method's order.  The
method's status claim is checked against what survived: an ``optimal`` claim
stays only when its first row was reported unchanged.

What the rule and the ordering compare (each valid row's meaningful changes,
values and distance codes) is computed once for the whole pool
(:func:`row_arrays`), not query by query: a batch of many queries with many
candidates each (L2C's 100 answers per row) costs a few array operations.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ...exceptions import ValidationError
from ...result import STATUSES, SUCCESS
from ._diversity import keep_different_arrays, meaningful_mask
from ._pool import Pool
from ._protocol import PipelineMethod
from ._query import Candidates, Query
from ._values import floats

__all__ = ["Answers", "RowArrays", "Selection", "row_arrays", "select", "select_query"]

#: the reason of a non-success when the method gave none
_REASONS = {
    "timeout": "time limit reached before a counterfactual was found",
    "infeasible": "no counterfactual exists under the constraints",
}


@dataclass
class Selection:
    """What one query reports: positions of its chosen rows (in the pool), status, diagnostics."""

    chosen: list[int] = field(default_factory=list)
    status: str = "failed"
    diagnostics: dict[str, Any] = field(default_factory=dict)


@dataclass
class Answers:
    """What the select phase reports: each query's :class:`Selection`, and the
    reported rows (index ``(query, rank)``, the schema's columns and types)."""

    selections: list[Selection]
    frame: pd.DataFrame
    #: each reported row's position in the pool
    rows: list[int]


def select(
    method: PipelineMethod,
    pool: Pool,
    tasks: list[Query],
    outcomes: list[Candidates],
    n_cf: int,
) -> Answers:
    """Every query's answers (:func:`select_query`) and the frame of all of them."""
    steps = method.diversity_steps_
    distinct = not tasks or tasks[0].alternatives == "distinct"
    pool.keys = keys(pool.rows, pool.schema.names) if len(pool.rows) else []
    chosen = [
        select_query(pool, i, c, steps, n_cf, pool.sparsified, distinct=distinct)
        for i, c in enumerate(outcomes)
    ]
    unknown = {s.status for s in chosen} - set(STATUSES)
    if unknown:  # internal invariant, not input validation
        raise RuntimeError(f"internal error: unknown statuses {sorted(unknown)}")
    rows = [k for s in chosen for k in s.chosen]
    index = pd.MultiIndex.from_tuples(
        [(t.id, rank) for t, s in zip(tasks, chosen, strict=True) for rank in range(len(s.chosen))],
        names=["query", "rank"],
    )
    if rows:
        frame = pool.schema.coerce(pool.rows.iloc[rows].reset_index(drop=True))
    else:
        frame = pd.DataFrame(columns=pool.schema.names)
    frame.index = index
    return Answers(chosen, frame, rows)


@dataclass
class RowArrays:
    """What selection compares, for every row of the pool (computed for the valid
    rows; the others hold zeros): the meaningful changes (rows x features), the
    numeric and the discrete values, and the distance codes of the rows and of
    the queries (``None`` when the encoder is missing or refused a value)."""

    changed: np.ndarray
    numeric: np.ndarray
    discrete: np.ndarray
    num_steps: np.ndarray
    codes: np.ndarray | None
    query_codes: np.ndarray | None


def row_arrays(pool: Any, steps: np.ndarray) -> RowArrays:
    """:class:`RowArrays` of ``pool`` (after sparsification and sub-step trims), in one pass."""
    schema = pool.schema
    n, width = len(pool.rows), len(schema)
    num = [j for j, f in enumerate(schema) if f.is_numeric]
    cat = [j for j, f in enumerate(schema) if not f.is_numeric]
    changed = np.zeros((n, width), dtype=bool)
    V = np.zeros((n, len(num)))
    C = np.zeros((n, len(cat)), dtype=object)
    codes = query_codes = None
    valid = np.flatnonzero(pool.valid) if n else np.zeros(0, dtype=int)
    if valid.size:
        sub = pool.rows.iloc[valid]
        changed[valid] = meaningful_mask(schema, sub, pool.queries.iloc[pool.own[valid]], steps)
        if num:
            V[valid] = floats(sub.iloc[:, num])
        if cat:
            C[valid] = sub.iloc[:, cat].astype(object).to_numpy()
    if pool.encoder is not None and valid.size:
        try:
            codes = np.zeros((n, width))
            codes[valid] = pool.encoder.transform(sub)
            query_codes = pool.encoder.transform(pool.queries)
        except ValidationError:  # a value the encoder does not know: ordered query by query
            codes = query_codes = None
    return RowArrays(changed, V, C, np.asarray(steps, dtype=float)[num], codes, query_codes)


def select_query(
    pool: Any,
    i: int,
    outcome: Candidates,
    steps: np.ndarray,
    n_cf: int,
    sparse: bool,
    *,
    distinct: bool = True,
) -> Selection:
    """The selection of query ``i`` (``pool``: the verified rows of every query, see
    :class:`._pool.Pool`); ``distinct``: the rule of ``alternatives="distinct"``."""
    idx = pool.rows_of[i]
    d = _counts(pool, idx, outcome)
    rows, dup = _distinct(pool, idx, i)
    d["n_duplicates"] = dup
    if distinct:
        rows, d["n_substep_dropped"] = _first_may_need_substeps(pool, rows)
        if pool.arrays is None:
            pool.arrays = row_arrays(pool, steps)
        a = pool.arrays
        pos, d["n_too_similar"] = (
            keep_different_arrays(
                a.changed[rows], a.numeric[rows], a.discrete[rows], a.num_steps, n_cf
            )
            if rows
            else ([], 0)
        )
        chosen = nearest_first(
            pool, i, [rows[p] for p in pos], keep_first=outcome.status == "optimal"
        )
        if chosen and pool.trimmed is not None:
            d["n_substep_reverted"] = int(pool.trimmed[chosen].sum())
    else:
        chosen = rows[:n_cf]
    if chosen and sparse:
        d["n_reverted"] = int(pool.reverted[chosen].sum())
        if pool.stopped[i]:
            d["sparsify_stopped"] = True
    status = _status(pool, idx, chosen, outcome, d)
    return Selection(chosen, status, d)


def _first_may_need_substeps(pool: Any, rows: list[int]) -> tuple[list[int], int]:
    """``rows`` without those that still need a move smaller than its feature's step,
    except the first (the method's best: the smallest change the model allows
    may be such a move); and how many were dropped."""
    if pool.substep is None or len(rows) < 2:
        return rows, 0
    kept = rows[:1] + [k for k in rows[1:] if not pool.substep[k]]
    return kept, len(rows) - len(kept)


def nearest_first(pool: Any, i: int, chosen: list[int], *, keep_first: bool) -> list[int]:
    """The chosen rows of query ``i`` ordered by their distance to the query (MACE's
    eq. 3 under ``pool.norm``; ties keep the method's order).  A proven-optimal
    first answer keeps its rank (its certificate is about rank 0).  With the call's
    costs (``pool.costs``) the order is by cost."""
    if len(chosen) < 2 or pool.encoder is None:
        return chosen
    head, rest = (chosen[:1], chosen[1:]) if keep_first else ([], chosen)
    a = getattr(pool, "arrays", None)
    if getattr(pool, "costs", None) is not None:
        d = pool.costs.evaluate(pool.queries.iloc[i], pool.rows.iloc[rest])
    elif a is not None and a.codes is not None:
        d = pool.encoder.distances(a.codes[rest], a.query_codes[i], pool.norm)
    else:
        q = pool.encoder.transform(pool.queries.iloc[[i]])[0]
        d = pool.encoder.distances(pool.encoder.transform(pool.rows.iloc[rest]), q, pool.norm)
    return head + [rest[k] for k in np.argsort(d, kind="stable")]


def _counts(pool: Any, idx: np.ndarray, outcome: Candidates) -> dict[str, Any]:
    """The method's diagnostics plus what verification rejected and snapping moved."""
    d = {k: v for k, v in outcome.diagnostics.items() if not k.startswith("_")}
    n_prop = len(outcome.frame) if outcome.frame is not None else 0
    d["n_proposed"] = n_prop
    d["n_rejected_constraints"] = int((~pool.sat[idx]).sum()) + (n_prop - len(idx))
    d["n_rejected_model"] = int((pool.sat[idx] & ~pool.flips[idx]).sum())
    if n_prop:
        d["n_snapped"] = int(pool.moved[idx].sum())
        d["n_snap_failed"] = int(pool.snap_failed[idx].sum())
    return d


def _distinct(pool: Any, idx: np.ndarray, i: int) -> tuple[list[int], int]:
    """The valid rows of a query in the method's order, without duplicates or the
    query itself; and how many were skipped."""
    xkey = key(pool.queries.iloc[i], pool.schema.names)
    seen: set[tuple[Any, ...]] = set()
    distinct: list[int] = []
    dup = 0
    valid = pool.valid  # a property: computed once, not per row
    for k in map(int, idx):
        if not valid[k]:
            continue
        if pool.keys[k] in seen or pool.keys[k] == xkey:
            dup += 1
            continue
        seen.add(pool.keys[k])
        distinct.append(k)
    return distinct, dup


def _status(
    pool: Any, idx: np.ndarray, chosen: list[int], outcome: Candidates, d: dict[str, Any]
) -> str:
    """The reported status from the method's claim and what survived verification."""
    hint = outcome.status
    n_prop = d["n_proposed"]
    if chosen:
        first_rejected = len(idx) > 0 and not pool.valid[idx[0]]
        st = hint if hint in SUCCESS else "feasible"
        if st == "optimal" and (
            first_rejected or pool.reverted[chosen[0]] > 0 or chosen[0] != idx[0]
        ):
            st = "feasible"
        if hint == "optimal" and n_prop:
            d["snapped"] = bool(pool.moved[chosen[0]])
            d["snap_shift"] = (
                _shift(pool.schema, pool.raw.iloc[chosen[0]], pool.rows.iloc[chosen[0]])
                if pool.moved[chosen[0]]
                else 0.0
            )
        return st
    st = hint if hint in ("infeasible", "timeout", "invalid") else "failed"
    if hint in SUCCESS and n_prop:
        d.setdefault("reason", "every proposed candidate failed verification")
    if not d.get("reason"):
        d["reason"] = _REASONS.get(st, "no valid counterfactual found")
    return st


def _shift(schema: Any, before: pd.Series, after: pd.Series) -> float:
    """Sum over numeric features of ``|after - before| / range``."""
    span = schema.ranges()
    total = 0.0
    for j, f in enumerate(schema):
        if f.is_numeric:
            total += abs(float(after[f.name]) - float(before[f.name])) / float(span[j])
    return total


def _norm(v: Any) -> Any:
    if isinstance(v, (float, np.floating)):
        return round(float(v), 9)
    if isinstance(v, np.generic):
        return v.item()
    return v


def key(row: pd.Series, names: Sequence[str]) -> tuple[Any, ...]:
    """A hashable key of a row's values (floats to 9 decimals), to find duplicates."""
    return tuple(_norm(row[n]) for n in names)


def keys(frame: pd.DataFrame, names: Sequence[str]) -> list[tuple[Any, ...]]:
    """:func:`key` of every row of ``frame``, column by column (no per-row pandas indexing)."""
    cols = []
    for n in names:
        col = frame[n]
        if pd.api.types.is_float_dtype(col.dtype):
            cols.append([round(v, 9) for v in col.to_numpy(dtype=float).tolist()])
        else:
            cols.append([_norm(v) for v in col.tolist()])
    return list(zip(*cols, strict=True)) if cols else [() for _ in range(len(frame))]
