"""The candidates of every query of a call in one frame: :class:`Pool`.

The snap phase builds it from what the method proposed; verify, sparsify and
select fill in what each learns about every row (the queries themselves are
never changed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ._judge import Judge, WithOwnTest
from ._protocol import PipelineMethod
from ._query import Query

__all__ = ["Pool", "judge_of", "leading_valid", "sparsify_cap", "write_rows"]


def _flags(n: int) -> np.ndarray:
    return np.zeros(n, dtype=bool)


@dataclass
class Pool:
    """Every query's candidates in one frame, and what each phase learnt about each row.

    Row ``k`` belongs to query ``own[k]``; ``rows_of[i]`` lists query ``i``'s
    rows in the method's order.  ``raw`` holds the rows as proposed, ``rows``
    as snapped (the first rounding), then verified and possibly sparsified.
    """

    schema: Any
    queries: pd.DataFrame
    raw: pd.DataFrame
    rows: pd.DataFrame
    own: np.ndarray
    rows_of: list[np.ndarray]
    #: per row, whether snapping moved it onto the grid
    moved: np.ndarray
    #: rows whose other rounding differs (checked if the first fails), and those rows
    alt: np.ndarray
    second: pd.DataFrame
    #: the distance answers are listed by (the normalised distance) and its norm
    encoder: Any = None
    norm: Any = "l1"
    #: the call's costs (:class:`~counterfact.constraints._costs.BoundCosts`): answers are
    #: then listed by cost
    costs: Any = None
    #: per query, its timeline (``QueryTimeline``) or None: answers are then ranked by cost
    #: plus waiting (``wait_cost`` per elapsed month), as the exact methods minimise
    timelines: list[Any] = field(default_factory=list)
    #: per query, the call's costs with the features its timeline advances made free
    query_costs: list[Any] = field(default_factory=list)
    #: filled by verify: constraints hold, the target is reached, its probability,
    #: and the moved rows for which neither rounding verifies
    sat: np.ndarray = field(default_factory=lambda: _flags(0))
    flips: np.ndarray = field(default_factory=lambda: _flags(0))
    conf: np.ndarray = field(default_factory=lambda: np.zeros(0))
    snap_failed: np.ndarray = field(default_factory=lambda: _flags(0))
    #: filled by sparsify: reverts per row, queries whose sparsification stopped at
    #: the deadline, whether it ran, the rows that may be reported (with
    #: sparsification, only the sparsified ones)
    reverted: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    stopped: np.ndarray = field(default_factory=lambda: _flags(0))
    sparsified: bool = False
    reportable: np.ndarray = field(default_factory=lambda: _flags(0))
    #: per row, the sub-step moves reverted, and whether it still has such a move
    trimmed: np.ndarray | None = None
    substep: np.ndarray | None = None
    #: filled by select: each row's key, and what selection compares (``_select.row_arrays``)
    keys: list[tuple[Any, ...]] = field(default_factory=list)
    arrays: Any = None

    def __post_init__(self) -> None:
        n = len(self.rows)
        self.sat, self.flips, self.snap_failed = _flags(n), _flags(n), _flags(n)
        self.conf = np.zeros(n)
        self.reverted = np.zeros(n, dtype=int)
        self.stopped = _flags(len(self.rows_of))
        self.reportable = np.ones(n, dtype=bool)

    @property
    def valid(self) -> np.ndarray:
        """Reportable rows that satisfy their query's constraints and flip the model."""
        return self.sat & self.flips & self.reportable

    def costs_for(self, i: int) -> Any:
        """Query ``i``'s bound costs (its timeline's moves free), else the call's."""
        return self.query_costs[i] if i < len(self.query_costs) else self.costs


def judge_of(method: PipelineMethod, tasks: list[Query]) -> Judge:
    """The call's judge (one for all its queries; the model's decision alone by default),
    with the method's own test of answers (``_own_test``) after it."""
    judge = tasks[0].judge if tasks else None
    return WithOwnTest(judge if judge is not None else Judge(method.model_), method._own_test)


def sparsify_cap(n_cf: int) -> int:
    """Valid candidates per query that are sparsified (the only ones then reported)."""
    return max(4 * n_cf + 10, 32)


def leading_valid(pool: Pool, n_cf: int) -> np.ndarray:
    """The first ``sparsify_cap(n_cf)`` valid rows of each query."""
    lead: list[int] = []
    valid = pool.valid
    for idx in pool.rows_of:
        lead.extend(idx[valid[idx]][: sparsify_cap(n_cf)].tolist())
    return np.array(lead, dtype=int)


def write_rows(pool: Pool, at: np.ndarray, new: pd.DataFrame, conf: np.ndarray) -> None:
    """Replace rows ``at`` of the pool by ``new`` (already verified) and their probabilities."""
    rows = pool.rows.astype(object)
    rows.iloc[at] = new.astype(object).to_numpy()
    pool.rows = pool.schema.coerce(rows)
    pool.conf[at] = conf
