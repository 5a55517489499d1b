"""From the candidates a method proposed to the reported result.

For every query, in this order:

1. **Snapping** to each numeric feature's resolution (``Feature.resolution``),
   so that the value reported is the value verified.  Candidates of a query
   whose method claims ``optimal`` (an exact method's certificate) are rounded
   *away from* the query's value (the change never shrinks below what the
   model needed); if that row fails verification, the other rounding is
   tried.  Other candidates are rounded towards the query's value (a change
   never grows, so a method's own search box is kept), then, if that fails
   verification, away from it.  A value the query's constraints allow
   explicitly (``allowed_values`` of a numeric feature) is kept as it is.
   Counted in ``diagnostics["n_snapped"]`` (rows
   moved onto the grid) and ``["n_snap_failed"]`` (moved rows for which
   neither rounding verifies; they are dropped).

   What it means for a certificate: the reported row of an ``optimal`` answer
   is the solver's optimum moved by less than one resolution step per changed
   feature.  The status stays ``optimal`` -- proven nearest up to that
   rounding -- and ``diagnostics["snapped"]`` says whether the first reported
   counterfactual moved, ``["snap_shift"]`` by how much (sum over features of
   ``|moved| / range``, the units of MACE's normalised distance, so the
   certified distance grows by at most this).  A rounded row that fails
   verification makes the status ``feasible``, as any rejected first row does.
2. **Verification** of every candidate with the real model and the query's
   constraints, in one batched model call.
3. **Sparsification** (methods that opt in: UFCE, MD-PSO, L2C by default;
   ``nearest(sparsify=True)``): every change the model does not need is
   reverted, greedily and checked with the real model
   (:func:`._sparsify.sparsify`).  ``diagnostics["n_reverted"]`` counts the
   reverted changes of the reported counterfactuals.  Under a time limit it
   stops at the deadline of the ``explain`` call (its queries' limits pooled,
   counted from the call's start), keeping the reverts made so far (each one
   verified); ``diagnostics["sparsify_stopped"]`` marks those queries.  Only the first
   ``max(4 n + 10, 32)`` valid candidates of a query are sparsified, and only
   they can be reported.  An ``optimal`` claim becomes ``feasible`` when its
   first row was modified.
4. **Sub-step moves** (``alternatives="distinct"``, the default): a numeric
   move smaller than its feature's meaningful step
   (:func:`._diversity.substep_mask`) is reverted when the row stays valid
   (the query's constraints and the call's judge, greedily, as sparsification
   does; not for a method with a region of its own, CE-OCL's ``trust_region``);
   ``diagnostics["n_substep_reverted"]`` counts them in the reported answers.  Reverting only brings a row closer to the query, so an
   ``optimal`` claim stands.  A row that still needs such a move may only be
   the query's first answer (``["n_substep_dropped"]`` counts the others).
5. **Selection**: valid rows in the method's order, without duplicates or the
   query itself, each *different* from every earlier kept one under the
   diversity rule (:func:`._diversity.different`), up to
   ``n_counterfactuals``, listed nearest first; ``diagnostics["n_duplicates"]``
   and ``["n_too_similar"]`` count what was skipped.  With
   ``alternatives="method"`` the method's first distinct rows, in its order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..._utils._deadline import Deadline
from ...exceptions import ValidationError
from ...metrics import DistanceEncoder
from ...result import STATUSES, CounterfactualResult
from ._diversity import substep_mask
from ._judge import Judge
from ._query import Candidates, Query
from ._select import Selection, keys, select_query
from ._sparsify import sparsify
from ._verify import coerce_rows, snap_and_verify

__all__ = ["Pool", "assemble"]


def judge_of(method: Any, tasks: list[Query]) -> Judge:
    """The call's judge (one for all its queries; the model's decision alone by default)."""
    judge = tasks[0].judge if tasks else None
    return judge if judge is not None else Judge(method.model_)


def sparsify_cap(n_cf: int) -> int:
    """Valid candidates per query that are sparsified (the only ones then reported)."""
    return max(4 * n_cf + 10, 32)


def sparsify_enabled(method: Any) -> bool:
    """The method's ``sparsify`` parameter if it has one, else its ``tags.sparsify``."""
    if "sparsify" in method.get_params():
        return bool(getattr(method, "sparsify", False))
    return bool(type(method).tags.sparsify)


@dataclass
class Pool:
    """Every query's candidates in one frame, and what each phase learnt about each row.

    Row ``k`` belongs to query ``own[k]``; ``rows_of[i]`` lists query ``i``'s
    rows in the method's order.  ``raw`` holds the rows as proposed, ``rows``
    as snapped, verified and possibly sparsified.
    """

    schema: Any
    queries: pd.DataFrame
    raw: pd.DataFrame
    rows: pd.DataFrame
    own: np.ndarray
    rows_of: list[np.ndarray]
    sat: np.ndarray
    flips: np.ndarray
    conf: np.ndarray
    moved: np.ndarray
    snap_failed: np.ndarray
    reverted: np.ndarray
    stopped: np.ndarray
    keys: list[tuple[Any, ...]]
    #: rows that may be reported (with sparsification, only the sparsified ones)
    reportable: np.ndarray
    #: the distance answers are listed by (MACE's eq. 3) and its norm
    encoder: Any = None
    norm: Any = "l1"
    #: the call's costs (:class:`~counterfact.constraints.BoundCosts`): answers are then listed by cost
    costs: Any = None
    #: per row, the sub-step moves reverted (:func:`trim_substeps`)
    trimmed: np.ndarray | None = None
    #: per row, whether it still has a move smaller than its feature's step
    substep: np.ndarray | None = None
    #: what selection compares, computed once for the whole pool (:func:`._select.row_arrays`)
    arrays: Any = None

    @property
    def valid(self) -> np.ndarray:
        """Reportable rows that satisfy their query's constraints and flip the model."""
        return self.sat & self.flips & self.reportable


def assemble(
    method: Any,
    tasks: list[Query],
    outcomes: list[Candidates],
    constraints: Any,
    n_cf: int,
    *,
    deadline: Deadline | None = None,
) -> CounterfactualResult:
    """Snap, verify, sparsify and select every query's candidates; build the result.

    ``constraints``: what the user passed (one Constraints, or a list with one
    per task); ``deadline``: when sparsification stops.
    """
    pool = collect(method, tasks, outcomes)
    sparse = bool(len(pool.rows)) and sparsify_enabled(method)
    if sparse:
        sparsify_pool(method, pool, tasks, n_cf, deadline)
    steps = method.diversity_steps_
    distinct = not tasks or tasks[0].alternatives == "distinct"
    if distinct:
        trim_substeps(method, pool, tasks, n_cf, steps, deadline)
    pool.keys = keys(pool.rows, pool.schema.names) if len(pool.rows) else []
    chosen = [
        select_query(pool, i, c, steps, n_cf, sparse, distinct=distinct)
        for i, c in enumerate(outcomes)
    ]
    return build_result(method, pool, tasks, outcomes, chosen, constraints, n_cf)


def collect(method: Any, tasks: list[Query], outcomes: list[Candidates]) -> Pool:
    """Every query's candidates in one frame (schema columns and types), snapped
    to the grid and verified with the real model in one batched call."""
    schema = method.schema_
    names = schema.names
    queries = pd.DataFrame([t.x for t in tasks], columns=names)
    queries.index = pd.Index([t.id for t in tasks])
    queries = schema.coerce(queries)
    frames, owners = [], []
    for i, c in enumerate(outcomes):
        f = c.frame
        if f is None or len(f) == 0:
            continue
        missing = [n for n in names if n not in f.columns]
        if missing:
            raise ValidationError(
                f"{type(method).__name__} returned candidates without columns {missing}."
            )
        frames.append(f.loc[:, names].reset_index(drop=True))
        owners.append(np.full(len(f), i))
    if frames:
        raw_all = pd.concat(frames, ignore_index=True)
        rows, ok = coerce_rows(schema, raw_all)
        own = np.concatenate(owners)[ok]
        raw = raw_all[ok].reset_index(drop=True)
        qrows = queries.iloc[own].reset_index(drop=True)
        claims = [c.status for c in outcomes]
        rows, moved, failed, sat, flips, conf = snap_and_verify(
            schema, judge_of(method, tasks), tasks, claims, rows, own, qrows
        )
    else:
        rows = raw = pd.DataFrame(columns=names)
        own = np.zeros(0, dtype=int)
        moved = failed = sat = flips = np.zeros(0, dtype=bool)
        conf = np.zeros(0)
    order = np.argsort(own, kind="stable")  # each query's rows, in the method's order
    rows_of = np.split(order, np.searchsorted(own[order], np.arange(1, len(tasks))))
    return Pool(
        schema=schema,
        queries=queries,
        raw=raw,
        rows=rows,
        own=own,
        rows_of=rows_of,
        sat=sat,
        flips=flips,
        conf=conf,
        moved=moved,
        snap_failed=failed,
        reverted=np.zeros(len(rows), dtype=int),
        stopped=np.zeros(len(tasks), dtype=bool),
        keys=[],
        reportable=np.ones(len(rows), dtype=bool),
        encoder=DistanceEncoder(schema),
        norm=_norm_of(method),
        costs=tasks[0].costs if tasks else None,
    )


def _norm_of(method: Any) -> Any:
    """The method's own norm when it is one of eq. 3's (l0, l1, linf or weights), else l1."""
    norm = getattr(method, "norm", "l1")
    if isinstance(norm, list):
        norm = tuple(norm)
    return norm if norm in ("l0", "l1", "linf") or isinstance(norm, tuple) else "l1"


def sparsify_pool(
    method: Any, pool: Pool, tasks: list[Query], n_cf: int, deadline: Deadline | None
) -> None:
    """Sparsify the leading valid rows of each query in place; only they may be
    reported (a later, untouched row could keep changes the model does not need)."""
    lead_a = _leading_valid(pool, n_cf)
    pool.reportable = np.zeros(len(pool.rows), dtype=bool)
    pool.reportable[lead_a] = True
    if not lead_a.size:
        return
    new, n_rev, p_new, cut = sparsify(
        pool.schema,
        pool.rows.iloc[lead_a],
        pool.own[lead_a],
        [t.bounds for t in tasks],
        [t.x for t in tasks],
        [t.target for t in tasks],
        judge_of(method, tasks),
        [t.target_index for t in tasks],
        deadline=deadline,
    )
    pool.stopped[np.unique(pool.own[lead_a[cut]])] = True
    hit = n_rev > 0
    if hit.any():  # the reverted rows were checked by the pass (constraints, real model)
        _write_rows(pool, lead_a[hit], new[hit], p_new[hit])
        pool.reverted[lead_a[hit]] = n_rev[hit]


def _write_rows(pool: Pool, at: np.ndarray, new: pd.DataFrame, conf: np.ndarray) -> None:
    """Replace rows ``at`` of the pool by ``new`` (already verified) and their probabilities."""
    rows = pool.rows.astype(object)
    rows.iloc[at] = new.astype(object).to_numpy()
    pool.rows = pool.schema.coerce(rows)
    pool.conf[at] = conf


def _leading_valid(pool: Pool, n_cf: int) -> np.ndarray:
    """The first ``sparsify_cap(n_cf)`` valid rows of each query."""
    lead: list[int] = []
    valid = pool.valid
    for idx in pool.rows_of:
        lead.extend(idx[valid[idx]][: sparsify_cap(n_cf)].tolist())
    return np.array(lead, dtype=int)


def trim_substeps(
    method: Any,
    pool: Pool,
    tasks: list[Query],
    n_cf: int,
    steps: np.ndarray,
    deadline: Deadline | None,
) -> None:
    """Revert the moves smaller than their feature's step in the leading valid rows
    of each query while the row stays valid (:func:`._sparsify.sparsify` restricted
    to those moves: the query's constraints and the call's judge check every
    revert); then mark every valid row that still has such a move."""
    pool.trimmed = np.zeros(len(pool.rows), dtype=int)
    pool.substep = np.zeros(len(pool.rows), dtype=bool)
    if not len(pool.rows):
        return
    # a method's own region (CE-OCL's trust region) is not the pipeline's to check: its
    # answers keep their moves, and those with a sub-step one may only come first
    lead = (
        _leading_valid(pool, n_cf)
        if getattr(method, "trust_region", None) is None
        else np.zeros(0, dtype=int)
    )
    if lead.size:
        mask = substep_mask(
            pool.schema, pool.rows.iloc[lead], pool.queries.iloc[pool.own[lead]], steps
        )
        hit = mask.any(axis=1)
        if hit.any():
            at = lead[hit]
            new, n_rev, p_new, _cut = sparsify(
                pool.schema,
                pool.rows.iloc[at],
                pool.own[at],
                [t.bounds for t in tasks],
                [t.x for t in tasks],
                [t.target for t in tasks],
                judge_of(method, tasks),
                [t.target_index for t in tasks],
                deadline=deadline,
                revertible=mask[hit],
            )
            done = n_rev > 0
            if done.any():
                _write_rows(pool, at[done], new[done], p_new[done])
                pool.trimmed[at[done]] = n_rev[done]
    valid = np.flatnonzero(pool.valid)
    if valid.size:
        left = substep_mask(
            pool.schema, pool.rows.iloc[valid], pool.queries.iloc[pool.own[valid]], steps
        )
        pool.substep[valid] = left.any(axis=1)


def build_result(
    method: Any,
    pool: Pool,
    tasks: list[Query],
    outcomes: list[Candidates],
    chosen: list[Selection],
    constraints: Any,
    n_cf: int,
) -> CounterfactualResult:
    """The :class:`CounterfactualResult` of the selected rows, with each query's
    status, diagnostics, runtime and the method's words for its guarantee."""
    schema = pool.schema
    qids = [t.id for t in tasks]
    cf_rows = [k for s in chosen for k in s.chosen]
    cf_index = [
        (t.id, rank) for t, s in zip(tasks, chosen, strict=True) for rank in range(len(s.chosen))
    ]
    if cf_rows:
        cf_frame = schema.coerce(pool.rows.iloc[cf_rows].reset_index(drop=True))
    else:
        cf_frame = pd.DataFrame(columns=schema.names)
    cf_frame.index = (
        pd.MultiIndex.from_tuples(cf_index, names=["query", "rank"])
        if cf_index
        else pd.MultiIndex.from_tuples([], names=["query", "rank"])
    )
    statuses = [s.status for s in chosen]
    unknown = set(statuses) - set(STATUSES)
    if unknown:  # internal invariant, not input validation
        raise RuntimeError(f"internal error: unknown statuses {sorted(unknown)}")
    index = pd.Index(qids)
    per_row = isinstance(constraints, list)
    conf = pool.conf[cf_rows] if cf_rows else np.zeros(0)
    return CounterfactualResult(
        queries=pool.queries,
        counterfactuals=cf_frame,
        status=pd.Series(statuses, index=index, dtype=object),
        runtime=pd.Series(
            [c.runtime if c.runtime is not None else np.nan for c in outcomes],
            index=index,
            dtype=float,
        ),
        diagnostics=pd.DataFrame([s.diagnostics for s in chosen], index=index),
        schema=schema,
        target=pd.Series([t.target for t in tasks], index=index),
        method=method.name or type(method).__name__,
        params=method.get_params(),
        constraints=None if per_row else constraints,
        query_constraints=dict(zip(qids, constraints, strict=True)) if per_row else None,
        model=method.model_,
        n_counterfactuals=n_cf,
        confidence=pd.Series(conf, index=cf_frame.index, dtype=float),
        query_confidence=pd.Series([t.query_confidence for t in tasks], index=index, dtype=float),
        certificates=pd.Series(
            [type(method).certificate(s.status, s.diagnostics) for s in chosen],
            index=index,
            dtype=object,
        ),
        costs=pool.costs,
    )
