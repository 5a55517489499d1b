"""A plain, lazily importing registry of methods: name -> "module:Class"."""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from ..exceptions import ValidationError

__all__ = ["get", "get_class", "names", "register"]

_REGISTRY: dict[str, str] = {
    "nearest": "counterfact.methods.nearest:NearestObservable",
    "mace": "counterfact.methods.mace:MACE",
    "ceocl": "counterfact.methods.ceocl:CEOCL",
    "ufce": "counterfact.methods.ufce:UFCE",
    "mdpso": "counterfact.methods.mdpso:MDPSO",
    "l2c": "counterfact.methods.l2c:L2C",
    "dice": "counterfact.methods.dice:DiCE",
}


def register(name: str, target: str | type) -> None:
    """Register a method under ``name``: a class, or ``"package.module:ClassName"`` imported on use."""
    if not isinstance(name, str) or not name:
        raise ValidationError("A method name must be a non-empty string.")
    if isinstance(target, type):
        target = f"{target.__module__}:{target.__qualname__}"
    _REGISTRY[name] = target


def _available(path: str) -> bool:
    module = path.split(":")[0]
    return importlib.util.find_spec(module) is not None


_PEERS = {"dice": "dice_ml"}


def names(*, available: bool = True, peers: bool = False) -> list[str]:
    """Registered method names (by default only those whose module exists in this
    install); peer adapters (DiCE) only with ``peers=True`` and when their package is installed."""
    out = []
    for n, p in _REGISTRY.items():
        if n in _PEERS and not peers:
            continue
        if available and not _available(p):
            continue
        if available and n in _PEERS and importlib.util.find_spec(_PEERS[n]) is None:
            continue
        out.append(n)
    return sorted(out)


def get_class(name: str) -> type:
    """The class registered under ``name`` (imported now)."""
    try:
        path = _REGISTRY[name]
    except KeyError:
        raise ValidationError(f"Unknown method {name!r}. Registered methods: {names()}.") from None
    module, _, attr = path.partition(":")
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name == module:
            raise ValidationError(f"Method {name!r} is registered but not part of this install ({module}).") from None
        raise
    return getattr(mod, attr)


def get(name: str, **params: Any) -> Any:
    """An instance of the method registered under ``name``: ``get("mace", norm="l1")``."""
    return get_class(name)(**params)
