"""The diversity rule: no two counterfactuals of a query are closer than the step
(same set of changed features and every feature within max(resolution, 0.1 x MAD);
discrete features: the same value), for every registered method."""

from __future__ import annotations

import importlib.util
from itertools import combinations

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.data._dataset import mad
from counterfact.methods._pipeline import (
    DEFAULT_DIVERSITY_FRACTION,
    different,
    diversity_steps,
    keep_different,
)
from counterfact.testing import make_setting
from counterfact.testing._fast import fast_method

_NEEDS = {"mace": "z3", "ceocl": "highspy", "l2c": "torch"}


@pytest.fixture(scope="module")
def setting():
    return make_setting("lr", n_queries=6)


def _steps(schema, train):
    """The steps computed here from their definition (not by the library's helper)."""
    out = {}
    for f in schema:
        if f.is_numeric:
            v = pd.to_numeric(train.X[f.name]).to_numpy(dtype=float)
            dev = np.abs(v - np.median(v))
            m = float(np.median(dev)) or float(np.mean(dev)) or 1.0
            out[f.name] = max(
                f.resolution or (1.0 if f.kind == "integer" else 0.0),
                DEFAULT_DIVERSITY_FRACTION * m,
            )
    return out


def _too_close(schema, steps, x, a, b) -> bool:
    for f in schema:
        if f.is_numeric:
            ca = abs(float(a[f.name]) - float(x[f.name])) > 1e-7 * max(1.0, abs(float(x[f.name])))
            cb = abs(float(b[f.name]) - float(x[f.name])) > 1e-7 * max(1.0, abs(float(x[f.name])))
            if ca != cb or abs(float(a[f.name]) - float(b[f.name])) > steps[f.name] * (1 + 1e-9):
                return False
        elif a[f.name] != b[f.name]:
            return False
    return True


@pytest.mark.parametrize("name", cf.methods.names())
def test_no_two_counterfactuals_closer_than_the_step(name, setting):
    if name in _NEEDS and importlib.util.find_spec(_NEEDS[name]) is None:
        pytest.skip(f"{_NEEDS[name]} is not installed")
    schema = setting.train.schema
    steps = _steps(schema, setting.train)
    r = (
        fast_method(name)
        .fit(setting.model, setting.train)
        .explain(setting.queries, n_counterfactuals=3)
    )
    pairs = 0
    for q in setting.queries.index:
        cfs = r.for_query(q)
        x = setting.queries.loc[q]
        for (_, a), (_, b) in combinations(cfs.iterrows(), 2):
            pairs += 1
            assert not _too_close(schema, steps, x, a, b), (
                f"{name}, query {q}: two counterfactuals within one step\n{a}\n{b}"
            )
    assert r.found.sum() > 0
    # and every reported numeric value lies on its feature's grid (or is the query's own value)
    cfs = r.counterfactuals
    for f in schema:
        if not f.is_numeric or not f.resolution or not len(cfs):
            continue
        v = cfs[f.name].to_numpy(dtype=float)
        q = setting.queries.loc[cfs.index.get_level_values(0), f.name].to_numpy(dtype=float)
        k = v / f.resolution
        off = (np.abs(k - np.round(k)) > 1e-6 * np.maximum(1.0, np.abs(k))) & (np.abs(v - q) > 1e-9)
        assert not off.any(), (
            f"{name}: {f.name} values off the grid of {f.resolution}: {v[off][:5]}"
        )


def test_rule_examples():
    frame = pd.DataFrame(
        {
            "income": [30000, 34412, 50000, 80000, 20000, 41000],
            "duration": [12, 24, 36, 6, 18, 24],
            "y": [0, 1, 1, 1, 0, 0],
        }
    )
    data = cf.Dataset.from_frame(frame, target="y")
    schema = data.schema
    steps = diversity_steps(schema, mad(data.X, schema))
    x = pd.Series({"income": 30000, "duration": 24})
    a = pd.Series({"income": 34412, "duration": 24})
    assert not different(
        schema, a, pd.Series({"income": 34413, "duration": 24}), x, steps
    )  # one unit
    assert different(
        schema, a, pd.Series({"income": 30000, "duration": 12}), x, steps
    )  # other feature set
    assert different(
        schema, a, pd.Series({"income": 34412 + 5000, "duration": 24}), x, steps
    )  # far apart
    rows = pd.DataFrame(
        [
            a,
            pd.Series({"income": 34413, "duration": 24}),
            pd.Series({"income": 30000, "duration": 12}),
        ]
    )
    kept, skipped = keep_different(schema, rows, x, steps, 3)
    assert kept == [0, 2] and skipped == 1
    assert keep_different(schema, rows, x, steps, 1) == ([0], 0)
