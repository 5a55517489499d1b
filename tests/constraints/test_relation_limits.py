"""Relations that cannot hurt: every number, nesting depth and length in the grammar is
bounded, parsing is linear in the text, and every malformed relation is a ConstraintError."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from counterfact.constraints import Constraints, Relation
from counterfact.constraints._relations import MAX_DEPTH, MAX_DIGITS, MAX_LENGTH
from counterfact.exceptions import ConstraintError


def _fast_error(text: str, match: str) -> None:
    start = time.perf_counter()
    with pytest.raises(ConstraintError, match=match):
        Relation(text)
    assert time.perf_counter() - start < 5.0


@pytest.mark.parametrize(
    "text, match",
    [
        ("credit_amount <= 1e999999999", "exponent of at most 3 digits"),
        ("credit_amount <= 1e309", "exceeds 1e15"),
        ("credit_amount <= 1.5e15", "exceeds 1e15"),
        ("credit_amount <= -2e15", "exceeds 1e15"),
        ("credit_amount <= " + "9" * 5000, f"at most {MAX_DIGITS} digits"),
        ("credit_amount <= " + "0" * 40 + "1", f"at most {MAX_DIGITS} digits"),
        ("credit_amount <= 0." + "0" * 5000 + "1", f"at most {MAX_DIGITS} digits"),
        ("credit_amount <= 1e15 * 1e15 * income", "as computed"),
        ("credit_amount <= 1e15 + 1e15", "as computed"),
        ("credit_amount <= 1 / 1e-999", "as computed"),
        ("credit_amount <= 1e14 * 1e14", "as computed"),
    ],
    ids=lambda v: v[:40] if isinstance(v, str) else None,
)
def test_numbers_are_bounded(text, match):
    _fast_error(text, match)


def test_numbers_within_the_limits_are_read_exactly():
    assert Relation("credit_amount <= 1e15").consequence.right.const == 10**15
    assert Relation("credit_amount <= 1e-999").consequence.right.const > 0
    r = Relation("2 * credit_amount * 3 <= 123456789012345678901234567890e-20 * income")
    assert r.consequence.left.terms[0][1] == 6


@pytest.mark.parametrize(
    "text",
    [
        "x <= " + "(" * 400 + "1" + ")" * 400,
        "x <= " + "(" * (MAX_DEPTH + 1) + "y" + ")" * (MAX_DEPTH + 1),
        "x <= " + "-" * 2000 + "1",
        "x <= " + "+-" * 300 + "y",
    ],
    ids=["parentheses-400", "parentheses-limit", "signs-2000", "signs-600"],
)
def test_nesting_is_bounded(text):
    _fast_error(text, f"more than {MAX_DEPTH} nested")


def test_nesting_up_to_the_limit_parses():
    depth = MAX_DEPTH
    r = Relation("x <= " + "(" * depth + "2 * y" + ")" * depth)
    assert r.consequence.right.terms[0][1] == 2
    assert Relation("x <= " + "-" * (MAX_DEPTH - 1) + "y") is not None


def test_length_is_bounded():
    _fast_error("x <= " + " + ".join(["y"] * 5000), f"at most {MAX_LENGTH}")


@pytest.mark.parametrize(
    "text",
    [
        "x <= " + " + ".join(["y"] * 2400),
        "x <= " + " + ".join(f"y / {p}" for p in range(3, 1800, 2)),
        "x <= " + "0.999999999999 * " * 550 + "y",
        "x <= " + " - ".join(f"0.{k:07d} * y{k}" for k in range(1, 500)),
    ],
    ids=["sum", "fractions", "product", "coefficients"],
)
def test_parsing_the_longest_relations_is_fast(text):
    assert len(text) <= MAX_LENGTH
    start = time.perf_counter()
    Relation(text)
    assert time.perf_counter() - start < 5.0


def test_the_limits_name_the_relation_in_constraints():
    with pytest.raises(ConstraintError, match=r"relations\[1\].*1e15"):
        Constraints(relations=["x <= 1", "x <= 1e16"])


_ALPHABET = st.sampled_from(
    [*list("xy@()+-*/<>=!'`\" .e0123456789"), "if ", " then ", "1e999", "e+", "<=", "=="]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_ALPHABET, max_size=60).map("".join))
def test_any_text_is_a_relation_or_a_constraint_error(text):
    try:
        Relation(text)
    except ConstraintError:
        pass
