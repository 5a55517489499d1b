"""What every answer of an ``explain`` call must also satisfy: :class:`Requirements`.

The constraints (:class:`~counterfact.Constraints`) say which rows a person may reach;
the requirements say how an answer must hold and how it is priced: a margin on the
model's probability, other models it must convince, certified regions around it, and
costs in the user's units.  They are grouped in one object so that ``explain`` and
``cf.audit`` take them the same way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .._utils._validation import is_number, is_whole
from .._utils._values import as_float
from ..exceptions import ValidationError
from ._costs import MEASURES, Costs

__all__ = ["OWN_MEASURE", "ROBUSTNESS_COPIES", "Requirements"]

#: ``Requirements(costs=OWN_MEASURE)``: each method's own objective (the papers' measures)
OWN_MEASURE = "own"
#: retrained copies that estimate ``Requirements(robustness=p)`` when none is given
ROBUSTNESS_COPIES = 8


def _check_costs(value: Any) -> Costs | str | None:
    if value is None or isinstance(value, Costs) or value == OWN_MEASURE:
        return value
    if isinstance(value, str) and value in MEASURES:
        return Costs.preset(value)
    raise ValidationError(
        "Requirements(costs=...) must be a cf.Costs (costs in your units), a named measure "
        f"({sorted(MEASURES)}) or {OWN_MEASURE!r} (each method's own objective, as in its "
        f"paper). Got {value!r}."
    )


def _check_probability(value: Any) -> float | None:
    if value is None:
        return None
    if not is_number(value) or not math.isfinite(value):
        raise ValidationError(
            f"Requirements(min_probability=...) must be a number in (0, 1) or None. Got {value!r}."
        )
    if not 0.0 < float(value) < 1.0:
        raise ValidationError(
            f"Requirements(min_probability=...) must lie strictly between 0 and 1. Got {value!r}; "
            "0.5 is the plain decision of a binary model, 0.6 asks for a 10-point margin."
        )
    return as_float(value)


def _check_robustness(value: Any, copies: Any, robust_to: tuple[Any, ...]) -> float | None:
    """The share of retrained models ``robustness`` asks for, and its number of copies."""
    if value is None:
        if copies is not None:
            raise ValidationError(
                "Requirements(robustness_copies=...) sets how many retrained copies estimate "
                "robustness=p; pass robustness too (e.g. robustness=0.95), or drop it."
            )
        return None
    if not is_number(value) or not 0 < value < 1:
        raise ValidationError(
            "Requirements(robustness=...) must be a number strictly between 0 and 1: the share "
            f"of retrained models that should still accept each answer (e.g. 0.95). Got {value!r}."
        )
    if robust_to:
        raise ValidationError(
            "Requirements(robustness=...) retrains its own copies of the model (some enter the "
            "search, the others estimate the share and are never shown to it), so it cannot be "
            "combined with robust_to. Drop robust_to, or drop robustness and keep your copies."
        )
    if copies is not None and (not is_whole(copies) or not 2 <= copies <= 1000):
        raise ValidationError(
            "Requirements(robustness_copies=...) must be an int in [2, 1000] (retrained copies "
            f"that estimate the share; default {ROBUSTNESS_COPIES}). Got {copies!r}."
        )
    return as_float(value)


def _check_vote_share(value: Any) -> float | None:
    if value is None:
        return None
    if not is_number(value) or not math.isfinite(value) or not 0.0 < float(value) <= 1.0:
        raise ValidationError(
            "Requirements(min_vote_share=...) must be a number in (0, 1]: the least share of a "
            "forest's trees voting for the target (cf.vote_share_for(n_trees, alpha) derives "
            f"one). Got {value!r}."
        )
    return as_float(value)


def _check_models(value: Any) -> tuple[Any, ...]:
    if value is None:
        return ()
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise ValidationError(
            "Requirements(robust_to=...) must be a list of fitted models (for example "
            f"cf.models.retrained(...)). Got {type(value).__name__}."
        )
    return tuple(value)


@dataclass(frozen=True)
class Requirements:
    """What every answer must satisfy besides the constraints, and how it is priced.

    Parameters
    ----------
    min_probability : float, optional
        A margin: the model's probability of the target at least this (in ``(0, 1)``)
        for every answer reported, checked with the real model; with ``robust_to``,
        in every model.  Exact methods encode it in their solver, so "optimal" and
        "infeasible" stay proofs under the margin.
    robust_to : sequence of fitted models, optional
        Other models every answer must also convince (e.g. the same model retrained,
        :func:`counterfact.models.retrained`), checked with each.
    regions : bool
        Also compute each answer's certified region
        (:meth:`~counterfact.CounterfactualResult.region`) after the search.
    costs : Costs or str, optional
        The measure of effort every method minimises, ranks by and reports
        (:class:`~counterfact.Costs`): costs in the user's units, or a named measure
        (``"effort"``, ``"fewest-changes"``, ``"smallest-moves"``, ``"range-l1"``).
        Not given: ``"effort"``, one per changed feature plus each move in MADs.
        ``"own"``: each method's own objective, as in its paper (MACE's eq. (3)
        under its ``norm``, CE-OCL's objective), for reproducing the papers' tables.
    robustness : float, optional
        The share of retrained models (in ``(0, 1)``) that should still accept each
        answer.  The model is retrained on bootstrap resamples of the training data;
        some copies may enter the search, twice ``robustness_copies`` choose each row's
        setting, and ``robustness_copies`` more, never shown to a search nor used
        to choose, estimate the share.  Each row gets the cheapest answer among the
        settings of a ladder of margins and copies whose answer reaches ``p`` on the
        choosing copies, or, when none does, the most robust answer found and its shortfall
        (:meth:`~counterfact.CounterfactualResult.robustness`).  ``min_probability``,
        when given too, is the least margin the ladder starts from; ``robust_to``
        cannot be combined with it.
    robustness_copies : int, optional
        How many retrained copies estimate ``robustness`` (default 8; at least 2); twice
        as many choose.
    min_vote_share : float, optional
        Random forests and extra trees only: at least this share (in ``(0, 1]``) of the
        trees must vote for the target (each tree's vote: its leaf's largest class), in
        every model; :func:`~counterfact.vote_share_for` derives it from the number of
        trees and a level (Forel, Parmentier & Vidal).  Exact methods count the votes in
        their solver, so "optimal" and "infeasible" stay proofs under the rule.

    Examples
    --------
    >>> import counterfact as cf
    >>> cf.Requirements(min_probability=0.6, regions=True)
    Requirements(min_probability=0.6, regions=True)
    """

    min_probability: float | None = None
    robust_to: tuple[Any, ...] = field(default=())
    regions: bool = False
    costs: Costs | str | None = None
    robustness: float | None = None
    robustness_copies: int | None = None
    min_vote_share: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "min_probability", _check_probability(self.min_probability))
        object.__setattr__(self, "robust_to", _check_models(self.robust_to))
        if not isinstance(self.regions, bool):
            raise ValidationError(
                f"Requirements(regions=...) must be True or False. Got {self.regions!r}."
            )
        object.__setattr__(self, "costs", _check_costs(self.costs))
        robustness = _check_robustness(self.robustness, self.robustness_copies, self.robust_to)
        object.__setattr__(self, "robustness", robustness)
        if self.robustness_copies is not None:
            object.__setattr__(self, "robustness_copies", int(self.robustness_copies))
        object.__setattr__(self, "min_vote_share", _check_vote_share(self.min_vote_share))

    def record(self) -> dict[str, Any]:
        """What a result records of these requirements (``result.requirements``): the
        margin, the number of other models, and the robustness and the share of the
        trees' votes when asked for."""
        asked: dict[str, Any] = {
            "min_probability": self.min_probability,
            "robust_to": len(self.robust_to),
        }
        if self.robustness is not None:
            asked["robustness"] = self.robustness
        if self.min_vote_share is not None:
            asked["min_vote_share"] = self.min_vote_share
        return asked

    @property
    def empty(self) -> bool:
        """No requirement beyond the constraints (the plain decision, the method's distance)."""
        return self == Requirements()

    def __repr__(self) -> str:
        parts = [
            f"min_probability={self.min_probability!r}" if self.min_probability is not None else "",
            f"robust_to=<{len(self.robust_to)} models>" if self.robust_to else "",
            "regions=True" if self.regions else "",
            f"costs={self.costs!r}" if self.costs is not None else "",
            f"robustness={self.robustness!r}" if self.robustness is not None else "",
            f"robustness_copies={self.robustness_copies!r}"
            if self.robustness_copies is not None
            else "",
            f"min_vote_share={self.min_vote_share!r}" if self.min_vote_share is not None else "",
        ]
        return f"Requirements({', '.join(p for p in parts if p)})"
