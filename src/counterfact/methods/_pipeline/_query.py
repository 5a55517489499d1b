"""What a method sees of one query (:class:`Query`) and what it proposes (:class:`Candidates`)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..._utils._deadline import CancelToken, Deadline
from ...constraints._bounds import QueryBounds, ResolvedConstraints
from ._judge import Judge

__all__ = ["Candidates", "Query", "pooled_deadline"]


@dataclass(frozen=True, eq=False)
class Query:
    """Everything a method needs to explain one row.

    Immutable once prepared: the budget phase sets ``time_limit`` and ``reserve``
    and the search sets ``started`` on new copies (:func:`dataclasses.replace`);
    no phase writes into a query.
    """

    id: Any
    x: pd.Series
    target: Any
    target_index: int
    bounds: QueryBounds
    constraints: ResolvedConstraints
    n_counterfactuals: int
    rng: np.random.Generator
    #: the method's budget for this query, in seconds from ``started``: the
    #: user's ``time_limit`` less what the pipeline keeps back (``reserve``)
    time_limit: float | None = None
    predicted: Any = None
    #: the model's probability of ``target`` for the query itself
    query_confidence: float = float("nan")
    #: when the query's work started (set by the search just before the
    #: method's hook runs on it, or on its sub-batch)
    started: float = field(default_factory=time.perf_counter)
    #: why the query cannot be explained (its own constraints contradict
    #: themselves); such queries never reach the method
    invalid: str | None = None
    #: seconds of the user's time limit kept back by the pipeline: this
    #: query's share of the input checks before the search, and the expected
    #: verification and sparsification after it
    reserve: float = 0.0
    #: set when the caller no longer wants the answer (the deadline then counts as passed)
    cancel: CancelToken | None = None
    #: whether a row reaches the target: the model's decision, and any margin
    #: (``min_probability``) or other models (``robust_to``) the call asked for
    judge: Judge | None = None
    #: how the answers of this call differ (``explain(alternatives=...)``):
    #: "distinct" (meaningful steps, see :mod:`._diversity`) or "method"
    alternatives: str = "distinct"
    #: the call's costs (``Requirements(costs=...)``) bound to the method's training data
    #: (:class:`~counterfact.constraints._costs.BoundCosts`), or None: the method's own norm
    costs: Any = None

    def feature_costs(self) -> tuple[Any, ...] | None:
        """Per feature, the cost of a new value for this row
        (:class:`~counterfact.constraints._costs.FeatureCost`, solver units), or None
        without costs."""
        return None if self.costs is None else self.costs.for_query(self.x)

    @property
    def min_probability(self) -> float | None:
        """The least probability of the target the call asked for (None: the decision only)."""
        return None if self.judge is None else self.judge.min_probability

    @property
    def min_vote_share(self) -> float | None:
        """The least share of a forest's trees voting for the target (None: no vote rule)."""
        return None if self.judge is None else self.judge.min_vote_share

    @property
    def robust_to(self) -> tuple[Any, ...]:
        """The other models (adapters) the answer must reach the target in."""
        return () if self.judge is None else self.judge.others

    @property
    def deadline(self) -> Deadline:
        """When the method's search of this query must end (``started + time_limit``,
        or earlier when the explain call is cancelled)."""
        return Deadline.after(self.time_limit, start=self.started, token=self.cancel)

    def time_left(self) -> float:
        """Seconds left before the time limit (inf without a limit)."""
        return self.deadline.left()

    def expired(self) -> bool:
        """Whether the time limit has run out."""
        return self.deadline.expired()


def pooled_deadline(queries: Sequence[Query]) -> Deadline:
    """The deadline of a batch searched together: from its earliest start, every
    query's own budget summed (no limit when the queries have none)."""
    token = queries[0].cancel if queries else None
    if not queries or all(q.time_limit is None for q in queries):
        return Deadline(None, token)
    start = min(q.started for q in queries)
    return Deadline.after(
        sum(float(q.time_limit or 0.0) for q in queries), start=start, token=token
    )


@dataclass
class Candidates:
    """What a method proposes for one query.

    ``frame`` holds raw rows, best first.  ``status`` is the method's claim
    (``optimal`` when the first row is proven nearest, ``feasible``,
    ``infeasible`` when none exists, ``timeout``); the pipeline downgrades it
    when verification rejects rows.  ``diagnostics`` are method facts.
    ``runtime`` (seconds) is set by the pipeline when the method leaves it None.
    """

    frame: pd.DataFrame
    status: str | None = None
    diagnostics: dict[str, Any] = field(default_factory=dict)
    runtime: float | None = None
