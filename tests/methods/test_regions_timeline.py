"""Regions under a timeline: every point of a region is an answer, the timeline included.

The features time moves (age, a band, a paced saving) are tied to the answer's month, so a
region keeps their values; growing them independently let "residence since 1, age 27" into
a region, a point the timeline rules out (12 months that make a person 27 also make the
residence 2)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import counterfact as cf


@pytest.fixture(scope="module")
def timed():
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    X = cf.rows_to_explain(model, test).head(4)
    cons = cf.Constraints(timeline=cf.datasets.timeline(train, horizon=12))
    result = (
        cf.MACE(time_limit=20, random_state=0)
        .fit(model, train)
        .explain(X, constraints=cons, requirements=cf.Requirements(regions=True))
    )
    return data.schema, model, X, cons, result


def _points(region, x: pd.Series, schema) -> pd.DataFrame:
    """Every grid point of a region (integers and categories; reals at their ends)."""
    values = [
        sorted(b, key=str)
        if isinstance(b, frozenset)
        else sorted({b[0], b[1], *np.arange(np.ceil(b[0]), np.floor(b[1]) + 1)})
        for b in region.bounds.values()
    ]
    combos = list(itertools.product(*values))[:4000]
    frame = pd.DataFrame([x] * len(combos)).reset_index(drop=True)
    for j, name in enumerate(region.bounds):
        frame[name] = [c[j] for c in combos]
    return schema.coerce(frame)


def test_every_point_of_a_timed_region_is_an_answer(timed):
    schema, model, X, cons, result = timed
    checked = 0
    for q in X.index:
        if not result.found[q]:
            continue
        points = _points(result.region(q), X.loc[q], schema)
        assert (model.predict(points) == 1).all()
        assert cf.violations(X.loc[q], points, schema, cons).empty, q
        checked += len(points)
    assert checked >= 4
