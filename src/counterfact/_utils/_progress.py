"""One rule for progress output, shared by every method and command.

A bar is shown on standard error when the caller asked for it (``verbose``
truthy) or when standard error is a terminal and the work is long enough to
be worth a bar; otherwise a silent object with the same interface is
returned, so callers never branch on whether a bar is shown.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["progress", "should_show", "summary_line"]


def should_show(verbose: Any = 0, total: int | None = None, *, min_total: int = 2) -> bool:
    """Whether a bar is shown: ``verbose`` set, or stderr is a terminal and
    there are at least ``min_total`` steps."""
    if verbose:
        return True
    try:
        tty = sys.stderr.isatty()
    except (AttributeError, ValueError):
        tty = False
    return bool(tty and (total is None or total >= min_total))


class _Silent:
    """The no-op stand-in for a tqdm bar."""

    def __init__(self, iterable: Iterable[Any] | None, total: int | None) -> None:
        self._iterable = iterable
        self.total = total
        self.n = 0

    def __iter__(self) -> Iterator[Any]:
        if self._iterable is None:
            return
        for item in self._iterable:
            self.n += 1
            yield item

    def __enter__(self) -> _Silent:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def update(self, n: int = 1) -> None:
        self.n += n

    def set_postfix(self, *args: Any, **kwargs: Any) -> None:
        pass

    def set_postfix_str(self, *args: Any, **kwargs: Any) -> None:
        pass

    def set_description(self, *args: Any, **kwargs: Any) -> None:
        pass

    def write(self, text: str) -> None:
        pass

    def close(self) -> None:
        pass


def progress(
    iterable: Iterable[Any] | None = None,
    *,
    total: int | None = None,
    desc: str = "",
    unit: str = "it",
    verbose: Any = 0,
    min_total: int = 2,
    disable: bool = False,
) -> Any:
    """A tqdm bar on stderr when :func:`should_show`, else a silent stand-in.

    Both support iteration, ``update``, ``set_postfix``, ``close`` and use as
    a context manager.  ``disable=True`` always gives the silent stand-in
    (work nested inside an outer bar).
    """
    if total is None and iterable is not None and hasattr(iterable, "__len__"):
        total = len(iterable)  # type: ignore[arg-type]
    if disable or not should_show(verbose, total, min_total=min_total):
        return _Silent(iterable, total)
    from tqdm.auto import tqdm

    return tqdm(
        iterable,
        total=total,
        desc=desc or None,
        unit=unit,
        file=sys.stderr,
        dynamic_ncols=True,
        leave=True,
    )


def summary_line(status: Any, diagnostics: Any = None) -> str:
    """The closing line of a run: how many queries got no counterfactual, and why.

    ``status`` is the per-query status Series, ``diagnostics`` the per-query
    diagnostics frame (its ``reason`` column, when present, names the cause).
    E.g. ``59/200 queries got no counterfactual: 40 no admissible observed row
    of the target class; 19 timeout``.
    """
    statuses = list(status)
    n = len(statuses)
    reasons: list[Any] = [None] * n
    if diagnostics is not None and "reason" in getattr(diagnostics, "columns", ()):
        reasons = list(diagnostics["reason"])
    missing: Counter[str] = Counter()
    for st, why in zip(statuses, reasons, strict=True):
        if st in ("optimal", "feasible"):
            continue
        text = why if isinstance(why, str) and why else st
        if st == "timeout" and text != "timeout":
            text = f"timeout ({text})"
        elif st in ("infeasible", "invalid") and not text.startswith(st):
            text = f"{st}: {text}"
        missing[text] += 1
    if not missing:
        return f"{n}/{n} queries got a counterfactual"
    parts = "; ".join(f"{k} {why}" for why, k in missing.most_common())
    return f"{sum(missing.values())}/{n} queries got no counterfactual: {parts}"
