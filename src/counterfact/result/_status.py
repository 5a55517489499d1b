"""Query statuses as named constants."""

from __future__ import annotations

__all__ = ["DEFAULT_REASONS", "STATUSES", "SUCCESS"]


#: Status of a query: the nearest/optimal answer was proven (exact methods),
#: some valid counterfactual was found, none exists under the constraints,
#: the time limit ran out before any was found, the search found none, or the
#: row's own constraints contradict each other (it was not explained).
STATUSES: tuple[str, ...] = ("optimal", "feasible", "infeasible", "timeout", "failed", "invalid")


#: Statuses with at least one verified counterfactual.
SUCCESS: frozenset[str] = frozenset({"optimal", "feasible"})


#: The reason shown for a non-success status when the method gave none.
DEFAULT_REASONS: dict[str, str] = {
    "infeasible": "no counterfactual exists under these constraints",
    "timeout": "time limit reached before a counterfactual was found",
    "failed": "no counterfactual found",
    "invalid": "the row's own constraints contradict each other",
}
