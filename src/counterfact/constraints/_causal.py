"""Causal relations between features (CE-OCL's eq. 7)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import ConstraintError
from ..schema._numbers import finite_number, show_number

__all__ = ["MAX_COEFFICIENT", "Causal"]

#: The largest magnitude of a linear causal coefficient: the exact methods'
#: solvers treat matrix entries beyond 1e15 as infinite (HiGHS) and lose
#: precision long before, once a coefficient is multiplied by a feature's range.
MAX_COEFFICIENT = 1e9


@dataclass(frozen=True)
class Causal:
    """A causal relation ``child = c(parents)`` used as CE-OCL's eq. (7).

    Give exactly one of

    * ``coef`` (and ``intercept``): a linear structural equation
      ``c(p) = intercept + sum_k coef[k] * p_k`` -- encodable by every exact method;
    * ``model``: a fitted regressor predicting the child from a DataFrame of
      the parents (CE-OCL embeds it through the model compiler);
    * ``fn``: a Python callable taking a DataFrame of the parents and
      returning an array (checked, but not encodable in a solver).

    The counterfactual must satisfy ``x'_child - x_child = c(p') - c(p)`` within
    ``tol`` (relative to the child's range).
    """

    child: str
    parents: tuple[str, ...]
    coef: Mapping[str, float] | None = None
    intercept: float = 0.0
    model: Any = None
    fn: Callable[[pd.DataFrame], Any] | None = None
    tol: float = 1e-3

    def __post_init__(self) -> None:
        if not isinstance(self.child, str):
            raise ConstraintError(
                f"Causal relation: child must be a feature name (str). Got {self.child!r}."
            )
        parents = (self.parents,) if isinstance(self.parents, str) else self.parents
        if isinstance(parents, Mapping) or not isinstance(parents, Iterable):
            raise ConstraintError(
                f"Causal relation for '{self.child}': parents must list feature names. Got "
                f"{parents!r}."
            )
        object.__setattr__(self, "parents", tuple(parents))
        if not all(isinstance(p, str) for p in self.parents):
            raise ConstraintError(
                f"Causal relation for '{self.child}': parents must be feature names (str). Got "
                f"{list(self.parents)!r}."
            )
        given = sum(x is not None for x in (self.coef, self.model, self.fn))
        if given != 1:
            raise ConstraintError(
                f"Causal relation for '{self.child}' needs exactly one of coef=, model= or fn=. "
                f"Got {given}."
            )
        if not self.parents:
            raise ConstraintError(f"Causal relation for '{self.child}' needs at least one parent.")
        if self.child in self.parents:
            raise ConstraintError(f"Causal relation: '{self.child}' cannot be its own parent.")
        if self.coef is not None:
            self._check_linear()
        tol = finite_number(
            self.tol, f"Causal relation for '{self.child}': tol", error=ConstraintError
        )
        if tol <= 0:
            raise ConstraintError(
                f"Causal relation for '{self.child}': tol must be > 0. Got {self.tol!r}."
            )
        if self.model is not None and not hasattr(self.model, "predict"):
            raise ConstraintError(
                f"Causal relation for '{self.child}': model must be a fitted regressor with "
                "predict()."
            )

    def _check_linear(self) -> None:
        """``coef`` names parents with finite coefficients of a size solvers handle;
        ``intercept`` too."""
        who = f"Causal relation for '{self.child}'"
        if not isinstance(self.coef, Mapping):
            raise ConstraintError(
                f"{who}: coef must map parent names to numbers. Got {self.coef!r}."
            )
        if not self.coef:
            raise ConstraintError(
                f"{who}: coef is empty, so the child would not depend on its parents "
                f"{list(self.parents)}. "
                f"Give each parent its coefficient, e.g. coef={{'{self.parents[0]}': 0.5}}."
            )
        unknown = set(self.coef) - set(self.parents)
        if unknown:
            raise ConstraintError(
                f"{who}: coef names {sorted(map(str, unknown))} which are not parents "
                f"{list(self.parents)}."
            )
        hint = (
            f"Coefficients are at most {MAX_COEFFICIENT:g} in magnitude; "
            "rescale the features' units."
        )
        coef = {}
        for name, w in self.coef.items():
            coef[name] = finite_number(
                w, f"{who}: coef['{name}']", error=ConstraintError, hint=hint
            )
            if abs(coef[name]) > MAX_COEFFICIENT:
                raise ConstraintError(
                    f"{who}: coef['{name}'] = {show_number(w)} is too large. {hint}"
                )
        intercept = finite_number(self.intercept, f"{who}: intercept", error=ConstraintError)
        if abs(intercept) > MAX_COEFFICIENT * 1e3:
            raise ConstraintError(
                f"{who}: intercept = {show_number(self.intercept)} is too large (at most "
                f"{MAX_COEFFICIENT * 1e3:g})."
            )
        object.__setattr__(self, "coef", coef)
        object.__setattr__(self, "intercept", intercept)

    @property
    def kind(self) -> str:
        """``"linear"``, ``"model"`` or ``"function"``."""
        if self.coef is not None:
            return "linear"
        return "model" if self.model is not None else "function"

    def evaluate(self, parents: pd.DataFrame) -> np.ndarray:
        """``c(parents)`` for each row."""
        P = parents.loc[:, list(self.parents)]
        if self.coef is not None:
            out = np.full(len(P), float(self.intercept))
            for k, w in self.coef.items():
                out += float(w) * pd.to_numeric(P[k]).to_numpy(dtype=float)
            return out
        if self.model is not None:
            return np.asarray(self.model.predict(P), dtype=float).reshape(-1)
        fn = self.fn
        assert fn is not None  # one of coef/model/fn is set (checked in __post_init__)
        return np.asarray(fn(P), dtype=float).reshape(-1)

    def residual(self, query: pd.Series, counterfactuals: pd.DataFrame) -> np.ndarray:
        """``(x'_child - x_child) - (c(p') - c(p))`` per counterfactual."""
        q = query.to_frame().T
        base = self.evaluate(q)[0]
        new = self.evaluate(counterfactuals)
        dchild = pd.to_numeric(counterfactuals[self.child]).to_numpy(dtype=float) - float(
            query[self.child]
        )
        return dchild - (new - base)
