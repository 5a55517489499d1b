"""What a MILP solver's numerical tolerances leave unproven: :func:`bound_slack`.

HiGHS and SCIP accept a point whose rows and integrality are violated by up to
their feasibility tolerance (1e-6 by default, :data:`FEASIBILITY_TOLERANCE`),
and their dual bound is proven for that slightly larger set of points.  An
objective that sums ``n_terms`` rows (one distance or cost term per movable
feature, plus the row that sums them) can therefore come out below an exact
point's value by up to about ``n_terms + 1`` tolerances, on the objective's own
scale.  A bound stated for exact points is the solver's bound less this slack;
an ``optimal`` tolerance must not be tighter than it.

Both solvers also treat a matrix coefficient of magnitude at most
:data:`SMALL_VALUE` as zero when the model is loaded: a feature whose values
span about 1e9 or more (its distance term ``|x - q| / scale``) or a model
weight that small would silently drop out of the search, and its proof with
it.  :func:`dropped_coefficient` names such a coefficient, so that the search
is refused rather than mis-proven.  Likewise a real feature whose whole range
is under :data:`MIN_SPAN` (a rate in millionths) lies within a few tolerances
of every value it can take, so the solver cannot tell its values apart
(measured: HiGHS called a query infeasible that Z3 answered):
:func:`too_narrow` names it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "FEASIBILITY_TOLERANCE",
    "MIN_SPAN",
    "SMALL_VALUE",
    "TIE_MARGIN",
    "bound_slack",
    "dropped_coefficient",
    "too_narrow",
]

#: HiGHS's ``mip_feasibility_tolerance`` and SCIP's ``numerics/feastol`` (defaults)
FEASIBILITY_TOLERANCE = 1e-6
#: How far below a probability floor a search reaches when points exactly at the floor are
#: common (a forest's probability is an average of leaf values): ten feasibility tolerances,
#: so that the solver's own tolerances never lose such a point.  Its answers are checked
#: with the real model; its proofs cover every point at the floor.
TIE_MARGIN = 10 * FEASIBILITY_TOLERANCE


def bound_slack(n_terms: int, bound: float = 1.0) -> float:
    """How much a MILP solver's dual ``bound`` (on an objective summing ``n_terms``
    rows) may exceed what it proves for exact points:
    ``FEASIBILITY_TOLERANCE * (n_terms + 1) * max(1, |bound|)``."""
    return FEASIBILITY_TOLERANCE * (max(0, int(n_terms)) + 1) * max(1.0, abs(float(bound)))


#: HiGHS's ``small_matrix_value`` and SCIP's ``numerics/epsilon`` (defaults): a matrix
#: coefficient no larger in magnitude is treated as zero
SMALL_VALUE = 1e-9


def dropped_coefficient(m: Any) -> str | None:
    """Why a MILP solver would not search ``m`` as written: a nonzero coefficient at most
    :data:`SMALL_VALUE` in magnitude that can still move its row by more than
    :data:`FEASIBILITY_TOLERANCE` over its variable's (finite) range, and the variable it
    multiplies; None when every such coefficient is kept."""
    _, index, value = m._csr()
    mag = np.abs(np.asarray(value, dtype=float))
    span = (np.asarray(m._ub, dtype=float) - np.asarray(m._lb, dtype=float))[index]
    with np.errstate(invalid="ignore"):
        moves = mag * np.where(np.isfinite(span), span, 0.0)
    # a coefficient matters when it can move its row by more than the solvers' tolerance
    # over its variable's range (float noise of 1e-17 in a linearisation does not)
    tiny = np.flatnonzero((mag > 0) & (mag <= SMALL_VALUE) & (moves > FEASIBILITY_TOLERANCE))
    if not tiny.size:
        return None
    k = int(tiny[np.argmax(moves[tiny])])
    name = m._names[int(index[k])] or f"variable {int(index[k])}"
    return (
        f"a coefficient of magnitude {mag[k]:.3g} on {name!r}, which HiGHS and SCIP treat as "
        f"zero (at most {SMALL_VALUE:g}), so the search would leave it out and its proof "
        "would not hold. It comes from a feature whose values span about 1e9 or more, a "
        "model weight that small, or a cost that small (a per-unit weight, a percentile "
        "curve's slope): rescale the feature (to thousands or millions of its unit) or the "
        "cost, or use cf.MACE(solver='z3'), which computes exactly"
    )


#: the smallest range of a real feature a MILP solver searches: a thousand feasibility
#: tolerances, so that its tolerance is at most a thousandth of the range
MIN_SPAN = 1000 * FEASIBILITY_TOLERANCE


def too_narrow(variables: Any) -> str | None:
    """Why a MILP solver would not search these :class:`VarSpec` reliably: a movable real
    feature whose whole range (``scale``, the schema's domain) is under :data:`MIN_SPAN`;
    None when there is none.  A query whose constraints narrow a wider feature is searched
    as usual."""
    for v in variables:
        if v.kind != "real" or v.fixed:
            continue
        span = float(v.scale)  # the feature's whole range, not one query's box
        if 0 < span < MIN_SPAN:
            return (
                f"feature {v.name!r} ranges over only {span:.3g}, under {MIN_SPAN:g} (a "
                f"thousand times the feasibility tolerance {FEASIBILITY_TOLERANCE:g}), so "
                "HiGHS and SCIP cannot tell its values apart. Rescale the feature (per cent "
                "or per million), or use cf.MACE(solver='z3'), which computes exactly"
            )
    return None
