"""The select phase: each query's reported counterfactuals, its status and its diagnostics.

Valid rows are kept in the method's order, without duplicates or the query
itself; a row that still needs a move smaller than its feature's step only as
the query's first row; none dominated by another valid row of the query, each
neither the same option under the measure as an earlier kept one nor within
the steps of one (the options rule and the diversity rule,
:func:`._diversity.pick_options`), up to ``n_counterfactuals``, then listed
nearest first (:func:`nearest_first`).  A query that gets fewer answers than
asked says why in ``diagnostics["reason"]`` (:func:`fewer_reason`).  With
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
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from ...exceptions import ValidationError
from ...result import STATUSES, SUCCESS
from ._diversity import (
    OptionArrays,
    changed_mask,
    different_arrays,
    keep_different_arrays,
    meaningful_mask,
    pick_options,
    signed_moves,
)
from ._pool import Pool
from ._protocol import PipelineMethod
from ._query import Candidates, Query
from ._snap import resolution
from ._values import floats

__all__ = [
    "Answers",
    "RowArrays",
    "Selection",
    "fewer_reason",
    "row_arrays",
    "select",
    "select_query",
    "without_region_copies",
]

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
    #: the method's own reason (``diagnostics["reason"]`` before :func:`fewer_reason`)
    own_reason: str | None = None

    def say_why(self, n_cf: int) -> None:
        """``diagnostics["reason"]``: why fewer than ``n_cf`` answers (:func:`fewer_reason`)
        before the method's own reason, if any."""
        why = fewer_reason(len(self.chosen), n_cf, self.diagnostics)
        if why is not None:
            own = self.own_reason
            self.diagnostics["reason"] = f"{why}; {own}" if own else why


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
    priced = distinct and len(pool.rows) > 0
    chosen = [
        select_query(
            pool,
            i,
            c,
            steps,
            n_cf,
            pool.sparsified,
            distinct=distinct,
            measure=options_measure(method, pool, i) if priced else None,
        )
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
    else:  # no answer: the columns still have the schema's dtypes
        frame = pool.schema.coerce(pd.DataFrame(columns=pool.schema.names))
    frame.index = index
    return Answers(chosen, frame, rows)


def options_measure(method: PipelineMethod, pool: Any, i: int) -> Any:
    """The measure the options rule prices query ``i``'s answers in: the call's costs
    (its timeline's moves free), else the default measure of effort bound to the
    method's training data."""
    costs = pool.costs_for(i)
    return costs if costs is not None else method.effort_


@dataclass
class RowArrays:
    """What selection compares, for every row of the pool (computed for the valid
    rows; the others hold zeros): the meaningful changes (rows x features), the
    numeric and the discrete values, the distance codes of the rows and of the
    queries (``None`` when the encoder is missing or refused a value), and for
    the options rule every change, the signed moves
    (:func:`._diversity.signed_moves`) and the binary and categorical values
    (0 on the other features)."""

    changed: np.ndarray
    numeric: np.ndarray
    discrete: np.ndarray
    num_steps: np.ndarray
    codes: np.ndarray | None
    query_codes: np.ndarray | None
    all_changes: np.ndarray | None = None
    moves: np.ndarray | None = None
    values: np.ndarray | None = None


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
    every, moves, values = _option_columns(pool, valid)
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
    steps_num = np.asarray(steps, dtype=float)[num]
    return RowArrays(changed, V, C, steps_num, codes, query_codes, every, moves, values)


def _option_columns(pool: Any, valid: np.ndarray) -> tuple[np.ndarray, ...]:
    """Every change, the signed moves and the unordered values of the valid rows
    (zeros elsewhere), for the options rule."""
    schema = pool.schema
    n, width = len(pool.rows), len(schema)
    every = np.zeros((n, width), dtype=bool)
    moves = np.zeros((n, width))
    values = np.zeros((n, width), dtype=object)
    if valid.size:
        sub = pool.rows.iloc[valid]
        queries = pool.queries.iloc[pool.own[valid]]
        every[valid] = changed_mask(schema, sub, queries)
        moves[valid] = signed_moves(schema, sub, queries)
        for j, f in enumerate(schema):
            if f.is_categorical:
                values[valid, j] = sub[f.name].astype(object).to_numpy()
    return every, moves, values


def select_query(
    pool: Any,
    i: int,
    outcome: Candidates,
    steps: np.ndarray,
    n_cf: int,
    sparse: bool,
    *,
    distinct: bool = True,
    measure: Any = None,
) -> Selection:
    """The selection of query ``i`` (``pool``: the verified rows of every query, see
    :class:`._pool.Pool`); ``distinct``: the rules of ``alternatives="distinct"``,
    the options priced in ``measure`` (a bound cost measure; default: the pool's)."""
    idx = pool.rows_of[i]
    d = _counts(pool, idx, outcome)
    rows, dup = _distinct(pool, idx, i)
    d["n_duplicates"] = dup
    if distinct:
        rows, d["n_substep_dropped"] = _first_may_need_substeps(pool, rows)
        if pool.arrays is None:
            pool.arrays = row_arrays(pool, steps)
        rows, same_advice = _time_copies(pool, i, rows)
        pos, d["n_dominated"], d["n_too_similar"] = _options(
            pool, i, rows, n_cf, measure if measure is not None else pool.costs_for(i)
        )
        d["n_too_similar"] += same_advice
        picked = [rows[p] for p in pos]
        # a proven optimum keeps its rank when it is still the method's first answer
        first = outcome.status == "optimal" and bool(picked) and picked[0] == int(idx[0])
        chosen = nearest_first(pool, i, picked, keep_first=first)
        if chosen and pool.trimmed is not None:
            d["n_substep_reverted"] = int(pool.trimmed[chosen].sum())
    else:
        chosen = rows[:n_cf]
    if chosen and sparse:
        d["n_reverted"] = int(pool.reverted[chosen].sum())
        if pool.stopped[i]:
            d["sparsify_stopped"] = True
    status = _status(pool, idx, chosen, outcome, d)
    sel = Selection(chosen, status, d, own_reason=d.get("reason") or None)
    sel.say_why(n_cf)
    return sel


def _time_copies(pool: Any, i: int, rows: list[int]) -> tuple[list[int], int]:
    """``rows`` without those that repeat an earlier one's advice under query ``i``'s
    timeline: the same actions (every feature time does not move at the same value) after
    the same months.  Time may move a banded feature to any level between today's and the
    one certainly reached, so two such rows differ only in what time does, which no one
    chooses: the earlier (the method's order) is kept.  Returns the rows kept and how many
    were dropped."""
    qt = pool.timelines[i] if i < len(getattr(pool, "timelines", ())) else None
    if qt is None or len(rows) < 2 or not qt.advancing:
        return rows, 0
    names = pool.schema.names
    acts = [n for j, n in enumerate(names) if j not in set(qt.advancing)]
    frame = pool.rows.iloc[rows]
    months = qt.months(frame).tolist()
    seen: set[tuple[Any, ...]] = set()
    kept = []
    for r, t, k in zip(rows, months, keys(frame, acts), strict=True):
        if (t, *k) not in seen:
            seen.add((t, *k))
            kept.append(r)
    return kept, len(rows) - len(kept)


def _options(
    pool: Any, i: int, rows: list[int], n_cf: int, measure: Any
) -> tuple[list[int], int, int]:
    """Positions in ``rows`` (query ``i``'s candidates, in the method's order) of
    its options (:func:`._diversity.pick_options`), the number of dominated rows
    and of copies skipped."""
    if not rows:
        return [], 0, 0
    a = pool.arrays
    R = np.asarray(rows, dtype=int)
    if len(rows) == 1 or measure is None or a.all_changes is None:
        # one row has nothing to be compared with (no measure: the steps alone)
        pos, skipped = keep_different_arrays(
            a.changed[R], a.numeric[R], a.discrete[R], a.num_steps, n_cf
        )
        return pos, 0, skipped
    cost = measure.evaluate(pool.queries.iloc[i], pool.rows.iloc[R], per_feature=True)
    cost = np.column_stack([cost, waiting(pool, i, R)])  # the waiting: one more term
    o = OptionArrays(a.all_changes[R], a.moves[R], a.values[R], pool.conf[R].astype(float), cost)

    def differs(r: int, kept: list[int]) -> np.ndarray:
        return different_arrays(a.changed[R], a.numeric[R], a.discrete[R], a.num_steps, r, kept)

    return pick_options(o, n_cf, differs)


#: what ``diagnostics["alternatives_exhausted"]`` proves (the exact methods' option search)
_PROVEN = (
    "the method proved that every other answer repeats the changes of one of these, each "
    "as far or further (up to a step)"
)


def fewer_reason(n_found: int, n_cf: int, d: dict[str, Any]) -> str | None:
    """Why a query got ``n_found`` answers when ``n_cf`` were asked (None when it
    got them all, or none: its status then says why), from its diagnostics: the
    method's answers dropped as dominated, as copies or as the same answer once rounded
    and sparsified, those that failed
    verification, and whether the method proved it has no other answer within
    its limits (``diagnostics["alternatives_exhausted"]``, set only by a proof)."""
    if not 0 < n_found < n_cf:
        return None
    head = f"{n_found} of {n_cf}"
    dom, copies = int(d.get("n_dominated", 0)), int(d.get("n_too_similar", 0))
    parts = []
    if dom:
        parts.append(
            f"{dom} {'was' if dom == 1 else 'were'} dominated by these (the same or more "
            "changes, each moved at least as far, no better probability)"
        )
    if copies:
        word = "was a copy" if copies == 1 else "were copies"
        parts.append(f"{copies} {word} of these (the same changes within a step of the measure)")
    same = int(d.get("n_duplicates", 0))
    if same:
        parts.append(
            f"{same} {'was' if same == 1 else 'were'} the same answer as one of these "
            "(after rounding and sparsification)"
        )
    regions = int(d.get("n_region_copies", 0))
    if regions:
        parts.append(
            f"{regions} {'was' if regions == 1 else 'were'} inside the certified region of one "
            "of these, or held one"
        )
    proven = bool(d.get("alternatives_exhausted"))
    if parts:
        why = (
            f"{head}: no other option within the method's limits that is not dominated by "
            "these or a copy of one; of its other answers, " + " and ".join(parts)
        )
        if proven:
            why += f"; {_PROVEN}"
    elif proven:
        why = f"{head}: {_PROVEN}"
    else:
        why = f"{head}: the method found no other valid answer within its limits"
    failed = int(d.get("n_rejected_constraints", 0)) + int(d.get("n_rejected_model", 0))
    return why + (f" ({failed} candidates failed verification)" if failed else "")


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
    costs (``pool.costs``) the order is by cost, plus the waiting under a timeline
    (:func:`waiting`): the value the exact methods minimise."""
    if len(chosen) < 2 or pool.encoder is None:
        return chosen
    head, rest = (chosen[:1], chosen[1:]) if keep_first else ([], chosen)
    a = getattr(pool, "arrays", None)
    if getattr(pool, "costs", None) is not None:
        d = pool.costs_for(i).evaluate(pool.queries.iloc[i], pool.rows.iloc[rest])
        d = d + waiting(pool, i, np.asarray(rest, dtype=int))
    elif a is not None and a.codes is not None:
        d = pool.encoder.distances(a.codes[rest], a.query_codes[i], pool.norm)
    else:
        q = pool.encoder.transform(pool.queries.iloc[[i]])[0]
        d = pool.encoder.distances(pool.encoder.transform(pool.rows.iloc[rest]), q, pool.norm)
    return head + [rest[k] for k in np.argsort(d, kind="stable")]


def waiting(pool: Any, i: int, rows: np.ndarray) -> np.ndarray:
    """Per pool row in ``rows`` (of query ``i``): ``wait_cost`` times its elapsed months
    under the query's timeline (0 without one; inf for a row no month fits)."""
    qt = pool.timelines[i] if i < len(getattr(pool, "timelines", ())) else None
    if qt is None:
        return np.zeros(len(rows))
    return qt.waiting(pool.rows.iloc[rows])  # type: ignore[no-any-return]


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
        d.setdefault("reason", _failed_verification(pool, idx))
    if not d.get("reason"):
        d["reason"] = _REASONS.get(st, "no valid counterfactual found")
    return st


def _failed_verification(pool: Any, idx: np.ndarray) -> str:
    """Why no proposed candidate was kept; when every one was moved by rounding to its
    features' grids before it failed, the features and steps (the rounding is named as
    a likely cause, the unrounded values are not checked)."""
    why = "every proposed candidate failed verification"
    if not len(idx) or not pool.snap_failed[idx].all():
        return why
    moved: dict[str, float] = {}
    for k in idx:
        raw, row = pool.raw.iloc[int(k)], pool.rows.iloc[int(k)]
        for f in pool.schema:
            step = resolution(f) if f.is_numeric else None
            if step and not np.isclose(float(raw[f.name]), float(row[f.name]), rtol=1e-12):
                moved[f.name] = float(step)
    if not moved:
        return why
    grids = ", ".join(f"{name} to steps of {step:g}" for name, step in moved.items())
    return (
        f"{why}; each was first rounded to its features' resolution ({grids}), and a finer "
        "resolution (cf.Feature(resolution=...)) may let answers lie between these steps"
    )


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


def without_region_copies(answers: Answers, found: Any, n_cf: int) -> tuple[Answers, Any]:
    """The answers (and their regions, ``found``: the regions phase's record) without
    those that are copies by their certified regions: an answer that lies in the
    region of an earlier answer of its query, or whose region contains an earlier
    answer, is a point of an option already shown (``#1 = #0 plus loan_amount
    3446 -> 3334``, its region holding the original amount).  Only where regions
    were computed (``Requirements(regions=True)``); counted in
    ``diagnostics["n_region_copies"]``."""
    computed = dict(getattr(found, "computed", None) or {})
    if not computed or not answers.rows:
        return answers, found
    keep: list[int] = []  # positions in the frame
    regions: dict[tuple[Any, int], Any] = {}
    start = 0
    for sel in answers.selections:
        n = len(sel.chosen)
        kept = _region_options(answers.frame, computed, start, n)
        if len(kept) < n:
            sel.diagnostics["n_region_copies"] = n - len(kept)
            sel.chosen = [sel.chosen[p - start] for p in kept]
            sel.say_why(n_cf)
        for rank, p in enumerate(kept):
            q = answers.frame.index[p][0]
            if (q, p - start) in computed:
                regions[(q, rank)] = computed[(q, p - start)]
        keep.extend(kept)
        start += n
    frame = answers.frame.iloc[keep]
    frame.index = pd.MultiIndex.from_tuples(
        [(q, rank) for q, g in _groups(frame.index) for rank in range(g)], names=["query", "rank"]
    )
    rows = [answers.rows[p] for p in keep]
    return Answers(answers.selections, frame, rows), replace(found, computed=regions)


def _groups(index: pd.MultiIndex) -> list[tuple[Any, int]]:
    """``(query, count)`` of consecutive rows of each query."""
    out: list[tuple[Any, int]] = []
    for q, _rank in index:
        if out and out[-1][0] == q:
            out[-1] = (q, out[-1][1] + 1)
        else:
            out.append((q, 1))
    return out


def _region_options(frame: pd.DataFrame, computed: dict[Any, Any], start: int, n: int) -> list[int]:
    """Frame positions of one query's answers (``start`` to ``start + n``) that are
    neither in an earlier kept answer's region nor have a region holding one."""
    kept: list[int] = []
    for p in range(start, start + n):
        q = frame.index[p][0]
        region, row = computed.get((q, p - start)), frame.iloc[p]
        copy = False
        for k in kept:
            other = computed.get((q, k - start))
            if (other is not None and bool(other.contains(row)[0])) or (
                region is not None and bool(region.contains(frame.iloc[k])[0])
            ):
                copy = True
                break
        if not copy:
            kept.append(p)
    return kept
