"""Small, fast, seeded instances of the registered methods (tests and quick demos).

Each method declares its fast parameters on its class (``tags.fast_params``); this
module only reads the registry.
"""

from __future__ import annotations

from typing import Any

from ..methods import CounterfactualMethod, get_class

__all__ = ["fast_method"]


def fast_method(name: str, **params: Any) -> CounterfactualMethod:
    """An unfitted instance of the method registered as ``name`` with its fast
    parameters (``tags.fast_params``; ``params`` override them)."""
    cls = get_class(name)
    return cls(**{**cls.tags.fast_params, **params})
