"""The time limit of an ``explain`` call, shared between the search and the work after it."""

from __future__ import annotations

from collections.abc import Sequence

from ..._utils._deadline import Deadline
from ._query import Candidates, Query

__all__ = ["TimeBudget"]

#: the most of a query's limit kept back from its search
MAX_RESERVE_SHARE = 0.4
#: seconds kept after sparsification stops, for the selection and the result
TAIL = 0.05


class TimeBudget:
    """How a method's ``time_limit`` (seconds per query) is spent, learnt per fitted instance.

    The time limit covers the whole ``explain`` call per query: the input
    checks before the search (shared by the queries), the search, and the
    verification, snapping and sparsification after it.  Each query's search
    budget (``Query.time_limit``) is the limit less its ``reserve``: its share
    of the input checks plus the expected work after the search per query
    (measured on this instance's earlier calls, quick to rise and slow to fall;
    before any, 10 % of the limit up to 0.2 s), together at most 40 % of the
    limit.  The work after the search is cut short at the call's deadline,
    ``begin + n x limit`` for ``n`` queries (their limits pooled), less
    :data:`TAIL` for the selection and the result.
    """

    def __init__(self) -> None:
        #: seconds per searched query of the work after the search (None before any call)
        self.post_seconds: float | None = None

    def plan(
        self, limit: float | None, tasks: Sequence[Query], prepared: float, begin: float
    ) -> Deadline:
        """Give each query its search budget under ``limit`` (seconds per query);
        returns the deadline of the work after the search (no limit without a
        time limit).  ``prepared``: seconds the input checks took; ``begin``:
        when the call started."""
        if limit is None or not tasks:
            return Deadline.none()
        limit = float(limit)
        share = prepared / len(tasks)
        post = min(0.1 * limit, 0.2) if self.post_seconds is None else float(self.post_seconds)
        reserve = min(share + post, MAX_RESERVE_SHARE * limit)
        for t in tasks:
            t.reserve = reserve
            t.time_limit = limit - reserve
        return Deadline.after(limit * len(tasks), start=begin).reserve(TAIL)

    def learn(
        self,
        limit: float | None,
        seconds: float,
        tasks: Sequence[Query],
        outcomes: Sequence[Candidates],
    ) -> None:
        """Remember the seconds per searched query of the work after the search
        (only under a time limit, the only case where it is used)."""
        searched = sum(
            1 for t, c in zip(tasks, outcomes, strict=False) if t.invalid is None and len(c.frame)
        )
        if limit is None or searched == 0:
            return
        per = seconds / searched
        old = self.post_seconds
        self.post_seconds = per if old is None else max(per, 0.7 * float(old))
