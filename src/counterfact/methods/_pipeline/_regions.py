"""Regions of a result: computed after the selection when asked, else on demand."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..._utils._deadline import Deadline
from ...result import CounterfactualResult, Region
from ._query import Query
from ._region import RegionFinder

__all__ = ["attach_regions"]

#: seconds a region is grown for when the method has no time limit
REGION_SECONDS = 10.0


class _Source:
    """``region(query, rank, row)`` for the result, from the call's queries and judge."""

    def __init__(self, finder: RegionFinder, tasks: list[Query]) -> None:
        self.finder = finder
        self.tasks = {t.id: t for t in tasks}

    def __call__(
        self, query: Any, rank: int, row: pd.Series, deadline: Deadline | None = None
    ) -> Region:
        t = self.tasks[query]
        return self.finder.find(t.x, t.bounds, row, t.target, deadline)


def attach_regions(
    method: Any, result: CounterfactualResult, tasks: list[Query], *, compute: bool
) -> None:
    """Record what the answers were asked to satisfy; let the result compute regions on
    demand, and compute them now when asked: each region is grown for up to the
    method's ``time_limit`` (else :data:`REGION_SECONDS`), after the search."""
    judge = tasks[0].judge if tasks else None
    result.requirements = {
        "min_probability": None if judge is None else judge.min_probability,
        "robust_to": 0 if judge is None else len(judge.others),
    }
    if judge is None:
        return
    source = _Source(
        RegionFinder(method.schema_, judge, method.data_.X, seconds=REGION_SECONDS), tasks
    )
    result.region_source = source
    if not compute:
        return
    seconds = getattr(method, "time_limit", None) or REGION_SECONDS
    token = tasks[0].cancel
    for q, rank in result.counterfactuals.index:
        if token is not None and token.cancelled:
            break
        limit = Deadline.after(seconds, token=token)
        result.regions[(q, int(rank))] = source(
            q, int(rank), result.counterfactuals.loc[(q, rank)], limit
        )
