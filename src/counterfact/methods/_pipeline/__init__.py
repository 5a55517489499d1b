"""The one explain pipeline every method runs (``CounterfactualMethod.explain``).

Phases, in order, each a function that :func:`._explain.explain` calls by name
(a reader can follow it top to bottom).  The pipeline reads from a method only
what its protocol declares (:class:`._protocol.PipelineMethod`); a query is
immutable once prepared, and nothing changes the fitted method.

1. **prepare** (:func:`._prepare.prepare`): check the rows against the schema,
   check and resolve every row's constraints and the call's requirements
   before any search, fix each row's target class, seed each query's random
   stream from ``random_state`` and the row's own values.
2. **budget** (:func:`._budget.budget`): share each query's ``time_limit``
   between its search and the work after it (fixed shares); returns the
   queries with their budget and the deadline of the work after the search.
3. **search** (:func:`._search.search`): the method's hook (``_explain_one`` or
   ``_explain_batch``) on every query that can be explained, serially or
   through joblib.
4. **snap** (:func:`._snap.snap`): every candidate in one pool, on its
   features' grids.
5. **verify** (:func:`._verify.verify`): every candidate checked with the real
   model and the query's constraints (the other rounding tried when the first
   fails).
6. **sparsify** (:func:`._sparsify.sparsify`): revert every change the model
   does not need (methods that sparsify); then (``alternatives="distinct"``)
   revert the moves smaller than their feature's meaningful step.
7. **select** (:func:`._select.select`, :mod:`._diversity`): valid, distinct,
   pairwise different answers up to ``n_counterfactuals``, none dominated by
   another and none a copy of another under the measure; the status, and why
   fewer than asked.
8. **regions** (:func:`._regions.regions`): what the answers were asked to
   satisfy, and their certified regions when asked for (an answer inside
   another's region is then dropped, :func:`._select.without_region_copies`).
9. **assemble** (:func:`._assemble.assemble`): one
   :class:`~counterfact.result.CounterfactualResult`, built with everything.

:func:`explain_in_chunks` (:mod:`._batch`) runs the same pipeline chunk by
chunk, resumably, on joblib's, Dask's or Ray's workers.
"""

from ._batch import BatchReport, explain_in_chunks, parallel_backend
from ._diversity import (
    ALTERNATIVES,
    DEFAULT_DIVERSITY_FRACTION,
    changed_mask,
    different,
    diversity_steps,
    keep_different,
    meaningful_mask,
    solver_steps,
    substep_mask,
)
from ._explain import explain
from ._judge import Judge, make_judge
from ._protocol import PIPELINE_READS, PipelineMethod
from ._query import Candidates, Query, pooled_deadline
from ._robustness import (
    fit_robustness_copies,
    robustness_calls,
    robustness_ladder,
    robustness_refits,
)
from ._search import ALREADY_TARGET
from ._snap import resolution, snap_frame, snap_matrix
from ._verify import check_rows

__all__ = [
    "ALREADY_TARGET",
    "ALTERNATIVES",
    "DEFAULT_DIVERSITY_FRACTION",
    "PIPELINE_READS",
    "BatchReport",
    "Candidates",
    "Judge",
    "PipelineMethod",
    "Query",
    "changed_mask",
    "check_rows",
    "different",
    "diversity_steps",
    "explain",
    "explain_in_chunks",
    "fit_robustness_copies",
    "keep_different",
    "make_judge",
    "meaningful_mask",
    "parallel_backend",
    "pooled_deadline",
    "resolution",
    "robustness_calls",
    "robustness_ladder",
    "robustness_refits",
    "snap_frame",
    "snap_matrix",
    "solver_steps",
    "substep_mask",
]
