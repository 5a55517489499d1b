from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.exceptions import ConstraintError, ValidationError


@pytest.fixture
def schema(toy_frame):
    return cf.Schema.infer(toy_frame, target="y", immutable=["job"])


@pytest.fixture
def query(toy_frame, schema):
    return schema.validate_frame(toy_frame.drop(columns="y")).iloc[
        2
    ]  # age 33, income 2.2, job c, edu hi


def test_errors_are_builtin_subclasses():
    assert issubclass(ConstraintError, ValueError)
    assert issubclass(cf.UnsupportedModelError, TypeError)
    assert issubclass(cf.MissingDependencyError, ImportError)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"immutable": ["age"], "increasing": ["age"]}, "contradictory"),
        ({"increasing": ["age"], "decreasing": ["age"]}, "contradictory"),
        ({"features_to_vary": []}, "empty"),
        ({"max_changes": 0}, "max_changes"),
        ({"max_changes": -1}, "max_changes"),
        ({"ranges": {"age": (5, 1)}}, "empty"),
        ({"features_to_vary": ["age"], "immutable": ["age"]}, "features_to_vary"),
    ],
)
def test_contradictions_without_schema(kwargs, match):
    with pytest.raises(ConstraintError, match=match):
        cf.Constraints(**kwargs)


def test_resolve_errors(schema, query):
    with pytest.raises(ConstraintError, match="unknown features"):
        cf.Constraints(immutable=["nope"]).resolve(schema)
    with pytest.raises(ConstraintError, match="unordered"):
        cf.Constraints(increasing=["job"]).resolve(schema)
    with pytest.raises(ConstraintError, match="immutable"):
        cf.Constraints(features_to_vary=["job", "age"]).resolve(
            schema
        )  # job is immutable in the schema
    with pytest.raises(ConstraintError, match="excludes"):
        cf.Constraints(immutable=["age"], ranges={"age": (40, 50)}).resolve(schema).for_query(query)
    with pytest.raises(ConstraintError, match="ranges apply to numeric"):
        cf.Constraints(ranges={"edu": (0, 1)}).resolve(schema)


def test_query_bounds(schema, query):
    c = cf.Constraints(
        increasing=["age"], ranges={"income": (0, 3.0)}, allowed_values={"edu": ["mid", "hi"]}
    )
    b = c.resolve(schema).for_query(query)
    assert (b["age"].lower, b["age"].upper) == (33.0, 58.0)
    assert (b["income"].lower, b["income"].upper) == (1.1, 3.0)
    assert b["job"].fixed and b["job"].values == ("c",)
    assert b["edu"].values == ("mid", "hi")
    assert set(b.mutable) == {"age", "income", "edu"}
    # ordinal direction by rank
    b2 = cf.Constraints(decreasing=["edu"]).resolve(schema).for_query(query)
    assert b2["edu"].values == ("lo", "mid", "hi")
    b3 = cf.Constraints(increasing=["edu"]).resolve(schema).for_query(query)
    assert b3["edu"].values == ("hi",)
    # a range the query cannot reach under its direction -> infeasible (a status, not an error)
    b4 = (
        cf.Constraints(decreasing=["age"], ranges={"age": (40, 50)})
        .resolve(schema)
        .for_query(query)
    )
    assert b4.infeasible


def test_violations_every_kind(schema, query):
    c = cf.Constraints(
        increasing=["age"],
        ranges={"income": (0, 3.0)},
        allowed_values={"edu": ["mid", "hi"]},
        max_changes=2,
    )
    cfs = pd.DataFrame(
        {
            "age": [33, 30, 40, 33],
            "income": [2.2, 2.2, 3.5, 2.5],
            "job": ["c", "c", "c", "a"],
            "edu": ["hi", "hi", "lo", "mid"],
        },
        index=[10, 11, 12, 13],
    )
    v = cf.violations(query, cfs, schema, c)
    got = sorted(zip(v["row"], v["kind"], strict=True))
    assert got == sorted(
        [
            (11, "increasing"),
            (12, "ranges"),
            (12, "allowed_values"),
            (12, "max_changes"),
            (13, "immutable"),
            (13, "max_changes"),
        ]
    )
    # the vectorised checker agrees
    mask = c.resolve(schema).for_query(query).satisfied(cfs)
    assert mask.tolist() == [True, False, False, False]


def test_violations_domain_and_features_to_vary(schema, query):
    c = cf.Constraints(features_to_vary=["income"])
    cfs = pd.DataFrame(
        {"age": [34, 33], "income": [2.2, 99.0], "job": ["c", "c"], "edu": ["hi", "hi"]}
    )
    v = cf.violations(query, cfs, schema, c)
    assert sorted(zip(v["row"], v["kind"], strict=True)) == [(0, "features_to_vary"), (1, "domain")]
    assert c.resolve(schema).for_query(query).satisfied(cfs).tolist() == [False, False]


def test_causal_linear(schema, query):
    rel = cf.Causal(child="income", parents=("age",), coef={"age": 0.1})
    c = cf.Constraints(causal=[rel])
    cfs = pd.DataFrame(
        {"age": [43, 43], "income": [3.2, 2.2], "job": ["c", "c"], "edu": ["hi", "hi"]}
    )
    v = cf.violations(query, cfs, schema, c)
    assert v["row"].tolist() == [1] and v["kind"].tolist() == ["causal"]
    assert c.resolve(schema).for_query(query).satisfied(cfs).tolist() == [True, False]
    with pytest.raises(ConstraintError, match="exactly one"):
        cf.Causal(child="income", parents=("age",))


def test_merge_and_dict_round_trip():
    a = cf.Constraints(immutable=["x"], ranges={"a": (0, 10)}, max_changes=3)
    b = cf.Constraints(ranges={"a": (5, 20)}, max_changes=2, features_to_vary=["a", "b"])
    m = a.merge(b)
    assert m.ranges["a"] == (5, 10) and m.max_changes == 2 and m.immutable == ("x",)
    assert cf.Constraints.from_dict(m.to_dict()) == m
    with pytest.raises(ConstraintError, match="Unknown constraint keys"):
        cf.Constraints.from_dict({"imutable": ["x"]})


def test_inputs_not_mutated(schema, query):
    ranges = {"income": (0, 3.0)}
    names = ["age"]
    cf.Constraints(increasing=names, ranges=ranges).resolve(schema).for_query(query)
    assert ranges == {"income": (0, 3.0)} and names == ["age"]


def test_satisfied_matches_violations_randomised(schema, query):
    rng = np.random.default_rng(1)
    c = cf.Constraints(increasing=["age"], ranges={"income": (1.5, 3.5)}, max_changes=2)
    n = 300
    cfs = pd.DataFrame(
        {
            "age": rng.integers(20, 60, n),
            "income": np.round(rng.uniform(1.0, 4.2, n), 1),
            "job": rng.choice(["a", "b", "c"], n, p=[0.1, 0.1, 0.8]),
            "edu": rng.choice(["lo", "mid", "hi"], n),
        }
    )
    v = cf.violations(query, cfs, schema, c)
    bad = set(v["row"])
    mask = c.resolve(schema).for_query(query).satisfied(cfs)
    assert [i not in bad for i in range(n)] == mask.tolist()


def test_validation_error_for_non_constraints():
    with pytest.raises(ValidationError):
        raise ValidationError("x")


def test_satisfied_many_matches_per_query(toy_frame, schema):
    """The batched check used by result assembly gives the per-query answers."""
    from counterfact.constraints._bounds import satisfied_many

    rng = np.random.default_rng(2)
    X = schema.validate_frame(toy_frame.drop(columns="y"))
    resolved = [
        cf.Constraints(increasing=["age"], ranges={"income": (1.5, 3.5)}, max_changes=2).resolve(
            schema
        ),
        cf.Constraints(allowed_values={"edu": ["mid", "hi"]}, decreasing=["income"]).resolve(
            schema
        ),
        cf.Constraints(features_to_vary=["age", "edu"]).resolve(schema),
    ]
    bounds = [resolved[i % 3].for_query(X.iloc[i % len(X)]) for i in range(7)]
    n = 700
    cfs = pd.DataFrame(
        {
            "age": rng.integers(20, 60, n),
            "income": np.round(rng.uniform(1.0, 4.2, n), 1),
            "job": rng.choice(["a", "b", "c", "zz"], n, p=[0.3, 0.3, 0.3, 0.1]),
            "edu": rng.choice(["lo", "mid", "hi"], n),
        }
    )
    owner = rng.integers(0, len(bounds), n)
    got = satisfied_many(bounds, cfs, owner)
    want = np.zeros(n, dtype=bool)
    for i, b in enumerate(bounds):
        want[owner == i] = b.satisfied(cfs[owner == i])
    assert 0 < got.sum() < n  # the test sees both answers
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize(
    "bad", [(float("nan"), 50), (0, float("inf")), (float("-inf"), None), (None, "fifty")]
)
def test_non_finite_or_non_numeric_range_bound_is_rejected(bad):
    """A NaN or infinite bound would silently bound nothing: the error says to use None."""
    with pytest.raises(ConstraintError, match="None for an open side"):
        cf.Constraints(ranges={"age": bad})


def test_open_range_side_as_none_still_accepted(schema, query):
    c = cf.Constraints(ranges={"age": (None, 50)}).resolve(schema)
    assert c.ranges["age"] == (-np.inf, 50.0)


def test_satisfied_many_agrees_with_violations_on_any_column_dtypes(toy_frame, schema):
    """The block-wise check gives the same answer on typed and all-object frames,
    and agrees with :func:`violations` (no violation <=> satisfied)."""
    from counterfact.constraints import violations
    from counterfact.constraints._bounds import satisfied_many

    rng = np.random.default_rng(5)
    X = schema.validate_frame(toy_frame.drop(columns="y"))
    cons = [
        cf.Constraints(increasing=["age"], ranges={"income": (1.5, 3.5)}, max_changes=2),
        cf.Constraints(
            allowed_values={"edu": ["mid", "hi"], "age": [33, 40]}, decreasing=["income"]
        ),
    ]
    queries = [X.iloc[2], X.iloc[4]]
    bounds = [c.resolve(schema).for_query(q) for c, q in zip(cons, queries, strict=True)]
    n = 300
    cfs = pd.DataFrame(
        {
            "age": rng.choice([25, 33, 40, 47, 33.5], n),
            "income": np.round(rng.uniform(1.0, 4.2, n), 1),
            "job": rng.choice(["a", "b", "c"], n),
            "edu": rng.choice(["lo", "mid", "hi"], n),
        }
    )
    owner = rng.integers(0, 2, n)
    got = satisfied_many(bounds, cfs, owner)
    got_obj = satisfied_many(bounds, cfs.astype(object), owner)
    want = np.zeros(n, dtype=bool)
    for i in range(2):
        r = np.flatnonzero(owner == i)
        sub = cfs.iloc[r].reset_index(drop=True)
        bad = set(violations(queries[i], sub, schema, cons[i])["row"])
        want[r] = [k not in bad for k in range(len(r))]
    assert 0 < want.sum() < n
    assert got.tolist() == want.tolist()
    assert got_obj.tolist() == want.tolist()


def test_category_codes_in_one_lookup_match_per_column_codes():
    from counterfact.constraints._bounds import _category_codes

    cats = [["a", "b"], ["b", "c", 3], [0, 1]]
    C = np.array(
        [["a", "c", 1], ["b", 3, 0], ["c", "a", 2], [np.int64(1), "b", np.int64(1)]], dtype=object
    )
    got = _category_codes(cats, C)
    want = np.column_stack(
        [pd.Index(cs, dtype=object).get_indexer(C[:, k]) for k, cs in enumerate(cats)]
    )
    assert got.tolist() == want.tolist()
    assert got.tolist()[2] == [-1, -1, -1]  # a category of another feature is not one of this one
    assert (
        _category_codes([[1, True]], np.array([[1]], dtype=object)) is None
    )  # repeats: column by column
