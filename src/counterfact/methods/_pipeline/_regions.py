"""The regions phase: each answer's certified region, computed after the selection
when asked (``Requirements(regions=True)``), else on demand by the result.

Each region is the widest box around an answer in which every point reaches the
target in the call's judge (the model's decision, any margin and every other
model), proven or checked on samples (:mod:`._region`).  The regions and what
the answers were asked to satisfy go into the result's constructor.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..._utils._deadline import Deadline
from ...constraints import Requirements
from ...result import Region
from ._protocol import PipelineMethod
from ._query import Query
from ._region import RegionFinder
from ._select import Answers

__all__ = ["Regions", "regions"]

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


@dataclass(frozen=True)
class Regions:
    """What the result is built with: what the answers were asked to satisfy, the
    regions computed now (``(query, rank) -> Region``) and the source of the others."""

    requirements: dict[str, Any]
    computed: dict[tuple[Any, int], Region] = field(default_factory=dict)
    source: _Source | None = None


def regions(
    method: PipelineMethod, tasks: list[Query], answers: Answers, req: Requirements
) -> Regions:
    """Record what the answers were asked to satisfy (``req``); with a margin or other
    models, let the result compute regions on demand, and compute them now when asked
    (``req.regions``): each region is grown for up to the method's ``time_limit``
    (else :data:`REGION_SECONDS`), after the search."""
    judge = tasks[0].judge if tasks else None
    asked = req.record()
    if judge is None:
        return Regions(asked)
    finder = RegionFinder(method.schema_, judge, method.data_.X, seconds=REGION_SECONDS)
    source = _Source(finder, tasks)
    if not req.regions:
        return Regions(asked, source=source)
    seconds = method.time_limit or REGION_SECONDS
    token = tasks[0].cancel
    found: dict[tuple[Any, int], Region] = {}
    for (q, rank), (_, row) in zip(answers.frame.index, answers.frame.iterrows(), strict=True):
        if token is not None and token.cancelled:
            break
        limit = Deadline.after(seconds, token=token)
        found[(q, int(rank))] = source(q, int(rank), row, limit)
    return Regions(asked, found, source)
