"""The one test of "this row reaches the target": :class:`Judge`.

By default a row reaches the target when the explained model predicts the
target class for it.  An ``explain`` call may ask for more, and every check of
the pipeline (snapping, verification, sparsification, a method's own checks
through ``CounterfactualMethod.verify``) then asks the same judge:

* ``Requirements(min_probability=p)``: the explained model's probability of the target is at
  least ``p`` (a margin against recalibration and noise);
* ``Requirements(robust_to=[model, ...])``: every listed model predicts the target too (and
  with the margin, when one was asked): advice that survives a retrained model;
* ``Requirements(min_vote_share=s)`` (forests): at least ``ceil(s T)`` of a forest's ``T``
  trees vote for the target, read from the real trees, in every model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ...constraints import Requirements
from ...constraints._votes import votes_needed
from ...data import Dataset
from ...exceptions import ValidationError
from ...models import ModelAdapter
from ...models._adapter import as_adapter, check_model
from ...models._votes import forest_of, tree_votes

__all__ = ["Judge", "WithOwnTest", "make_judge"]


@dataclass
class Judge:
    """Whether rows reach their target (see the module docstring).

    Attributes
    ----------
    model : ModelAdapter
        The explained model.
    others : tuple of ModelAdapter
        The models the answer must also hold for (``robust_to``).
    min_probability : float or None
        The least probability of the target, in every model.
    min_vote_share : float or None
        The least share of a forest's trees voting for the target, in every model.
    """

    model: ModelAdapter
    others: tuple[ModelAdapter, ...] = ()
    min_probability: float | None = None
    min_vote_share: float | None = None

    @property
    def demanding(self) -> bool:
        """Whether more than the explained model's decision is asked."""
        return (
            bool(self.others) or self.min_probability is not None or self.min_vote_share is not None
        )

    def __call__(
        self, rows: pd.DataFrame, targets: Sequence[Any], target_index: Sequence[int]
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(reaches, probability)`` per row: whether row ``k`` reaches ``targets[k]``
        (the decision, the margin and every other model), and the explained
        model's probability of ``targets[k]`` (column ``target_index[k]``)."""
        n = len(rows)
        if n == 0:
            return np.zeros(0, dtype=bool), np.zeros(0)
        tgt = np.asarray(list(targets), dtype=object)
        pred, proba = self.model.predict_with_proba(rows)
        conf = np.asarray(proba)[np.arange(n), np.asarray(target_index, dtype=int)]
        ok = np.array([p == t for p, t in zip(pred, tgt, strict=True)], dtype=bool)
        if self.min_probability is not None:
            ok &= conf >= self.min_probability
        if self.min_vote_share is not None and ok.any():
            keep = np.flatnonzero(ok)
            ok[keep] = _voted(self.model, rows.iloc[keep], tgt[keep], self.min_vote_share)
        for other in self.others:
            if not ok.any():
                break
            keep = np.flatnonzero(ok)
            ok[keep] = _reaches(other, rows.iloc[keep], tgt[keep], self.min_probability)
            if self.min_vote_share is not None and ok.any():
                keep = np.flatnonzero(ok)
                ok[keep] = _voted(other, rows.iloc[keep], tgt[keep], self.min_vote_share)
        return ok, conf


class WithOwnTest(Judge):
    """A judge followed by a method's own test of the rows it accepts (``accepts``: rows
    and their target columns -> one bool per row, or None for no test)."""

    def __init__(self, judge: Judge, accepts: Callable[..., np.ndarray | None]) -> None:
        super().__init__(judge.model, judge.others, judge.min_probability, judge.min_vote_share)
        self.judge, self.accepts = judge, accepts
        self._has_test: bool | None = None

    def __call__(
        self, rows: pd.DataFrame, targets: Sequence[Any], target_index: Sequence[int]
    ) -> tuple[np.ndarray, np.ndarray]:
        ok, conf = self.judge(rows, targets, target_index)
        if ok.any() and self._testing(rows):
            keep = np.flatnonzero(ok)
            index = np.asarray(list(target_index), dtype=int)
            own = self.accepts(rows.iloc[keep], index[keep])
            if own is not None:
                ok[keep] = np.asarray(own, dtype=bool)
        return ok, conf

    def _testing(self, rows: pd.DataFrame) -> bool:
        """Whether the method has a test of its own (asked once, on no rows)."""
        if self._has_test is None:
            self._has_test = self.accepts(rows.iloc[:0], np.zeros(0, dtype=int)) is not None
        return self._has_test


def _voted(
    model: ModelAdapter, rows: pd.DataFrame, targets: np.ndarray, share: float
) -> np.ndarray:
    """Whether at least ``share`` of the forest's trees vote for each row's target."""
    votes = tree_votes(model, rows)
    cols = np.array([model.class_index(t) for t in targets], dtype=int)
    need = votes_needed(share, len(forest_of(model).estimators_))
    return votes[np.arange(len(rows)), cols] >= need


def _reaches(
    model: ModelAdapter, rows: pd.DataFrame, targets: np.ndarray, p: float | None
) -> np.ndarray:
    pred, proba = model.predict_with_proba(rows)
    ok = np.array([a == t for a, t in zip(pred, targets, strict=True)], dtype=bool)
    if p is not None:
        cols = np.array([model.class_index(t) for t in targets], dtype=int)
        ok &= np.asarray(proba)[np.arange(len(rows)), cols] >= p
    return ok


def make_judge(
    model: ModelAdapter, data: Dataset, requirements: Requirements | None = None
) -> Judge:
    """The judge of an ``explain`` call: the requirements' margin and other models, each
    model checked against the explained one (the same training columns and classes)."""
    req = requirements if requirements is not None else Requirements()
    others = tuple(_other_model(k, other, model, data) for k, other in enumerate(req.robust_to))
    share = req.min_vote_share
    if share is not None:
        forest_of(model, "the explained model")
        for k, other in enumerate(others):
            instead = (
                "With min_vote_share every model in robust_to must be a forest too: drop "
                f"robust_to[{k}], or drop min_vote_share (min_probability works for any model)."
            )
            forest_of(other, f"robust_to[{k}]", instead=instead)
    return Judge(model, others, req.min_probability, share)


def _other_model(k: int, other: Any, model: ModelAdapter, data: Dataset) -> ModelAdapter:
    adapter = as_adapter(other, data.schema)
    check_model(adapter, data, owner=f"robust_to[{k}]")
    if set(adapter.classes_.tolist()) != set(model.classes_.tolist()):
        raise ValidationError(
            f"robust_to[{k}] has classes {adapter.classes_.tolist()}; the explained model has "
            f"{model.classes_.tolist()}. Every model must decide between the same classes."
        )
    return adapter
