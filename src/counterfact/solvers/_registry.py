"""The solver registry: one class per backend, looked up by name.

A backend is a subclass of :class:`Solver` with

* ``name`` -- what ``solver=`` takes (``MACE(solver="z3")``, ``CEOCL(solver="scip")``);
* ``requires`` -- the modules it imports (their pip extra is in the install hint);
* :meth:`Solver.supports` -- ``None`` when it can take a problem, else the
  reason it cannot (a missing package, a model kind or a constraint it does
  not encode);
* :meth:`Solver.build` -- the object that searches one problem (MACE's
  satisfiability oracle for a :class:`~counterfact.solvers._problem.Search`).

MILP backends (:class:`MilpSolver`) also solve a whole
:class:`~counterfact.solvers._milp.Model` (:meth:`MilpSolver.solve`), which is
how ``Model.solve(name)`` and CE-OCL reach them.  :func:`register` adds a
backend (also usable as a class decorator); :func:`names` lists them in the
order they were registered; :func:`build_first` walks a preference list and
builds the first backend that takes the problem.
"""

from __future__ import annotations

import importlib.util
from abc import ABCMeta, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar, TypeVar

from .._utils._deps import install_hint
from .._utils._validation import Spec
from ..exceptions import (
    MissingDependencyError,
    UnsupportedConstraintError,
    UnsupportedModelError,
    ValidationError,
)

__all__ = [
    "MilpSolver",
    "Solver",
    "SolverChoice",
    "build_first",
    "first_available",
    "get",
    "milp_names",
    "names",
    "register",
    "unregister",
]

S = TypeVar("S", bound="type[Solver]")


class Solver:
    """One solver backend (subclass it and :func:`register` the subclass).

    Attributes
    ----------
    name : str
        Registry name, the value of ``solver=``.
    requires : tuple of str
        Modules the backend imports (``("z3",)``); empty for pure numpy.
    summary : str
        One line: what it solves, for listings and error messages.
    """

    name: ClassVar[str] = ""
    requires: ClassVar[tuple[str, ...]] = ()
    summary: ClassVar[str] = ""

    def missing(self) -> str | None:
        """The first required module that is not installed, as a reason with its
        install hint; None when every one is."""
        for module in self.requires:
            if importlib.util.find_spec(module.split(".")[0]) is None:
                return f"{module} is not installed ({install_hint(module)})"
        return None

    def supports(self, problem: Any = None) -> str | None:
        """None when this backend can take ``problem``, else why it cannot.

        ``problem=None`` asks only whether the backend can run here (its
        packages).  Subclasses add what their encoding cannot state.
        """
        return self.missing()

    def build(self, problem: Any) -> Any:
        """The object that searches ``problem`` (for a
        :class:`~counterfact.solvers._problem.Search`: a satisfiability oracle
        with ``check(bound, deadline)``).  May raise
        :class:`~counterfact.exceptions.UnsupportedModelError` or
        :class:`~counterfact.exceptions.UnsupportedConstraintError` for what
        only the encoding finds out."""
        raise UnsupportedModelError(f"The solver {self.name!r} builds no oracle.")


class MilpSolver(Solver, metaclass=ABCMeta):
    """A backend that solves the in-house MILP model (HiGHS, SCIP, ...); a subclass
    without :meth:`solve` cannot be registered (it cannot be instantiated)."""

    @abstractmethod
    def solve(self, model: Any, settings: Any) -> Any:
        """Solve ``model`` (a :class:`~counterfact.solvers._milp.SparseModel`)
        under ``settings`` (:class:`~counterfact.solvers._milp.SolveSettings`);
        returns a :class:`~counterfact.solvers._milp.Solution`."""


_REGISTRY: dict[str, Solver] = {}


def register(cls: S) -> S:
    """Add a backend class to the registry under ``cls.name`` (replacing one of
    that name); returns the class, so it also works as a decorator."""
    if not (isinstance(cls, type) and issubclass(cls, Solver)) or not cls.name:
        raise ValidationError(
            f"register() takes a subclass of counterfact.solvers.Solver with a name; got {cls!r}."
        )
    if getattr(cls, "__abstractmethods__", None):
        missing = ", ".join(sorted(cls.__abstractmethods__))
        raise ValidationError(f"Solver {cls.__name__} must implement {missing} to be registered.")
    _REGISTRY[cls.name] = cls()
    return cls


def unregister(name: str) -> None:
    """Remove the backend ``name`` from the registry (nothing if it is not there)."""
    _REGISTRY.pop(name, None)


def names() -> tuple[str, ...]:
    """Every registered backend's name, in registration order."""
    return tuple(_REGISTRY)


def milp_names() -> tuple[str, ...]:
    """The registered backends that solve a MILP model, in registration order."""
    return tuple(n for n, s in _REGISTRY.items() if isinstance(s, MilpSolver))


def get(name: str) -> Solver:
    """The registered backend ``name``."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValidationError(
            f"Unknown solver {name!r}. Registered solvers: {', '.join(names())}."
        ) from None


def build_first(preference: Sequence[str], problem: Any) -> tuple[str, Any]:
    """Walk ``preference`` and build the first backend that takes ``problem``.

    A backend is skipped when :meth:`Solver.supports` gives a reason, or when
    :meth:`Solver.build` raises :class:`UnsupportedModelError` /
    :class:`UnsupportedConstraintError` (what only the encoding finds out).

    Returns
    -------
    (name, built object)

    Raises
    ------
    UnsupportedConstraintError
        When none takes it, naming every backend's reason.
    """
    reasons: list[str] = []
    for name in preference:
        solver = get(name)
        why = solver.supports(problem)
        if why is None:
            try:
                return name, solver.build(problem)
            except (UnsupportedModelError, UnsupportedConstraintError) as exc:
                why = str(exc)
        reasons.append(f"{name}: {why}")
    raise UnsupportedConstraintError(
        "No solver can take this problem ("
        + "; ".join(reasons)
        + f"). Solvers tried: {', '.join(preference)}."
    )


def first_available(preference: Sequence[str]) -> str:
    """The first backend of ``preference`` whose packages are installed."""
    reasons = []
    for name in preference:
        why = get(name).supports(None)
        if why is None:
            return name
        reasons.append(f"{name}: {why}")
    raise MissingDependencyError("No solver can run here (" + "; ".join(reasons) + ").")


class SolverChoice(Spec):
    """A ``solver=`` parameter's accepted values: ``"auto"`` or a registered backend's
    name (only MILP backends with ``milp=True``), read from the registry when checked,
    so a backend registered later is accepted too."""

    def __init__(self, *, milp: bool = False) -> None:
        self.milp = milp

    def choices(self) -> tuple[str, ...]:
        return ("auto", *(milp_names() if self.milp else names()))

    def accepts(self, value: Any) -> bool:
        return isinstance(value, str) and value in self.choices()

    def describe(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.choices())

    def invalid(self) -> Any:
        return "__not_a_solver__"
