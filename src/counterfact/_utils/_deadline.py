"""One object for a time budget: :class:`Deadline`, and a way to stop early: :class:`CancelToken`.

A user's ``time_limit`` is turned into a :class:`Deadline` once, by the explain
pipeline, and the same object travels down: to the method's search, to the
solvers (which take what is left as their own time limit), to sparsification
and to amortized batches.  Every part asks it the same questions (how much is
left, has it passed) and keeps time back for later work with
:meth:`Deadline.reserve`, never by doing clock arithmetic of its own.

A deadline may carry a :class:`CancelToken`: once the token is cancelled (a
client went away, a server shuts down) the deadline counts as passed, so every
loop that checks it stops, and solvers that cannot poll register a callback
with :meth:`CancelToken.on_cancel` (Z3's interrupt, CP-SAT's ``StopSearch``).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["CancelToken", "Deadline"]


class CancelToken:
    """Set once to ask every piece of work that holds it to stop.

    Thread-safe.  Callbacks registered with :meth:`on_cancel` run once, in the
    thread that cancels (or at once when registered after the cancellation).
    A token pickled to another process arrives with its state but no link back:
    cancelling in one process does not reach the other.
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], Any]] = []

    @property
    def cancelled(self) -> bool:
        """Whether :meth:`cancel` was called."""
        return self._event.is_set()

    def cancel(self) -> None:
        """Ask the work to stop; runs the registered callbacks once."""
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for fn in callbacks:
            fn()

    def on_cancel(self, fn: Callable[[], Any]) -> Callable[[], None]:
        """Run ``fn`` when the token is cancelled (now, if it already is); returns
        a function that unregisters it (call it when the guarded work is over)."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(fn)
                return lambda: self._forget(fn)
        fn()
        return lambda: None

    def _forget(self, fn: Callable[[], Any]) -> None:
        with self._lock:
            if fn in self._callbacks:
                self._callbacks.remove(fn)

    def __getstate__(self) -> dict[str, Any]:
        return {"cancelled": self.cancelled}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__()  # type: ignore[misc]
        if state.get("cancelled"):
            self._event.set()

    def __repr__(self) -> str:
        return f"CancelToken(cancelled={self.cancelled})"


class Deadline:
    """A moment, on :func:`time.perf_counter`'s clock, by which work must end; or none.

    Parameters
    ----------
    at : float or None
        The moment (``time.perf_counter()`` seconds); None for no limit.

    Examples
    --------
    >>> d = Deadline.after(2.0)
    >>> 0 < d.left() <= 2.0
    True
    >>> Deadline.none().left()
    inf
    """

    __slots__ = ("at", "token")

    def __init__(self, at: float | None = None, token: CancelToken | None = None) -> None:
        if at is not None and not math.isfinite(float(at)):
            at = None if at > 0 else float(at)
        self.at: float | None = None if at is None else float(at)
        #: cancels the work before ``at`` when set
        self.token = token

    @classmethod
    def after(
        cls, seconds: float | None, *, start: float | None = None, token: CancelToken | None = None
    ) -> Deadline:
        """``seconds`` from ``start`` (default: now); no limit when ``seconds`` is None."""
        if seconds is None:
            return cls(None, token)
        begin = time.perf_counter() if start is None else float(start)
        return cls(begin + float(seconds), token)

    @classmethod
    def none(cls) -> Deadline:
        """No limit."""
        return cls(None)

    @property
    def limited(self) -> bool:
        """Whether there is a limit at all (a time, or a token that can cancel)."""
        return self.at is not None

    @property
    def cancelled(self) -> bool:
        """Whether the work was cancelled (its token was set)."""
        return self.token is not None and self.token.cancelled

    def left(self) -> float:
        """Seconds left (negative once passed, 0 once cancelled; ``inf`` without a limit)."""
        if self.cancelled:
            return 0.0 if self.at is None else min(0.0, self.at - time.perf_counter())
        if self.at is None:
            return math.inf
        return self.at - time.perf_counter()

    def expired(self) -> bool:
        """Whether the moment has passed or the work was cancelled."""
        return self.cancelled or (self.at is not None and time.perf_counter() >= self.at)

    def seconds(self, floor: float = 0.0) -> float | None:
        """Seconds left, at least ``floor``, for an API that takes a time limit;
        None without a limit (and ``floor`` once cancelled)."""
        if self.cancelled:
            return float(floor)
        if self.at is None:
            return None
        return max(float(floor), self.at - time.perf_counter())

    def reserve(self, seconds: float) -> Deadline:
        """An earlier deadline that keeps ``seconds`` back for the work after it (same token)."""
        if self.at is None:
            return self
        return Deadline(self.at - max(0.0, float(seconds)), self.token)

    def earliest(self, other: Deadline) -> Deadline:
        """The earlier of two deadlines."""
        if self.at is None:
            return other
        if other.at is None:
            return self
        return self if self.at <= other.at else other

    def __repr__(self) -> str:
        if self.cancelled:
            return "Deadline(cancelled)"
        if self.at is None:
            return "Deadline(none)"
        return f"Deadline({self.left():+.3f} s left)"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Deadline) and self.at == other.at and self.token is other.token

    def __hash__(self) -> int:
        return hash((self.at, id(self.token)))
