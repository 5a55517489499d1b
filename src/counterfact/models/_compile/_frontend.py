"""The front-end registry: which front end compiles which estimator class.

A front end is one subclass of :class:`FrontEnd` that declares the estimator
classes it compiles (:attr:`FrontEnd.estimators`) and compiles them
(:meth:`FrontEnd.compile`); :func:`register_front_end` adds it to the registry,
and the dispatcher finds the front end of a fitted estimator by walking its
class's MRO (:func:`front_end_for`): the most specific declared class wins, so a
subclass of a supported estimator is compiled by its parent's front end unless a
front end declares the subclass itself.

Classes of optional libraries (XGBoost, LightGBM, interpret, optbinning) are
declared as ``"module:Class"`` strings and looked up in ``sys.modules`` only: a
fitted instance of such a class means its module is imported, so looking a
model up never imports an optional library.

A wrapper around one inner model (``CalibratedClassifierCV``, optbinning's
``Scorecard``) is a :class:`WrapperFrontEnd`, given the dispatcher as a callable.

This module imports only the IR; the front-end modules import it and register
their class, and the dispatcher imports them all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from ...exceptions import ValidationError
from ...schema import Schema
from .._classref import ClassRef, class_key, resolve_class
from ._ir import AffineMap, CompiledModel, DecisionRule, Estimator, InputSpace, XColumn

__all__ = [
    "FrontEnd",
    "WrapperFrontEnd",
    "front_end_for",
    "front_ends",
    "register_front_end",
    "supported_estimators",
]


class FrontEnd:
    """How to compile one family of estimators into an IR estimator node.

    Subclass it, declare the class attributes, implement :meth:`compile` (and
    :meth:`inputs` when the estimator reads its columns in its own way), and
    decorate the class with :func:`register_front_end`.

    Attributes
    ----------
    name : str
        A short unique name (``"xgboost"``), recorded in
        :attr:`CompiledModel.front_end`: solvers may prefer one back end per
        front end.
    estimators : tuple of (type or str)
        The estimator classes compiled (their subclasses too), as classes or
        ``"module:Class"`` strings for optional libraries.
    supported : tuple of str
        How :data:`SUPPORTED_ESTIMATORS` lists them (``"SVC(kernel='linear')"``).
    trees : bool
        A tree model: the numeric table columns of the preprocessing get code
        columns, which its splits on them are rewritten over
        (:func:`._splits.with_code_columns`).
    dense_input : bool
        The estimator misreads a sparse matrix (XGBoost takes the zeros it does
        not store for missing values), so sparse preprocessing output is refused.
    """

    name: ClassVar[str] = ""
    estimators: ClassVar[tuple[ClassRef, ...]] = ()
    supported: ClassVar[tuple[str, ...]] = ()
    trees: ClassVar[bool] = False
    dense_input: ClassVar[bool] = False

    def compile(self, est: Any, affine: AffineMap, margin: float) -> tuple[Estimator, DecisionRule]:
        """The estimator node and decision rule of the fitted estimator ``est``,
        whose input columns are ``affine``'s; ``margin`` is the rule's margin.
        Every front end but a wrapper overrides it (:func:`register_front_end` checks)."""
        raise NotImplementedError(f"Front end {self.name!r} does not compile estimators.")

    def inputs(
        self, est: Any, cols: list[XColumn], schema: Schema, space: InputSpace
    ) -> list[XColumn]:
        """The columns ``est`` receives as it reads them (native categorical codes),
        given the preprocessing's output columns ``cols``; by default ``cols``."""
        return cols


class WrapperFrontEnd(FrontEnd):
    """A front end for a model wrapping one inner model, compiled by the dispatcher."""

    def compile_wrapper(
        self,
        est: Any,
        margin: float,
        where: str,
        compile_inner: Callable[[Any, str], CompiledModel],
    ) -> CompiledModel:
        """The compiled wrapper ``est`` at position ``where``, given the dispatcher as
        ``compile_inner(model, where)`` for the model it wraps.  Every wrapper overrides
        it (:func:`register_front_end` checks)."""
        raise NotImplementedError(f"Front end {self.name!r} does not compile wrappers.")


_REGISTRY: list[FrontEnd] = []


def register_front_end(cls: type[FrontEnd]) -> type[FrontEnd]:
    """Add a :class:`FrontEnd` subclass to the registry (usable as a class decorator).

    Raises
    ------
    ValidationError
        If the class is no front end, has no name or estimators, or shares its
        name or one of its estimator classes with a registered front end.
    """
    if not (isinstance(cls, type) and issubclass(cls, FrontEnd)):
        raise ValidationError(f"register_front_end needs a FrontEnd subclass. Got {cls!r}.")
    if not cls.name or not cls.estimators or not cls.supported:
        raise ValidationError(
            f"Front end {cls.__name__} must declare name, estimators and supported."
        )
    hook = "compile_wrapper" if issubclass(cls, WrapperFrontEnd) else "compile"
    base = WrapperFrontEnd if hook == "compile_wrapper" else FrontEnd
    if getattr(cls, hook) is getattr(base, hook):
        raise ValidationError(f"Front end {cls.__name__} must implement {hook}(...).")
    for other in _REGISTRY:
        shared = {class_key(c) for c in cls.estimators} & {class_key(c) for c in other.estimators}
        if other.name == cls.name or shared:
            raise ValidationError(
                f"Front end {cls.__name__} clashes with the registered front end "
                f"{other.name!r} (same name, or both declare {sorted(shared)})."
            )
    _REGISTRY.append(cls())
    return cls


def front_ends() -> tuple[FrontEnd, ...]:
    """The registered front ends, in registration order."""
    return tuple(_REGISTRY)


def supported_estimators() -> tuple[str, ...]:
    """What the registered front ends compile, as :data:`SUPPORTED_ESTIMATORS` lists it
    (estimators first, then the wrappers around them)."""
    ordered = sorted(_REGISTRY, key=lambda fe: isinstance(fe, WrapperFrontEnd))
    return tuple(label for fe in ordered for label in fe.supported)


def front_end_for(cls: type) -> FrontEnd | None:
    """The front end of estimator class ``cls``: the first class of its MRO that a
    registered front end declares (None: no front end compiles it)."""
    declared = {}
    for fe in _REGISTRY:
        for ref in fe.estimators:
            found = resolve_class(ref)
            if found is not None:
                declared[found] = fe
    return next((declared[base] for base in cls.__mro__ if base in declared), None)
