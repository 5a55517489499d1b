"""Declarative parameter validation (scikit-learn style messages).

A method class declares ``_parameter_constraints = {"n_particles": [Interval(int, 1, None)], ...}``;
:func:`validate_params` checks each stored parameter against its list of
accepted specs and raises
``The 'n_particles' parameter of MDPSO must be an int in [1, inf). Got 0.``
"""

from __future__ import annotations

import math
import numbers
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..exceptions import ValidationError

__all__ = [
    "Interval",
    "Options",
    "Spec",
    "TypeSpec",
    "can_write_in",
    "check_writable",
    "invalid_example",
    "is_number",
    "is_whole",
    "validate_params",
]


def is_number(value: Any) -> bool:
    """Whether ``value`` is a real number, numpy's included (``np.float32(0.9)``), and
    not a boolean (``True`` is no probability)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def is_whole(value: Any) -> bool:
    """Whether ``value`` is an integer, numpy's included (``np.int64(8)``), and not a
    boolean."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


class Spec:
    """One accepted form of a parameter."""

    def accepts(self, value: Any) -> bool:  # pragma: no cover - interface
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover - interface
        raise NotImplementedError


@dataclass(frozen=True)
class Interval(Spec):
    """A number of ``kind`` (int or float) in an interval; ``None`` bounds are infinite."""

    kind: type
    lower: float | None
    upper: float | None
    closed: str = "both"  # "both" | "left" | "right" | "neither"

    def accepts(self, value: Any) -> bool:
        if not (is_whole(value) if self.kind is int else is_number(value)):
            return False
        v = float(value)
        if math.isnan(v):
            return False
        lo_ok = self.lower is None or (
            v >= self.lower if self.closed in ("both", "left") else v > self.lower
        )
        hi_ok = self.upper is None or (
            v <= self.upper if self.closed in ("both", "right") else v < self.upper
        )
        return lo_ok and hi_ok

    def describe(self) -> str:
        name = "an int" if self.kind is int else "a float"
        left = "[" if self.closed in ("both", "left") and self.lower is not None else "("
        right = "]" if self.closed in ("both", "right") and self.upper is not None else ")"
        lo = "-inf" if self.lower is None else f"{self.lower:g}"
        hi = "inf" if self.upper is None else f"{self.upper:g}"
        return f"{name} in {left}{lo}, {hi}{right}"

    def invalid(self) -> Any:
        if self.lower is not None:
            return (self.kind(self.lower) - 1) if self.kind is int else self.lower - 1.0
        if self.upper is not None:
            return (self.kind(self.upper) + 1) if self.kind is int else self.upper + 1.0
        return "not-a-number"


@dataclass(frozen=True)
class Options(Spec):
    """One of a fixed set of values."""

    values: tuple[Any, ...]

    def accepts(self, value: Any) -> bool:
        try:
            return value in self.values
        except TypeError:
            return False

    def describe(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)

    def invalid(self) -> Any:
        return "__not_an_option__"


@dataclass(frozen=True)
class TypeSpec(Spec):
    """An instance of some types, optionally with an extra check."""

    types: tuple[type, ...]
    label: str
    check: Callable[[Any], bool] | None = None

    def accepts(self, value: Any) -> bool:
        if bool not in self.types and isinstance(value, bool):
            return False
        return isinstance(value, self.types) and (self.check is None or self.check(value))

    def describe(self) -> str:
        return self.label

    def invalid(self) -> Any:
        return object()


def _describe(specs: Iterable[Any]) -> str:
    parts = ["None" if s is None else s.describe() for s in specs]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " or " + parts[-1]


def validate_params(
    owner: str, params: Mapping[str, Any], constraints: Mapping[str, list[Any]]
) -> None:
    """Raise :class:`ValidationError` for the first parameter that fits none of its specs."""
    for name, specs in constraints.items():
        if name not in params:
            continue
        value = params[name]
        if any(
            (s is None and value is None) or (s is not None and s.accepts(value)) for s in specs
        ):
            continue
        raise ValidationError(
            f"The '{name}' parameter of {owner} must be {_describe(specs)}. Got {value!r}."
        )


def invalid_example(specs: list[Any]) -> Any:
    """A value that none of ``specs`` accepts (for the conformance suite)."""
    for s in specs:
        if s is not None and hasattr(s, "invalid"):
            candidate = s.invalid()
            if not any(
                (t is None and candidate is None) or (t is not None and t.accepts(candidate))
                for t in specs
            ):
                return candidate
    return object()


def check_writable(path_text: str | Path, option: str = "--out") -> None:
    """Raise unless ``path_text`` names a file that can be written (checked before any work,
    so that a typo in the path is not reported after the computation). ``option`` names
    the path in the message: the command-line flag or the Python parameter."""
    path = Path(path_text).expanduser()
    path_text = str(path_text)
    if path.is_dir():
        raise ValidationError(f"{option} {path_text!r} is a folder; name a file to write.")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise ValidationError(
            f"{option} {path_text!r} cannot be written: the folder {str(parent)!r} does not exist."
        )
    if not (os.access(path, os.W_OK) if path.exists() else can_write_in(parent)):
        where = "the file" if path.exists() else f"the folder {str(parent)!r}"
        raise ValidationError(f"{option} {path_text!r} cannot be written: {where} is not writable.")


def can_write_in(folder: str | Path) -> bool:
    """Whether a file can be made in ``folder``, found by making (and removing) one:
    permission bits say yes to root even where the file system refuses (``/sys``, a
    read-only mount)."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False
