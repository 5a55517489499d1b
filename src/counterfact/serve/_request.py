"""What a request may ask for, what a validated one is, and the refusals of a busy server."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from .._utils._deadline import CancelToken
from ..constraints import Constraints, Requirements
from ..exceptions import CounterfactError, ValidationError
from ..schema._numbers import finite_number

__all__ = ["ExplainJob", "Limits", "QuotaExceeded", "ServerBusy"]


class ServerBusy(CounterfactError):
    """Too many explanations are already waiting; the client should retry later.

    ``retry_after``: seconds after which a retry may succeed (the ``Retry-After`` header).
    """

    def __init__(self, message: str, retry_after: float = 2.0) -> None:
        super().__init__(message)
        self.retry_after = float(retry_after)


class QuotaExceeded(ServerBusy):
    """This client used up a quota (requests per minute, counterfactuals per hour)."""


@dataclass(frozen=True)
class Limits:
    """Request limits enforced by the server.

    Parameters
    ----------
    max_rows : int
        Rows per ``/api/predict`` or ``/api/explain`` request.
    max_body_bytes : int
        Size of a request body.
    max_counterfactuals : int
        ``n_counterfactuals`` per row.
    max_time_limit : float
        Largest ``time_limit`` (seconds per row) a request may ask for.
    default_time_limit : float
        ``time_limit`` when a request gives none.
    max_pending : int
        Explanations admitted at once (running or waiting for their method);
        more get ``429 Too Many Requests``.
    method_concurrency : int
        Explanations of one method that run at the same time, each on its own
        copy of the fitted method; more wait for a free one.
    requests_per_minute : int or None
        Per client (its address): ``/api/*`` requests in any 60 seconds; more
        get ``429`` with ``Retry-After``.  None: no quota.
    counterfactuals_per_hour : int or None
        Per client: counterfactuals answered in any hour (a request reserves
        rows x ``n_counterfactuals`` up front); more get ``429``.  None: no quota.
    """

    max_rows: int = 20
    max_body_bytes: int = 64 * 1024
    max_counterfactuals: int = 5
    max_time_limit: float = 30.0
    default_time_limit: float = 5.0
    max_pending: int = 32
    method_concurrency: int = 2
    requests_per_minute: int | None = None
    counterfactuals_per_hour: int | None = None

    def __post_init__(self) -> None:
        for name in (
            "max_rows",
            "max_body_bytes",
            "max_counterfactuals",
            "max_pending",
            "method_concurrency",
            "requests_per_minute",
            "counterfactuals_per_hour",
        ):
            v = getattr(self, name)
            if v is None and name in ("requests_per_minute", "counterfactuals_per_hour"):
                continue
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValidationError(f"Limits.{name} must be an int >= 1. Got {v!r}.")
        for name in ("max_time_limit", "default_time_limit"):
            v = getattr(self, name)
            if finite_number(v, f"Limits.{name}") <= 0:
                raise ValidationError(
                    f"Limits.{name} must be a finite number of seconds > 0. Got {v!r}."
                )
        if self.default_time_limit > self.max_time_limit:
            raise ValidationError(
                f"Limits.default_time_limit ({self.default_time_limit}) exceeds max_time_limit "
                f"({self.max_time_limit})."
            )


@dataclass
class ExplainJob:
    """A validated explain request, ready to run.

    ``cancel`` stops its work (the client went away, its deadline passed);
    ``deadline`` is the most seconds its explanation may take once its method
    starts on it (the time limit of every row, and time to verify).
    """

    frame: pd.DataFrame
    method: str
    constraints: Constraints | None
    target: Any
    n_counterfactuals: int
    time_limit: float
    cancel: CancelToken = field(default_factory=CancelToken)
    #: the least probability of the target every answer must reach (None: cross the boundary)
    min_probability: float | None = None
    #: the least share of a forest's trees voting for the target (None: not asked)
    min_vote_share: float | None = None
    #: compute each answer's certified region (grown for up to ``time_limit`` seconds each)
    regions: bool = False
    #: the retrained models every answer must also hold for (empty: only the served model)
    robust_to: tuple[Any, ...] = ()
    #: the share of retrained models that should still accept each answer (None: not asked)
    robustness: float | None = None
    #: add each answer's reasons for a notice and the notice's text
    reasons: bool = False
    #: the named measure of "smaller" (``Requirements(costs=...)``; None: the measure of effort)
    measure: str | None = None
    #: the most searches one row may take (a robustness ladder's settings; 1 otherwise)
    calls: int = 1

    @property
    def deadline(self) -> float:
        """Seconds the explanation may run before the server cancels it: the search's
        time limit per row for each search a row may take (every setting of a robustness
        ladder), and with regions the time limit of each answer's region."""
        per_row = 1.25 * self.calls + (self.n_counterfactuals if self.regions else 0)
        return per_row * len(self.frame) * self.time_limit + 2.0

    def requirements(self) -> Requirements:
        """What every answer is held to, as the library's :class:`~counterfact.Requirements`."""
        return Requirements(
            min_probability=self.min_probability,
            min_vote_share=self.min_vote_share,
            robust_to=tuple(self.robust_to),
            regions=self.regions,
            costs=self.measure,
            robustness=self.robustness,
        )
