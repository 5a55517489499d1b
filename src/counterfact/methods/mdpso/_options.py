"""The swarm's settings: :class:`SwarmOptions`, the ``swarm`` parameter of :class:`MDPSO`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ..._utils._options import OptionGroup
from ..._utils._validation import Interval, Options, TypeSpec

__all__ = ["SwarmOptions"]


def _weights_ok(v: Any) -> bool:
    return len(v) == 3 and all(
        isinstance(a, (int, float)) and not isinstance(a, bool) and a >= 0 for a in v
    )


@dataclass(frozen=True)
class SwarmOptions(OptionGroup):
    """Settings of MD-PSO's particle swarm (the ``swarm`` parameter of :class:`MDPSO`).

    Every field is checked when the object is built; an invalid value raises
    :class:`~counterfact.exceptions.ValidationError` naming the field.  The
    defaults are :class:`MDPSO`'s; ``MDPSO(swarm={"n_particles": 30})`` (a
    dict of fields, e.g. from a configuration file) is the same as
    ``MDPSO(swarm=SwarmOptions(n_particles=30))``.

    Parameters
    ----------
    n_particles : int
        Swarm size (paper: 50).
    max_iter : int
        Iterations (paper: 100); the search stops earlier when the ``k`` best
        personal bests have not improved for ``patience`` iterations.
    inertia, cognitive, social : float
        ``c0``, ``c1``, ``c2`` of eq. (1).  Defaults: Clerc & Kennedy's
        constriction values (0.7298, 1.49618, 1.49618); the paper tuned its
        own by cross-validation and does not report them.
    diversity : float
        ``c3``, the weight of the diversity-preservation term ``c3 r3 V_hat``
        of eq. (1) (Chowdhury et al.'s diversity coefficient), which pushes a
        particle away from the mean of the best ones; scaled each iteration by
        the adaptive factor ``exp(-D^2 / 2 sigma^2) = lambda^(D^2)``, where
        ``D`` in [0, 1] is the spread of the best ``lambda`` fraction of the
        swarm.  0: no diversity term.
    discrete_diversity : float
        Chowdhury et al.'s stochastic discrete update: the probability (times
        the same adaptive factor) that a moving integer/grid/categorical
        coordinate goes to its second-nearest vertex instead of the nearest.
    diversity_fraction : float
        ``lambda``: the best fraction of the swarm whose mean anchors ``V_hat
        = X_i - mean(best)`` and whose spread measures ``D``.
    snap : float
        A real coordinate closer to the query's value than ``snap`` times its
        box width is set to it (the query is a vertex too).
    weights : tuple of three floats
        Weights of (validity, proximity, sparsity) in eq. (3).
    objective : {"feasibility", "sum"}
        ``"feasibility"``: every valid particle ranks before every invalid
        one, and invalid particles compare by their hinge (Deb's rule);
        ``"sum"``: eq. (3) as written, the weighted sum of the three terms.
    patience : int
        Stop after this many iterations in which the mean objective of the
        ``k`` best personal bests (``k = n_counterfactuals``: the answers
        asked for) improved by less than ``tol`` (relative).
    tol : float
        Relative improvement that resets the patience counter.
    n_restarts : int
        When a swarm ends with no valid particle, search again with
        ``epsilon`` and ``n_active`` doubled, at most this many times
        (0: the paper's single run).
    """

    n_particles: int = 50
    max_iter: int = 100
    inertia: float = 0.7298
    cognitive: float = 1.49618
    social: float = 1.49618
    diversity: float = 0.5
    discrete_diversity: float = 0.1
    diversity_fraction: float = 0.2
    snap: float = 0.05
    weights: tuple[float, float, float] = (1.0, 1.0, 1.0)
    objective: str = "feasibility"
    patience: int = 30
    tol: float = 1e-2
    n_restarts: int = 3

    _constraints: ClassVar[dict[str, list[Any]]] = {
        "n_particles": [Interval(int, 2, None)],
        "max_iter": [Interval(int, 1, None)],
        "inertia": [Interval(float, 0, None)],
        "cognitive": [Interval(float, 0, None)],
        "social": [Interval(float, 0, None)],
        "diversity": [Interval(float, 0, None)],
        "discrete_diversity": [Interval(float, 0, 1)],
        "diversity_fraction": [Interval(float, 0, 1, closed="right")],
        "snap": [Interval(float, 0, 1)],
        "weights": [TypeSpec((tuple, list), "a tuple of three non-negative floats", _weights_ok)],
        "objective": [Options(("feasibility", "sum"))],
        "patience": [Interval(int, 1, None)],
        "tol": [Interval(float, 0, None)],
        "n_restarts": [Interval(int, 0, None)],
    }

    def __post_init__(self) -> None:
        super().__post_init__()
        # a list of weights (from a configuration file) becomes a tuple of floats,
        # so that equal settings compare equal and the object stays hashable
        object.__setattr__(self, "weights", tuple(float(w) for w in self.weights))
