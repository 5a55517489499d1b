"""Input checks of the constraint language: every malformed value raises a
:class:`~counterfact.exceptions.ConstraintError` that says what was expected."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from .._utils._values import _py
from ..exceptions import ConstraintError
from ..schema._numbers import finite_number
from ._causal import Causal
from ._relations import Relation


def _kind(value: Any) -> str:
    """``None``, or ``a list: [1, 2]``, for error messages."""
    if value is None:
        return "None"
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}: {_short(value)}"


def _short(value: Any, width: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def _sequence(value: Any, what: str) -> list[Any]:
    """A list from a list-like ``value`` (not a string, not a mapping); ConstraintError
    otherwise."""
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise ConstraintError(f"{what} must be a list. Got {_kind(value)}.")
    return list(value)


def _mapping(value: Any, what: str) -> dict[Any, Any]:
    if not isinstance(value, Mapping):
        raise ConstraintError(
            f"{what} must be a mapping of feature name -> value. Got {_kind(value)}."
        )
    for k in value:
        if not isinstance(k, str):
            raise ConstraintError(
                f"{what} must be keyed by feature names (str). Got the key {_short(k)}."
            )
    return dict(value)


def _names(value: Any, what: str) -> tuple[str, ...]:
    """Feature names from a name, a list of names, or None (no names)."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Mapping) or not isinstance(value, Iterable):
        raise ConstraintError(f"{what} must list feature names (str). Got {_kind(value)}.")
    out = tuple(value)
    for n in out:
        if not isinstance(n, str):
            raise ConstraintError(f"{what} must list feature names (str). Got {_short(n)}.")
    return out


def _ranges(value: Any) -> dict[str, tuple[float | None, float | None]]:
    """``ranges`` checked: (low, high) pairs of finite numbers or None, low <= high."""
    if value is None:
        return {}
    out: dict[str, tuple[float | None, float | None]] = {}
    for name, rng in _mapping(value, "Constraints.ranges").items():
        if (
            isinstance(rng, (str, bytes, Mapping))
            or not isinstance(rng, Iterable)
            or len(rng := tuple(rng)) != 2
        ):
            raise ConstraintError(
                f"ranges['{name}'] must be a (low, high) pair. Got {_short(rng)}."
            )
        pair: list[float | None] = []
        for side, v in zip(("low", "high"), rng, strict=True):
            if v is None:
                pair.append(None)
                continue
            hint = "Use None for an open side, e.g. (None, 50) for 'at most 50'."
            num = finite_number(
                v, f"ranges['{name}'] {side} bound", error=ConstraintError, hint=hint
            )
            pair.append(_py(v) if isinstance(v, (int, np.integer)) and abs(num) <= 2**53 else num)
        lo, hi = pair
        if lo is not None and hi is not None and float(lo) > float(hi):
            raise ConstraintError(f"ranges['{name}'] = {_short(rng)} is empty (low > high).")
        out[name] = (lo, hi)
    return out


def _allowed_values(value: Any) -> dict[str, tuple[Any, ...]]:
    """``allowed_values`` checked: a list of values per feature; numbers finite."""
    if value is None:
        return {}
    out: dict[str, tuple[Any, ...]] = {}
    for name, vs in _mapping(value, "Constraints.allowed_values").items():
        if vs is None or isinstance(vs, (str, bytes, Mapping)) or not isinstance(vs, Iterable):
            example = "" if vs is None else f", e.g. {{'{name}': [{_short(vs)}]}}"
            raise ConstraintError(
                f"allowed_values['{name}'] must be a list of the values the feature may "
                f"take{example}. "
                f"Got {_kind(vs)}."
            )
        vals = tuple(_py(v) for v in vs)
        for v in vals:
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                finite_number(v, f"allowed_values['{name}'] value", error=ConstraintError)
        out[name] = vals
    return out


def _relations(value: Any) -> tuple[Causal, ...]:
    if value is None:
        return ()
    if isinstance(value, Causal):
        return (value,)
    out = tuple(_sequence(value, "Constraints.causal"))
    for c in out:
        if not isinstance(c, Causal):
            raise ConstraintError(
                f"Constraints.causal takes Causal objects. Got {type(c).__name__}."
            )
    return out


def _feature_relations(value: Any) -> tuple[Relation, ...]:
    """Relations from their texts (or :class:`Relation` objects), each parsed once."""
    if value is None:
        return ()
    items = (
        [value] if isinstance(value, (str, Relation)) else _sequence(value, "Constraints.relations")
    )
    out = []
    for k, r in enumerate(items):
        if isinstance(r, Relation):
            out.append(r)
        elif isinstance(r, str):
            try:
                out.append(Relation(r))
            except ConstraintError as exc:
                raise ConstraintError(f"Constraints.relations[{k}]: {exc}") from None
        else:
            raise ConstraintError(
                f"Constraints.relations[{k}] must be a string such as 'credit_amount <= 10 * "
                f"income'. Got {_kind(r)}."
            )
    return tuple(dict.fromkeys(out))


def _causal_from_dict(c: Any, k: int) -> Causal:
    """One linear causal relation from ``{"child", "parents", "coef", "intercept"}``."""
    where = f"causal[{k}]"
    if not isinstance(c, Mapping):
        raise ConstraintError(
            f"{where} must be a mapping with keys child, parents, coef (and optionally "
            f"intercept). Got {_short(c)}."
        )
    known = {"child", "parents", "coef", "intercept", "tol"}
    unknown = sorted(str(x) for x in set(c) - known)
    if unknown:
        raise ConstraintError(f"{where} has unknown keys {unknown}. Known keys: {sorted(known)}.")
    missing = [x for x in ("child", "parents", "coef") if x not in c]
    if missing:
        raise ConstraintError(
            f"{where} lacks the keys {missing}; a linear relation needs child, parents and coef."
        )
    extra = {"tol": c["tol"]} if "tol" in c else {}
    return Causal(
        child=c["child"],
        parents=_names(c["parents"], f"{where}.parents"),
        coef=_mapping(c["coef"], f"{where}.coef"),
        intercept=c.get("intercept", 0.0),
        **extra,
    )
