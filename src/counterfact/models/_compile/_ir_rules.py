"""IR classes for the decision (:mod:`._ir`, section 4): outputs ``y`` -> class index.

:class:`DecisionRule` reproduces the model's own decision with its tie-breaking,
and :meth:`DecisionRule.region` describes the outputs that give a target class
exactly, as a disjunction of conjunctions of :class:`OutputCondition`.  Part of
the IR layer: it imports no other module of the compiler.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ...exceptions import UnsupportedModelError, ValidationError

__all__ = ["MAX_OVO_CLASSES", "DecisionRule", "OutputCondition"]

MAX_OVO_CLASSES = 6


@dataclass(frozen=True, eq=False)
class OutputCondition:
    """``coef @ y > rhs`` (``strict``) or ``coef @ y >= rhs``; encode as ``>= rhs + margin``."""

    coef: np.ndarray
    rhs: float
    strict: bool

    def holds(self, Y: np.ndarray) -> np.ndarray:
        v = np.atleast_2d(Y) @ self.coef
        return v > self.rhs if self.strict else v >= self.rhs


@dataclass(frozen=True)
class DecisionRule:
    """Outputs -> class index, with the model's tie-breaking (module docstring, section 4)."""

    kind: Literal["threshold", "argmax", "ovo"]
    n_classes: int
    n_outputs: int
    margin: float = 1e-4
    positive_on_tie: bool = False
    pairs: tuple[tuple[int, int], ...] = ()
    #: how the model's probability of a class follows from the outputs, where that is
    #: linear in them: ``"sigmoid"`` (binary, ``P(class 1) = expit(y0)``) or
    #: ``"identity"`` (``P = y``: a forest's mean leaf probabilities); ``""`` unknown
    link: str = ""
    #: the least probability of the target class the region asks for (None: the decision alone)
    min_probability: float | None = None
    #: forests under a vote-share rule (:mod:`._votes`): outputs ``n_classes ..
    #: 2 n_classes - 1`` are each class's share of the trees' votes, and the region asks
    #: the target's share to be at least this (None: no vote rule)
    vote_floor: float | None = None

    def predict(self, Y: np.ndarray) -> np.ndarray:
        """Class indices for outputs ``Y`` (shape ``(n_rows, n_outputs)``)."""
        Y = np.atleast_2d(np.asarray(Y, dtype=float))
        if self.kind == "threshold":
            pos = Y[:, 0] >= 0 if self.positive_on_tie else Y[:, 0] > 0
            return pos.astype(int)
        if self.kind == "argmax":
            return np.argmax(Y[:, : self.n_classes], axis=1)
        votes = np.zeros((Y.shape[0], self.n_classes), dtype=int)
        for p, (i, j) in enumerate(self.pairs):
            win = Y[:, p] > 0
            votes[:, i] += win
            votes[:, j] += ~win
        return np.argmax(votes, axis=1)

    def region(self, target: int) -> tuple[tuple[OutputCondition, ...], ...]:
        """Exact ``{y : rule(y) == target}`` as a disjunction of conjunctions.

        * threshold: ``y0 > 0`` (``>= 0`` if ``positive_on_tie``) for class 1,
          the complement for class 0;
        * argmax: ``y_t > y_j`` for ``j < t`` (ties go to the lower index) and
          ``y_t >= y_j`` for ``j > t``;
        * ovo: one conjunction per pattern of pairwise outcomes under which the
          target gets the most votes (lowest index on ties); patterns in which the
          target wins all its own pairs are merged into one conjunction.

        With ``min_probability`` each conjunction also asks ``P(target) >= p``
        through the link (a linear condition on the outputs); with ``vote_floor``, the
        target's vote share at least that.
        """
        target = int(target)
        if not 0 <= target < self.n_classes:
            raise ValidationError(
                f"Target class index must be in [0, {self.n_classes - 1}]. Got {target}."
            )
        decision = self._decision_region(target)
        extra = self.floors(target)
        return tuple((*conj, *extra) for conj in decision) if extra else decision

    def floors(self, target: int) -> tuple[OutputCondition, ...]:
        """The conditions :meth:`region` adds to every conjunction of the decision: the
        probability floor (``min_probability``) and the vote-share floor (``vote_floor``);
        empty without either.  A solver that decides the class of a constant output (a
        leaf of a single tree) through :meth:`predict` must still ask these."""
        target = int(target)
        extra = []
        if self.min_probability is not None:
            extra.append(self._floor(target, float(self.min_probability)))
        if self.vote_floor is not None:
            coef = np.zeros(self.n_outputs)
            coef[self.n_classes + target] = 1.0
            extra.append(OutputCondition(coef=coef, rhs=float(self.vote_floor), strict=False))
        return tuple(extra)

    def _floor(self, target: int, p: float) -> OutputCondition:
        """``P(target) >= p`` as a condition on the outputs (exact for the two links)."""
        n = self.n_outputs
        coef = np.zeros(n)
        if self.link == "sigmoid" and self.kind == "threshold" and n == 1:
            coef[0] = 1.0 if target == 1 else -1.0
            return OutputCondition(coef=coef, rhs=float(np.log(p) - np.log1p(-p)), strict=False)
        if self.link == "identity" and n >= self.n_classes:  # (vote shares follow)
            coef[target] = 1.0
            return OutputCondition(coef=coef, rhs=p, strict=False)
        raise UnsupportedModelError(
            "The model's probability is not a linear threshold on its outputs (decision "
            f"{self.kind!r}, link {self.link or 'unknown'!r}): a probability margin cannot be "
            "encoded exactly."
        )

    def _decision_region(self, target: int) -> tuple[tuple[OutputCondition, ...], ...]:
        n = self.n_outputs
        if self.kind == "threshold":
            if target == 1:
                return ((_cond(n, 0, None, strict=not self.positive_on_tie),),)
            # class 0 iff y0 < 0 (positive_on_tie), else iff y0 <= 0
            return ((_neg(n, 0, strict=self.positive_on_tie),),)
        if self.kind == "argmax":
            conds = tuple(
                _cond(n, target, j, strict=j < target) for j in range(self.n_classes) if j != target
            )
            return (conds,)
        return _ovo_region(self, target)


def _cond(n: int, plus: int, minus: int | None, strict: bool) -> OutputCondition:
    coef = np.zeros(n)
    coef[plus] += 1.0
    if minus is not None:
        coef[minus] -= 1.0
    return OutputCondition(coef=coef, rhs=0.0, strict=strict)


def _neg(n: int, p: int, strict: bool = False) -> OutputCondition:
    coef = np.zeros(n)
    coef[p] = -1.0
    return OutputCondition(coef=coef, rhs=0.0, strict=strict)


def _ovo_region(rule: DecisionRule, target: int) -> tuple[tuple[OutputCondition, ...], ...]:
    k = rule.n_classes
    if k > MAX_OVO_CLASSES:
        raise UnsupportedModelError(
            f"One-vs-one SVC with {k} classes: the exact target region has too many vote patterns "
            f"(supported: up to {MAX_OVO_CLASSES} classes). Use LinearSVC or LogisticRegression."
        )
    n = rule.n_outputs
    own = [p for p, (i, j) in enumerate(rule.pairs) if target in (i, j)]
    others = [p for p in range(len(rule.pairs)) if p not in own]

    def lit(p: int, first_wins: bool) -> OutputCondition:
        return _cond(n, p, None, strict=True) if first_wins else _neg(n, p)

    # target beats everyone: a single conjunction, other pairs free
    all_own = tuple(lit(p, rule.pairs[p][0] == target) for p in own)
    out: list[tuple[OutputCondition, ...]] = [all_own]
    for pattern in itertools.product((True, False), repeat=len(rule.pairs)):
        if all(pattern[p] == (rule.pairs[p][0] == target) for p in own):
            continue  # covered above
        votes = [0] * k
        for p, (i, j) in enumerate(rule.pairs):
            votes[i if pattern[p] else j] += 1
        if int(np.argmax(votes)) == target:
            out.append(tuple(lit(p, pattern[p]) for p in own + others))
    return tuple(out)
