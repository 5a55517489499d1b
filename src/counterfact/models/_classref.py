"""Classes of optional libraries named without importing them.

A class is named ``"module:Class"`` (``"xgboost:XGBClassifier"``) and looked up
in ``sys.modules`` only: a fitted instance of it means its module is imported,
so recognising a model never imports an optional library.  The model adapter
and the model compiler's front-end registry use it.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["ClassRef", "class_key", "instance_of", "resolve_class"]

#: a class, or ``"module:Class"`` for a class of an optional library
ClassRef = type | str


def resolve_class(ref: ClassRef) -> type | None:
    """The class ``ref`` names, or None when its module is not imported."""
    if isinstance(ref, type):
        return ref
    module, _, name = ref.partition(":")
    found = getattr(sys.modules.get(module), name, None)
    return found if isinstance(found, type) else None


def class_key(ref: ClassRef) -> str:
    """``"module:Class"`` for ``ref`` (to compare two names of classes)."""
    return ref if isinstance(ref, str) else f"{ref.__module__}:{ref.__qualname__}"


def instance_of(obj: Any, ref: ClassRef) -> bool:
    """Whether ``obj`` is an instance of the class ``ref`` names (or of a subclass)."""
    cls = resolve_class(ref)
    return cls is not None and isinstance(obj, cls)
