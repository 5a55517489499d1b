"""Counterfactual methods: their base class and tags, the one explain pipeline, the registry.

Classes are imported lazily: ``counterfact.methods.MACE`` imports z3 only when used.
"""

from __future__ import annotations

from typing import Any

from .._utils._deadline import CancelToken, Deadline
from ._base import CounterfactualMethod
from ._pipeline import BatchReport, Candidates, Query, explain_in_chunks, parallel_backend
from ._registry import certificate_text, classes, get, get_class, names, register
from ._tags import MethodTags

__all__ = [
    "BatchReport",
    "CancelToken",
    "Candidates",
    "CounterfactualMethod",
    "Deadline",
    "MethodTags",
    "Query",
    "certificate_text",
    "classes",
    "explain_in_chunks",
    "get",
    "get_class",
    "names",
    "parallel_backend",
    "register",
]

#: public class name -> registry name (imported on first use)
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
