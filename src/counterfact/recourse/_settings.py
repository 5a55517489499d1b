"""The grouped settings of the population analyses: :class:`Statistics` (how the per-group
figures are estimated), :class:`Batch` (how the rows are explained: in chunks, in parallel,
resumably), both shared by the audit and global recourse, and :class:`ActionSearch` (how
global recourse searches its actions)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._utils._deps import import_optional
from ..exceptions import ValidationError
from ..methods._pipeline._backends import check_parallel
from ._cover import SOLVERS

__all__ = ["ActionSearch", "Batch", "Statistics", "given"]


def _int(owner: str, name: str, value: Any, low: int, high: int | None = None) -> int:
    """``value`` as an int in ``[low, high]``, else an error naming ``owner(name=...)``."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | np.integer)
        or value < low
        or (high is not None and value > high)
    ):
        span = f"[{low}, {high}]" if high is not None else f"[{low}, inf)"
        raise ValidationError(f"{owner}({name}=...) must be an int in {span}. Got {value!r}.")
    return int(value)


def _number(owner: str, name: str, value: Any, low: float, high: float) -> float:
    """``value`` as a float strictly between ``low`` and ``high``."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float | np.integer | np.floating)
        or not math.isfinite(value)
        or not low < value < high
    ):
        raise ValidationError(
            f"{owner}({name}=...) must be a number in ({low:g}, {high:g}). Got {value!r}."
        )
    return float(value)


@dataclass(frozen=True)
class Statistics:
    """How the per-group figures of an audit or a global recourse are estimated.

    Parameters
    ----------
    confidence : float
        The level of every interval, in ``(0, 1)``: Wilson score intervals for the
        rates, seeded percentile bootstrap intervals for the costs.
    n_bootstrap : int
        Bootstrap resamples per cost interval (``0``: no cost intervals, fastest).
    min_group_size : int
        Groups with fewer rejected rows are flagged ``small``: their figures are
        shown but unreliable, and they are the reference (best-off) group only when
        every group of their grouping is small.
    random_state : int
        The seed of every random draw: the bootstrap, and global recourse's screening
        sample of people.

    Examples
    --------
    >>> from counterfact.recourse import Statistics
    >>> Statistics(confidence=0.9, n_bootstrap=200)
    Statistics(confidence=0.9, n_bootstrap=200, min_group_size=30, random_state=0)
    """

    confidence: float = 0.95
    n_bootstrap: int = 1000
    min_group_size: int = 30
    random_state: int = 0

    def __post_init__(self) -> None:
        owner = "Statistics"
        object.__setattr__(
            self, "confidence", _number(owner, "confidence", self.confidence, 0.0, 1.0)
        )
        object.__setattr__(self, "n_bootstrap", _int(owner, "n_bootstrap", self.n_bootstrap, 0))
        object.__setattr__(
            self, "min_group_size", _int(owner, "min_group_size", self.min_group_size, 0)
        )
        if isinstance(self.random_state, bool) or not isinstance(
            self.random_state, int | np.integer
        ):
            raise ValidationError(
                f"Statistics(random_state=...) must be an int. Got {self.random_state!r}."
            )
        object.__setattr__(self, "random_state", int(self.random_state))


@dataclass(frozen=True)
class Batch:
    """How the rows of an audit or a global recourse are explained: in chunks, in
    parallel, resumably (:func:`counterfact.methods.explain_in_chunks`).

    Parameters
    ----------
    n_jobs : int
        Parallel workers (joblib); ``-1`` for all cores.
    parallel : {"loky", "threading", "dask", "ray"}, optional
        joblib's backend (default loky), as ``explain(parallel=...)``.
    chunk_size : int
        Rows per task.
    out_dir : path, optional
        Where each chunk's answers are written as it finishes: a re-run with the same
        settings resumes there, and a run with other settings is refused.
    address : str, optional
        Where the cluster is: a Dask scheduler (``tcp://host:8786``) for
        ``parallel="dask"``, or a Ray cluster (``host:6379``, ``"auto"``) for
        ``parallel="ray"``; refused for the backends that run on this machine.

    Examples
    --------
    >>> from counterfact.recourse import Batch
    >>> Batch(n_jobs=2, chunk_size=100)
    Batch(n_jobs=2, parallel=None, chunk_size=100, out_dir=None, address=None)
    """

    n_jobs: int = 1
    parallel: str | None = None
    chunk_size: int = 200
    out_dir: str | Path | None = None
    address: str | None = None

    def __post_init__(self) -> None:
        n = self.n_jobs
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or n == 0:
            raise ValidationError(f"Batch(n_jobs=...) must be a non-zero int. Got {n!r}.")
        object.__setattr__(self, "n_jobs", int(n))
        object.__setattr__(self, "chunk_size", _int("Batch", "chunk_size", self.chunk_size, 1))
        if self.out_dir is not None:
            object.__setattr__(self, "out_dir", Path(self.out_dir))
        check_parallel(self.parallel, self.address)


@dataclass(frozen=True)
class ActionSearch:
    """How :func:`~counterfact.global_recourse` searches its actions.

    Parameters
    ----------
    max_features : int
        Features one action may change (1 to 5).
    max_candidates : int
        Candidate actions verified on everyone; when the per-person answers give more,
        they are first screened on a seeded sample of people.
    solver : {"auto", "greedy", "milp"}
        How the actions are chosen: greedy max-coverage (at least 1 - 1/e of the best
        coverage), an exact max-coverage MILP on HiGHS (needs ``highspy``), or
        ``"auto"``: the MILP when it is small and HiGHS is installed, else greedy.
    time_limit : float
        Seconds per MILP solve (one per number of actions); on expiry the best set
        found is kept and its coverage bound reported.

    Examples
    --------
    >>> from counterfact.recourse import ActionSearch
    >>> ActionSearch(max_features=1, solver="greedy")
    ActionSearch(max_features=1, max_candidates=200, solver='greedy', time_limit=10.0)
    """

    max_features: int = 2
    max_candidates: int = 200
    solver: str = "auto"
    time_limit: float = 10.0

    def __post_init__(self) -> None:
        owner = "ActionSearch"
        object.__setattr__(
            self, "max_features", _int(owner, "max_features", self.max_features, 1, 5)
        )
        object.__setattr__(
            self, "max_candidates", _int(owner, "max_candidates", self.max_candidates, 1)
        )
        if self.solver not in SOLVERS:
            raise ValidationError(
                f"ActionSearch(solver=...) must be one of {list(SOLVERS)}. Got {self.solver!r}."
            )
        object.__setattr__(
            self, "time_limit", _number(owner, "time_limit", self.time_limit, 0.0, math.inf)
        )

    def check_installed(self) -> None:
        """An explicit ``solver="milp"`` needs HiGHS: a clear error before any work."""
        if self.solver == "milp":
            import_optional(
                "highspy", purpose="global_recourse(search=ActionSearch(solver='milp'))"
            )


def given(value: Any, cls: type, name: str, function: str) -> Any:
    """``value`` if it is a ``cls``, ``cls()`` for None, else an error naming the parameter."""
    if value is None:
        return cls()
    if not isinstance(value, cls):
        raise ValidationError(
            f"The {name!r} parameter of {function} must be a {cls.__name__} or None. "
            f"Got {type(value).__name__}."
        )
    return value
