"""L2C's batched inference: sample, decode, screen and rank candidates, with the second and relaxed draws."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._base import Candidates, Query
from ._training import forward, sample_levels
from ._util import _distinct

if TYPE_CHECKING:
    from ._method import L2C

__all__ = ["batch_deadline", "explain_queries", "relaxed_thresholds"]


def batch_deadline(method: L2C, queries: list[Query]) -> float:
    """When the batch's further draws stop: each query's budget, pooled over
    the batch (``started + sum of Query.time_limit``); inf without a limit.

    ``Query.time_limit`` is the user's limit less what the base class keeps
    back for verification and sparsification, so the whole call stays within
    the user's limit."""
    if method.time_limit is None or not queries:
        return float("inf")
    budget = sum(float(q.time_limit) if q.time_limit is not None else float(method.time_limit) for q in queries)
    return min(q.started for q in queries) + budget


def relaxed_thresholds(method: L2C) -> list[int | None]:
    """Numeric-change caps of the last-resort draws (see ``relax_threshold``)."""
    m = method.max_numeric_changes
    if not method.relax_threshold or m is None:
        return []
    n_numeric = int(method.representation_.is_numeric.sum())
    caps: list[int | None] = [max(m + 1, 2 * m)] if max(m + 1, 2 * m) < n_numeric else []
    return [*caps, None] if m < n_numeric else []


def explain_queries(
    method: L2C, torch: Any, queries: list[Query], n_samples: int | None = None, threshold: int | None = -1
) -> list[Candidates]:
    """Sample, decode, check; ``n_samples`` set: a second pass (no further retry, no fallback)
    with the numeric-change cap ``threshold`` (-1: ``max_numeric_changes``; None: no cap)."""
    limit = method.max_numeric_changes if threshold == -1 else threshold
    rep = method.representation_
    X = pd.DataFrame([q.x for q in queries], columns=method.schema_.names).reset_index(drop=True)
    rows = method._rows(X, [q.bounds for q in queries])
    retry = n_samples is not None
    n, S, N = len(queries), int(method.n_samples if n_samples is None else n_samples), rep.n_features
    targets = np.array([q.target_index for q in queries], dtype=np.int64)
    logits, pi = forward(torch, method.generator_, method.selector_, rows.z, targets, len(method.classes_), torch.device(method.device_))
    noise = np.stack([q.rng.random((3, S, N)) for q in queries], axis=1)  # (3, n, S, N)
    caps = np.array([q.bounds.max_changes if q.bounds.max_changes is not None else N for q in queries])
    draws = sample_levels(logits, pi, rows, rep, (noise[0], noise[1], noise[2]), limit, caps)
    # distinct draws per query (sorted by query), with their multiplicity
    owner, levels, counts = _distinct(draws, rep.sizes)
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
    dist = rep.distances(vals, levels, qv, rows.levels[owner], method.norm)
    bounds = np.searchsorted(owner, np.arange(n + 1))
    picks: list[np.ndarray] = []
    spans: list[tuple[int, int]] = []
    diags: list[dict[str, Any]] = []
    offset = 0
    for i, q in enumerate(queries):
        m = np.arange(bounds[i], bounds[i + 1])
        good = m[valid[m] & keep[m]]
        good = good[np.argsort(dist[good], kind="stable")][: q.n_counterfactuals]
        spans.append((offset, good.size))
        picks.append(good)
        offset += good.size
        diags.append({
            "n_samples": S,
            "n_distinct": int(m.size),
            "n_filtered": int(((n_changed[m] > 0) & ~keep[m]).sum()),
            "n_valid": int((valid[m] & keep[m]).sum()),
            "sample_validity": float((counts[m] * valid[m]).sum() / S),
            "source": "l2c",
            "numeric_threshold": -1 if limit is None else limit,
        })
    sel = np.concatenate(picks) if picks else np.zeros(0, dtype=np.int64)
    chosen = rep.decode(levels[sel], owner[sel], rows.table)
    found: list[Candidates | None] = [
        Candidates(chosen.iloc[start : start + size], "feasible", diag) if size else None
        for (start, size), diag in zip(spans, diags, strict=True)
    ]
    if retry:
        return [c if c is not None else Candidates(chosen.iloc[0:0], "failed", d) for c, d in zip(found, diags, strict=True)]
    deadline = method._deadline(queries)
    missing = [i for i, c in enumerate(found) if c is None]
    if missing and method.max_samples is not None and int(method.max_samples) > S and time.perf_counter() < deadline:
        again = method._explain_torch(torch, [queries[i] for i in missing], n_samples=int(method.max_samples))
        for i, second in zip(missing, again, strict=True):
            diag = diags[i]
            diag["n_samples"] = S + int(second.diagnostics["n_samples"])
            diag["n_valid_retry"] = int(second.diagnostics["n_valid"])
            if second.status == "feasible":
                diag["source"] = "l2c (retry)"
                found[i] = Candidates(second.frame, "feasible", diag)
    draw = max(S, int(method.max_samples or 0))
    for cap in method._relaxed_thresholds():
        missing = [i for i, c in enumerate(found) if c is None]
        if not missing or time.perf_counter() >= deadline:
            break
        again = method._explain_torch(torch, [queries[i] for i in missing], n_samples=draw, threshold=cap)
        for i, second in zip(missing, again, strict=True):
            diag = diags[i]
            diag["n_samples"] += int(second.diagnostics["n_samples"])
            if second.status == "feasible":
                diag["source"] = "l2c (relaxed)"
                diag["numeric_threshold"] = -1 if cap is None else cap
                found[i] = Candidates(second.frame, "feasible", diag)
    out: list[Candidates] = []
    for q, hit, diag in zip(queries, found, diags, strict=True):
        if hit is not None:
            out.append(hit)
            continue
        fallback = method._current_fallback()
        if fallback is not None:
            fb = fallback._explain_one(q)
            diag["source"] = "nearest"
            diag.update({f"fallback_{k}": v for k, v in fb.diagnostics.items() if not k.startswith("_")})
            out.append(Candidates(fb.frame, "feasible" if len(fb.frame) else "failed", diag))
            continue
        if time.perf_counter() >= deadline:
            diag["reason"] = f"time limit reached after {diag['n_samples']} samples without a valid candidate"
            out.append(Candidates(chosen.iloc[0:0], "timeout", diag))
            continue
        diag["reason"] = f"no valid candidate among {diag['n_samples']} samples"
        out.append(Candidates(chosen.iloc[0:0], "failed", diag))
    return out

