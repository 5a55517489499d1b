"""Small, fast, seeded parameters for every registered method (tests and quick demos).

Each method declares them on its class (``tags.fast_params``); this module only reads the registry.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..methods import CounterfactualMethod, get_class, names

__all__ = ["FAST_PARAMS", "fast_method"]


class _FastParams(Mapping[str, Mapping[str, Any]]):
    """``{method name: its tags.fast_params}`` over the registry, read when asked
    (a method registered later is included)."""

    def __getitem__(self, name: str) -> Mapping[str, Any]:
        return dict(get_class(name).tags.fast_params)

    def __iter__(self) -> Iterator[str]:
        return iter(names(available=False, peers=True))

    def __len__(self) -> int:
        return len(names(available=False, peers=True))


#: per registered method, parameters that make it fast on a few hundred rows
FAST_PARAMS: Mapping[str, Mapping[str, Any]] = _FastParams()


def fast_method(name: str, **params: Any) -> CounterfactualMethod:
    """An unfitted instance of the method registered as ``name`` with its fast
    parameters (``params`` override them)."""
    cls = get_class(name)
    return cls(**{**cls.tags.fast_params, **params})
