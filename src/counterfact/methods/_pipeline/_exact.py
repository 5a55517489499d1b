"""What an exact method encodes for one query: the compiled models its answer must reach.

An exact method (MACE, CE-OCL) embeds the model in its solver.  When the call
asks for a probability margin (``min_probability``) or for other models
(``robust_to``), it embeds every model the answer must hold for, each with the
margin, over the same input variables, so that "optimal" and "infeasible" stay
proofs for exactly what the pipeline verifies; under a vote-share rule
(``min_vote_share``, forests) each view also counts its trees' votes, checked once
against the real trees (:func:`check_votes`).  :class:`ExactModels` holds the
explained model's compiled form and its probability link, compiles the other
models once each, and hands out :class:`CompiledViews` per query.

Faithfulness before trust: before an exact method relies on a compiled model,
:func:`check_training_rows` runs it beside the model's own runtime (scikit-learn,
XGBoost, LightGBM, CatBoost, onnxruntime, torch) on the training rows (up to
:data:`CHECK_ROWS`; a seeded sample of that many beyond).  The compiled decision
must equal the runtime's ``predict`` on every row that is not a tie (compiled
outputs within :data:`TIE_TOLERANCE` times ``1 + |outputs|`` of the decision
boundary, where float32 and float64 arithmetic may decide either way).  Where the
model's probability follows from the compiled outputs (the probability function
:func:`probability_function` finds on a spread of the rows, which a probability
margin is encoded with), the compiled probabilities must equal ``predict_proba``
to :data:`PROBABILITY_TOLERANCE` (absolute) on every row.  Otherwise
:class:`UnsupportedModelError` names the largest disagreement and its row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import expit, softmax

from ..._utils._values import _py
from ...exceptions import UnsupportedConstraintError, UnsupportedModelError
from ...models._compile import (
    CompiledModel,
    compile_model,
    probability_function,
    probability_link,
    vote_shares,
    with_min_probability,
    with_min_vote_share,
)
from ...models._fastpredict import spread_rows
from ...models._votes import tree_votes
from ...schema import Schema
from ._query import Query

__all__ = [
    "CHECK_ROWS",
    "PROBABILITY_TOLERANCE",
    "TIE_TOLERANCE",
    "CompiledViews",
    "ExactModels",
    "check_training_rows",
    "check_votes",
    "training_rows",
]

#: the most training rows the faithfulness check reads (a seeded sample beyond)
CHECK_ROWS = 2000
#: the largest absolute difference between the compiled and the runtime's probabilities
PROBABILITY_TOLERANCE = 1e-6
#: a row is a tie, where either decision is faithful, when its compiled outputs lie within
#: this times ``1 + the row's largest |output|`` of the decision boundary
TIE_TOLERANCE = 1e-5


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
    rows : DataFrame, optional
        The training rows compiled models are checked on (:func:`check_training_rows`).
    """

    compiled: CompiledModel
    predict_proba: Any
    schema: Schema
    sample: pd.DataFrame
    owner: str
    rows: pd.DataFrame | None = None
    link: str = ""
    #: the explained model's adapter (its real trees' votes, for the vote-share rule)
    adapter: Any = None
    _others: dict[int, tuple[Any, CompiledModel, str]] = field(default_factory=dict)
    _votes_checked: set[int] = field(default_factory=set)

    @classmethod
    def of(
        cls, compiled: CompiledModel, model: Any, schema: Schema, data_X: pd.DataFrame, owner: str
    ) -> ExactModels:
        rows = training_rows(data_X)
        check_training_rows(compiled, model, rows, owner)
        sample = spread_rows(data_X)
        out = cls(compiled, model.predict_proba, schema, sample, owner, rows=rows, adapter=model)
        out.link = probability_link(compiled, model.predict_proba, sample)
        return out

    def ties_at_floor(self, query: Query) -> bool:
        """Whether answers exactly at ``query``'s ``min_probability`` are common: a
        forest's probability (the ``identity`` link) is an average of leaf values, so its
        values lie on a lattice that a round ``p`` often meets.  An exact search then
        reaches below the floor (``TIE_MARGIN``) rather than past it by its margin."""
        return query.min_probability is not None and self.link == "identity"

    def views(self, query: Query) -> CompiledViews:
        """The models ``query``'s answers must reach its target in; raises
        :class:`UnsupportedConstraintError` for what cannot be encoded exactly."""
        try:
            main = with_min_probability(self.compiled, self.link, query.min_probability)
            main = self._votes(main, self.compiled, None, query.min_vote_share)
            others = []
            for adapter in query.robust_to:
                compiled, link = self._other(adapter)
                view = with_min_probability(compiled, link, query.min_probability)
                view = self._votes(view, compiled, adapter, query.min_vote_share)
                others.append((view, view.class_index(query.target)))
        except UnsupportedModelError as exc:
            raise UnsupportedConstraintError(
                f"{self.owner} cannot encode this exactly: {exc}"
            ) from None
        return CompiledViews(main, tuple(others))

    def _votes(
        self, view: CompiledModel, compiled: CompiledModel, adapter: Any, share: float | None
    ) -> CompiledModel:
        """``view`` under the vote-share rule; the compiled votes checked once per model
        against the real trees' (:func:`check_votes`; ``adapter`` None: the explained one)."""
        if share is None:
            return view
        out = with_min_vote_share(view, share)
        if id(compiled) not in self._votes_checked:
            rows = self.sample if self.rows is None else self.rows
            check_votes(compiled, adapter or self.adapter, rows, self.owner)
            self._votes_checked.add(id(compiled))
        return out

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
            rows = self.sample if self.rows is None else self.rows
            check_training_rows(compiled, adapter, rows, self.owner)
            link = probability_link(compiled, adapter.predict_proba, self.sample)
            hit = self._others[key] = (adapter.model, compiled, link)
        return hit[1], hit[2]

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_others"] = {}  # recompiled in a worker on first use
        state["_votes_checked"] = set()
        return state


# ------------------------------------------------------------------ faithfulness
def training_rows(X: pd.DataFrame, n: int = CHECK_ROWS) -> pd.DataFrame:
    """``X``, or a seeded sample of ``n`` of its rows (in their order) when it has more."""
    if len(X) <= n:
        return X
    keep = np.sort(np.random.default_rng(0).choice(len(X), size=n, replace=False))
    return X.iloc[keep]


def _tie_distance(compiled: CompiledModel, Y: np.ndarray) -> np.ndarray:
    """How far each row's outputs lie from the decision boundary (0 on it)."""
    if compiled.rule.kind == "threshold":
        return np.abs(Y[:, 0])
    if compiled.rule.kind == "argmax" and Y.shape[1] > 1:
        top = np.sort(Y, axis=1)
        return top[:, -1] - top[:, -2]
    return np.min(np.abs(Y), axis=1)  # one-vs-one: the closest pairwise vote


def _compiled_probabilities(function: str, Y: np.ndarray) -> np.ndarray:
    """The probabilities ``function`` (a name :func:`probability_function` returns)
    gives for the compiled outputs ``Y``."""
    if function == "sigmoid":
        return np.c_[expit(-Y[:, 0]), expit(Y[:, 0])]
    if function == "softmax":
        return softmax(Y, axis=1)
    if function == "ovr":
        S = expit(Y)
        return S / S.sum(axis=1, keepdims=True)
    return Y  # identity: the mean leaf probabilities


def _refuse(what: str, rows: pd.DataFrame, at: int, owner: str) -> UnsupportedModelError:
    row = rows.iloc[at].to_dict()
    return UnsupportedModelError(
        f"{owner} cannot rely on the compiled model: on the training rows {what} (row "
        f"{rows.index[at]!r}: {row}). The exact search would answer for another model than "
        "the one explained; use a model-agnostic method (e.g. cf.UFCE, cf.MDPSO, "
        "cf.NearestObservable), and please report the model."
    )


def _check_decisions(
    compiled: CompiledModel, adapter: Any, rows: pd.DataFrame, Y: np.ndarray, owner: str
) -> None:
    """Refuse a compiled decision other than the runtime's ``predict`` off the ties."""
    got = compiled.rule.predict(Y)
    labels = np.asarray(adapter.predict(rows))
    want = np.array([np.flatnonzero(compiled.classes == v)[0] for v in labels], dtype=int)
    size = 1.0 + np.max(np.abs(Y), axis=1)
    bad = np.flatnonzero((got != want) & (_tie_distance(compiled, Y) > TIE_TOLERANCE * size))
    if bad.size:
        at = int(bad[np.argmax(_tie_distance(compiled, Y)[bad])])
        raise _refuse(
            f"it decides {bad.size} of {len(rows)} rows otherwise than the model's own predict "
            f"(away from ties: outputs further than {TIE_TOLERANCE:g} x (1 + |outputs|) from "
            f"the decision boundary); the clearest: compiled class "
            f"{_py(compiled.classes[got[at]])!r}, the model's {_py(labels[at])!r}",
            rows,
            at,
            owner,
        )


def _check_probabilities(
    compiled: CompiledModel, adapter: Any, rows: pd.DataFrame, Y: np.ndarray, owner: str
) -> None:
    """Refuse compiled probabilities further than :data:`PROBABILITY_TOLERANCE` from
    ``predict_proba``, where the probability follows from the outputs on a spread of
    the rows (its function: :func:`probability_function`)."""
    function = probability_function(compiled, adapter.predict_proba, spread_rows(rows))
    if not function:
        return  # no probability function of the outputs: no exact margin either
    gap = np.abs(_compiled_probabilities(function, Y) - adapter.predict_proba(rows))
    worst = np.max(gap, axis=1)
    at = int(np.argmax(worst))
    if worst[at] > PROBABILITY_TOLERANCE:
        raise _refuse(
            f"its probabilities ({function} of the outputs) differ from the model's own "
            f"predict_proba by up to {worst[at]:.3g} (tolerance {PROBABILITY_TOLERANCE:g}, "
            f"absolute; {int(np.sum(worst > PROBABILITY_TOLERANCE))} of {len(rows)} rows beyond)",
            rows,
            at,
            owner,
        )


def check_votes(compiled: CompiledModel, adapter: Any, rows: pd.DataFrame, owner: str) -> None:
    """Refuse (:class:`UnsupportedModelError`) a compiled forest whose trees' votes on
    ``rows`` differ from the real trees' (:func:`~counterfact.models._votes.tree_votes`)."""
    if len(rows) == 0:
        return
    n_trees = len(compiled.estimator.trees)
    got = np.rint(vote_shares(compiled, compiled.encode(rows)) * n_trees).astype(int)
    want = tree_votes(adapter, rows)
    bad = np.flatnonzero(np.any(got != want, axis=1))
    if bad.size:
        at = int(bad[0])
        raise _refuse(
            f"its trees' votes differ from the real trees' on {bad.size} of {len(rows)} rows "
            f"(compiled {got[at].tolist()}, real {want[at].tolist()})",
            rows,
            at,
            owner,
        )


def check_training_rows(
    compiled: CompiledModel, adapter: Any, rows: pd.DataFrame, owner: str
) -> None:
    """Refuse (:class:`UnsupportedModelError`) a compiled model that does not reproduce
    ``adapter``'s runtime on ``rows`` (module docstring: decisions off the ties, and
    probabilities where they follow from the outputs)."""
    if len(rows) == 0:
        return
    Y = compiled.outputs_raw(compiled.encode(rows))
    _check_decisions(compiled, adapter, rows, Y, owner)
    _check_probabilities(compiled, adapter, rows, Y, owner)
