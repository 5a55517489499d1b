"""counterfact: nearest, plausible and diverse counterfactual explanations for tabular classifiers."""

from __future__ import annotations

from . import constraints, data, exceptions, methods, models, result, schema
from ._utils._version import __version__
from .constraints import Causal, Constraints, Costs, Requirements, violations
from .data import Dataset, Encoder, encoding
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

_LAZY_CLASSES = ("NearestObservable", "MACE", "CEOCL", "UFCE", "MDPSO", "L2C")
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
    """Method classes and heavy subpackages load on first use."""
    import importlib

    if name in _LAZY_CLASSES:
        return getattr(methods, name)
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
    "UnsupportedConstraintError",
    "UnsupportedModelError",
    "ValidationError",
    "__version__",
    "audit",
    "constraints",
    "data",
    "encoding",
    "exceptions",
    "global_recourse",
    "models",
    "recourse",
    "result",
    "rows_to_explain",
    "schema",
    "violations",
]
