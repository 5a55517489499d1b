"""Relations checked against a schema, evaluated on rows, and bound to one query.

:func:`resolve_relation` turns a parsed :class:`~._relations.Relation` into a
:class:`ResolvedRelation` whose atoms are of two kinds:

* :class:`LinearAtom` -- ``sum(coef * value) + const  op  0`` over numeric
  values and ordinal ranks, of the counterfactual (``at=False``) or of the
  query (``at=True``);
* :class:`CategoryAtom` -- a binary, categorical or ordinal feature compared
  (``==`` / ``!=``) with one of its categories or with another feature's value.

:meth:`ResolvedRelation.holds` is the checker (every method's answers, the
metrics), with a tolerance for floats; :meth:`ResolvedRelation.bind` gives the
solvers the relation of one query in *solver units* (values, ranks, category
indices), the query's own values folded into the constants.

Semantics with tolerance ``tol = 1e-6 * (1 + sum |coef * value| + |const|)``: a
closed comparison (``<=``, ``>=``, ``==``) holds when it holds within ``tol``, an
open one (``<``, ``>``, ``!=``) only when it holds by more than ``tol``, in a
condition as in a consequence.  An exact solver's point passes (values on a
grid lie further than ``tol`` from a boundary they do not touch), and the
checker reports only violations larger than float rounding.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from .._utils._values import _py
from ..exceptions import ConstraintError
from ..schema import Feature, Schema
from ._causal import MAX_COEFFICIENT
from ._relations import Atom, Linear, Ref, Relation, Text, caret

__all__ = [
    "REL_TOL",
    "BoundAtom",
    "BoundCategory",
    "BoundConst",
    "BoundLinear",
    "BoundRelation",
    "CategoryAtom",
    "LinearAtom",
    "ResolvedRelation",
    "negate",
    "resolve_relation",
]

#: relative tolerance of the checker (see the module docstring)
REL_TOL = 1e-6
_NEGATION = {"<=": ">", ">=": "<", "==": "!=", "!=": "==", "<": ">=", ">": "<="}


@dataclass(frozen=True)
class LinearAtom:
    """``sum(coef * value) + const  op  0``; ``coef``: ``(feature, at, coefficient)``."""

    coef: tuple[tuple[str, bool, Fraction], ...]
    const: Fraction
    op: str


@dataclass(frozen=True)
class CategoryAtom:
    """``name[@] op value`` (a category) or ``name[@] op other[@]``."""

    name: str
    at: bool
    op: str
    value: Any = None
    other: tuple[str, bool] | None = None


# ------------------------------------------------------------ bound to a query
@dataclass(frozen=True)
class BoundLinear:
    """``sum(coef * x[name]) + const  op  0`` in solver units (values, ordinal ranks)."""

    coef: tuple[tuple[str, Fraction], ...]
    const: Fraction
    op: str


@dataclass(frozen=True)
class BoundCategory:
    """``x[name] op category`` with the category as its index (-1: not a category)."""

    name: str
    op: str
    index: int


@dataclass(frozen=True)
class BoundConst:
    """An atom decided by the query alone."""

    value: bool


BoundAtom = BoundLinear | BoundCategory | BoundConst


@dataclass(frozen=True)
class BoundRelation:
    """One relation of one query, for a solver: ``condition => consequence``."""

    text: str
    condition: BoundAtom | None
    consequence: BoundAtom


def negate(atom: BoundAtom) -> BoundAtom:
    """The atom that holds exactly where ``atom`` does not."""
    if isinstance(atom, BoundConst):
        return BoundConst(not atom.value)
    if isinstance(atom, BoundCategory):
        return BoundCategory(atom.name, "!=" if atom.op == "==" else "==", atom.index)
    return BoundLinear(atom.coef, atom.const, _NEGATION[atom.op])


def _compare(value: Fraction, op: str) -> bool:
    return {
        "<=": value <= 0,
        ">=": value >= 0,
        "==": value == 0,
        "!=": value != 0,
        "<": value < 0,
        ">": value > 0,
    }[op]


@dataclass(frozen=True)
class ResolvedRelation:
    """A relation checked against a schema (module docstring)."""

    text: str
    condition: LinearAtom | CategoryAtom | None
    consequence: LinearAtom | CategoryAtom
    names: tuple[str, ...]

    def __str__(self) -> str:
        return self.text

    # ------------------------------------------------------------- checker
    def holds(self, query: pd.Series, frame: pd.DataFrame, schema: Schema) -> np.ndarray:
        """Which rows of ``frame`` (raw values) satisfy the relation for ``query``."""
        ok = _atom_holds(self.consequence, query, frame, schema)
        if self.condition is not None:
            ok |= ~_atom_holds(self.condition, query, frame, schema)
        return ok

    def shortfall(self, query: pd.Series, frame: pd.DataFrame, schema: Schema) -> np.ndarray:
        """How far each row is from satisfying the relation: 0 where it holds, else
        the consequence's violation relative to its size (1 for a category), at
        least 1e-3 -- a penalty that heuristics minimise to prefer feasible points."""
        ok = self.holds(query, frame, schema)
        atom = self.consequence
        if isinstance(atom, CategoryAtom):
            miss = np.ones(len(frame))
        else:
            total, size = _linear_total(atom, query, frame, schema)
            gap = {"<=": total, ">=": -total}.get(atom.op, np.abs(total))
            miss = np.nan_to_num(np.maximum(gap, 0.0) / size, nan=1.0)
        return np.where(ok, 0.0, np.maximum(miss, 1e-3))

    def changed_names(self) -> tuple[str, ...]:
        """The features whose counterfactual value the relation reads."""
        out: dict[str, None] = {}
        for atom in (self.condition, self.consequence):
            if isinstance(atom, LinearAtom):
                out.update((n, None) for n, at, _ in atom.coef if not at)
            elif isinstance(atom, CategoryAtom):
                if not atom.at:
                    out[atom.name] = None
                if atom.other is not None and not atom.other[1]:
                    out[atom.other[0]] = None
        return tuple(out)

    def query_size(self, query: pd.Series, schema: Schema) -> float:
        """The part of the checker's size (module docstring) the bound relation folds
        into its constant: ``|const|`` plus each query-value term's ``|coef * value|``
        (0 for a category comparison)."""
        atom = self.consequence
        if not isinstance(atom, LinearAtom):
            return 0.0
        terms = (abs(float(c) * _unit(schema[n], query[n])) for n, at, c in atom.coef if at)
        return abs(float(atom.const)) + sum(terms)

    # ------------------------------------------------------------- binding
    def bind(self, query: pd.Series, schema: Schema) -> BoundRelation:
        """The relation of one query in solver units (module docstring)."""
        cond = None if self.condition is None else _bind(self.condition, query, schema)
        return BoundRelation(self.text, cond, _bind(self.consequence, query, schema))


def _bind(atom: LinearAtom | CategoryAtom, query: pd.Series, schema: Schema) -> BoundAtom:
    if isinstance(atom, LinearAtom):
        const = atom.const
        coef: dict[str, Fraction] = {}
        for name, at, c in atom.coef:
            if at:
                const += c * Fraction(_unit(schema[name], query[name]))
            else:
                coef[name] = coef.get(name, Fraction(0)) + c
        coef = {k: v for k, v in coef.items() if v != 0}
        if not coef:
            return BoundConst(_compare(const, atom.op))
        return BoundLinear(tuple(coef.items()), const, atom.op)
    left = _py(query[atom.name]) if atom.at else None
    if atom.other is None:
        right = atom.value
    else:
        oname, oat = atom.other
        right = _py(query[oname]) if oat else None
        if not oat and atom.at:  # query's value on the left, the counterfactual's on the right
            return _bind(CategoryAtom(oname, False, atom.op, value=left), query, schema)
    if atom.at:
        return BoundConst((left == right) == (atom.op == "=="))
    f = schema[atom.name]
    cats = list(f.categories or ())
    k = cats.index(right) if right in cats else -1
    if f.kind == "ordinal":  # a level is a rank: solvers hold ordinal features as ranks
        if k < 0:
            return BoundConst(atom.op == "!=")
        return BoundLinear(((atom.name, Fraction(1)),), Fraction(-k), atom.op)
    return BoundCategory(atom.name, atom.op, k)


def _unit(f: Feature, value: Any) -> float:
    """A raw value in solver units: a number, or an ordinal rank."""
    return float(f.rank(value)) if f.kind == "ordinal" else float(_py(value))


# ---------------------------------------------------------------- evaluation
def _column(f: Feature, at: bool, query: pd.Series, frame: pd.DataFrame) -> np.ndarray:
    """A feature's values in solver units, one per row (NaN where not a value)."""
    if at:
        try:
            return np.full(len(frame), _unit(f, query[f.name]))
        except (TypeError, ValueError):
            return np.full(len(frame), np.nan)
    col = frame[f.name]
    if f.kind == "ordinal":
        pos = {c: k for k, c in enumerate(f.categories or ())}
        return np.array([pos.get(_py(v), np.nan) for v in col.tolist()], dtype=float)
    return pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)


def _atom_holds(
    atom: LinearAtom | CategoryAtom, query: pd.Series, frame: pd.DataFrame, schema: Schema
) -> np.ndarray:
    if isinstance(atom, CategoryAtom):
        left = _raw(atom.name, atom.at, query, frame)
        right = (
            np.full(len(frame), atom.value, dtype=object)
            if atom.other is None
            else _raw(*atom.other, query, frame)
        )
        same = np.array(
            [a == b for a, b in zip(left.tolist(), right.tolist(), strict=True)], dtype=bool
        )
        return same if atom.op == "==" else ~same
    total, size = _linear_total(atom, query, frame, schema)
    tol = REL_TOL * size
    with np.errstate(invalid="ignore"):
        # closed comparisons hold within tol, open ones only by more than tol
        return {
            "<=": lambda: total <= tol,
            ">=": lambda: total >= -tol,
            "==": lambda: np.abs(total) <= tol,
            "<": lambda: total < -tol,
            ">": lambda: total > tol,
            "!=": lambda: np.abs(total) > tol,
        }[atom.op]()


def _linear_total(
    atom: LinearAtom, query: pd.Series, frame: pd.DataFrame, schema: Schema
) -> tuple[np.ndarray, np.ndarray]:
    """``sum(coef * value) + const`` per row, and its size ``1 + sum |terms| + |const|``."""
    total = np.full(len(frame), float(atom.const))
    size = np.full(len(frame), 1.0 + abs(float(atom.const)))
    for name, at, c in atom.coef:
        term = float(c) * _column(schema[name], at, query, frame)
        total += term
        size += np.abs(term)
    return total, size


def _raw(name: str, at: bool, query: pd.Series, frame: pd.DataFrame) -> np.ndarray:
    if at:
        return np.full(len(frame), _py(query[name]), dtype=object)
    return np.array([_py(v) for v in frame[name].tolist()], dtype=object)


# ---------------------------------------------------------------- resolution
def resolve_relation(relation: Relation, schema: Schema) -> ResolvedRelation:
    """``relation`` checked against ``schema``: every name known, arithmetic over
    numeric and ordinal features only, categories that exist (errors point at them)."""
    text = relation.text
    assert relation.consequence is not None  # set by Relation.__post_init__
    for atom in (relation.condition, relation.consequence):
        for side in () if atom is None else (atom.left, atom.right):
            for ref, _ in side.terms if isinstance(side, Linear) else ():
                _known(ref, schema, text)
    cond = (
        None
        if relation.condition is None
        else _resolve_atom(relation.condition, schema, text, condition=True)
    )
    then = _resolve_atom(relation.consequence, schema, text, condition=False)
    return ResolvedRelation(text, cond, then, relation.names)


def _known(ref: Ref, schema: Schema, text: str) -> None:
    if ref.name in schema:
        return
    close = difflib.get_close_matches(ref.name, schema.names, n=1)
    hint = f" Did you mean '{close[0]}'?" if close else f" Known features: {schema.names}."
    raise ConstraintError(caret(text, ref.pos, f"Relation: unknown feature '{ref.name}'.{hint}"))


def _discrete(side: Linear | Text, schema: Schema, *, ordinal: bool = False) -> Ref | None:
    """The reference of a side that is one binary or categorical feature (or ordinal one)."""
    ref = side.single if isinstance(side, Linear) else None
    if ref is None:
        return None
    f = schema[ref.name]
    return ref if f.is_categorical or (ordinal and f.kind == "ordinal") else None


def _resolve_atom(
    atom: Atom, schema: Schema, text: str, *, condition: bool
) -> LinearAtom | CategoryAtom:
    left, right = atom.left, atom.right
    is_cat = _discrete(left, schema) is not None or _discrete(right, schema) is not None
    if atom.op in ("==", "!=") and not is_cat:
        # an ordinal level compared with one of its categories, or with another level
        texts = isinstance(left, Text) or isinstance(right, Text)
        is_cat = texts or (
            _discrete(left, schema, ordinal=True) is not None
            and _discrete(right, schema, ordinal=True) is not None
        )
    if is_cat:
        return _category_atom(atom, schema, text)
    if isinstance(left, Text) or isinstance(right, Text):
        left, right = _ranks(atom, schema, text)
    assert isinstance(left, Linear) and isinstance(right, Linear)
    lin = left.plus(right, -1)
    coef: dict[tuple[str, bool], Fraction] = {}
    for ref, c in lin.terms:
        f = schema[ref.name]
        if f.is_categorical:
            raise ConstraintError(
                caret(
                    text,
                    ref.pos,
                    f"Relation: '{ref.name}' is {f.kind}; it has no numeric value. Compare it "
                    "with == or != to "
                    f"one of its categories {list(f.categories or ())} or to {ref.name}@.",
                )
            )
        coef[(ref.name, ref.at)] = coef.get((ref.name, ref.at), Fraction(0)) + c
    if atom.op == "!=" and not condition:
        raise ConstraintError(
            caret(
                text,
                atom.pos,
                "Relation: '!=' between numbers is allowed only in a condition (if ... then ...).",
            )
        )
    terms = tuple((n, at, c) for (n, at), c in coef.items() if c != 0)
    _check_coefficients(terms, atom, text)
    return LinearAtom(terms, lin.const, atom.op)


def _check_coefficients(
    terms: tuple[tuple[str, bool, Fraction], ...], atom: Atom, text: str
) -> None:
    """Refuse a coefficient of the counterfactual's value above ``MAX_COEFFICIENT``, once
    the terms of each feature are summed: it becomes a solver's matrix entry, where HiGHS
    refuses 1e15 and precision is lost long before (the query's own values, ``name@``,
    are folded into the constant, bounded by ``MAX_NUMBER``)."""
    for name, at, c in terms:
        if not at and abs(c) > MAX_COEFFICIENT:
            raise ConstraintError(
                caret(
                    text,
                    atom.pos,
                    f"Relation: the coefficient of {name} is {float(c):g}; a feature's "
                    f"coefficient, summed over the relation, is at most {MAX_COEFFICIENT:g} in "
                    "magnitude. Rescale the relation (divide both sides by the same number).",
                )
            )


def _ranks(atom: Atom, schema: Schema, text: str) -> tuple[Linear, Linear]:
    """``education >= 'Bachelors'``: an ordinal feature against one of its levels, by rank."""
    sides: list[Linear | Text] = [atom.left, atom.right]
    k = 0 if isinstance(sides[0], Text) else 1
    text_side, other = sides[k], sides[1 - k]
    assert isinstance(text_side, Text)
    ref = other.single if isinstance(other, Linear) else None
    if ref is None or schema[ref.name].kind != "ordinal":
        raise ConstraintError(
            caret(
                text,
                text_side.pos,
                f"Relation: the category '{text_side.value}' can only be compared with a single "
                "categorical or "
                "ordinal feature (purpose == 'car', education >= 'Bachelors').",
            )
        )
    rank = Fraction(_category(schema[ref.name], text_side.value, text_side.pos, text)[1])
    sides[k] = Linear((), rank, text_side.pos)
    return sides[0], sides[1]  # type: ignore[return-value]


def _category(f: Feature, value: Any, pos: int, text: str) -> tuple[Any, int]:
    """``(category, index)`` of ``value`` among ``f``'s categories (a string matches a
    category by its text too, so ``'1'`` finds the category ``1``)."""
    cats = list(f.categories or ())
    for k, c in enumerate(cats):
        if c == value or (isinstance(value, str) and str(c) == value):
            return c, k
    raise ConstraintError(
        caret(
            text,
            pos,
            f"Relation: {value!r} is not a category of '{f.name}'. Its categories: {cats}.",
        )
    )


def _category_atom(atom: Atom, schema: Schema, text: str) -> CategoryAtom:
    """A discrete feature compared with a category or with another feature's value."""
    if atom.op not in ("==", "!="):
        raise ConstraintError(
            caret(
                text, atom.pos, f"Relation: '{atom.op}' does not compare categories; use == or !=."
            )
        )
    sides = (atom.left, atom.right)
    refs = [s.single if isinstance(s, Linear) else None for s in sides]
    if refs[0] is None and refs[1] is None:
        raise ConstraintError(
            caret(text, atom.start, "Relation: compare one categorical feature with a category.")
        )
    k = 0 if refs[0] is not None else 1
    ref, other = refs[k], sides[1 - k]
    assert ref is not None
    f = schema[ref.name]
    if not f.is_categorical and f.kind != "ordinal":
        raise ConstraintError(
            caret(
                text,
                ref.pos,
                f"Relation: '{ref.name}' is {f.kind}; compare it with numbers, not categories.",
            )
        )
    oref = refs[1 - k]
    if oref is not None:
        return _pair(atom, ref, oref, schema, text)
    if isinstance(other, Text):
        value, _ = _category(f, other.value, other.pos, text)
    elif isinstance(other, Linear) and other.constant:
        value, _ = _category(f, _number(other.const), other.pos, text)
    else:
        pos = other.pos if isinstance(other, (Linear, Text)) else atom.pos
        raise ConstraintError(
            caret(
                text,
                pos,
                f"Relation: '{ref.name}' is {f.kind}; compare it with one of its categories "
                f"{list(f.categories or ())}.",
            )
        )
    return CategoryAtom(ref.name, ref.at, atom.op, value=value)


def _pair(atom: Atom, ref: Ref, oref: Ref, schema: Schema, text: str) -> CategoryAtom:
    f, g = schema[ref.name], schema[oref.name]
    if not (g.is_categorical or g.kind == "ordinal") or not (
        f.is_categorical or f.kind == "ordinal"
    ):
        raise ConstraintError(
            caret(
                text,
                atom.pos,
                f"Relation: '{ref.name}' ({f.kind}) and '{oref.name}' ({g.kind}) cannot be "
                "compared.",
            )
        )
    if not ref.at and not oref.at:
        raise ConstraintError(
            caret(
                text,
                atom.start,
                "Relation: compare a categorical feature with a category or with a query's value "
                "(name@), "
                "not with another feature's new value.",
            )
        )
    return CategoryAtom(ref.name, ref.at, atom.op, other=(oref.name, oref.at))


def _number(x: Fraction) -> int | float:
    return int(x) if x.denominator == 1 else float(x)


def resolve_relations(
    relations: Sequence[Relation], schema: Schema
) -> tuple[ResolvedRelation, ...]:
    """Every relation resolved (:func:`resolve_relation`)."""
    return tuple(resolve_relation(r, schema) for r in relations)
