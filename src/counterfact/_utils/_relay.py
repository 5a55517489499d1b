"""Warnings raised in worker processes, passed on to the caller.

A warning raised in a loky or Ray worker goes to that worker's standard error at best
(Ray's workers do not forward it): the caller cannot catch it, filter it or see it in a
notebook.  The work a worker runs is wrapped in :func:`recording`, which keeps what it
warns as plain records (the category's name, whether it is a built-in category, the
text); the caller hands them to :func:`relay`, which warns each distinct one once.
Only where each worker process runs one task at a time (loky, Ray): recording changes
the whole process's warning state, so never in threads (Dask's workers, ``threading``).
A category that is not built in (a library's own) is passed on as a ``UserWarning``
whose text starts with its name.
"""

from __future__ import annotations

import builtins
import contextlib
import warnings
from collections.abc import Iterable, Iterator

__all__ = ["Record", "recording", "relay"]

#: one warning: the category's name, whether it is built in, the text
Record = tuple[str, bool, str]


@contextlib.contextmanager
def recording() -> Iterator[list[Record]]:
    """Record (not show) the warnings raised inside the block, under the filters in force.

    Not for threads: :func:`warnings.catch_warnings` changes the process's state."""
    records: list[Record] = []
    with warnings.catch_warnings(record=True) as caught:
        yield records
    for w in caught:
        category = w.category
        records.append((category.__name__, category.__module__ == "builtins", str(w.message)))


def relay(records: Iterable[Record], *, stacklevel: int = 2) -> None:
    """Warn each distinct record once, in the caller's process (a worker's filters show
    a warning once per place in its code, so how often it was raised is not known)."""
    for name, builtin, text in dict.fromkeys(records):
        category = getattr(builtins, name, UserWarning) if builtin else UserWarning
        if not (isinstance(category, type) and issubclass(category, Warning)):
            category = UserWarning
        said = text if builtin else f"{name}: {text}"
        warnings.warn(said, category, stacklevel=stacklevel + 1)
