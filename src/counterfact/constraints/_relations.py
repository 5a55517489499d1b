"""Relations between features: the grammar, its tokenizer and its recursive-descent parser.

A relation is one line of text::

    relation    := "if" atom "then" atom  |  atom
    atom        := side op side            op: <=  >=  ==  !=  <  >
    side        := term (("+" | "-") term)*
    term        := factor (("*" | "/") factor)*
    factor      := NUMBER | STRING | name ["@"] | "(" side ")" | ("+" | "-") factor
    name        := IDENTIFIER | `any text in backticks`

``name`` is the counterfactual's value of a feature, ``name@`` the query's own
value; a STRING (``'car'`` or ``"car"``) is a category.  Sides must stay linear:
a product needs a constant on one side and a division a constant divisor.
Parsing needs no schema; :mod:`._relations_bound` checks the names, kinds and
categories against one.  Nothing is evaluated with Python's ``eval``.

Every error is a :class:`~counterfact.exceptions.ConstraintError` whose message
shows the relation with a caret under the offending position.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..exceptions import ConstraintError

__all__ = ["Atom", "Linear", "Ref", "Relation", "Text", "caret"]

#: comparison operators, longest first (the tokenizer tries them in this order)
_OPS = ("<=", ">=", "==", "!=", "<", ">")
#: operators whose negation is closed (allowed as conditions only)
OPEN_OPS = frozenset({"<", ">", "!="})
_KEYWORDS = frozenset({"if", "then"})
#: the longest relation text, in characters
MAX_LENGTH = 10_000
#: the most digits a number may be written with (exponent not counted)
MAX_DIGITS = 30
#: the largest magnitude of a number, as written or as computed (a coefficient, a constant)
MAX_NUMBER = Fraction(10**15)
_MAX_NUMBER_TEXT = "1e15"
#: the deepest nesting of parentheses and unary signs
MAX_DEPTH = 50
_TOKEN = re.compile(
    r"""(?P<ws>\s+)
      | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
      | (?P<string>'[^']*'|"[^"]*")
      | (?P<quoted>`[^`]+`)
      | (?P<name>[A-Za-z_][A-Za-z0-9_.]*)
      | (?P<op><=|>=|==|!=|<|>)
      | (?P<punct>[-+*/()@])
    """,
    re.VERBOSE,
)


def caret(text: str, pos: int, message: str) -> str:
    """``message``, then the relation and a caret under character ``pos``."""
    return f"{message}\n    {text}\n    {' ' * max(0, min(pos, len(text)))}^"


@dataclass(frozen=True)
class _Token:
    kind: str  # number, string, name, op, punct, end
    text: str
    pos: int


def _tokens(text: str) -> list[_Token]:
    out: list[_Token] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            hint = " Use == to compare." if text[pos] == "=" else ""
            if text[pos] in "'\"`":
                hint = " A quote is not closed."
            raise ConstraintError(
                caret(text, pos, f"Relation: unexpected character {text[pos]!r}.{hint}")
            )
        kind = m.lastgroup or ""
        if kind == "quoted":
            kind, value = "name", m.group()[1:-1]
        else:
            value = m.group()
        if kind != "ws":
            out.append(_Token(kind, value, pos))
        pos = m.end()
    out.append(_Token("end", "", len(text)))
    return out


# -------------------------------------------------------------------- the tree
@dataclass(frozen=True)
class Ref:
    """A feature's value: the counterfactual's (``at=False``) or the query's (``at=True``)."""

    name: str
    at: bool
    pos: int


@dataclass(frozen=True)
class Text:
    """A category written as a string."""

    value: str
    pos: int


@dataclass(frozen=True)
class Linear:
    """``sum(coef * ref) + const`` (one entry per occurrence of a reference)."""

    terms: tuple[tuple[Ref, Fraction], ...]
    const: Fraction
    pos: int

    @property
    def constant(self) -> bool:
        return not self.terms

    def scaled(self, k: Fraction) -> Linear:
        return Linear(tuple((r, c * k) for r, c in self.terms), self.const * k, self.pos)

    def plus(self, other: Linear, sign: int) -> Linear:
        return Linear(
            self.terms + other.scaled(Fraction(sign)).terms,
            self.const + sign * other.const,
            self.pos,
        )

    @property
    def single(self) -> Ref | None:
        """The reference when the side is exactly one reference with coefficient 1."""
        if len(self.terms) == 1 and self.terms[0][1] == 1 and self.const == 0:
            return self.terms[0][0]
        return None


@dataclass(frozen=True)
class Atom:
    """``left op right``; ``pos`` is the operator's position."""

    left: Linear | Text
    op: str
    right: Linear | Text
    pos: int
    start: int
    end: int


# -------------------------------------------------------------------- parser
class _Parser:
    """Recursive descent over the tokens; each token is read once and every number is bounded."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.k = 0
        self.depth = 0

    @property
    def tok(self) -> _Token:
        return self.toks[self.k]

    def error(self, message: str, pos: int | None = None) -> ConstraintError:
        return ConstraintError(
            caret(self.text, self.tok.pos if pos is None else pos, f"Relation: {message}")
        )

    def take(self, kind: str, text: str | None = None) -> _Token | None:
        t = self.tok
        if t.kind == kind and (text is None or t.text == text):
            self.k += 1
            return t
        return None

    def relation(self) -> tuple[Atom | None, Atom]:
        if self.take("name", "if"):
            cond = self.atom()
            if not self.take("name", "then"):
                raise self.error(f"expected 'then' after the condition, found {self._found()}.")
            then = self.atom()
        else:
            cond, then = None, self.atom()
        if self.tok.kind != "end":
            raise self.error(f"unexpected {self._found()} after a complete relation.")
        return cond, then

    def atom(self) -> Atom:
        start = self.tok.pos
        left = self.side()
        op = self.take("op")
        if op is None:
            raise self.error(f"expected a comparison ({', '.join(_OPS)}), found {self._found()}.")
        right = self.side()
        last = self.toks[self.k - 1]
        return Atom(left, op.text, right, op.pos, start, last.pos + len(last.text))

    def side(self) -> Linear | Text:
        """Terms joined by + and -, summed once at the end (linear in their number)."""
        first = self.term()
        if not (self.tok.kind == "punct" and self.tok.text in "+-"):
            return first
        parts = [self._linear(first, self.tok.pos)]
        while self.tok.kind == "punct" and self.tok.text in "+-":
            t = self.toks[self.k]
            self.k += 1
            nxt = self._linear(self.term(), t.pos)
            parts.append(nxt if t.text == "+" else nxt.scaled(Fraction(-1)))
        const = sum((p.const for p in parts), Fraction(0))
        lin = Linear(tuple(x for p in parts for x in p.terms), const, parts[0].pos)
        return self._bounded(lin, parts[0].pos)

    def term(self) -> Linear | Text:
        """Factors joined by * and /: the numbers multiply into one factor, applied once."""
        first = self.factor()
        if not (self.tok.kind == "punct" and self.tok.text in "*/"):
            return first
        feature = self._linear(first, self.tok.pos)
        scale = Fraction(1)
        if feature.constant:
            feature, scale = None, feature.const
        while self.tok.kind == "punct" and self.tok.text in "*/":
            t = self.toks[self.k]
            self.k += 1
            nxt = self._linear(self.factor(), t.pos)
            if t.text == "/":
                scale = scale / self._divisor(nxt, t.pos)
            elif nxt.constant:
                scale = scale * nxt.const
            elif feature is None:
                feature = nxt
            else:
                raise self.error(
                    "a product of two features is not linear; multiply a feature by a number "
                    "only (e.g. 10 * income).",
                    t.pos,
                )
            self._check_size(scale, t.pos)
        if feature is None:
            return Linear((), scale, first.pos)
        return self._bounded(feature.scaled(scale), first.pos)

    def factor(self) -> Linear | Text:
        t = self.tok
        if self.take("number"):
            return Linear((), _number(self.text, t), t.pos)
        if self.take("string"):
            return Text(t.text[1:-1], t.pos)
        if t.kind == "punct" and t.text in "+-(":
            return self._nested(t)
        if t.kind == "name" and t.text not in _KEYWORDS:
            self.k += 1
            at = self.take("punct", "@") is not None
            return Linear(((Ref(t.text, at, t.pos), Fraction(1)),), Fraction(0), t.pos)
        raise self.error(f"expected a feature, a number or a category, found {self._found()}.")

    def _nested(self, t: _Token) -> Linear | Text:
        """A sign or a parenthesised side: one level deeper (at most ``MAX_DEPTH``)."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.error(
                f"more than {MAX_DEPTH} nested parentheses or signs; simplify the relation.",
                t.pos,
            )
        self.k += 1
        if t.text == "(":
            group = self.side()
            if not self.take("punct", ")"):
                raise self.error(
                    f"expected ')' to close the '(' at position {t.pos}, found {self._found()}."
                )
        else:
            inner = self._linear(self.factor(), t.pos)
            group = inner if t.text == "+" else inner.scaled(Fraction(-1))
        self.depth -= 1
        return group

    def _divisor(self, side: Linear, pos: int) -> Fraction:
        if not side.constant:
            raise self.error("division by a feature is not linear; divide by a number only.", pos)
        if side.const == 0:
            raise self.error("division by zero.", pos)
        return side.const

    def _bounded(self, side: Linear, pos: int) -> Linear:
        """``side``, once its constant and every coefficient are checked against MAX_NUMBER."""
        self._check_size(side.const, pos)
        for _, c in side.terms:
            self._check_size(c, pos)
        return side

    def _check_size(self, value: Fraction, pos: int) -> None:
        if abs(value) > MAX_NUMBER:
            raise self.error(
                f"a coefficient or constant exceeds {_MAX_NUMBER_TEXT}; numbers in a relation, "
                "as written and as computed, are at most that in magnitude.",
                pos,
            )

    def _linear(self, side: Linear | Text, pos: int) -> Linear:
        if isinstance(side, Text):
            raise self.error(
                f"the category '{side.value}' cannot take part in arithmetic; compare a feature "
                f"with it (feature == '{side.value}').",
                side.pos,
            )
        return side

    def _found(self) -> str:
        t = self.tok
        return "the end of the relation" if t.kind == "end" else repr(t.text)


def _number(text: str, t: _Token) -> Fraction:
    """The exact value of a number token, within the grammar's limits (see ``MAX_DIGITS``)."""
    mantissa, _, exponent = t.text.lower().partition("e")
    if len(mantissa.replace(".", "")) > MAX_DIGITS or len(exponent.lstrip("+-")) > 3:
        raise ConstraintError(
            caret(
                text,
                t.pos,
                f"Relation: the number is too long; write at most {MAX_DIGITS} digits and an "
                "exponent of at most 3 digits (e.g. 2.5e6).",
            )
        )
    value = Fraction(t.text)
    if abs(value) > MAX_NUMBER:
        raise ConstraintError(
            caret(
                text,
                t.pos,
                f"Relation: the number {t.text[:40]} exceeds {_MAX_NUMBER_TEXT}; numbers in a "
                f"relation are at most {_MAX_NUMBER_TEXT} in magnitude.",
            )
        )
    return value


@dataclass(frozen=True, eq=False)
class Relation:
    """One relation between features (see the module docstring for the grammar).

    Built from its text, which is parsed at once: a syntax error raises a
    :class:`~counterfact.exceptions.ConstraintError` pointing at the position.
    Names, kinds and categories are checked against a schema when the
    constraints are resolved.  Two relations are equal when their texts are.

    Examples
    --------
    >>> Relation("credit_amount <= 10 * income")
    Relation('credit_amount <= 10 * income')
    >>> Relation("if employment != employment@ then years_employed == 0").condition is not None
    True
    """

    text: str
    condition: Atom | None = None
    consequence: Atom | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise ConstraintError(
                "A relation must be a string such as 'credit_amount <= 10 * income'. Got "
                f"{self.text!r}."
            )
        text = self.text.strip()
        if len(text) > MAX_LENGTH:
            raise ConstraintError(
                f"A relation is {len(text)} characters long; at most {MAX_LENGTH} are read. "
                "Split it into several relations."
            )
        if not text:
            raise ConstraintError(
                "A relation is empty; write one such as 'credit_amount <= 10 * income'."
            )
        cond, then = _Parser(text).relation()
        if then.op in ("<", ">") or (then.op == "!=" and not _is_category_atom(then)):
            where = (
                "in the consequence of an 'if ... then ...'"
                if cond is not None
                else "outside a condition"
            )
            raise ConstraintError(
                caret(
                    text,
                    then.pos,
                    f"Relation: '{then.op}' is not allowed {where}: a counterfactual cannot be "
                    "required to lie "
                    "in an open set. Use <=, >= or == (strict comparisons and != are allowed in "
                    "conditions).",
                )
            )
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "condition", cond)
        object.__setattr__(self, "consequence", then)

    def __repr__(self) -> str:
        return f"Relation({self.text!r})"

    def __str__(self) -> str:
        return self.text

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Relation) and other.text == self.text

    def __hash__(self) -> int:
        return hash(("Relation", self.text))

    def __reduce__(self) -> tuple[Any, ...]:
        return (Relation, (self.text,))

    @property
    def names(self) -> tuple[str, ...]:
        """The features it names, in order of appearance."""
        out: dict[str, None] = {}
        for atom in (self.condition, self.consequence):
            if atom is None:
                continue
            for side in (atom.left, atom.right):
                if isinstance(side, Linear):
                    for r, _ in side.terms:
                        out[r.name] = None
        return tuple(out)


def _is_category_atom(atom: Atom) -> bool:
    """Whether ``atom`` may be a category comparison (decided for sure with a schema)."""
    return atom.op in ("==", "!=") and (
        isinstance(atom.left, Text)
        or isinstance(atom.right, Text)
        or (isinstance(atom.left, Linear) and atom.left.single is not None)
    )
