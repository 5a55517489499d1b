"""Counterfactual methods: their base class and tags, the one explain pipeline, the registry.

The methods themselves (``counterfact.methods.MACE``, ...) are the registry's
(:func:`names`): each is imported on first use, so ``MACE`` imports z3 only when used.
A method of your own derives from :class:`CounterfactualMethod`, declares its
:class:`MethodTags`, implements ``_explain_one(query: Query) -> Candidates`` and is
declared as an entry point of the group ``counterfact.methods`` (or :func:`register`-ed).
"""

from __future__ import annotations

from typing import Any

from .._utils._deadline import CancelToken
from . import _registry
from ._base import CounterfactualMethod
from ._pipeline import (
    ALREADY_TARGET,
    BatchReport,
    Candidates,
    Query,
    explain_in_chunks,
    fit_robustness_copies,
    robustness_calls,
    robustness_ladder,
    robustness_refits,
)
from ._registry import classes, default_method, get, get_class, names, register
from ._tags import MethodTags

__all__ = [
    "ALREADY_TARGET",
    "BatchReport",
    "CancelToken",
    "Candidates",
    "CounterfactualMethod",
    "MethodTags",
    "Query",
    "classes",
    "default_method",
    "explain_in_chunks",
    "fit_robustness_copies",
    "get",
    "get_class",
    "names",
    "register",
    "robustness_calls",
    "robustness_ladder",
    "robustness_refits",
]


def __getattr__(name: str) -> Any:
    """The library's method classes by their class name, from the registry."""
    registry_name = _registry.builtin_classes().get(name)
    if registry_name is not None:
        return get_class(registry_name)
    raise AttributeError(f"module 'counterfact.methods' has no attribute {name!r}")
