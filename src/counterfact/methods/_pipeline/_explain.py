"""``explain``, top to bottom: prepare → search → assemble (snap, verify, sparsify, select)."""

from __future__ import annotations

import sys
import time
from typing import Any

from ..._utils._deadline import CancelToken, Deadline
from ..._utils._progress import should_show, summary_line
from ...result import CounterfactualResult
from ._assemble import assemble
from ._prepare import prepare
from ._regions import attach_regions
from ._search import search

__all__ = ["explain"]


def explain(
    method: Any,
    X: Any,
    *,
    n_counterfactuals: int = 1,
    constraints: Any = None,
    target: Any = None,
    n_jobs: int | None = 1,
    backend: str | None = None,
    chunk_size: int | None = None,
    errors: str | None = None,
    offset: int = 0,
    feedback: bool = True,
    cancel: CancelToken | None = None,
    min_probability: float | None = None,
    robust_to: Any = None,
    regions: bool = False,
    alternatives: str = "distinct",
    costs: Any = None,
) -> CounterfactualResult:
    """Explain every row of ``X`` with the fitted ``method`` (the body of
    ``CounterfactualMethod.explain``; the parameters are documented there).

    ``offset``: the position of ``X``'s first row in the whole input
    (``Query.position``; chunked runs pass each chunk's offset).  ``feedback=False`` hides the progress bar and the summary line
    (a chunk of a chunked run, which shows its own).
    """
    begin = time.perf_counter()
    tasks, given = prepare(
        method,
        X,
        n_counterfactuals,
        constraints,
        target,
        errors=errors,
        offset=offset,
        cancel=cancel,
        min_probability=min_probability,
        robust_to=robust_to,
        alternatives=alternatives,
        costs=costs,
    )
    limit = getattr(method, "time_limit", None)
    deadline = method.time_budget_.plan(limit, tasks, time.perf_counter() - begin, begin)
    if cancel is not None:
        deadline = Deadline(deadline.at, cancel)
    outcomes = search(
        method, tasks, n_jobs=n_jobs, backend=backend, chunk_size=chunk_size, feedback=feedback
    )
    after = time.perf_counter()
    result = assemble(method, tasks, outcomes, given, int(n_counterfactuals), deadline=deadline)
    method.time_budget_.learn(limit, time.perf_counter() - after, tasks, outcomes)
    attach_regions(method, result, tasks, compute=regions)
    if feedback and should_show(getattr(method, "verbose", 0), len(tasks)):
        print(summary_line(result.status, result.diagnostics), file=sys.stderr, flush=True)
    return result
