"""What a MILP solver's numerical tolerances leave unproven: :func:`bound_slack`.

HiGHS and SCIP accept a point whose rows and integrality are violated by up to
their feasibility tolerance (1e-6 by default, :data:`FEASIBILITY_TOLERANCE`),
and their dual bound is proven for that slightly larger set of points.  An
objective that sums ``n_terms`` rows (one distance or cost term per movable
feature, plus the row that sums them) can therefore come out below an exact
point's value by up to about ``n_terms + 1`` tolerances, on the objective's own
scale.  A bound stated for exact points is the solver's bound less this slack;
an ``optimal`` tolerance must not be tighter than it.
"""

from __future__ import annotations

__all__ = ["FEASIBILITY_TOLERANCE", "TIE_MARGIN", "bound_slack"]

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
