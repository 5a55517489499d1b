"""Exception hierarchy of counterfact.

Every error the library raises on purpose derives from :class:`CounterfactError`.
Subclasses also inherit the matching builtin so that ``except ValueError`` keeps
working for users who do not know our types.  A failed *search* is never an
exception: it is a status in the result (``infeasible``, ``timeout``, ``failed``).
"""

from __future__ import annotations


class CounterfactError(Exception):
    """Root of every exception raised by counterfact."""


class ValidationError(CounterfactError, ValueError):
    """Bad input: wrong columns, unknown categories, NaN, wrong parameter values."""


class SchemaError(ValidationError):
    """A schema or feature definition is inconsistent, or data do not fit it."""


class ConstraintError(ValidationError):
    """Constraints name unknown features, contradict each other or the query."""


class UnsupportedConstraintError(CounterfactError, NotImplementedError):
    """A method cannot honour a kind of constraint that was asked for."""


class UnsupportedModelError(CounterfactError, TypeError):
    """A model (or one of its elements) is not supported by a method or the compiler."""


class NotFittedError(CounterfactError, AttributeError):
    """A method was used before :meth:`fit`."""


class MissingDependencyError(CounterfactError, ImportError):
    """An optional dependency is not installed."""


class DatasetNotFoundError(CounterfactError, FileNotFoundError):
    """A dataset that is not bundled was not found at the given location."""


__all__ = [
    "ConstraintError",
    "CounterfactError",
    "DatasetNotFoundError",
    "MissingDependencyError",
    "NotFittedError",
    "SchemaError",
    "UnsupportedConstraintError",
    "UnsupportedModelError",
    "ValidationError",
]
