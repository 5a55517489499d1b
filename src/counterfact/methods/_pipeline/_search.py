"""Search: the method's hook run on every query that can be explained.

Queries that cannot be searched get their status here without reaching the
method: ``invalid`` (their own constraints contradict themselves),
``infeasible`` (a feature is left no allowed value) and ``failed`` (the model
already predicts the target).  The others run in this process or, with
``n_jobs``/``parallel``, through joblib (loky, threading, Dask, Ray): never a
scheduler of our own.

Clocks: per-query methods (``_explain_one``) start each query's clock
(``Query.started``, on a copy of the query: queries are immutable) just before
its own search, and its runtime is its own wall
time.  Batch methods (``tags.batch``: ``_explain_batch``) run on sub-batches of
``method._batch_size(n)`` queries; every query of a sub-batch starts at the
sub-batch's start, so a time limit bounds the sub-batch's wall time (see
:func:`._query.pooled_deadline`), and each query's runtime is the sub-batch's
wall time divided among its queries.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
from joblib import Parallel, delayed, effective_n_jobs, parallel_config

from ..._utils._progress import progress
from ..._utils._relay import Record, recording, relay
from ._backends import RETURN_AS, in_processes, parallel_backend
from ._prepare import number_words
from ._protocol import PipelineMethod
from ._query import Candidates, Query

__all__ = ["ALREADY_TARGET", "search"]

#: the reason of a row the model already gives the target (status ``failed``)
ALREADY_TARGET = "query already predicted as target"


def search(
    method: PipelineMethod,
    tasks: list[Query],
    *,
    n_jobs: int | None,
    parallel: str | None,
    chunk_size: int | None,
    feedback: bool = True,
) -> list[Candidates]:
    """The method's candidates for every query of ``tasks``, in order."""
    out, todo = _screen(method, tasks)
    if not todo:
        return out
    n_jobs = 1 if n_jobs is None else int(n_jobs)
    in_workers = not (n_jobs == 1 and parallel is None)
    sub = [tasks[i] for i in todo]
    method._before_search(sub, in_workers)
    bar = progress(
        total=len(sub),
        desc=type(method).__name__,
        unit="query",
        verbose=method.verbose,
        disable=not feedback,
    )
    try:
        if in_workers:
            results = _in_parallel(method, sub, n_jobs, parallel, chunk_size, bar)
        else:
            results = run_hooks(method, sub, bar=bar)
    finally:
        bar.close()
    for i, r in zip(todo, results, strict=True):
        out[i] = r
    return out


def _screen(method: PipelineMethod, tasks: list[Query]) -> tuple[list[Candidates], list[int]]:
    """The outcome of every query that is not searched, and the positions of those that are."""
    empty = pd.DataFrame(columns=method.schema_.names)
    out: list[Candidates] = [Candidates(empty) for _ in tasks]
    todo = []
    for i, t in enumerate(tasks):
        if t.invalid is not None:
            out[i] = Candidates(empty, "invalid", {"reason": t.invalid})
        elif t.bounds.infeasible:
            names = [b.feature.name for b in t.bounds.features if b.empty]
            out[i] = Candidates(
                empty,
                "infeasible",
                {"reason": f"the constraints leave {names} no allowed value for this query"},
            )
        elif unreachable := t.bounds.unreachable_relations():
            why = _unreachable_reason(unreachable, t.bounds)
            out[i] = Candidates(empty, "infeasible", {"reason": why})
        elif t.predicted == t.target:
            out[i] = Candidates(empty, "failed", {"reason": ALREADY_TARGET})
        else:
            todo.append(i)
    return out, todo


def _unreachable_reason(texts: list[str], bounds: Any) -> str:
    """Why no value satisfies these relations: what each of their features may take."""
    named = "; ".join(f"'{t}'" for t in texts)
    spans = [_span_words(bounds[n]) for n in _relation_features(texts, bounds)]
    return (
        f"no value the constraints allow this query satisfies the relation"
        f"{'s' * (len(texts) > 1)} {named} (here {'; '.join(spans)}: the features' ranges, "
        "allowed values, directions and any timeline's horizon bound them)"
    )


def _relation_features(texts: list[str], bounds: Any) -> list[str]:
    """The features the relations ``texts`` read that may take a value (schema order)."""
    read = {n for r in bounds.relations if r.text in texts for n in r.changed_names()}
    return [f.name for f in bounds.schema if f.name in read]


def _span_words(b: Any) -> str:
    """What one feature may take, in words: ``credit_amount 250 to 2333``."""
    f = b.feature
    if f.is_numeric and b.values is None:
        return f"{f.name} {number_words(b.lower)} to {number_words(b.upper)}"
    values = [str(v) for v in (b.values or ())]
    shown = ", ".join(values[:5]) + (", ..." if len(values) > 5 else "")
    return f"{f.name} one of {shown}" if len(values) != 1 else f"{f.name} {values[0]}"


def _in_parallel(
    method: PipelineMethod,
    sub: list[Query],
    n_jobs: int,
    parallel: str | None,
    chunk_size: int | None,
    bar: Any,
) -> list[Candidates]:
    """``sub`` in chunks through joblib (the method is pickled to each worker), on the
    backend ``parallel`` (:func:`parallel_backend`)."""
    workers = effective_n_jobs(n_jobs)
    size = chunk_size or max(1, int(np.ceil(len(sub) / (4 * workers))))
    chunks = [sub[k : k + size] for k in range(0, len(sub), size)]
    parts, caught = [], []
    how = RETURN_AS.get(parallel or "loky", "generator")
    # in worker processes a warning would not reach the caller: recorded and passed on
    hooks = _recorded_hooks if in_processes(parallel, workers) else run_hooks
    with parallel_backend(parallel, n_workers=workers), parallel_config(n_jobs=n_jobs):
        gen = Parallel(return_as=how)(delayed(hooks)(method, c) for c in chunks)
        for chunk, part in zip(chunks, gen, strict=True):
            part, records = part if hooks is _recorded_hooks else (part, [])
            parts.append(part)
            caught += records
            bar.update(len(chunk))
    relay(caught, stacklevel=5)  # the caller of the method's explain
    return [r for part in parts for r in part]


def _recorded_hooks(
    method: PipelineMethod, tasks: list[Query]
) -> tuple[list[Candidates], list[Record]]:
    """:func:`run_hooks` in a worker process, with the warnings it raised."""
    with recording() as records:
        out = run_hooks(method, tasks)
    return out, records


def run_hooks(method: PipelineMethod, tasks: list[Query], bar: Any = None) -> list[Candidates]:
    """Run the method's hook on ``tasks`` (see the module docstring for the clocks),
    advancing ``bar`` as queries finish.  Module level, so that workers unpickle it."""
    if method.tags.batch:
        return _run_batches(method, tasks, bar)
    out: list[Candidates] = []
    for task in tasks:
        t = replace(task, started=time.perf_counter())
        if t.cancel is not None and t.cancel.cancelled:
            out.append(_cancelled(method))
            continue
        c = method._explain_one(t)
        if isinstance(c, pd.DataFrame):
            c = Candidates(c)
        if c.runtime is None:
            c.runtime = time.perf_counter() - t.started
        out.append(c)
        if bar is not None:
            bar.update(1)
    return out


def _run_batches(method: PipelineMethod, tasks: list[Query], bar: Any) -> list[Candidates]:
    out: list[Candidates] = []
    size = max(1, int(method._batch_size(len(tasks))))
    for k in range(0, len(tasks), size):
        start = time.perf_counter()
        group = [replace(t, started=start) for t in tasks[k : k + size]]
        if group[0].cancel is not None and group[0].cancel.cancelled:
            out.extend(_cancelled(method) for _ in group)
            continue
        cands = method._explain_batch(group)
        if len(cands) != len(group):
            raise RuntimeError(
                f"internal error: {type(method).__name__}._explain_batch returned "
                f"{len(cands)} outcomes for {len(group)} queries"
            )
        elapsed = (time.perf_counter() - start) / max(1, len(group))
        for c in cands:
            if c.runtime is None:
                c.runtime = elapsed
        out.extend(cands)
        if bar is not None:
            bar.update(len(group))
    return out


def _cancelled(method: PipelineMethod) -> Candidates:
    """The outcome of a query the caller cancelled before its search started."""
    return Candidates(
        pd.DataFrame(columns=method.schema_.names),
        "timeout",
        {"reason": "cancelled before its search started"},
        runtime=0.0,
    )
