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
   (:func:`._postprocess.sparsify`).  ``diagnostics["n_reverted"]`` counts the
   reverted changes of the reported counterfactuals.  Under a time limit it
   stops at the deadline of the ``explain`` call (its queries' limits pooled,
   counted from the call's start), keeping the reverts made so far (each one
   verified); ``diagnostics["sparsify_stopped"]`` marks those queries.  Only the first
   ``max(4 n + 10, 32)`` valid candidates of a query are sparsified, and only
   they can be reported.  An ``optimal`` claim becomes ``feasible`` when its
   first row was modified.
4. **Selection**: valid rows in the method's order, without duplicates or the
   query itself, each *different* from every earlier kept one under the
   diversity rule (:func:`._postprocess.different`), up to
   ``n_counterfactuals``; ``diagnostics["n_duplicates"]`` and
   ``["n_too_similar"]`` count what was skipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..constraints import satisfied_many
from ..data import mad as _mad
from ..exceptions import ValidationError
from ..result import STATUSES, CounterfactualResult
from ._postprocess import (
    DEFAULT_DIVERSITY_FRACTION,
    diversity_steps,
    keep_different,
    snap_columns,
    snap_matrix,
    sparsify,
)

if TYPE_CHECKING:  # pragma: no cover
    from ._base import Candidates, CounterfactualMethod, Query

__all__ = ["assemble"]

#: seconds kept after sparsification stops for the selection and the result
_TAIL = 0.05

#: methods whose candidates are sparsified unless the class says otherwise
_SPARSIFY_BY_NAME = frozenset({"ufce", "mdpso", "l2c"})


def _sparsify_cap(n_cf: int) -> int:
    """Valid candidates per query that are sparsified (the only ones then reported)."""
    return max(4 * n_cf + 10, 32)


def sparsify_enabled(method: CounterfactualMethod) -> bool:
    """A ``sparsify`` parameter if the method has one, else the attribute
    ``_sparsify_default`` (class, or instance to override), else whether it is
    one of the heuristic methods."""
    if "sparsify" in method._param_names():
        return bool(getattr(method, "sparsify", False))
    flag = getattr(method, "_sparsify_default", None)
    if flag is not None:
        return bool(flag)
    return method.name in _SPARSIFY_BY_NAME


def steps_of(method: CounterfactualMethod) -> np.ndarray:
    """The diversity steps of the method's schema and training data (cached)."""
    steps = getattr(method, "_diversity_steps_cache", None)
    if steps is None or len(steps) != len(method.schema_):
        data = getattr(method, "data_", None)
        m = _mad(data.X, method.schema_) if data is not None else None
        fraction = float(getattr(type(method), "_diversity_fraction", DEFAULT_DIVERSITY_FRACTION))
        steps = diversity_steps(method.schema_, m, fraction)
        method._diversity_steps_cache = steps
    return steps


def _coerce_rows(schema: Any, frame: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
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


def _verify(method: CounterfactualMethod, tasks: Sequence[Query], rows: pd.DataFrame, own: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(satisfied, flips, confidence)`` for each row of ``rows`` (row ``k`` belongs to ``tasks[own[k]]``)."""
    n = len(rows)
    sat = satisfied_many([t.bounds for t in tasks], rows, own) if n else np.zeros(0, dtype=bool)
    flips = np.zeros(n, dtype=bool)
    conf = np.full(n, np.nan)
    if sat.any():
        sub = rows[sat]
        pred, proba = method.model_.predict_with_proba(sub)
        tgt_idx = np.array([tasks[i].target_index for i in own[sat]])
        tgt = np.array([tasks[i].target for i in own[sat]], dtype=object)
        flips[sat] = np.array([p == t for p, t in zip(pred, tgt, strict=True)], dtype=bool)
        conf[sat] = proba[np.arange(len(sub)), tgt_idx]
    return sat, flips, conf


def _snap(
    method: CounterfactualMethod, tasks: Sequence[Query], claims: Sequence[str | None], rows: pd.DataFrame, own: np.ndarray, qrows: pd.DataFrame
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rows on the grid; returns ``(rows, moved, failed, sat, flips, conf)``.

    Both roundings are computed on one numeric matrix; the second one of the
    rows that moved is checked in the same model call as the first.
    """
    schema = method.schema_
    n = len(rows)
    cols, res, lower, upper = snap_columns(schema)
    if not cols or n == 0:
        sat, flips, conf = _verify(method, tasks, rows, own)
        return rows, np.zeros(n, dtype=bool), np.zeros(n, dtype=bool), sat, flips, conf
    exact = np.array([claims[i] == "optimal" for i in own], dtype=bool)[:, None]
    V = rows[cols].to_numpy(dtype=float)
    Q = qrows[cols].to_numpy(dtype=float)
    S_out = snap_matrix(V, Q, res, lower, upper, "outward")
    S_in = snap_matrix(V, Q, res, lower, upper, "inward")
    S1, S2 = np.where(exact, S_out, S_in), np.where(exact, S_in, S_out)
    keep = _allowed_cells(tasks, own, cols, V)
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
    s_all, f_all, c_all = _verify(method, tasks, both, np.concatenate([own, own[alt]]))
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


def _allowed_cells(tasks: Sequence[Query], own: np.ndarray, cols: list[str], V: np.ndarray) -> np.ndarray | None:
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
            keep[r, j] = (np.abs(V[r, j][:, None] - allowed[None, :]) <= 1e-9 * np.maximum(1.0, np.abs(allowed))).any(axis=1)
    return keep


def assemble(
    method: CounterfactualMethod, tasks: list[Query], outcomes: list[Candidates], constraints: Any, n_cf: int, *, deadline: float | None = None
) -> CounterfactualResult:
    """Snap, verify, sparsify and select every query's candidates; build the result.

    ``deadline`` (a ``time.perf_counter()`` value): sparsification stops there
    (see :func:`._postprocess.sparsify`).
    """
    schema = method.schema_
    names = schema.names
    qids = [t.id for t in tasks]
    queries = pd.DataFrame([t.x for t in tasks], columns=names)
    queries.index = pd.Index(qids)
    queries = schema.coerce(queries)
    frames, owners = [], []
    for i, c in enumerate(outcomes):
        f = c.frame
        if f is None or len(f) == 0:
            continue
        missing = [n for n in names if n not in f.columns]
        if missing:
            raise ValidationError(f"{type(method).__name__} returned candidates without columns {missing}.")
        frames.append(f.loc[:, names].reset_index(drop=True))
        owners.append(np.full(len(f), i))
    claims = [c.status for c in outcomes]
    if frames:
        raw = pd.concat(frames, ignore_index=True)
        own_all = np.concatenate(owners)
        allc, coerced_ok = _coerce_rows(schema, raw)
        own = own_all[coerced_ok]
        raw_ok = raw[coerced_ok].reset_index(drop=True)
        qrows = queries.iloc[own].reset_index(drop=True)
        allc, moved, snap_failed, sat, flips_all, conf_all = _snap(method, tasks, claims, allc, own, qrows)
    else:
        allc = raw_ok = pd.DataFrame(columns=names)
        own = np.zeros(0, dtype=int)
        moved = snap_failed = sat = flips_all = np.zeros(0, dtype=bool)
        conf_all = np.zeros(0)
    valid_all = sat & flips_all
    order = np.argsort(own, kind="stable")  # each query's rows, in the method's order
    rows_of = np.split(order, np.searchsorted(own[order], np.arange(1, len(tasks))))
    # ---- sparsification (opt-in), on the leading valid rows of each query
    reverted = np.zeros(len(allc), dtype=int)
    stopped = np.zeros(len(tasks), dtype=bool)  # queries whose sparsification the deadline cut short
    sparse = bool(len(allc)) and sparsify_enabled(method)
    if sparse:
        lead = []
        for idx in rows_of:
            lead.extend(idx[valid_all[idx]][: _sparsify_cap(n_cf)].tolist())
        # only sparsified rows may be reported (a later, untouched row could keep useless changes)
        outside = np.ones(len(allc), dtype=bool)
        outside[lead] = False
        valid_all = valid_all & ~outside
        if lead:
            lead_a = np.array(lead, dtype=int)
            new, n_rev, p_new, cut = sparsify(
                schema,
                allc.iloc[lead_a],
                own[lead_a],
                [t.bounds for t in tasks],
                [t.x for t in tasks],
                [t.target for t in tasks],
                method.model_.predict_with_proba,
                [t.target_index for t in tasks],
                deadline=None if deadline is None else deadline - _TAIL,
            )
            stopped[np.unique(own[lead_a[cut]])] = True
            hit = n_rev > 0
            if hit.any():  # the reverted rows were checked by the pass (constraints, real model)
                rows_hit = lead_a[hit]
                allc = allc.astype(object)
                allc.iloc[rows_hit] = new[hit].astype(object).to_numpy()
                allc = schema.coerce(allc)
                reverted[rows_hit] = n_rev[hit]
                conf_all[rows_hit] = p_new[hit]
    # ---- selection
    steps = steps_of(method)
    keys = _keys(allc, names) if len(allc) else []
    cf_rows: list[int] = []
    cf_index: list[tuple[Any, int]] = []
    statuses, diags, kept = [], [], []
    for i, (t, c) in enumerate(zip(tasks, outcomes, strict=True)):
        d = {k: v for k, v in c.diagnostics.items() if not k.startswith("_")}
        idx = rows_of[i]
        n_prop = len(c.frame) if c.frame is not None else 0
        d["n_proposed"] = n_prop
        d["n_rejected_constraints"] = int((~sat[idx]).sum()) + (n_prop - len(idx))
        d["n_rejected_model"] = int((sat[idx] & ~flips_all[idx]).sum())
        if n_prop:
            d["n_snapped"] = int(moved[idx].sum())
            d["n_snap_failed"] = int(snap_failed[idx].sum())
        xkey = _key(queries.iloc[i], names)
        seen: set[tuple[Any, ...]] = set()
        distinct: list[int] = []
        dup = 0
        for k in map(int, idx):
            if not valid_all[k]:
                continue
            if keys[k] in seen or keys[k] == xkey:
                dup += 1
                continue
            seen.add(keys[k])
            distinct.append(k)
        pos, similar = keep_different(schema, allc.iloc[distinct], queries.iloc[i], steps, n_cf) if distinct else ([], 0)
        chosen = [distinct[p] for p in pos]
        for rank, k in enumerate(chosen):
            cf_rows.append(k)
            cf_index.append((t.id, rank))
        d["n_duplicates"] = dup
        d["n_too_similar"] = similar
        if chosen and sparse:
            d["n_reverted"] = int(reverted[chosen].sum())
            if stopped[i]:
                d["sparsify_stopped"] = True
        first_rejected = len(idx) > 0 and not valid_all[idx[0]]
        hint = c.status
        if chosen:
            st = hint if hint in ("optimal", "feasible") else "feasible"
            if st == "optimal" and (first_rejected or reverted[chosen[0]] > 0 or chosen[0] != idx[0]):
                st = "feasible"
            if hint == "optimal" and n_prop:
                d["snapped"] = bool(moved[chosen[0]])
                d["snap_shift"] = _shift(schema, raw_ok.iloc[chosen[0]], allc.iloc[chosen[0]]) if moved[chosen[0]] else 0.0
        else:
            st = hint if hint in ("infeasible", "timeout", "invalid") else "failed"
            if hint in ("optimal", "feasible") and n_prop:
                d.setdefault("reason", "every proposed candidate failed verification")
        if st not in ("optimal", "feasible") and not d.get("reason"):
            d["reason"] = {"timeout": "time limit reached before a counterfactual was found", "infeasible": "no counterfactual exists under the constraints"}.get(st, "no valid counterfactual found")
        statuses.append(st)
        diags.append(d)
        kept.append(c.diagnostics.get("_runtime", np.nan))
    conf = conf_all[cf_rows] if cf_rows else np.zeros(0)
    if cf_rows:
        cf_frame = schema.coerce(allc.iloc[cf_rows].reset_index(drop=True))
    else:
        cf_frame = pd.DataFrame(columns=names)
    cf_frame.index = pd.MultiIndex.from_tuples(cf_index, names=["query", "rank"]) if cf_index else pd.MultiIndex.from_tuples([], names=["query", "rank"])
    unknown = set(statuses) - set(STATUSES)
    if unknown:  # internal invariant, not input validation
        raise RuntimeError(f"internal error: unknown statuses {sorted(unknown)}")
    index = pd.Index(qids)
    return CounterfactualResult(
        queries=queries,
        counterfactuals=cf_frame,
        status=pd.Series(statuses, index=index, dtype=object),
        runtime=pd.Series(kept, index=index, dtype=float),
        diagnostics=pd.DataFrame(diags, index=index),
        schema=schema,
        target=pd.Series([t.target for t in tasks], index=index),
        method=method.name or type(method).__name__,
        params=method.get_params(),
        constraints=None if isinstance(constraints, list) else constraints,
        query_constraints=dict(zip(qids, constraints, strict=True)) if isinstance(constraints, list) else None,
        model=method.model_,
        n_counterfactuals=n_cf,
        confidence=pd.Series(conf, index=cf_frame.index, dtype=float),
        query_confidence=pd.Series([t.query_confidence for t in tasks], index=index, dtype=float),
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


def _key(row: pd.Series, names: Sequence[str]) -> tuple[Any, ...]:
    return tuple(_norm(row[n]) for n in names)


def _keys(frame: pd.DataFrame, names: Sequence[str]) -> list[tuple[Any, ...]]:
    """``_key`` of every row of ``frame``, column by column (no per-row pandas indexing)."""
    cols = []
    for n in names:
        col = frame[n]
        if pd.api.types.is_float_dtype(col.dtype):
            cols.append([round(v, 9) for v in col.to_numpy(dtype=float).tolist()])
        else:
            cols.append([_norm(v) for v in col.tolist()])
    return list(zip(*cols, strict=True)) if cols else [() for _ in range(len(frame))]
