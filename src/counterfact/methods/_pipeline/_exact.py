"""What an exact method encodes for one query: the compiled models its answer must reach.

An exact method (MACE, CE-OCL) embeds the model in its solver.  When the call
asks for a probability margin (``min_probability``) or for other models
(``robust_to``), it embeds every model the answer must hold for, each with the
margin, over the same input variables, so that "optimal" and "infeasible" stay
proofs for exactly what the pipeline verifies.  :class:`ExactModels` holds the
explained model's compiled form and its probability link, compiles the other
models once each, and hands out :class:`CompiledViews` per query.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ...exceptions import UnsupportedConstraintError, UnsupportedModelError
from ...models._compile import CompiledModel, compile_model, probability_link, with_min_probability
from ...models._fastpredict import spread_rows
from ...schema import Schema
from ._query import Query

__all__ = ["CompiledViews", "ExactModels"]


@dataclass(frozen=True)
class CompiledViews:
    """The compiled models of one query: the explained one and the ``robust_to`` ones
    (with their target indices), each with the call's probability margin."""

    main: Any
    others: tuple[tuple[Any, int], ...] = ()


@dataclass
class ExactModels:
    """The explained model compiled, and the ``robust_to`` models compiled on demand.

    Parameters
    ----------
    compiled : CompiledModel
        The explained model, compiled at ``fit``.
    predict_proba : callable
        The explained model's own probabilities (to measure its link).
    schema : Schema
    sample : DataFrame
        Rows the links are measured on (a spread of the training rows).
    owner : str
        The method's name, for messages.
    """

    compiled: CompiledModel
    predict_proba: Any
    schema: Schema
    sample: pd.DataFrame
    owner: str
    link: str = ""
    _others: dict[int, tuple[Any, CompiledModel, str]] = field(default_factory=dict)

    @classmethod
    def of(
        cls, compiled: CompiledModel, model: Any, schema: Schema, data_X: pd.DataFrame, owner: str
    ) -> ExactModels:
        sample = spread_rows(data_X)
        out = cls(compiled, model.predict_proba, schema, sample, owner)
        out.link = probability_link(compiled, model.predict_proba, sample)
        return out

    def views(self, query: Query) -> CompiledViews:
        """The models ``query``'s answers must reach its target in; raises
        :class:`UnsupportedConstraintError` for what cannot be encoded exactly."""
        try:
            main = with_min_probability(self.compiled, self.link, query.min_probability)
            others = []
            for adapter in query.robust_to:
                compiled, link = self._other(adapter)
                view = with_min_probability(compiled, link, query.min_probability)
                others.append((view, view.class_index(query.target)))
        except UnsupportedModelError as exc:
            raise UnsupportedConstraintError(
                f"{self.owner} cannot encode this exactly: {exc}"
            ) from None
        return CompiledViews(main, tuple(others))

    def _other(self, adapter: Any) -> tuple[CompiledModel, str]:
        """A ``robust_to`` model compiled (once per model object) and its link; it must
        read the same inputs as the explained model."""
        key = id(adapter.model)
        hit = self._others.get(key)
        if hit is None or hit[0] is not adapter.model:
            compiled = compile_model(adapter.model, self.schema)
            if compiled.inputs != self.compiled.inputs:
                raise UnsupportedModelError(
                    "a robust_to model reads its inputs differently from the explained model "
                    "(another "
                    "preprocessing); refit it with the same pipeline (cf.models.retrained does)"
                )
            link = probability_link(compiled, adapter.predict_proba, self.sample)
            hit = self._others[key] = (adapter.model, compiled, link)
        return hit[1], hit[2]

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_others"] = {}  # recompiled in a worker on first use
        return state
