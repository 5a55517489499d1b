"""Elapsed time in the MILP: one integer variable ``t`` in ``[0, horizon]`` months.

For one query's :class:`~counterfact.constraints._timeline.QueryTimeline`
(``Problem.timeline``, ``QueryBounds.timeline``):

* an advancing numeric feature (*pinned*) takes the value of one of its runs
  (``QueryTimeline.segments``: the value it holds from month ``a`` to month ``b``):
  one binary ``y_k`` per run, ``sum_k y_k = 1``, ``x = sum_k v_k y_k``,
  ``sum_k a_k y_k <= t <= sum_k b_k y_k``.  For an age in years (1/12 a month) this is
  exactly ``12 (x - q) <= t <= 12 (x - q) + 11``; a top-coded one's last run holds its
  cap to the horizon;
* an ordinal band is at most the level it has *certainly* reached in its run (its lower
  edge plus the elapsed time, ``QueryTimeline.band_reach``): ``x <= sum_k v_k y_k`` (its
  lower bound, the query's level, is in its box already);
* a rate feature changes by at most ``up * t`` upwards and ``down * t`` downwards;
* :func:`waiting_term` is ``wait_cost * t``, added to the objective;
* :func:`time_moved`: the features the change cap (``max_changes``) leaves out.

Every row is exact, so an optimum or an infeasibility the solver proves holds for
the timeline too.
"""

from __future__ import annotations

import math
from typing import Any

from ._expr import Expr, Var, lin, quicksum
from ._inputs import RawInputs
from ._model import Model

__all__ = ["encode_timeline", "time_moved", "waiting_term"]


def time_moved(timeline: Any) -> frozenset[str]:
    """Names of the features only ``timeline`` moves (empty without one): the change cap
    (``max_changes``) does not count them, as waiting is no change one makes."""
    if timeline is None:
        return frozenset()
    return frozenset(timeline.schema.names[j] for j in timeline.advancing)


def encode_timeline(m: Model, inputs: RawInputs, timeline: Any) -> Var | None:
    """The elapsed months ``t`` and the rows tying the time-driven features to it (see
    the module docstring); None without a timeline."""
    if timeline is None:
        return None
    t = m.add_var(0.0, float(timeline.horizon), integer=True, name="elapsed")
    for j, rule in timeline.indexed():
        fv = inputs.features[j]
        x = fv.value
        if x is None:  # pragma: no cover - time-driven features are ordered
            raise ValueError(f"Feature '{fv.name}' has no value variable for the timeline.")
        if rule.kind == "rate":
            _rate_rows(m, x, fv.query, rule, t)
        else:
            _runs(m, x, timeline.segments(j), t, pinned=rule.kind == "pinned", name=fv.name)
    return t


def waiting_term(timeline: Any, t: Var | None) -> Expr:
    """``wait_cost * t`` (the empty expression without a timeline or a cost of waiting)."""
    if t is None or not timeline.wait_cost:
        return Expr()
    return t * float(timeline.wait_cost)


def _rate_rows(m: Model, x: Var, q: float, rule: Any, t: Var) -> None:
    """``x - q <= up * t`` and ``q - x <= down * t`` (an infinite rate adds no row)."""
    if math.isfinite(rule.up):
        m.add_le(x - t * float(rule.up), float(q))
    if math.isfinite(rule.down):
        m.add_ge(x + t * float(rule.down), float(q))


def _runs(
    m: Model, x: Var, runs: list[tuple[float, int, int]], t: Var, *, pinned: bool, name: str
) -> None:
    """One binary per run: the feature's value (pinned) or highest level (band) and the
    months the run lasts."""
    if len(runs) == 1:
        v, a, b = runs[0]
        (m.add_eq if pinned else m.add_le)(x, v)
        m.add_ge(t, float(a))
        m.add_le(t, float(b))
        return
    ys = [m.add_binary(name=f"{name}@run{k}") for k in range(len(runs))]
    m.add_eq(quicksum(ys), 1.0)
    values = [v for v, _a, _b in runs]
    if pinned:
        m.add_eq(x - lin(ys, values), 0.0)
    else:
        m.add_le(x - lin(ys, values), 0.0)
    m.add_ge(t - lin(ys, [float(a) for _v, a, _b in runs]), 0.0)
    m.add_le(t - lin(ys, [float(b) for _v, _a, b in runs]), 0.0)
