"""Causal relations between features (CE-OCL's eq. 7)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import ConstraintError

__all__ = ["Causal"]


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
        object.__setattr__(self, "parents", tuple(self.parents))
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
            unknown = set(self.coef) - set(self.parents)
            if unknown:
                raise ConstraintError(
                    f"Causal relation for '{self.child}': coef names {sorted(unknown)} "
                    f"which are not parents {list(self.parents)}."
                )
        if self.model is not None and not hasattr(self.model, "predict"):
            raise ConstraintError(
                f"Causal relation for '{self.child}': model must be a fitted regressor with predict()."
            )

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
        dchild = pd.to_numeric(counterfactuals[self.child]).to_numpy(dtype=float) - float(query[self.child])
        return dchild - (new - base)
