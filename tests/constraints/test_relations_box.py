"""Relations no value within a query's bounds satisfies: found from the bounds alone, sound
against brute force over a small grid, and reported `infeasible` by every method, naming
the relation, instead of a search that proves nothing."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import counterfact as cf

SCHEMA = cf.Schema(
    (
        cf.Feature("a", "integer", lower=0, upper=4),
        cf.Feature("b", "integer", lower=-2, upper=2),
        cf.Feature("e", "ordinal", categories=("lo", "mid", "hi")),
        cf.Feature("c", "categorical", categories=("u", "v", "w")),
    ),
    target="y",
    classes=(0, 1),
)
ROW = pd.Series({"a": 1, "b": 0, "e": "mid", "c": "u"})
ALL = list(itertools.product(range(0, 5), range(-2, 3), ("lo", "mid", "hi"), ("u", "v", "w")))
GRID = pd.DataFrame(ALL, columns=["a", "b", "e", "c"])


def _unreachable(relation: str, **more) -> list[str]:
    c = cf.Constraints(relations=[relation], **more)
    return c.resolve(SCHEMA).for_query(ROW).unreachable_relations()


def _brute(relation: str, **more) -> bool:
    """Whether some row of the grid satisfies every bound and the relation."""
    bounds = cf.Constraints(relations=[relation], **more).resolve(SCHEMA).for_query(ROW)
    return bool(bounds.satisfied(GRID).any())


@pytest.mark.parametrize(
    ("relation", "more"),
    [
        ("a + b >= 7", {}),
        ("a + b >= 6", {}),
        ("a - 2 * b <= -5", {}),
        ("a <= 0", {"increasing": ["a"]}),
        ("a == 5", {}),
        ("a + b == 9", {}),
        ("e >= 'hi'", {"decreasing": ["e"]}),
        ("e <= 'lo'", {"increasing": ["e"]}),
        ("c == 'w'", {"allowed_values": {"c": ["u", "v"]}}),
        ("c == 'u'", {"allowed_values": {"c": ["v", "w"]}}),
        ("a + b <= 6", {}),
        ("if a >= 9 then b >= 9", {}),
    ],
)
def test_said_unreachable_only_where_brute_force_finds_nothing(relation, more):
    said = _unreachable(relation, **more)
    found = _brute(relation, **more)
    if said:
        assert said == [relation] and not found
    if not found and "if" not in relation:
        # every unconditional case here is a box question: the test is also complete on it
        assert said == [relation]


def test_every_method_says_infeasible_and_names_the_relation():
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    X = cf.rows_to_explain(model, test).head(2)
    rel = "credit_amount + 2 * duration_months <= 100"  # the smallest loan is 250
    for method in (cf.UFCE(random_state=0), cf.MDPSO(random_state=0), cf.NearestObservable()):
        r = method.fit(model, train).explain(X, constraints=cf.Constraints(relations=[rel]))
        assert (r.status == "infeasible").all(), (type(method).__name__, r.reason.tolist())
        assert r.reason.str.contains(rel, regex=False).all()
    reachable = "credit_amount <= 5000"
    r = (
        cf.UFCE(random_state=0)
        .fit(model, train)
        .explain(X, constraints=cf.Constraints(relations=[reachable]))
    )
    assert not (r.status == "infeasible").any()
    assert np.isfinite(r.confidence.dropna()).all()


def test_the_query_values_a_relation_reads_widen_the_tolerance_as_the_checker_does():
    """``s >= a@ - b@ + 5`` with a@ = b@ = 1e7: the checker's tolerance counts each query
    term (about 20 here), so s = 1 passes it; the screen must not call it unreachable."""
    schema = cf.Schema(
        (
            cf.Feature("s", "real", lower=0, upper=1),
            cf.Feature("a", "real", lower=0, upper=2e7),
            cf.Feature("b", "real", lower=0, upper=2e7),
        ),
        target="y",
        classes=(0, 1),
    )
    row = pd.Series({"s": 0.0, "a": 1e7, "b": 1e7})
    bounds = cf.Constraints(relations=["s >= a@ - b@ + 5"]).resolve(schema).for_query(row)
    assert bounds.satisfied(pd.DataFrame({"s": [1.0], "a": [1e7], "b": [1e7]}))[0]
    assert bounds.unreachable_relations() == []
    far = cf.Constraints(relations=["s >= a@ - b@ + 500"]).resolve(schema).for_query(row)
    assert far.unreachable_relations() == ["s >= a@ - b@ + 500"]
