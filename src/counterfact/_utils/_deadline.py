"""One object for a time budget: :class:`Deadline`.

A user's ``time_limit`` is turned into a :class:`Deadline` once, by the explain
pipeline, and the same object travels down: to the method's search, to the
solvers (which take what is left as their own time limit), to sparsification
and to amortized batches.  Every part asks it the same questions (how much is
left, has it passed) and keeps time back for later work with
:meth:`Deadline.reserve`, never by doing clock arithmetic of its own.
"""

from __future__ import annotations

import math
import time

__all__ = ["Deadline"]


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

    __slots__ = ("at",)

    def __init__(self, at: float | None = None) -> None:
        if at is not None and not math.isfinite(float(at)):
            at = None if at > 0 else float(at)
        self.at: float | None = None if at is None else float(at)

    @classmethod
    def after(cls, seconds: float | None, *, start: float | None = None) -> Deadline:
        """``seconds`` from ``start`` (default: now); no limit when ``seconds`` is None."""
        if seconds is None:
            return cls(None)
        begin = time.perf_counter() if start is None else float(start)
        return cls(begin + float(seconds))

    @classmethod
    def none(cls) -> Deadline:
        """No limit."""
        return cls(None)

    @property
    def limited(self) -> bool:
        """Whether there is a limit at all."""
        return self.at is not None

    def left(self) -> float:
        """Seconds left (negative once passed; ``inf`` without a limit)."""
        if self.at is None:
            return math.inf
        return self.at - time.perf_counter()

    def expired(self) -> bool:
        """Whether the moment has passed."""
        return self.at is not None and time.perf_counter() >= self.at

    def seconds(self, floor: float = 0.0) -> float | None:
        """Seconds left, at least ``floor``, for an API that takes a time limit;
        None without a limit."""
        if self.at is None:
            return None
        return max(float(floor), self.at - time.perf_counter())

    def reserve(self, seconds: float) -> Deadline:
        """An earlier deadline that keeps ``seconds`` back for the work after it."""
        if self.at is None:
            return self
        return Deadline(self.at - max(0.0, float(seconds)))

    def earliest(self, other: Deadline) -> Deadline:
        """The earlier of two deadlines."""
        if self.at is None:
            return other
        if other.at is None:
            return self
        return self if self.at <= other.at else other

    def __repr__(self) -> str:
        if self.at is None:
            return "Deadline(none)"
        return f"Deadline({self.left():+.3f} s left)"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Deadline) and self.at == other.at

    def __hash__(self) -> int:
        return hash(self.at)
