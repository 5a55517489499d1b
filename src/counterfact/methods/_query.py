"""What a method sees of one query (:class:`Query`), what it proposes
(:class:`Candidates`), and the query's share of the time limit."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..constraints import QueryBounds, ResolvedConstraints

__all__ = ["Candidates", "Query", "learn_post", "set_budgets"]


@dataclass
class Query:
    """Everything a method needs to explain one row."""

    id: Any
    x: pd.Series
    target: Any
    target_index: int
    bounds: QueryBounds
    constraints: ResolvedConstraints
    n_counterfactuals: int
    rng: np.random.Generator
    #: the method's budget for this query, in seconds from ``started``: the
    #: user's ``time_limit`` less what the base class keeps back (``reserve``)
    time_limit: float | None
    predicted: Any = None
    #: the model's probability of ``target`` for the query itself
    query_confidence: float = float("nan")
    #: when the query's work started (set by the base class just before the
    #: method's hook runs on it, or on its sub-batch)
    started: float = field(default_factory=time.perf_counter)
    #: position of the query in the whole input (what its ``rng`` is seeded from)
    position: int = 0
    #: why the query cannot be explained (its own constraints contradict
    #: themselves); such queries never reach the method
    invalid: str | None = None
    #: seconds of the user's time limit kept back by the base class: this
    #: query's share of the input checks before the search, and the expected
    #: verification and sparsification after it
    reserve: float = 0.0

    def time_left(self) -> float:
        """Seconds left before the time limit (inf without a limit)."""
        if self.time_limit is None:
            return float("inf")
        return self.time_limit - (time.perf_counter() - self.started)

    def expired(self) -> bool:
        """Whether the time limit has run out."""
        return self.time_left() <= 0


@dataclass
class Candidates:
    """What a method proposes for one query.

    ``frame`` holds raw rows, best first.  ``status`` is the method's claim
    (``optimal`` when the first row is proven nearest, ``feasible``,
    ``infeasible`` when none exists, ``timeout``); the base class downgrades it
    when verification rejects rows.  ``diagnostics`` are method facts.
    """

    frame: pd.DataFrame
    status: str | None = None
    diagnostics: dict[str, Any] = field(default_factory=dict)


def set_budgets(method: Any, tasks: list[Query], prepared: float, begin: float) -> float | None:
    """Give each query the method's share of the time limit; returns the
    deadline of the work after the search (None without a time limit).

    The time limit covers the whole ``explain`` call per query: the input
    checks before the search (``prepared`` seconds, shared by the queries),
    the search, and the verification, snapping and sparsification after it.
    Each query's method budget (``Query.time_limit``) is the limit less its
    ``reserve``: its share of ``prepared`` plus the expected work after the
    search per query (measured on this instance's earlier calls, quick to
    rise and slow to fall; before any, 10 % of the limit up to 0.2 s),
    together at most 40 % of the limit.  The work after the search is cut
    short at ``begin + n x limit`` (sparsification stops and keeps the
    verified rows it has), the pooled deadline of the ``n`` queries.
    """
    limit = getattr(method, "time_limit", None)
    if limit is None or not tasks:
        return None
    limit = float(limit)
    share = prepared / len(tasks)
    post = getattr(method, "_post_seconds", None)
    post = min(0.1 * limit, 0.2) if post is None else float(post)
    reserve = min(share + post, 0.4 * limit)
    for t in tasks:
        t.reserve = reserve
        t.time_limit = limit - reserve
    return begin + limit * len(tasks)


def learn_post(method: Any, seconds: float, tasks: list[Query], outcomes: list[Candidates]) -> None:
    """Remember the seconds per searched query of the work after the search."""
    searched = sum(1 for t, c in zip(tasks, outcomes, strict=False) if t.invalid is None and len(c.frame))
    if getattr(method, "time_limit", None) is None or searched == 0:
        return
    per = seconds / searched
    old = getattr(method, "_post_seconds", None)
    method._post_seconds = per if old is None else max(per, 0.7 * float(old))
