"""One query's state across the swarm's attempts, and the model's verdict on a swarm."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._pipeline import Query
from ._fast import QueryInputs
from ._problem import Problem
from ._search import Swarm, SwarmResult

__all__ = ["Job", "verdict"]


@dataclass
class Job:
    """One query's state across the swarm's attempts."""

    query: Query
    template: dict[str, np.ndarray]
    attempt: int = 0
    iterations: int = 0
    problem: Problem | None = None
    swarm: Swarm | None = None
    inputs: QueryInputs | None = None
    result: SwarmResult | None = None
    pool_X: np.ndarray | None = None
    pool_cost: np.ndarray | None = None
    #: the candidates handed on, in order (chosen ones first), and their costs
    final_X: np.ndarray | None = None
    final_cost: np.ndarray | None = None
    expired: bool = False
    reason: str = ""


def verdict(
    P: np.ndarray, t: int, min_probability: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Valid (the target is the arg-max, with at least ``min_probability`` when
    given) and the hinge distance to that target region."""
    pt = P[:, t]
    others = P.copy()
    others[:, t] = -np.inf
    top_other = others.max(axis=1)
    valid = np.argmax(P, axis=1) == t
    gap = np.maximum(top_other - pt, 0.0) / 2.0
    if min_probability is not None:
        valid &= pt >= min_probability
        gap = np.maximum(gap, min_probability - pt)
    return valid, gap
