"""No method advises ageing: features only time changes, checked for every registered method.

On each bundled dataset with such features (German Credit, Adult, COMPAS), with a
small seeded logistic regression and a few rejected rows:

* under the defaults (no timeline) no answer changes a feature only time changes;
* under the dataset's default timeline (methods that declare the kind), every answer
  has an elapsed time within the horizon, each advancing feature moved by exactly the
  advance of that time (a top-coded one no further than its cap; an ordinal band by at
  most the level its lower edge plus that time certainly reaches, never down), and each
  rate-bound feature by at most its rate times that time.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.testing._fast import fast_method

METHODS = cf.methods.names(peers=True)
DATASETS = ["german_credit", "adult", "compas"]
N_ROWS, N_QUERIES = 300, 2


@pytest.fixture(scope="module", params=DATASETS)
def setting(request: pytest.FixtureRequest) -> tuple[cf.Dataset, object, pd.DataFrame]:
    """A dataset's rows (a seeded sample), a logistic regression and rejected test rows."""
    data = cf.datasets.load(request.param)
    rng = np.random.default_rng(0)
    idx = np.sort(rng.choice(len(data), size=N_ROWS, replace=False))
    train, test = data.subset(data.frame.index[idx]).split(test_size=0.3, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    return train, model, cf.rows_to_explain(model, test).head(N_QUERIES)


#: (method, dataset) -> the method fitted once on that setting (explain changes nothing on it)
_FITTED: dict[tuple[str, str], cf.methods.CounterfactualMethod] = {}


def _explain(name: str, setting: tuple, constraints: cf.Constraints) -> cf.CounterfactualResult:
    train, model, X = setting
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        key = (name, train.name)
        if key not in _FITTED:
            method = fast_method(name, random_state=0)
            if "time_limit" in method.get_params():
                method.set_params(time_limit=10.0)
            _FITTED[key] = method.fit(model, train)
        return _FITTED[key].explain(X, n_counterfactuals=2, constraints=constraints)


def _time_features(schema: cf.Schema) -> list[str]:
    return [f.name for f in schema if f.actionability == "time"]


@pytest.mark.parametrize("name", METHODS)
def test_no_ageing_without_a_timeline(name: str, setting: tuple) -> None:
    train, _model, X = setting
    result = _explain(name, setting, cf.Constraints())
    names = _time_features(train.schema)
    assert names
    for (q, _rank), row in result.counterfactuals.iterrows():
        for n in names:
            assert row[n] == X.loc[q, n], (name, q, n)


@pytest.mark.parametrize("name", METHODS)
def test_time_moves_no_faster_than_elapsed(name: str, setting: tuple) -> None:
    train, _model, X = setting
    if "timeline" not in cf.methods.get_class(name).tags.constraints:
        pytest.skip(f"{name} does not honour a timeline")
    timeline = cf.datasets.timeline(train)
    result = _explain(name, setting, cf.Constraints(timeline=timeline))
    months = result.elapsed()
    schema = train.schema
    for key, row in result.counterfactuals.iterrows():
        t = months.loc[key]
        assert 0 <= t <= timeline.horizon, (name, key, t)
        x = X.loc[key[0]]
        assert timeline.elapsed(schema, x, row) == int(t)
        for rule in timeline.rules(schema):
            _check_rule(schema[rule.name], rule, x[rule.name], row[rule.name], int(t))


def _check_rule(f: cf.schema.Feature, rule: object, before: object, after: object, t: int) -> None:
    """One time-driven feature moved by no more than ``t`` months allow."""
    if rule.kind == "pinned":  # a top-coded feature stops at its cap
        moved = float(before) + math.floor(rule.per_month * t + 1e-9)
        assert float(after) == min(moved, max(float(before), rule.cap)), f.name
    elif rule.kind == "band":  # at most the level its lower edge plus t certainly reaches
        b, a = f.rank(before), f.rank(after)
        low = rule.edges[b - 1] if b > 0 else rule.lower
        assert a == b or (b < a and rule.edges[a - 1] <= low + rule.per_month * t + 1e-9), f.name
    else:
        d = (f.rank(after) - f.rank(before)) if not f.is_numeric else float(after) - float(before)
        rate = rule.up if d > 0 else rule.down
        assert abs(d) <= rate * t + 1e-9 or d == 0, f.name
