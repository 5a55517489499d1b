"""Elapsed time in Z3: one ``Int`` ``t`` in ``[0, horizon]`` months, exact rationals.

For one query's :class:`~counterfact.constraints._timeline.QueryTimeline`
(``Problem.timeline``): an advancing numeric feature equals the value of the run
of months ``t`` lies in (``QueryTimeline.segments``; a top-coded one stops at its cap),
an ordinal band is at most the level it has certainly reached in its run (its lower edge
plus the elapsed time), a rate feature moves at most ``up * t`` up and ``down * t`` down;
:func:`encode_timeline` returns the formulas and the term ``wait_cost * t`` that the
oracle adds to the distance.  Every formula is exact, so UNSAT is a proof.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from ...constraints._timeline import exact_rate

__all__ = ["encode_timeline"]


def encode_timeline(
    z3: Any, ctx: Any, timeline: Any, value: Callable[[int], Any]
) -> tuple[list[Any], Any]:
    """``(formulas, waiting)`` for ``timeline`` over the features' variables
    (``value(j)``: feature ``j``'s value or rank); ``([], None)`` without a timeline."""
    if timeline is None:
        return [], None
    t = z3.Int("elapsed", ctx)
    out = [t >= 0, t <= int(timeline.horizon)]
    for j, rule in timeline.indexed():
        x = value(j)
        if rule.kind == "rate":
            out.extend(_rate(z3, ctx, x, timeline.x[j], rule, t))
        else:
            out.append(_runs(z3, ctx, x, timeline.segments(j), t, rule.kind == "pinned"))
    wait = z3.ToReal(t) * z3.RealVal(Fraction(timeline.wait_cost), ctx)
    return out, wait if timeline.wait_cost else None


def _rate(z3: Any, ctx: Any, x: Any, q: float, rule: Any, t: Any) -> list[Any]:
    """``x - q <= up * t`` and ``q - x <= down * t`` (an infinite rate: no formula), with
    each rate as the fraction it stands for (:func:`exact_rate`), as the checker reads it."""
    out = []
    qv, tr = z3.RealVal(Fraction(q), ctx), z3.ToReal(t)
    xr = z3.ToReal(x) if x.is_int() else x
    if math.isfinite(rule.up):
        out.append(xr - qv <= tr * z3.RealVal(exact_rate(rule.up), ctx))
    if math.isfinite(rule.down):
        out.append(qv - xr <= tr * z3.RealVal(exact_rate(rule.down), ctx))
    return out


def _runs(
    z3: Any, ctx: Any, x: Any, runs: list[tuple[float, int, int]], t: Any, pinned: bool
) -> Any:
    """One run holds: ``t`` within its months and the feature at (pinned) or below (band)
    its value."""
    xr = z3.ToReal(x) if x.is_int() else x
    cases = []
    for v, a, b in runs:
        val = z3.RealVal(Fraction(v), ctx)
        cases.append(z3.And(t >= a, t <= b, xr == val if pinned else xr <= val))
    return z3.Or(cases)
