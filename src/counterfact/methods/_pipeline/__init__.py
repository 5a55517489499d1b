"""The one explain pipeline every method runs (``CounterfactualMethod.explain``).

Phases, in order, each a function a reader can follow top to bottom
(:func:`._explain.explain`):

1. **prepare** (:mod:`._prepare`): check the rows against the schema, check and
   resolve every row's constraints before any search, fix each row's target
   class, seed each query's random stream from its position.
2. **budget** (:mod:`._budget`): share each query's ``time_limit`` between its
   search and the work after it; one :class:`~counterfact._utils._deadline.Deadline`
   per query (``Query.deadline``) and one for the work after the search.
3. **search** (:mod:`._search`): the method's hook (``_explain_one`` or
   ``_explain_batch``) on every query that can be explained, serially or
   through joblib.
4. **snap and verify** (:mod:`._snap`, :mod:`._verify`): every candidate on its
   features' grids, checked with the real model and the query's constraints.
5. **sparsify** (:mod:`._sparsify`, methods that opt in): revert every change
   the model does not need; then (every method, ``alternatives="distinct"``)
   revert the moves smaller than their feature's meaningful step.
6. **select diverse** (:mod:`._select`, :mod:`._diversity`): valid, distinct,
   pairwise different answers up to ``n_counterfactuals``; the status.
7. **assemble** (:mod:`._assemble`): one :class:`~counterfact.result.CounterfactualResult`.

:func:`explain_in_chunks` (:mod:`._batch`) runs the same pipeline chunk by
chunk, resumably, on joblib's, Dask's or Ray's workers.
"""

from ._batch import BatchReport, explain_in_chunks, parallel_backend
from ._budget import TimeBudget
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
from ._query import Candidates, Query, pooled_deadline
from ._snap import resolution, snap_frame, snap_matrix
from ._sparsify import sparsify
from ._verify import check_rows

__all__ = [
    "ALTERNATIVES",
    "DEFAULT_DIVERSITY_FRACTION",
    "BatchReport",
    "Candidates",
    "Judge",
    "Query",
    "TimeBudget",
    "changed_mask",
    "check_rows",
    "different",
    "diversity_steps",
    "explain",
    "explain_in_chunks",
    "keep_different",
    "make_judge",
    "meaningful_mask",
    "parallel_backend",
    "pooled_deadline",
    "resolution",
    "snap_frame",
    "snap_matrix",
    "solver_steps",
    "sparsify",
    "substep_mask",
]
