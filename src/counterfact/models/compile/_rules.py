"""Exact target regions of a :class:`~counterfact.models.compile.DecisionRule`."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import numpy as np

from ...exceptions import UnsupportedModelError, ValidationError

if TYPE_CHECKING:
    from ._ir import DecisionRule, OutputCondition

MAX_OVO_CLASSES = 6


def _cond(n: int, plus: int, minus: int | None, strict: bool) -> OutputCondition:
    from ._ir import OutputCondition

    coef = np.zeros(n)
    coef[plus] += 1.0
    if minus is not None:
        coef[minus] -= 1.0
    return OutputCondition(coef=coef, rhs=0.0, strict=strict)


def _neg(n: int, p: int) -> OutputCondition:
    from ._ir import OutputCondition

    coef = np.zeros(n)
    coef[p] = -1.0
    return OutputCondition(coef=coef, rhs=0.0, strict=False)


def rule_region(rule: DecisionRule, target: int) -> tuple[tuple[OutputCondition, ...], ...]:
    """``{y : rule.predict(y) == target}`` as a DNF of :class:`OutputCondition`.

    * threshold: ``y0 > 0`` (``>= 0`` if ``positive_on_tie``) for class 1,
      the complement for class 0;
    * argmax: ``y_t > y_j`` for ``j < t`` (ties go to the lower index) and
      ``y_t >= y_j`` for ``j > t``;
    * ovo: one conjunction per pattern of pairwise outcomes under which the
      target gets the most votes (lowest index on ties); patterns in which the
      target wins all its own pairs are merged into one conjunction.
    """
    if not 0 <= target < rule.n_classes:
        raise ValidationError(
            f"Target class index must be in [0, {rule.n_classes - 1}]. Got {target}."
        )
    n = rule.n_outputs
    if rule.kind == "threshold":
        if target == 1:
            return ((_cond(n, 0, None, strict=not rule.positive_on_tie),),)
        if rule.positive_on_tie:  # class 0 iff y0 < 0
            c = _neg(n, 0)
            from ._ir import OutputCondition

            return ((OutputCondition(coef=c.coef, rhs=0.0, strict=True),),)
        return ((_neg(n, 0),),)
    if rule.kind == "argmax":
        conds = tuple(
            _cond(n, target, j, strict=j < target) for j in range(rule.n_classes) if j != target
        )
        return (conds,)
    return _ovo_region(rule, target)


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
