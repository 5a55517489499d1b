"""The budget phase: a call's time limit shared between the search and the work after it.

The time limit (``time_limit``, seconds per query) covers the whole ``explain``
call: the input checks before the search (shared by the queries), the search,
and the snapping, verification and sparsification after it.  Each query's
search budget (``Query.time_limit``) is the limit less its ``reserve``: its
share of the input checks plus a fixed allowance for the work after the search
(:data:`POST_SHARE` of the limit, at most :data:`POST_SECONDS`), together at
most :data:`MAX_RESERVE_SHARE` of the limit.  The work after the search is cut
short at the call's deadline, ``begin + n x limit`` for ``n`` queries (their
limits pooled), less :data:`TAIL` for the selection and the result.

The shares are fixed, not learnt: the same call behaves the same way every
time, and ``explain`` leaves the fitted method unchanged.
"""

from __future__ import annotations

import time
from dataclasses import replace

from ..._utils._deadline import CancelToken, Deadline
from ._protocol import PipelineMethod
from ._query import Query

__all__ = ["budget", "reserve"]

#: the most of a query's limit kept back from its search
MAX_RESERVE_SHARE = 0.4
#: the share of the limit kept for the work after the search ...
POST_SHARE = 0.1
#: ... and at most this many seconds
POST_SECONDS = 0.2
#: seconds kept after sparsification stops, for the selection and the result
TAIL = 0.05


def reserve(limit: float, prepared: float, n: int) -> float:
    """Seconds of each query's ``limit`` kept back from its search, after input
    checks that took ``prepared`` seconds for ``n`` queries."""
    post = min(POST_SHARE * limit, POST_SECONDS)
    return min(prepared / max(n, 1) + post, MAX_RESERVE_SHARE * limit)


def budget(
    method: PipelineMethod,
    tasks: list[Query],
    begin: float,
    cancel: CancelToken | None = None,
) -> tuple[list[Query], Deadline]:
    """Each query with its search budget under the method's ``time_limit``, and
    the deadline of the work after the search (no limit without a time limit;
    passed at once when ``cancel`` is set).  ``begin``: when the call started."""
    limit = method.time_limit
    if limit is None or not tasks:
        return tasks, Deadline(None, cancel)
    limit = float(limit)
    keep = reserve(limit, time.perf_counter() - begin, len(tasks))
    planned = [replace(t, time_limit=limit - keep, reserve=keep) for t in tasks]
    deadline = Deadline.after(limit * len(tasks), start=begin).reserve(TAIL)
    return planned, Deadline(deadline.at, cancel)
