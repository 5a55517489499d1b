"""Recourse over time on a result: each answer's elapsed months and the plan by horizon.

* :func:`elapsed`: per answer (index ``(query, rank)``), the least whole months its
  time-driven features are consistent with under the query's timeline
  (:meth:`~counterfact.Timeline.elapsed`); NaN without a timeline.
* :func:`plans`: per horizon (months), the cheapest answer whose elapsed time fits in
  it.  How the answers are found: a result made by
  :func:`counterfact.methods._pipeline._time.explain_by_horizon` holds one explain
  call per horizon (``result.horizon_results``: the timeline's horizon set to each),
  so each row is that call's answer, *proven* cheapest (or proven absent) exactly when
  the method proved it (status ``optimal`` / ``infeasible``).  Any other result with a
  timeline is read as it is: the cheapest of its own answers within each horizon, never
  marked proven (a longer horizon was searched; a cheaper answer within a shorter one
  may exist that the method did not return).

Cost: :meth:`~counterfact.CounterfactualResult.cost`, which for a query explained under a
timeline is the measure of effort (the features time advances free: their change is the
waiting) plus ``wait_cost`` per elapsed month (:func:`time_free`, :func:`waiting`) -- the
value the exact methods minimise and prove; without costs, NaN.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..constraints._costs import BoundCosts
from ..constraints._timeline import time_free_costs
from ..exceptions import ValidationError

__all__ = ["HORIZONS", "WAITING", "elapsed", "moved_by_time", "plans", "time_free", "waiting"]

#: the column of ``result.cost(per_feature=True)`` holding an answer's waiting
WAITING = "(waiting)"

#: the horizons a plan shows by default, in months
HORIZONS: tuple[int, ...] = (0, 3, 6, 12, 24)
_PROVEN = {"optimal", "infeasible"}


def elapsed(result: Any) -> pd.Series:
    """Each answer's elapsed months (index ``(query, rank)``; NaN without a timeline, or
    when no month within the horizon is consistent with it)."""
    cfs = result.counterfactuals
    out = pd.Series(np.nan, index=cfs.index, name="months", dtype=float)
    for (q, rank), row in cfs.iterrows():
        timeline = _timeline(result, q)
        if timeline is None:
            continue
        t = timeline.elapsed(result.schema, result.queries.loc[q], row)
        out.loc[(q, rank)] = np.nan if t is None else float(t)
    return out


def plans(result: Any, query: Any, horizons: Sequence[int] | None = None) -> pd.DataFrame:
    """The cheapest answer of ``query`` for each horizon (see the module docstring):
    columns ``horizon``, ``plan`` ("no change needed", "wait N months", "in N months, if
    ...", "none within the horizon" where a proof says so, else "none among the answers
    found"), ``months``, ``cost``, ``proven``, ``rank``."""
    if query not in result.queries.index:
        raise ValidationError(
            f"Query {query!r} is not in this result; its queries: "
            f"{list(result.queries.index)[:10]}."
        )
    if _timeline(result, query) is None:
        raise ValidationError(
            "This result was explained without a timeline; pass "
            "constraints=cf.Constraints(timeline=cf.Timeline(...)) to explain."
        )
    hs = _horizons(horizons)
    by_h = getattr(result, "horizon_results", None) or {}
    rows = []
    for h in hs:
        source = by_h.get(h)
        if source is not None:
            rows.append(_plan_row(source, query, h, proven_ok=True))
        else:
            rows.append(_plan_row(result, query, h, proven_ok=False))
    return pd.DataFrame(rows, columns=["horizon", "plan", "months", "cost", "proven", "rank"])


def _plan_row(result: Any, query: Any, h: int, *, proven_ok: bool) -> dict[str, Any]:
    """The cheapest answer of ``query`` in ``result`` within ``h`` months, as a plan row."""
    status = str(result.status.loc[query])
    proven = proven_ok and status in _PROVEN
    months = elapsed(result)
    cost = _costs(result, months)
    best: tuple[float, float, Any] | None = None
    for key in result.counterfactuals.index:
        if key[0] != query or not months.loc[key] <= h:
            continue
        c = float(cost.loc[key])
        score = (c if math.isfinite(c) else math.inf, float(months.loc[key]), key[1])
        best = score if best is None or score < best else best
    if best is None:
        none = proven and status == "infeasible"
        return {
            "horizon": h,
            # without a proof the call may have found no answer that short, not that none is
            "plan": "none within the horizon" if none else "none among the answers found",
            "months": np.nan,
            "cost": np.nan,
            "proven": none,
            "rank": None,
        }
    c, t, rank = best
    return {
        "horizon": h,
        "plan": _words(result, query, rank, int(t)),
        "months": int(t),
        "cost": c,
        "proven": proven and status == "optimal" and rank == 0,
        "rank": rank,
    }


def _words(result: Any, query: Any, rank: Any, t: int) -> str:
    """'no change needed', 'wait N months' or 'in N months, if <actions>'."""
    time_moved = moved_by_time(result, query)
    acts = [c for c in result.changes(query, rank) if c.feature not in time_moved]
    if not acts:
        return "no change needed" if t == 0 else f"no change needed: wait {_months(t)}"
    what = ", ".join(str(c) for c in acts)
    return what if t == 0 else f"in {_months(t)}, if {what}"


def _months(t: int) -> str:
    return "1 month" if t == 1 else f"{t} months"


def _costs(result: Any, months: pd.Series) -> pd.Series:
    """Each answer's cost, its waiting included (NaN without costs)."""
    if result.costs is None:
        return pd.Series(np.nan, index=months.index)
    return result.cost()


def time_free(result: Any, query: Any, bound: BoundCosts) -> BoundCosts:
    """``bound`` with the features ``query``'s timeline advances made free (their change is
    the waiting); ``bound`` itself without a timeline."""
    c = result.constraints_for(query)
    return bound if c is None else time_free_costs(bound, c, result.schema)


def waiting(result: Any, query: Any, rows: pd.DataFrame) -> np.ndarray:
    """Per answer of ``query`` (raw ``rows``): ``wait_cost`` times its elapsed months under
    the query's timeline (0 without one or without a cost of waiting; inf for a row that
    no month within the horizon is consistent with)."""
    timeline = _timeline(result, query)
    if timeline is None:
        return np.zeros(len(rows))
    return timeline.bind(result.schema, result.queries.loc[query]).waiting(rows)


def moved_by_time(result: Any, query: Any) -> frozenset[str]:
    """The features only time moves for ``query`` (its timeline's advancing features, not
    those it paces): their change is the waiting, never an action (empty without one)."""
    timeline = _timeline(result, query)
    return frozenset() if timeline is None else frozenset(timeline.moved_by_time(result.schema))


def _timeline(result: Any, query: Any) -> Any:
    c = result.constraints_for(query)
    return None if c is None else getattr(c, "timeline", None)


def wait_words(result: Any, queries: Sequence[Any]) -> str:
    """How waiting is priced for ``queries`` under their timelines, to follow what
    "smaller" means: ``"; each month of waiting costs 0.042"`` ("" without a timeline, or
    when waiting is free)."""
    costs = {float(t.wait_cost) for q in queries if (t := _timeline(result, q)) is not None}
    costs.discard(0.0)
    if not costs:
        return ""
    if len(costs) == 1:
        return f"; each month of waiting costs {next(iter(costs)):.2g}"
    return "; each month of waiting costs what the row's own timeline says"


def _horizons(horizons: Sequence[int] | None) -> list[int]:
    hs = list(HORIZONS if horizons is None else horizons)
    for h in hs:
        if isinstance(h, bool) or not isinstance(h, (int, np.integer)) or h < 0:
            raise ValidationError(
                f"horizons must be whole months >= 0, e.g. (0, 3, 6, 12, 24). Got {h!r}."
            )
    return sorted({int(h) for h in hs})
