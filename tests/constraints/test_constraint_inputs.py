"""Constraints check their inputs where they enter: a ConstraintError naming the field and
the value, never a raw OverflowError or TypeError (issue 29)."""

from __future__ import annotations

import pytest

import counterfact as cf
from counterfact.exceptions import ConstraintError


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"ranges": {"age": (10**400, None)}},
            r"ranges\['age'\] low bound = 100000000\.\.\.0000 \(401 digits\) is too large",
        ),
        ({"ranges": {"age": (None, -(10**400))}}, "high bound.*too large"),
        ({"ranges": {"age": (True, 50)}}, "must be a number"),
        ({"ranges": {"age": (float("nan"), 50)}}, "finite"),
        ({"ranges": {"age": 5}}, r"\(low, high\) pair"),
        ({"ranges": {"age": (1, 2, 3)}}, r"\(low, high\) pair"),
        ({"ranges": [("age", (1, 2))]}, "mapping of feature name"),
        (
            {"allowed_values": {"age": 5}},
            r"allowed_values\['age'\] must be a list .* e\.g\. \{'age': \[5\]\}",
        ),
        ({"allowed_values": {"age": None}}, r"allowed_values\['age'\] must be a list.*Got None"),
        ({"allowed_values": {"age": "30"}}, "must be a list"),
        ({"allowed_values": {"age": [float("inf")]}}, "finite"),
        ({"immutable": 5}, "feature names"),
        ({"immutable": [1]}, "feature names"),
        ({"features_to_vary": 3}, "feature names"),
        ({"causal": 3}, "must be a list"),
        ({"causal": [3]}, "Causal objects"),
        ({"max_changes": True}, "max_changes"),
    ],
)
def test_bad_constructor_arguments_raise_constraint_errors(kwargs, message):
    with pytest.raises(ConstraintError, match=message):
        cf.Constraints(**kwargs)


def test_none_means_no_such_constraint():
    """ranges=None and immutable=None raised TypeErrors; YAML's `immutable:` gives None."""
    c = cf.Constraints(
        ranges=None, immutable=None, increasing=None, allowed_values=None, causal=None
    )  # type: ignore[arg-type]
    assert c.kinds() == set()
    assert cf.Constraints.from_dict({"immutable": None, "ranges": None}).kinds() == set()
    assert cf.Constraints.from_dict({"features_to_vary": None}).features_to_vary is None
    assert cf.Constraints.from_dict(None).kinds() == set()


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ([1, 2], "must be a mapping of constraint kind"),
        ("immutable", "must be a mapping"),
        ({"ranges": [1, 2]}, "ranges must be a mapping"),
        ({"ranges": {"age": "x"}}, r"\(low, high\) pair"),
        ({"causal": {"child": "a"}}, "causal must be a list"),
        ({"causal": ["a"]}, r"causal\[0\] must be a mapping"),
        ({"causal": [{"child": "a", "parents": ["b"]}]}, r"causal\[0\] lacks the keys \['coef'\]"),
        (
            {"causal": [{"child": "a", "parents": ["b"], "coef": {"b": 1}, "extra": 1}]},
            "unknown keys",
        ),
        ({"causal": [{"child": "a", "parents": ["b"], "coef": [1]}]}, "coef must be a mapping"),
        ({"nope": 1}, "Unknown constraint keys"),
    ],
)
def test_bad_dicts_raise_constraint_errors(spec, message):
    with pytest.raises(ConstraintError, match=message):
        cf.Constraints.from_dict(spec)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"coef": {}}, "coef is empty"),
        ({"coef": {"duration_months": 1e308}}, "too large"),
        ({"coef": {"duration_months": 10**400}}, "too large"),
        ({"coef": {"duration_months": float("nan")}}, "finite"),
        ({"coef": {"duration_months": True}}, "must be a number"),
        ({"coef": {"duration_months": "2"}}, "must be a number"),
        (
            {"coef": {"duration_months": 1.0}, "intercept": float("inf")},
            "intercept must be a finite",
        ),
        ({"coef": {"duration_months": 1.0}, "tol": 0.0}, "tol must be > 0"),
        ({"coef": {"duration_months": 1.0}, "parents": 5}, "parents must list"),
    ],
)
def test_bad_causal_relations_raise_constraint_errors(kwargs, message):
    """A relation with "coef": {} passed validation; a coefficient of 1e308 surfaced as
    'SolverError: HiGHS rejected the model'."""
    args = {"child": "credit_amount", "parents": ("duration_months",), **kwargs}
    with pytest.raises(ConstraintError, match=message):
        cf.Causal(**args)


def test_good_causal_relation_is_kept_with_float_coefficients():
    rel = cf.Causal(
        child="credit_amount", parents="duration_months", coef={"duration_months": 2}, intercept=1
    )
    assert (
        rel.parents == ("duration_months",)
        and rel.coef == {"duration_months": 2.0}
        and rel.intercept == 1.0
    )
    back = cf.Constraints.from_dict(cf.Constraints(causal=[rel]).to_dict())
    assert back.causal[0].coef == rel.coef
