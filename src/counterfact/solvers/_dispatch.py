"""The lookup shared by the encoders' dispatch tables (IR node class -> encoder)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from ..exceptions import UnsupportedModelError

__all__ = ["encoder_for"]

F = TypeVar("F")


def encoder_for(table: Mapping[type, F], node: Any, *, encoder: str, alternative: str) -> F:
    """The entry of ``table`` for the class of ``node`` (or its nearest base class).

    Raises
    ------
    UnsupportedModelError
        When no entry matches, naming the node, the ``encoder``, what it does
        encode, and the ``alternative`` to use instead.
    """
    for cls in type(node).__mro__:
        if cls in table:
            return table[cls]
    known = ", ".join(sorted(cls.__name__ for cls in table))
    raise UnsupportedModelError(
        f"The {encoder} cannot encode the IR node {type(node).__name__}; it encodes {known}. "
        f"{alternative}"
    )
