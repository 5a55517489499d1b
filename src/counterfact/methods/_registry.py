"""The registry of methods: name -> class, imported on first use.

Every method, the library's own included, comes in through one door: the Python
entry-point group ``counterfact.methods``.  The library declares its methods in its
own ``pyproject.toml``; a separate package declares its own the same way::

    [project.entry-points."counterfact.methods"]
    greedy = "my_package:GreedySearch"

and, once installed, its method is listed by :func:`names`, offered by
``counterfact explain --method``, served by ``counterfact serve`` and checked by
:func:`counterfact.testing.check_method`.  :func:`register` adds a class at run
time (no package needed).

In a source checkout the library's own entries are read from the checkout's
``pyproject.toml`` rather than from the installed metadata, so that a method added
there is found without reinstalling.  A package whose method cannot be loaded (an
import error, a missing class, a class without tags) is reported with a warning
naming it and the error, and left out; it never breaks ``import counterfact``.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import tomllib
import warnings
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from .._utils._deps import is_available
from ..exceptions import ValidationError
from ..result._text import certificate_text as plain_certificate
from ._base import CounterfactualMethod
from ._tags import MethodTags

__all__ = [
    "GROUP",
    "builtin_classes",
    "certificate_text",
    "classes",
    "default_method",
    "get",
    "get_class",
    "names",
    "provider",
    "register",
]

#: the entry-point group every method is declared in
GROUP = "counterfact.methods"
#: the package the built-in methods live in
_OWN_PACKAGE = "counterfact.methods."
#: the method used when none is named: MACE, which proves its answers nearest, when its
#: SMT solver (z3) is importable; else UFCE, a fast search that needs only the core install
_DEFAULT, _DEFAULT_SOLVER, _FALLBACK = "mace", "z3", "ufce"

#: name -> "module:Class" (imported on use) or a class; filled on first use
_REGISTRY: dict[str, str | type] = {}
#: names whose entry point is another package's (a failure to load it is a warning)
_PLUGINS: dict[str, str] = {}
_discovered = False


# ----------------------------------------------------------------- discovery
def _checkout_entry_points() -> dict[str, str] | None:
    """The library's own entries from a source checkout's ``pyproject.toml``, or
    None when this is not a checkout of counterfact."""
    path = Path(__file__).resolve().parents[3] / "pyproject.toml"
    if not path.is_file():
        return None
    try:
        project = tomllib.loads(path.read_text(encoding="utf-8")).get("project", {})
    except (OSError, tomllib.TOMLDecodeError):
        return None
    if project.get("name") != "counterfact":
        return None
    return dict(project.get("entry-points", {}).get(GROUP, {}))


def _own_distribution(ep: importlib.metadata.EntryPoint) -> bool:
    dist = getattr(ep, "dist", None)
    name = getattr(dist, "name", None) or ""
    return name.lower().replace("_", "-") == "counterfact"


def _entry_points() -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    """(the library's own {name: target}, other packages' {name: (target, package)})."""
    points = list(importlib.metadata.entry_points(group=GROUP))
    own = _checkout_entry_points()
    if own is None:  # an install: the library's own entries from its metadata, first
        own = {ep.name: ep.value for ep in points if _own_distribution(ep)}
    others: dict[str, tuple[str, str]] = {}
    for ep in points:
        if _own_distribution(ep):
            continue
        dist = getattr(getattr(ep, "dist", None), "name", None) or "an installed package"
        if ep.name in own or ep.name in others:
            _warn(ep.name, dist, "the name is taken by another method; this one is left out")
            continue
        others[ep.name] = (ep.value, dist)
    return own, others


def _discover() -> None:
    """Fill the registry from the entry points, once (names already registered stay)."""
    global _discovered
    if _discovered:
        return
    _discovered = True
    own, others = _entry_points()
    for name, target in own.items():
        _REGISTRY.setdefault(name, target)
    for name, (target, dist) in others.items():
        if ":" not in target:
            _warn(name, dist, f"its target {target!r} is not 'package.module:ClassName'")
            continue
        if name not in _REGISTRY:
            _REGISTRY[name] = target
            _PLUGINS[name] = dist


def _warn(name: str, dist: str, why: str) -> None:
    warnings.warn(
        f"counterfact: the method {name!r} of {dist} (entry point group {GROUP!r}) "
        f"cannot be used: {why}.",
        RuntimeWarning,
        stacklevel=3,
    )


def _registry() -> dict[str, str | type]:
    _discover()
    return _REGISTRY


# ------------------------------------------------------------- registration
def _check_class(name: str, cls: Any) -> type[CounterfactualMethod]:
    if not (isinstance(cls, type) and issubclass(cls, CounterfactualMethod)):
        raise ValidationError(
            f"Method {name!r} must be a subclass of cf.CounterfactualMethod. Got {cls!r}."
        )
    if not isinstance(cls.__dict__.get("tags"), MethodTags):
        raise ValidationError(
            f"{cls.__name__} must declare its own "
            "tags = cf.methods.MethodTags(display_name=..., summary=...) on the class "
            "(what it proves, which constraints it honours, ...)."
        )
    return cls


def register(name: str, target: str | type) -> None:
    """Register a method under ``name``: a class, or ``"package.module:ClassName"``
    imported on use.

    The class must derive from :class:`~counterfact.CounterfactualMethod` and declare
    its ``tags``; it then appears in :func:`names`, the command line, the server and
    the conformance suite (:func:`counterfact.testing.check_method`).  To ship a
    method in a package, declare it as an entry point of the group
    ``counterfact.methods`` instead (see the module's documentation).
    """
    if not isinstance(name, str) or not name:
        raise ValidationError("A method name must be a non-empty string.")
    if isinstance(target, type):
        _check_class(name, target)
    elif not (isinstance(target, str) and ":" in target):
        raise ValidationError(
            f"A method target must be a class or 'package.module:ClassName'. Got {target!r}."
        )
    _registry()[name] = target
    _PLUGINS.pop(name, None)


def unregister(name: str) -> None:
    """Remove ``name`` from the registry (a method registered for a test)."""
    _registry().pop(name, None)
    _PLUGINS.pop(name, None)


# ------------------------------------------------------------------- lookup
def _import_target(name: str, target: str) -> type[CounterfactualMethod]:
    module, _, attr = target.partition(":")
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name == module:
            raise ValidationError(
                f"Method {name!r} is registered but not part of this install ({module})."
            ) from None
        raise
    try:
        cls = getattr(mod, attr)
    except AttributeError:
        raise ValidationError(
            f"Method {name!r} names {target!r}, but {module} has no attribute {attr!r}."
        ) from None
    return _check_class(name, cls)


def get_class(name: str) -> type[CounterfactualMethod]:
    """The class registered under ``name`` (imported now)."""
    try:
        target = _registry()[name]
    except KeyError:
        raise ValidationError(f"Unknown method {name!r}. Registered methods: {names()}.") from None
    if isinstance(target, type):
        return target
    cls = _import_target(name, target)
    _REGISTRY[name] = cls
    return cls


def _loaded(name: str) -> type[CounterfactualMethod] | None:
    """The class of ``name``, or None (with a warning) for another package's method
    that cannot be loaded; the library's own errors propagate."""
    if name not in _PLUGINS:
        return get_class(name)
    try:
        return get_class(name)
    except Exception as exc:  # any failure of someone else's package: report, leave out
        dist = _PLUGINS.pop(name)
        _REGISTRY.pop(name, None)
        _warn(name, dist, f"{type(exc).__name__}: {exc}")
        return None


def _module_exists(target: str | type) -> bool:
    if isinstance(target, type):
        return True
    try:
        return importlib.util.find_spec(target.split(":")[0]) is not None
    except (ImportError, ValueError):
        return False


def _peer_ready(cls: type[CounterfactualMethod]) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in cls.tags.requires)


def _listed(cls: type[CounterfactualMethod], *, available: bool, peers: bool) -> bool:
    if not cls.tags.peer:
        return True
    return peers and (not available or _peer_ready(cls))


def names(*, available: bool = True, peers: bool = False) -> list[str]:
    """Registered method names, in the order of their ``tags.order`` (then by name).

    ``available``: only those whose module exists in this install.  Peer adapters
    (``tags.peer``, e.g. DiCE) only with ``peers=True``, and then only when the
    packages they need are installed.
    """
    found: dict[str, type[CounterfactualMethod]] = {}
    for name, target in list(_registry().items()):
        if available and name not in _PLUGINS and not _module_exists(target):
            continue  # a part of the library this install leaves out
        cls = _loaded(name)
        if cls is not None and _listed(cls, available=available, peers=peers):
            found[name] = cls
    return sorted(found, key=lambda n: (found[n].tags.order, n))


def classes(
    *, available: bool = True, peers: bool = False
) -> dict[str, type[CounterfactualMethod]]:
    """``{name: class}`` of :func:`names`, in the same order."""
    return {n: get_class(n) for n in names(available=available, peers=peers)}


def builtin_classes() -> dict[str, str]:
    """``{class name: registry name}`` of the library's own methods, read from the
    registry without importing them (``cf.MACE`` -> ``"mace"``)."""
    out = {}
    for name, target in _registry().items():
        if isinstance(target, type):
            module, attr = target.__module__, target.__name__
        else:
            module, _, attr = target.partition(":")
        if module.startswith(_OWN_PACKAGE) and name not in _PLUGINS:
            out[attr] = name
    return out


def provider(name: str) -> str | None:
    """The distribution that provides ``name`` when it is another package's method, else None."""
    _discover()
    return _PLUGINS.get(name)


def get(name: str, **params: Any) -> CounterfactualMethod:
    """An instance of the method registered under ``name``: ``get("mace", norm="l1")``."""
    return get_class(name)(**params)


def default_method(available: Collection[str] | None = None) -> str:
    """The method used when none is named (the command line, the demo, the server).

    MACE, which proves its answers nearest, when its SMT solver z3 is importable;
    else UFCE, a fast search on the core install.  With ``available`` (e.g. the
    methods a server loaded) the choice is made among those, and when neither is
    among them it is the first of them in the declared order (``tags.order``).
    """
    pool = names() if available is None else _ordered(available)
    if not pool:
        raise ValidationError(f"No method to choose a default from (got {available!r}).")
    usable = [n for n in pool if n != _DEFAULT or is_available(_DEFAULT_SOLVER)] or pool
    for name in (_DEFAULT, _FALLBACK):
        if name in usable:
            return name
    return usable[0]


def _ordered(available: Collection[str]) -> list[str]:
    wanted = list(dict.fromkeys(available))
    known = [n for n in wanted if n in _registry()]
    order = {n: (get_class(n).tags.order, n) for n in known}
    return sorted(known, key=order.__getitem__) + [n for n in wanted if n not in order]


def certificate_text(method: str, status: str, diagnostics: Mapping[str, Any] | None = None) -> str:
    """The guarantee behind a query's answer in plain words, for a registered method
    name (``get_class(method).certificate(status, diagnostics)``); an unknown
    name gets the text that holds for any method."""
    key = str(method).lower().replace("-", "").replace("_", "")
    if key in _registry():
        return get_class(key).certificate(status, diagnostics)
    return plain_certificate(str(method) or "method", status, diagnostics)
