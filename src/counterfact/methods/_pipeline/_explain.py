"""``explain``, top to bottom: prepare, budget, search, snap, verify, sparsify,
select, regions, assemble (the phases of ``docs/architecture.md``)."""

from __future__ import annotations

import sys
import time
from typing import Any

from ..._utils._deadline import CancelToken
from ..._utils._progress import should_show, summary_line
from ...constraints import Requirements
from ...result import CounterfactualResult
from ._assemble import assemble
from ._backends import check_chunk_size, check_n_jobs, check_parallel
from ._budget import budget
from ._prepare import check_requirements, prepare, warn_out_of_domain
from ._protocol import PipelineMethod
from ._regions import regions
from ._robustness import explain_robust
from ._search import search
from ._select import select, without_region_copies
from ._snap import snap
from ._sooner import bring_forward
from ._sparsify import sparsify
from ._verify import verify

__all__ = ["explain"]


def _before_work(
    method: PipelineMethod, X: Any, parallel: Any, n_jobs: Any, chunk_size: Any, feedback: bool
) -> None:
    """The backend, the number of workers and the rows per task checked before any work,
    and what the rows call for said once per call (not again per chunk or setting)."""
    check_parallel(parallel)
    check_n_jobs(n_jobs)
    check_chunk_size(chunk_size, optional=True)
    if feedback:
        warn_out_of_domain(method, X, stacklevel=4)


def explain(
    method: PipelineMethod,
    X: Any,
    *,
    n_counterfactuals: int = 1,
    constraints: Any = None,
    target: Any = None,
    requirements: Requirements | None = None,
    alternatives: str = "distinct",
    errors: str | None = None,
    n_jobs: int | None = 1,
    parallel: str | None = None,
    chunk_size: int | None = None,
    cancel: CancelToken | None = None,
    feedback: bool = True,
) -> CounterfactualResult:
    """Explain every row of ``X`` with the fitted ``method`` (the body of
    ``CounterfactualMethod.explain``; the parameters are documented there).

    ``feedback=False`` hides the progress bar and the summary line (a chunk of a
    chunked run, which shows its own).  Neither the method nor any query is
    changed by a phase: each phase returns what the next one needs.
    """
    begin = time.perf_counter()
    req = check_requirements(requirements)
    _before_work(method, X, parallel, n_jobs, chunk_size, feedback)
    if req.robustness is not None:  # one call per setting of a ladder (_robustness.py)
        call = {"n_counterfactuals": n_counterfactuals, "alternatives": alternatives}
        call |= {"errors": errors, "n_jobs": n_jobs, "parallel": parallel, "cancel": cancel}
        call |= {"chunk_size": chunk_size, "constraints": constraints, "target": target}
        result = explain_robust(explain, method, X, req, feedback=feedback, **call)
        _summary(method, result, feedback)
        return result
    tasks, given = prepare(
        method,
        X,
        n_counterfactuals,
        constraints,
        target,
        requirements=req,
        errors=errors,
        cancel=cancel,
        alternatives=alternatives,
    )
    n_cf = int(n_counterfactuals)
    tasks, deadline = budget(method, tasks, begin, cancel)
    outcomes = search(
        method, tasks, n_jobs=n_jobs, parallel=parallel, chunk_size=chunk_size, feedback=feedback
    )
    pool = snap(method, tasks, outcomes)
    verify(method, pool, tasks)
    sparsify(method, pool, tasks, n_cf, deadline)
    bring_forward(method, pool, tasks)
    answers = select(method, pool, tasks, outcomes, n_cf)
    found = regions(method, tasks, answers, req)
    answers, found = without_region_copies(answers, found, n_cf)
    result = assemble(method, pool, tasks, outcomes, answers, found, given, n_cf)
    _summary(method, result, feedback)
    return result


def _summary(method: PipelineMethod, result: CounterfactualResult, feedback: bool) -> None:
    """The closing summary line on standard error, when feedback is shown."""
    if feedback and should_show(method.verbose, len(result.queries)):
        print(summary_line(result.status, result.diagnostics), file=sys.stderr, flush=True)
