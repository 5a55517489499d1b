"""What a request may ask for, what a validated one is, and the refusal of a busy server."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..constraints import Constraints
from ..exceptions import CounterfactError, ValidationError

__all__ = ["ExplainJob", "Limits", "ServerBusy"]


class ServerBusy(CounterfactError):
    """Too many explanations are already waiting; the client should retry later."""


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
    """

    max_rows: int = 20
    max_body_bytes: int = 64 * 1024
    max_counterfactuals: int = 5
    max_time_limit: float = 30.0
    default_time_limit: float = 5.0
    max_pending: int = 32

    def __post_init__(self) -> None:
        for name in ("max_rows", "max_body_bytes", "max_counterfactuals", "max_pending"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValidationError(f"Limits.{name} must be an int >= 1. Got {v!r}.")
        for name in ("max_time_limit", "default_time_limit"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not (math.isfinite(v) and v > 0):
                raise ValidationError(f"Limits.{name} must be a finite number of seconds > 0. Got {v!r}.")
        if self.default_time_limit > self.max_time_limit:
            raise ValidationError(
                f"Limits.default_time_limit ({self.default_time_limit}) exceeds max_time_limit "
                f"({self.max_time_limit})."
            )


@dataclass
class ExplainJob:
    """A validated explain request, ready to run."""

    frame: pd.DataFrame
    method: str
    constraints: Constraints | None
    target: Any
    n_counterfactuals: int
    time_limit: float
