"""Copies of a fitted method, so that one method answers several requests at once.

Whether two searches may run at the same time on one method instance is not
part of the method contract (an instance may keep per-model caches that a
search fills, a solver encoding built at ``fit``), so the server never lets
two requests share one: each running explanation holds an *instance* of its
own, a deep copy of the fitted method (the *template*, which is only
explained on before serving, to warm it up).  Copies are made on demand and
kept for the next request; a deep copy of a fitted method takes milliseconds
(German Credit: 3-15 ms and 0.3-1.6 MB per method).

``slots`` explanations of the method run at once; more wait (in their worker
thread) for a slot.  A cancelled explanation gives its slot back at once: the
next request starts on another instance while the cancelled one stops at its
next check (the solvers are interrupted); its instance becomes idle again
when its thread ends.  At most ``2 x slots`` instances exist at a time, so a
burst of cancellations cannot make copies without bound.  A method that
cannot be deep-copied is served from the template alone, one request at a
time.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from typing import Any

from .._utils._deadline import CancelToken
from ..exceptions import CounterfactError

__all__ = ["Cancelled", "Lease", "MethodPool"]


class Cancelled(CounterfactError):
    """The request was cancelled (client gone, deadline passed) before its method could start."""


class Lease:
    """One running explanation's hold on an instance and a slot of a :class:`MethodPool`."""

    def __init__(self, pool: MethodPool, cancel: CancelToken | None) -> None:
        self.pool = pool
        self.instance: Any = None
        self._slot = True
        self._done = False
        # registered with the slot taken: a cancellation frees it from that moment on
        self._forget = cancel.on_cancel(self.release_slot) if cancel is not None else None

    def release_slot(self) -> None:
        """Give the slot back (at once, on cancellation; idempotent)."""
        with self.pool._cond:
            if self._slot:
                self._slot = False
                self.pool._busy -= 1
                self.pool._cond.notify_all()

    def finish(self) -> None:
        """The explanation ended: the slot (if still held) and the instance go back."""
        if self._forget is not None:
            self._forget()
        with self.pool._cond:
            self.release_slot()
            if not self._done:
                self._done = True
                if self.instance is not None:
                    self.pool._idle.append(self.instance)
                self.pool._cond.notify_all()


class MethodPool:
    """Instances of one fitted method, handed out one per running explanation.

    Parameters
    ----------
    template : CounterfactMethod
        The fitted method (copied, never explained on).
    slots : int
        Explanations of this method that run at once.
    log : callable, optional
        Where to say that the method cannot be copied.
    """

    def __init__(self, template: Any, slots: int, log: Callable[[str], None] | None = None) -> None:
        self.template = template
        self.slots = int(slots)
        self.max_instances = 2 * self.slots
        self.log = log
        self._cond = threading.Condition()
        self._idle: list[Any] = []
        self._instances = 0
        self._busy = 0

    @property
    def busy(self) -> int:
        """Slots in use."""
        return self._busy

    def checkout(self, cancel: CancelToken | None = None) -> Lease:
        """Wait for a slot and an instance (:class:`Cancelled` if ``cancel`` is set meanwhile)."""
        forget = cancel.on_cancel(self._wake) if cancel is not None else None
        try:
            while True:
                with self._cond:
                    while True:
                        if cancel is not None and cancel.cancelled:
                            raise Cancelled(
                                "the request was cancelled while it waited for its method"
                            )
                        if self._busy < self.slots and (
                            self._idle or self._instances < self.max_instances
                        ):
                            break
                        self._cond.wait()
                    self._busy += 1
                    lease = Lease(self, cancel)
                    if self._idle:
                        lease.instance = self._idle.pop()
                        return lease
                    self._instances += 1
                lease.instance = self._copy()
                if lease.instance is not None:
                    return lease
                lease.finish()  # the slot was given back by _copy: only forget the token
        finally:
            if forget is not None:
                forget()

    def _copy(self) -> Any:
        """A new instance: a deep copy of the template, made outside the lock (it takes
        milliseconds).  When the method cannot be copied, the template becomes the
        pool's only instance (one request at a time) and None is returned: the caller
        gives its slot back and waits again."""
        try:
            return copy.deepcopy(self.template)
        except Exception as exc:  # a method holding something that cannot be copied
            with self._cond:
                self._instances -= 1
                if self.max_instances > 1:
                    if self.log is not None:
                        self.log(
                            f"{type(self.template).__name__} cannot be copied "
                            f"({type(exc).__name__}); "
                            "it answers one request at a time"
                        )
                    self.slots = self.max_instances = self._instances = 1
                    self._idle.append(self.template)
                self._cond.notify_all()
            return None

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify_all()
