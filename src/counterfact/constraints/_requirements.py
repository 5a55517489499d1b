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

from ..exceptions import ValidationError
from ._costs import MEASURES, Costs

__all__ = ["OWN_MEASURE", "Requirements"]

#: ``Requirements(costs=OWN_MEASURE)``: each method's own objective (the papers' measures)
OWN_MEASURE = "own"


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
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValidationError(
            f"Requirements(min_probability=...) must be a number in (0, 1) or None. Got {value!r}."
        )
    if not 0.0 < float(value) < 1.0:
        raise ValidationError(
            f"Requirements(min_probability=...) must lie strictly between 0 and 1. Got {value!r}; "
            "0.5 is the plain decision of a binary model, 0.6 asks for a 10-point margin."
        )
    return float(value)


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

    def __post_init__(self) -> None:
        object.__setattr__(self, "min_probability", _check_probability(self.min_probability))
        object.__setattr__(self, "robust_to", _check_models(self.robust_to))
        if not isinstance(self.regions, bool):
            raise ValidationError(
                f"Requirements(regions=...) must be True or False. Got {self.regions!r}."
            )
        object.__setattr__(self, "costs", _check_costs(self.costs))

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
        ]
        return f"Requirements({', '.join(p for p in parts if p)})"
