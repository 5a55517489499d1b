"""A feature's change charge (``FeatureCost.change``) in the exact encodings: a jump at
the query's value, never a line between breakpoints (Z3 in exact rationals, the MILP
with a change indicator, the curve as an epigraph or as segments)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from counterfact.constraints._costs import FeatureCost
from counterfact.solvers._milp import Model
from counterfact.solvers._milp._costs import cost_terms
from counterfact.solvers._milp._inputs import FeatureVars, RawInputs

#: convex curve (1 per unit down, 0.5 up) plus a charge of 1 for any change
CONVEX = FeatureCost("x", "curve", 2.0, (2.0,), (0.0,), left=1.0, right=0.5, change=1.0)
#: a non-convex curve (steep near the query, flat beyond 4) plus the charge
BENT = FeatureCost(
    "x", "curve", 2.0, (0.0, 2.0, 4.0), (2.0, 0.0, 3.0), left=0.1, right=0.1, change=1.0
)


def _milp_min(c: FeatureCost, lo: float, hi: float, *, changed: bool = False) -> float:
    """Minimal cost over ``lo <= x <= hi`` (the variable's box is [-5, 10])."""
    m = Model()
    x = m.add_var(-5.0, 10.0, name="x")
    f = FeatureVars("x", "real", c.query, -5.0, 10.0, x)
    if changed:  # the inputs' own change indicator (a change cap's): reused, not duplicated
        z = m.add_binary(name="ch")
        m.add_le(x - c.query - 8.0 * z, 0.0)
        m.add_le(c.query - x - 7.0 * z, 0.0)
        f.changed = z.expr()
    (term,) = cost_terms(m, RawInputs(None, [x], [f]), [c])
    m.add_ge(x.expr(), lo)
    m.add_le(x.expr(), hi)
    n_binaries = m.n_integer
    m.add_objective(term)
    sol = m.solve()
    assert sol.status == "optimal"
    if changed:
        assert m.n_integer == n_binaries
    return float(sol.objective)


@pytest.mark.parametrize("c", [CONVEX, BENT], ids=["epigraph", "segments"])
@pytest.mark.parametrize("changed", [False, True], ids=["own-indicator", "inputs-indicator"])
def test_milp_charges_the_jump_exactly(c, changed):
    pytest.importorskip("highspy")
    assert _milp_min(c, 2.0, 2.0, changed=changed) == pytest.approx(0.0, abs=1e-9)
    for lo, hi in [(2.001, 10.0), (2.5, 10.0), (4.5, 10.0), (-5.0, 1.999), (-5.0, -1.0)]:
        want = min(float(c(v)[()]) for v in (lo, hi))  # each side non-decreasing away
        assert _milp_min(c, lo, hi, changed=changed) == pytest.approx(want, rel=1e-6, abs=1e-7)


def _z3_min_is(c: FeatureCost, lo: Fraction, hi: Fraction, want: Fraction) -> None:
    """``cost <= want`` is satisfiable on ``[lo, hi]`` and ``cost < want`` is not."""
    z3 = pytest.importorskip("z3")
    from counterfact.solvers._smt._costs import cost_sum

    ctx = z3.Context()
    x = z3.Real("x", ctx)
    cost = cost_sum(z3, ctx, [c], [("num", x)], [(-5.0, 10.0)], [False])
    for strict, expect in [(False, z3.sat), (True, z3.unsat)]:
        s = z3.Solver(ctx=ctx)
        s.add(x >= z3.RealVal(lo, ctx), x <= z3.RealVal(hi, ctx))
        w = z3.RealVal(want, ctx)
        s.add(cost < w if strict else cost <= w)
        assert s.check() == expect


@pytest.mark.parametrize("c", [CONVEX, BENT], ids=["convex", "bent"])
def test_z3_charges_the_jump_exactly(c):
    two = Fraction(2)
    _z3_min_is(c, two, two, Fraction(0))
    eps = Fraction(1, 10**6)
    for lo, hi in [(two + eps, Fraction(10)), (Fraction(-5), two - eps), (Fraction(9, 2), 10)]:
        want = min(c.exact(lo), c.exact(Fraction(hi)))
        assert want >= 1  # the charge, whole, right beside the query
        _z3_min_is(c, Fraction(lo), Fraction(hi), want)
