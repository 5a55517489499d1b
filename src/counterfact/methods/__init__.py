"""Counterfactual methods, their base class and the registry.

Classes are imported lazily: ``counterfact.methods.MACE`` imports z3 only when used.
"""

from __future__ import annotations

from typing import Any

from ._base import Candidates, CounterfactualMethod, Query
from ._registry import get, get_class, names, register

__all__ = ["Candidates", "CounterfactualMethod", "Query", "get", "get_class", "names", "register"]

_CLASSES = {
    "NearestObservable": "nearest",
    "MACE": "mace",
    "CEOCL": "ceocl",
    "UFCE": "ufce",
    "MDPSO": "mdpso",
    "L2C": "l2c",
}


def __getattr__(name: str) -> Any:
    if name in _CLASSES:
        return get_class(_CLASSES[name])
    raise AttributeError(f"module 'counterfact.methods' has no attribute {name!r}")
