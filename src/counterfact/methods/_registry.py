"""The registry of methods: name -> class (imported on first use).

A method is one subpackage plus one entry here (or a call to :func:`register`
for a method of your own): the command line's choices, the server's method
list, the README's table and the conformance suite all read the registry and
each class's ``tags``.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Mapping
from typing import Any

from ..exceptions import ValidationError
from ..result import certificate_text as plain_certificate
from ._base import CounterfactualMethod
from ._tags import MethodTags

__all__ = ["certificate_text", "classes", "get", "get_class", "names", "register"]

_REGISTRY: dict[str, str | type] = {
    "nearest": "counterfact.methods.nearest:NearestObservable",
    "mace": "counterfact.methods.mace:MACE",
    "ceocl": "counterfact.methods.ceocl:CEOCL",
    "ufce": "counterfact.methods.ufce:UFCE",
    "mdpso": "counterfact.methods.mdpso:MDPSO",
    "l2c": "counterfact.methods.l2c:L2C",
    "dice": "counterfact.methods.dice:DiCE",
}


def _check_class(name: str, cls: Any) -> type[CounterfactualMethod]:
    if not (isinstance(cls, type) and issubclass(cls, CounterfactualMethod)):
        raise ValidationError(
            f"Method {name!r} must be a subclass of cf.CounterfactualMethod. Got {cls!r}."
        )
    if not isinstance(cls.__dict__.get("tags"), MethodTags):
        raise ValidationError(
            f"{cls.__name__} must declare its own tags = cf.methods.MethodTags(display_name=..., summary=...) "
            "on the class (what it proves, which constraints it honours, ...)."
        )
    return cls


def register(name: str, target: str | type) -> None:
    """Register a method under ``name``: a class, or ``"package.module:ClassName"`` imported on use.

    The class must derive from :class:`~counterfact.CounterfactualMethod` and
    declare its ``tags``; it then appears in :func:`names`, the command line,
    the server and the conformance suite (``counterfact.testing``).
    """
    if not isinstance(name, str) or not name:
        raise ValidationError("A method name must be a non-empty string.")
    if isinstance(target, type):
        _check_class(name, target)
    elif not (isinstance(target, str) and ":" in target):
        raise ValidationError(
            f"A method target must be a class or 'package.module:ClassName'. Got {target!r}."
        )
    _REGISTRY[name] = target


def _module_exists(target: str | type) -> bool:
    if isinstance(target, type):
        return True
    return importlib.util.find_spec(target.split(":")[0]) is not None


def _peer_ready(cls: type[CounterfactualMethod]) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in cls.tags.requires)


def names(*, available: bool = True, peers: bool = False) -> list[str]:
    """Registered method names, in the order of their ``tags.order`` (then by name).

    ``available``: only those whose module exists in this install.  Peer
    adapters (``tags.peer``, e.g. DiCE) only with ``peers=True``, and then only
    when the packages they need are installed.
    """
    out = []
    for n, target in _REGISTRY.items():
        if available and not _module_exists(target):
            continue
        cls = get_class(n)
        if cls.tags.peer and not (peers and (not available or _peer_ready(cls))):
            continue
        out.append(n)
    return sorted(out, key=lambda n: (get_class(n).tags.order, n))


def classes(
    *, available: bool = True, peers: bool = False
) -> dict[str, type[CounterfactualMethod]]:
    """``{name: class}`` of :func:`names`, in the same order."""
    return {n: get_class(n) for n in names(available=available, peers=peers)}


def get_class(name: str) -> type[CounterfactualMethod]:
    """The class registered under ``name`` (imported now)."""
    try:
        target = _REGISTRY[name]
    except KeyError:
        raise ValidationError(f"Unknown method {name!r}. Registered methods: {names()}.") from None
    if isinstance(target, type):
        return target
    module, _, attr = target.partition(":")
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name == module:
            raise ValidationError(
                f"Method {name!r} is registered but not part of this install ({module})."
            ) from None
        raise
    return _check_class(name, getattr(mod, attr))


def get(name: str, **params: Any) -> CounterfactualMethod:
    """An instance of the method registered under ``name``: ``get("mace", norm="l1")``."""
    return get_class(name)(**params)


def certificate_text(method: str, status: str, diagnostics: Mapping[str, Any] | None = None) -> str:
    """The guarantee behind a query's answer in plain words, for a registered method
    name (``get_class(method).certificate(status, diagnostics)``); an unknown
    name gets the text that holds for any method."""
    key = str(method).lower().replace("-", "").replace("_", "")
    if key in _REGISTRY:
        return get_class(key).certificate(status, diagnostics)
    return plain_certificate(str(method) or "method", status, diagnostics)
