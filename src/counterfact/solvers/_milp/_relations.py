"""Relations between features as MILP rows (CE-OCL, MACE's MILP oracle).

A relation of one query (:class:`~counterfact.constraints._relations_bound.BoundRelation`, in
solver units) over the raw inputs of :func:`~._inputs.encode_inputs`:

* a linear atom ``sum(coef * x) + const  op  0`` is a row over the features'
  value variables (numeric values, ordinal ranks); fixed features are
  constants;
* a category atom is its one-hot indicator fixed to 1 (``==``) or 0 (``!=``);
* an implication ``A => B`` is ``not A  or  B``: one binary ``y`` with
  ``y = 1 => B`` and ``y = 0 => not A``, each an indicator row whose big-M
  comes from the bounds of its expression (:meth:`Model.add_indicator`), never
  a fixed constant; a ``!=`` (the negation of ``==``) is the disjunction of
  its two sides, one binary each.

The negation of ``<=``, ``>=`` and ``==`` is strict.  A MILP states a strict
inequality exactly only when its expression takes values on a lattice: every
feature in it integral (integers, ordinal ranks) or on a grid (a real feature
searched as ``k * resolution``, MACE's MILP oracle) and every coefficient a
decimal number, so ``expr > 0`` is ``expr >= the smallest lattice value above 0``.
Otherwise :class:`~counterfact.exceptions.UnsupportedConstraintError` names the
relation: a condition written with ``<`` or ``>`` (whose negation is closed)
or an exact SMT oracle states it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from ...constraints._relations_bound import (
    BoundCategory,
    BoundConst,
    BoundLinear,
    BoundRelation,
    negate,
)
from ...exceptions import UnsupportedConstraintError
from ._expr import Expr, Var
from ._inputs import FeatureVars, RawInputs
from ._model import Model

__all__ = ["encode_relations", "lattice_steps"]

#: a trigger: None (always), or (binary, active value) for "binary == active => atom"
_Trigger = tuple[Var, int] | None


def lattice_steps(
    inputs: RawInputs, grids: Mapping[str, Any] | None = None
) -> dict[str, Fraction | None]:
    """Per feature, the step of the lattice its value variable lies on: 1 for integer
    variables (integers, ordinal ranks), the grid of a real feature named in
    ``grids`` (``k * grid``), None for a continuous one."""
    out: dict[str, Fraction | None] = {}
    for f in inputs.features:
        if f.value is None:
            continue
        if f.kind in ("integer", "ordinal"):
            out[f.name] = Fraction(1)
        elif grids is not None and grids.get(f.name) is not None:
            out[f.name] = Fraction(repr(float(grids[f.name])))
        else:
            out[f.name] = None
    return out


def encode_relations(
    m: Model,
    inputs: RawInputs,
    relations: Sequence[BoundRelation],
    steps: Mapping[str, Fraction | None],
) -> int:
    """Add every relation (module docstring); returns the number of binaries added.
    ``steps``: :func:`lattice_steps`."""
    enc = _Encoder(m, inputs, steps)
    for rel in relations:
        enc.relation(rel)
    return enc.n_binaries


class _Encoder:
    def __init__(self, m: Model, inputs: RawInputs, steps: Mapping[str, Fraction | None]) -> None:
        self.m = m
        self.feats: dict[str, FeatureVars] = {f.name: f for f in inputs.features}
        self.steps = steps
        self.n_binaries = 0
        self.text = ""

    def binary(self) -> Var:
        self.n_binaries += 1
        return self.m.add_binary(name=f"rel{self.n_binaries}")

    def relation(self, rel: BoundRelation) -> None:
        self.text = rel.text
        cond, then = rel.condition, rel.consequence
        if cond is None or cond == BoundConst(True):
            self.enforce(then, None)
        elif cond == BoundConst(False) or then == BoundConst(True):
            return
        elif then == BoundConst(False):
            self.enforce(negate(cond), None)
        else:
            y = self.binary()
            self.enforce(then, (y, 1))
            self.enforce(negate(cond), (y, 0))

    # ------------------------------------------------------------ atoms
    def enforce(self, atom: Any, on: _Trigger) -> None:
        """``atom`` holds (when the trigger is on)."""
        m = self.m
        if isinstance(atom, BoundConst):
            if atom.value:
                return
            if on is None:
                m.add_le(Expr({}, 1.0), 0.0)  # no point satisfies the relation
            else:
                y, active = on
                m.set_bounds(y, 1 - active, 1 - active)
            return
        if isinstance(atom, BoundCategory):
            ind = self.indicator(atom.name, atom.index)
            trig = _trigger_expr(on)
            if atom.op == "==":
                m.add_ge(ind - trig, 0.0)  # on => indicator = 1
            else:
                m.add_le(ind + trig, 1.0)  # on => indicator = 0
            return
        self.linear(atom, on)

    def linear(self, atom: BoundLinear, on: _Trigger) -> None:
        expr, const = self.expression(atom)
        op = atom.op
        if op in ("<", ">", "!="):
            step = self.lattice(atom)
            # the largest lattice value of expr below -const, the smallest above it
            below = float(step * (math.ceil(-const / step) - 1))
            above = float(step * (math.floor(-const / step) + 1))
            if op == "!=":
                self.either(expr, below, above, on)
                return
            op, rhs = ("<=", below) if op == "<" else (">=", above)
        else:
            rhs = float(-const)
        if on is None:
            {"<=": self.m.add_le, ">=": self.m.add_ge, "==": self.m.add_eq}[op](expr, rhs)
        else:
            y, active = on
            self.m.add_indicator(y, expr, op, rhs, active=active)

    def either(self, expr: Expr, below: float, above: float, on: _Trigger) -> None:
        """``expr <= below  or  expr >= above`` (when the trigger is on)."""
        u, w = self.binary(), self.binary()
        self.m.add_indicator(u, expr, "<=", below)
        self.m.add_indicator(w, expr, ">=", above)
        self.m.add_ge(u + w - _trigger_expr(on), 0.0)

    # ------------------------------------------------------------ pieces
    def expression(self, atom: BoundLinear) -> tuple[Expr, Fraction]:
        """The atom's variable part as an Expr, and its constant (fixed features folded in)."""
        expr = Expr()
        const = Fraction(atom.const)
        for name, c in atom.coef:
            f = self.feats[name]
            assert f.value is not None  # numeric or ordinal (checked when resolved)
            lo, hi = self.m.var_bounds(f.value)
            if f.fixed or lo == hi:
                const += c * Fraction(lo)
            else:
                expr = expr + f.value * float(c)
        return expr, const

    def lattice(self, atom: BoundLinear) -> Fraction:
        """The step of the lattice the atom's variable part lies on (module docstring)."""
        step = Fraction(0)
        loose = []
        for name, c in atom.coef:
            f = self.feats[name]
            assert f.value is not None
            lo, hi = self.m.var_bounds(f.value)
            if f.fixed or lo == hi:
                continue
            s = self.steps.get(name)
            if s is None:
                loose.append(name)
                continue
            step = _gcd(step, abs(c) * s)
        if loose:
            raise UnsupportedConstraintError(
                f"The MILP cannot state the relation '{self.text}' exactly: it needs a strict "
                "inequality over "
                f"the continuous feature(s) {loose}. Write its condition with < or > (their "
                "negation is closed), "
                "or use MACE with solver='z3', which decides strict inequalities exactly."
            )
        return step if step > 0 else Fraction(1)

    def indicator(self, name: str, k: int) -> Expr:
        f = self.feats[name]
        if 0 <= k < len(f.indicators) and f.value is None:
            return f.indicators[k].expr()
        return Expr()  # not a category of the feature: never taken


def _trigger_expr(on: _Trigger) -> Expr:
    if on is None:
        return Expr({}, 1.0)
    y, active = on
    return y.expr() if active == 1 else 1 - y


def _gcd(a: Fraction, b: Fraction) -> Fraction:
    """The greatest common divisor of two non-negative rationals (0 is neutral)."""
    if a == 0:
        return b
    if b == 0:
        return a
    num = math.gcd(a.numerator * b.denominator, b.numerator * a.denominator)
    return Fraction(num, a.denominator * b.denominator)
