"""counterfact: nearest, plausible and diverse counterfactual explanations for tabular classifiers."""

from __future__ import annotations

from . import constraints, data, exceptions, methods, models, result, schema
from ._utils._moved import install as _install_moved
from ._utils._version import __version__
from .constraints import Causal, Constraints, Costs, violations
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
_LAZY_MODULES = ("datasets", "metrics", "benchmark", "report", "testing", "format", "serve")
#: public functions and classes that live in lazily imported modules: name -> (module, attribute)
_LAZY_ATTRS = {
    "rows_to_explain": ("counterfact.models", "rows_to_explain"),
    "audit": ("counterfact._audit", "audit"),
    "AuditResult": ("counterfact._audit", "AuditResult"),
    "global_recourse": ("counterfact._audit", "global_recourse"),
    "GlobalRecourse": ("counterfact._audit", "GlobalRecourse"),
}
#: module paths that moved: old name -> (what to import instead, the module(s) now holding its names)
_MOVED = {
    "counterfact.encoding": ("import Encoder from counterfact.data (or use cf.Encoder)", "counterfact.data.encoding"),
    "counterfact.select": (
        "import rows_to_explain and desired_class from counterfact.models (or use cf.rows_to_explain)",
        "counterfact.models._select",
    ),
    "counterfact.format": (
        "import format_value from counterfact.schema and changes, describe_changes from counterfact.result",
        "counterfact.result._text",
        "counterfact.schema._format",
    ),
    "counterfact.batch": (
        "import explain_in_chunks, parallel_backend and BatchReport from counterfact.methods",
        "counterfact.methods._pipeline._batch",
    ),
    "counterfact.solvers.mip": (
        "import Model, Var, Expr, lin, quicksum, Solution and SolverError from counterfact.solvers.milp",
        "counterfact.solvers.milp",
    ),
    "counterfact.solvers.mip_backend": (
        "import the MILP encoder (encode_inputs, encode_model, decode, ...) from counterfact.solvers.milp",
        "counterfact.solvers.milp",
    ),
    "counterfact.solvers.z3_backend": (
        "import the Z3 encoder (encode_model, forest_in_box, is_forest, ...) from counterfact.solvers.smt",
        "counterfact.solvers.smt",
        "counterfact.solvers",
    ),
}
_install_moved(_MOVED)


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
    "result",
    "rows_to_explain",
    "schema",
    "violations",
]
