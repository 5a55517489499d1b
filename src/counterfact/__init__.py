"""counterfact: nearest, plausible and diverse counterfactual explanations for tabular
classifiers."""

from __future__ import annotations

# the subpackages every session uses, loaded with the package (others load on first use)
from . import constraints, data, exceptions, methods, models, result, schema  # noqa: F401
from ._utils._version import __version__
from .constraints import (
    Causal,
    Constraints,
    Costs,
    Requirements,
    Timeline,
    violations,
    vote_share_for,
)
from .data import Dataset, Encoder
from .exceptions import (
    ConstraintError,
    CounterfactError,
    DatasetNotFoundError,
    MissingDependencyError,
    NotFittedError,
    SchemaError,
    UnsupportedConstraintError,
    UnsupportedModelError,
    ValidationError,
)
from .methods import CounterfactualMethod
from .result import CounterfactualResult
from .schema import Feature, Schema

_LAZY_MODULES = ("datasets", "metrics", "benchmark", "recourse", "report", "testing", "serve")
#: public functions and classes that live in lazily imported modules: name -> (module, attribute)
_LAZY_ATTRS = {
    "rows_to_explain": ("counterfact.models", "rows_to_explain"),
    "audit": ("counterfact.recourse", "audit"),
    "AuditResult": ("counterfact.recourse", "AuditResult"),
    "global_recourse": ("counterfact.recourse", "global_recourse"),
    "GlobalRecourse": ("counterfact.recourse", "GlobalRecourse"),
}


def __getattr__(name: str):  # type: ignore[no-untyped-def]
    """Method classes (from the registry: ``cf.MACE`` is the method ``"mace"``'s class)
    and heavy subpackages load on first use."""
    import importlib

    from .methods import _registry

    registry_name = _registry.builtin_classes().get(name)
    if registry_name is not None:
        cls = _registry.get_class(registry_name)
        if not cls.tags.peer:  # adapters to other libraries live in counterfact.methods only
            return cls
    if name in _LAZY_MODULES:
        return importlib.import_module(f"counterfact.{name}")
    if name in _LAZY_ATTRS:
        module, attr = _LAZY_ATTRS[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'counterfact' has no attribute {name!r}")


__all__ = [
    "CEOCL",
    "L2C",
    "MACE",
    "MDPSO",
    "UFCE",
    "AuditResult",
    "Causal",
    "ConstraintError",
    "Constraints",
    "Costs",
    "CounterfactError",
    "CounterfactualMethod",
    "CounterfactualResult",
    "Dataset",
    "DatasetNotFoundError",
    "Encoder",
    "Feature",
    "GlobalRecourse",
    "MissingDependencyError",
    "NearestObservable",
    "NotFittedError",
    "Requirements",
    "Schema",
    "SchemaError",
    "Timeline",
    "UnsupportedConstraintError",
    "UnsupportedModelError",
    "ValidationError",
    "__version__",
    "audit",
    "global_recourse",
    "rows_to_explain",
    "violations",
    "vote_share_for",
]
