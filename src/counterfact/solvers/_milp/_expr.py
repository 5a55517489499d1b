"""Affine expressions of the MILP model (Var, Expr, quicksum, lin), re-exported by
:mod:`counterfact.solvers._milp`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

__all__ = ["Expr", "Term", "Var", "as_expr", "lin", "quicksum"]


class Expr:
    """An affine expression ``sum_k terms[k] * x_k + const`` over a model's variables."""

    __slots__ = ("const", "terms")

    def __init__(self, terms: dict[int, float] | None = None, const: float = 0.0) -> None:
        self.terms: dict[int, float] = terms if terms is not None else {}
        self.const = float(const)

    def copy(self) -> Expr:
        return Expr(dict(self.terms), self.const)

    def _iadd(self, other: Any, sign: float) -> Expr:
        if isinstance(other, Var):
            self.terms[other.index] = self.terms.get(other.index, 0.0) + sign
        elif isinstance(other, Expr):
            t = self.terms
            for k, v in other.terms.items():
                t[k] = t.get(k, 0.0) + sign * v
            self.const += sign * other.const
        elif isinstance(other, (int, float, np.integer, np.floating)):
            self.const += sign * float(other)
        else:
            return NotImplemented  # type: ignore[return-value]
        return self

    def __add__(self, other: Any) -> Expr:
        return self.copy()._iadd(other, 1.0)

    __radd__ = __add__

    def __sub__(self, other: Any) -> Expr:
        return self.copy()._iadd(other, -1.0)

    def __rsub__(self, other: Any) -> Expr:
        return (-self)._iadd(other, 1.0)

    def __mul__(self, c: Any) -> Expr:
        if not isinstance(c, (int, float, np.integer, np.floating)):
            return NotImplemented
        c = float(c)
        return Expr({k: v * c for k, v in self.terms.items()}, self.const * c)

    __rmul__ = __mul__

    def __truediv__(self, c: Any) -> Expr:
        return self * (1.0 / float(c))

    def __neg__(self) -> Expr:
        return self * -1.0

    def __repr__(self) -> str:
        body = " + ".join(f"{v:g}*x{k}" for k, v in self.terms.items())
        return f"Expr({body or '0'} + {self.const:g})"


class Var:
    """A model variable (a handle: its index in the model)."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index

    def expr(self) -> Expr:
        return Expr({self.index: 1.0})

    def __add__(self, o: Any) -> Expr:
        return self.expr() + o

    __radd__ = __add__

    def __sub__(self, o: Any) -> Expr:
        return self.expr() - o

    def __rsub__(self, o: Any) -> Expr:
        return (-self.expr()) + o

    def __mul__(self, c: Any) -> Expr:
        return self.expr() * c

    __rmul__ = __mul__

    def __truediv__(self, c: Any) -> Expr:
        return self.expr() / c

    def __neg__(self) -> Expr:
        return self.expr() * -1.0

    def __repr__(self) -> str:
        return f"x{self.index}"


Term = Var | Expr | float | int


def as_expr(e: Term) -> Expr:
    """Any term as an (owned, mutable) :class:`Expr`."""
    if isinstance(e, Expr):
        return e.copy()
    if isinstance(e, Var):
        return e.expr()
    return Expr({}, float(e))


def quicksum(items: Iterable[Term]) -> Expr:
    """Sum of many terms without quadratic copying."""
    out = Expr()
    for it in items:
        out._iadd(it, 1.0)
    return out


def lin(
    vars_: Sequence[Var] | np.ndarray, coefs: Sequence[float] | np.ndarray, const: float = 0.0
) -> Expr:
    """``sum_k coefs[k] * vars_[k] + const`` (duplicates add up)."""
    out = Expr({}, const)
    t = out.terms
    for v, c in zip(vars_, coefs, strict=True):
        c = float(c)
        if c != 0.0:
            t[v.index] = t.get(v.index, 0.0) + c
    return out
