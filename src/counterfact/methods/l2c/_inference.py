"""L2C's batched inference: sample, decode, screen and rank candidates, with the second
and relaxed draws.

The functions take the fitted :class:`~counterfact.methods.l2c.L2C` as ``method``,
typed ``Any``: the class imports this module, so this module does not import it
back.  They read its fitted generator and representation, its parameters, and
call its ``_rows``, ``_decide`` and ``_current_fallback``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from ..._utils._deadline import Deadline
from .._pipeline import Candidates, Query, pooled_deadline
from .._pipeline._pool import sparsify_cap
from ._training import RowSet, forward, sample_levels
from ._util import _distinct

__all__ = ["explain_queries", "relaxed_thresholds"]


def relaxed_thresholds(
    max_numeric_changes: int | None, relax_threshold: bool, n_numeric: int
) -> list[int | None]:
    """Numeric-change caps of the last-resort draws (see ``relax_threshold``)."""
    m = max_numeric_changes
    if not relax_threshold or m is None:
        return []
    caps: list[int | None] = [max(m + 1, 2 * m)] if max(m + 1, 2 * m) < n_numeric else []
    return [*caps, None] if m < n_numeric else []


def explain_queries(
    method: Any,
    torch: Any,
    queries: list[Query],
    n_samples: int | None = None,
    threshold: int | None = -1,
) -> list[Candidates]:
    """Sample, decode, check; ``n_samples`` set: a second pass (no further retry, no fallback)
    with the numeric-change cap ``threshold`` (-1: ``max_numeric_changes``; None: no cap)."""
    limit = method.max_numeric_changes if threshold == -1 else threshold
    S = int(method.n_samples if n_samples is None else n_samples)
    first = _draw(method, torch, queries, S, limit)
    if n_samples is not None:
        return first.answers()
    # the batch's further draws stop when its queries' budgets, pooled, are spent
    deadline = pooled_deadline(queries)
    _second_draw(method, torch, queries, first, S, deadline)
    _relaxed_draws(method, torch, queries, first, max(S, int(method.max_samples or 0)), deadline)
    return _answers(method, queries, first, deadline)


@dataclass
class _Pass:
    """One sampling pass over a batch: per query its candidates (None: no valid
    one yet) and its diagnostics, which the later draws update."""

    found: list[Candidates | None]
    diags: list[dict[str, Any]]
    #: no rows, the decoded columns
    empty: pd.DataFrame

    def missing(self) -> list[int]:
        """Positions of the queries still without a valid candidate."""
        return [i for i, c in enumerate(self.found) if c is None]

    def answers(self) -> list[Candidates]:
        """The pass's own answers: ``failed`` where it found no valid candidate."""
        return [
            c if c is not None else Candidates(self.empty, "failed", d)
            for c, d in zip(self.found, self.diags, strict=True)
        ]


class _Screened(NamedTuple):
    """The distinct draws of a batch, decoded and checked (one entry per draw)."""

    n_changed: np.ndarray
    #: within the query's change cap and the numeric-change cap
    keep: np.ndarray
    #: the model assigns the target (and the draw changes something)
    valid: np.ndarray
    dist: np.ndarray


def _draw(method: Any, torch: Any, queries: list[Query], S: int, limit: int | None) -> _Pass:
    """``S`` samples per query in one batched pass, with at most ``limit`` numeric
    changes (None: no cap); the valid ones ranked by distance."""
    rep = method.representation_
    X = pd.DataFrame([q.x for q in queries], columns=method.schema_.names).reset_index(drop=True)
    rows = method._rows(X, [q.bounds for q in queries])
    N = rep.n_features
    targets = np.array([q.target_index for q in queries], dtype=np.int64)
    logits, pi = forward(
        torch,
        method.generator_,
        method.selector_,
        rows.z,
        targets,
        len(method.classes_),
        torch.device(method.device_),
    )
    noise = np.stack([q.rng.random((3, S, N)) for q in queries], axis=1)  # (3, n, S, N)
    caps = np.array(
        [q.bounds.max_changes if q.bounds.max_changes is not None else N for q in queries]
    )
    draws = sample_levels(logits, pi, rows, rep, (noise[0], noise[1], noise[2]), limit, caps)
    # distinct draws per query (sorted by query), with their multiplicity
    owner, levels, counts = _distinct(draws, rep.sizes)
    screened = _screen(
        method, rows, targets, caps, owner, levels, limit, queries[0].judge if queries else None
    )
    if queries and queries[0].costs is not None:  # the call's costs replace the norm
        screened = _cost_screened(method, queries, rows, owner, levels, screened)
    return _pick(method, queries, rows, owner, levels, counts, screened, S, limit)


def _cost_screened(
    method: Any,
    queries: list[Query],
    rows: RowSet,
    owner: np.ndarray,
    levels: np.ndarray,
    s: _Screened,
) -> _Screened:
    """``s`` with each candidate draw's distance replaced by its cost under the call's
    costs (the draws that can be answers: valid and within the caps)."""
    at = np.flatnonzero(s.valid & s.keep)
    dist = np.full(len(owner), np.inf)
    if at.size:
        frame = method.representation_.decode(levels[at], owner[at], rows.table).reset_index(
            drop=True
        )
        for i in np.unique(owner[at]):
            sel = np.flatnonzero(owner[at] == i)
            dist[at[sel]] = queries[int(i)].costs.evaluate(queries[int(i)].x, frame.iloc[sel])
    return _Screened(s.n_changed, s.keep, s.valid, dist)


def _screen(
    method: Any,
    rows: RowSet,
    targets: np.ndarray,
    caps: np.ndarray,
    owner: np.ndarray,
    levels: np.ndarray,
    limit: int | None,
    judge: Any = None,
) -> _Screened:
    """Decode the distinct draws; count their changes, check the caps and the model,
    measure the distance."""
    rep = method.representation_
    vals = rep.decode_values(levels, owner, rows.table)
    qv = rows.values[owner]
    ordered = rep.is_numeric | rep.is_ordinal
    moved = np.abs(vals - qv) > 1e-9 * np.maximum(1.0, np.abs(qv))
    changed = np.where(ordered[None, :], moved, levels != rows.levels[owner])
    n_changed = changed.sum(axis=1)
    keep = (n_changed > 0) & (n_changed <= caps[owner])
    if limit is not None:
        keep &= changed[:, rep.is_numeric].sum(axis=1) <= limit
    valid = (method._decide(levels, owner, rows) == targets[owner]) & (n_changed > 0)
    if judge is not None and judge.demanding and valid.any():
        # a margin or other models asked for: the valid draws judged by all of them
        at = np.flatnonzero(valid)
        frame = rep.decode(levels[at], owner[at], rows.table)
        labels = method.model_.classes_[targets[owner[at]]].tolist()
        valid[at] = judge(frame, labels, targets[owner[at]].tolist())[0]
    dist = rep.distances(vals, levels, qv, rows.levels[owner], method.norm)
    return _Screened(n_changed, keep, valid, dist)


def _pick(
    method: Any,
    queries: list[Query],
    rows: RowSet,
    owner: np.ndarray,
    levels: np.ndarray,
    counts: np.ndarray,
    screened: _Screened,
    S: int,
    limit: int | None,
) -> _Pass:
    """Per query, its nearest valid draws, decoded, and its diagnostics. As many are
    proposed as the pipeline sparsifies (:func:`sparsify_cap`), not only
    ``n_counterfactuals``: the shared selection drops copies and dominated draws, and
    fills the answers from the next ones."""
    rep = method.representation_
    n_changed, keep, valid, dist = screened
    bounds = np.searchsorted(owner, np.arange(len(queries) + 1))
    picks: list[np.ndarray] = []
    spans: list[tuple[int, int]] = []
    diags: list[dict[str, Any]] = []
    offset = 0
    for i, q in enumerate(queries):
        m = np.arange(bounds[i], bounds[i + 1])
        good = m[valid[m] & keep[m]]
        good = good[np.argsort(dist[good], kind="stable")][: sparsify_cap(q.n_counterfactuals)]
        spans.append((offset, good.size))
        picks.append(good)
        offset += good.size
        diags.append(
            {
                "n_samples": S,
                "n_distinct": int(m.size),
                "n_filtered": int(((n_changed[m] > 0) & ~keep[m]).sum()),
                "n_valid": int((valid[m] & keep[m]).sum()),
                "sample_validity": float((counts[m] * valid[m]).sum() / S),
                "source": "l2c",
                "numeric_threshold": -1 if limit is None else limit,
            }
        )
    sel = np.concatenate(picks) if picks else np.zeros(0, dtype=np.int64)
    chosen = rep.decode(levels[sel], owner[sel], rows.table)
    found: list[Candidates | None] = [
        Candidates(chosen.iloc[start : start + size], "feasible", diag) if size else None
        for (start, size), diag in zip(spans, diags, strict=True)
    ]
    return _Pass(found, diags, chosen.iloc[0:0])


def _second_draw(
    method: Any, torch: Any, queries: list[Query], first: _Pass, S: int, deadline: Deadline
) -> None:
    """Queries left without a valid candidate: ``max_samples`` more draws, in one pass
    over them only."""
    missing = first.missing()
    if (
        not missing
        or method.max_samples is None
        or int(method.max_samples) <= S
        or deadline.expired()
    ):
        return
    again = _draw(
        method,
        torch,
        [queries[i] for i in missing],
        int(method.max_samples),
        method.max_numeric_changes,
    )
    for i, second in zip(missing, again.answers(), strict=True):
        diag = first.diags[i]
        diag["n_samples"] = S + int(second.diagnostics["n_samples"])
        diag["n_valid_retry"] = int(second.diagnostics["n_valid"])
        if second.status == "feasible":
            diag["source"] = "l2c (retry)"
            first.found[i] = Candidates(second.frame, "feasible", diag)


def _relaxed_draws(
    method: Any, torch: Any, queries: list[Query], first: _Pass, draw: int, deadline: Deadline
) -> None:
    """Queries still uncovered: ``draw`` samples under each relaxed numeric-change cap in turn."""
    n_numeric = int(method.representation_.is_numeric.sum())
    for cap in relaxed_thresholds(method.max_numeric_changes, method.relax_threshold, n_numeric):
        missing = first.missing()
        if not missing or deadline.expired():
            break
        again = _draw(method, torch, [queries[i] for i in missing], draw, cap)
        for i, second in zip(missing, again.answers(), strict=True):
            diag = first.diags[i]
            diag["n_samples"] += int(second.diagnostics["n_samples"])
            if second.status == "feasible":
                diag["source"] = "l2c (relaxed)"
                diag["numeric_threshold"] = -1 if cap is None else cap
                first.found[i] = Candidates(second.frame, "feasible", diag)


def _answers(
    method: Any, queries: list[Query], first: _Pass, deadline: Deadline
) -> list[Candidates]:
    """Every query's answer: its candidates, else the fallback's, else ``timeout`` or ``failed``."""
    out: list[Candidates] = []
    for q, hit, diag in zip(queries, first.found, first.diags, strict=True):
        if hit is not None:
            out.append(hit)
            continue
        fallback = method._current_fallback()
        if fallback is not None:
            fb = fallback._explain_one(q)
            diag["source"] = "nearest"
            diag.update(
                {f"fallback_{k}": v for k, v in fb.diagnostics.items() if not k.startswith("_")}
            )
            out.append(Candidates(fb.frame, "feasible" if len(fb.frame) else "failed", diag))
            continue
        if deadline.expired():
            diag["reason"] = (
                f"time limit reached after {diag['n_samples']} samples without a valid candidate"
            )
            out.append(Candidates(first.empty, "timeout", diag))
            continue
        median = method.representation_.representative == "median"
        value = "training median" if median else "midpoint"
        diag["reason"] = (
            f"no valid candidate among {diag['n_samples']} samples (a sampled numeric value "
            f"is the {value} of one of the feature's quantile bins, so values beyond those "
            "are not tried; fallback='nearest' or a search method looks further)"
        )
        out.append(Candidates(first.empty, "failed", diag))
    return out
