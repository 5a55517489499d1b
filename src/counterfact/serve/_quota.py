"""Per-client quotas: requests per minute and counterfactuals per hour (sliding windows).

A client is its network address (as the server sees it: behind a proxy that
uvicorn trusts, the forwarded one).  Each quota is a sliding window: the
requests of the last 60 seconds, the counterfactuals answered in the last
hour.  A request that would go over is refused with :class:`QuotaExceeded`,
whose ``retry_after`` says when enough of the window has passed.

An explanation reserves ``rows x n_counterfactuals`` counterfactuals when it is
admitted (so that concurrent requests cannot overshoot together) and settles
to the number it actually answered when it ends.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from ..exceptions import ValidationError
from ._request import QuotaExceeded

__all__ = ["Quotas", "Reservation"]

MINUTE = 60.0
HOUR = 3600.0


@dataclass
class Reservation:
    """Counterfactuals charged to a client at a moment (settled to what was answered)."""

    at: float
    count: int


@dataclass
class _Client:
    requests: deque[float] = field(default_factory=deque)
    charges: deque[Reservation] = field(default_factory=deque)

    def prune(self, now: float) -> None:
        while self.requests and self.requests[0] <= now - MINUTE:
            self.requests.popleft()
        while self.charges and self.charges[0].at <= now - HOUR:
            self.charges.popleft()

    @property
    def empty(self) -> bool:
        return not self.requests and not self.charges


class Quotas:
    """The quotas of every client; thread-safe.

    Parameters
    ----------
    requests_per_minute : int or None
        ``/api/*`` requests per client in any 60 s (None: unlimited).
    counterfactuals_per_hour : int or None
        Counterfactuals per client in any hour (None: unlimited).
    clock : callable
        Seconds on a monotonic clock (tests pass their own).
    max_clients : int
        Clients remembered at once; beyond it, those with empty windows are forgotten.
    """

    def __init__(
        self,
        requests_per_minute: int | None,
        counterfactuals_per_hour: int | None,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_clients: int = 100_000,
    ) -> None:
        self.requests_per_minute = requests_per_minute
        self.counterfactuals_per_hour = counterfactuals_per_hour
        self.clock = clock
        self.max_clients = max_clients
        self._clients: dict[str, _Client] = {}
        self._lock = threading.Lock()

    @property
    def active(self) -> bool:
        """Whether any quota is set."""
        return self.requests_per_minute is not None or self.counterfactuals_per_hour is not None

    def _client(self, who: str, now: float) -> _Client:
        c = self._clients.get(who)
        if c is None:
            if len(self._clients) >= self.max_clients:
                for k, v in list(self._clients.items()):
                    v.prune(now)
                    if v.empty:
                        del self._clients[k]
            c = self._clients[who] = _Client()
        c.prune(now)
        return c

    def admit_request(self, who: str) -> None:
        """Count one request of ``who``; :class:`QuotaExceeded` when over the per-minute quota."""
        if self.requests_per_minute is None:
            return
        with self._lock:
            now = self.clock()
            c = self._client(who, now)
            if len(c.requests) >= self.requests_per_minute:
                wait = c.requests[0] + MINUTE - now
                raise QuotaExceeded(
                    f"This client sent {len(c.requests)} requests in the last minute; the quota is "
                    f"{self.requests_per_minute} per minute. Retry in {math.ceil(wait)} s.",
                    retry_after=wait,
                )
            c.requests.append(now)

    def reserve(self, who: str, count: int) -> Reservation | None:
        """Charge ``count`` counterfactuals to ``who`` now; :class:`QuotaExceeded` when over
        the hourly quota (``ValidationError`` when one request alone asks for more)."""
        quota = self.counterfactuals_per_hour
        if quota is None:
            return None
        if count > quota:
            raise ValidationError(
                f"This request may answer up to {count} counterfactuals (rows x "
                "n_counterfactuals), more than this "
                f"server's quota of {quota} per client per hour. Ask for fewer rows or "
                "counterfactuals."
            )
        with self._lock:
            now = self.clock()
            c = self._client(who, now)
            used = sum(r.count for r in c.charges)
            if used + count > quota:
                freed, wait = 0, HOUR
                for r in c.charges:
                    freed += r.count
                    if used - freed + count <= quota:
                        wait = r.at + HOUR - now
                        break
                raise QuotaExceeded(
                    f"This client was answered {used} counterfactuals in the last hour (reserved "
                    "included); the "
                    f"quota is {quota} per hour and this request may need {count}. Retry in "
                    f"{math.ceil(wait)} s.",
                    retry_after=wait,
                )
            res = Reservation(now, int(count))
            c.charges.append(res)
            return res

    def settle(self, reservation: Reservation | None, answered: int) -> None:
        """What a reserved request actually answered (never more than it reserved)."""
        if reservation is None:
            return
        with self._lock:
            reservation.count = max(0, min(reservation.count, int(answered)))

    def usage(self, who: str) -> dict[str, int]:
        """``who``'s requests in the last minute and counterfactuals in the last hour."""
        with self._lock:
            now = self.clock()
            c = self._clients.get(who)
            if c is None:
                return {"requests_last_minute": 0, "counterfactuals_last_hour": 0}
            c.prune(now)
            return {
                "requests_last_minute": len(c.requests),
                "counterfactuals_last_hour": sum(r.count for r in c.charges),
            }
