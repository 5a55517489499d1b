"""Alternatives that differ, for every registered method (``alternatives="distinct"``,
the default): on German Credit with 3 answers asked, no two answers of a query are
near-duplicates, no answer shows a move smaller than its feature's meaningful step
as a change (except a move the model needs, in one answer of the query at most),
and the answers are listed nearest first.

The steps and the distance are recomputed here from their definitions, not with
the library's helpers.
"""

from __future__ import annotations

import importlib.util
from itertools import combinations

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.testing._fast import fast_method

_NEEDS = {"mace": "z3", "ceocl": "highspy", "l2c": "torch", "dice": "dice_ml"}


@pytest.fixture(scope="module")
def setting():
    data = cf.datasets.load("german_credit")
    # the bundled defaults, monotone directions and time left free: the nearest observed row
    # (a baseline) finds none for these rows under all of them
    directed = {
        f.name: "free"
        for f in data.schema
        if f.actionability in ("increasing", "decreasing", "time")
    }
    data = data.with_schema(data.schema.with_actionability(**directed))
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    rejected = test.X[model.predict(test.X) == 0]
    return train, model, rejected.iloc[:4]


def _steps(train) -> dict[str, float]:
    """max(resolution, 0.1 x MAD) per numeric feature, from the training data."""
    out = {}
    for f in train.schema:
        if f.is_numeric:
            v = pd.to_numeric(train.X[f.name]).to_numpy(dtype=float)
            dev = np.abs(v - np.median(v))
            m = float(np.median(dev)) or float(np.mean(dev)) or 1.0
            out[f.name] = max(f.resolution or 1.0, 0.1 * m)
    return out


def _substeps(schema, steps, x, row) -> list[str]:
    return [
        f.name
        for f in schema
        if f.is_numeric
        and 0 < abs(float(row[f.name]) - float(x[f.name])) < steps[f.name] * (1 - 1e-9)
    ]


def _meaningful(schema, steps, x, row) -> frozenset[str]:
    out = set()
    for f in schema:
        if f.is_numeric:
            if abs(float(row[f.name]) - float(x[f.name])) >= steps[f.name] * (1 - 1e-9):
                out.add(f.name)
        elif row[f.name] != x[f.name]:
            out.add(f.name)
    return frozenset(out)


def _near_duplicates(schema, steps, x, a, b) -> bool:
    if _meaningful(schema, steps, x, a) != _meaningful(schema, steps, x, b):
        return False
    for f in schema:
        if f.is_numeric:
            if abs(float(a[f.name]) - float(b[f.name])) > steps[f.name] * (1 + 1e-9):
                return False
        elif a[f.name] != b[f.name]:
            return False
    return True


def _l1(schema, x, rows: pd.DataFrame) -> np.ndarray:
    """MACE's eq. 3 (l1): mean over features of |change| / range, 1 per changed category."""
    total = np.zeros(len(rows))
    for f in schema:
        if f.is_numeric:
            span = float(f.upper - f.lower) or 1.0
            total += np.abs(rows[f.name].to_numpy(dtype=float) - float(x[f.name])) / span
        elif f.kind == "ordinal":
            cats = list(f.categories)
            total += np.abs(
                np.array([cats.index(v) for v in rows[f.name]]) - cats.index(x[f.name])
            ) / max(1, len(cats) - 1)
        else:
            total += (rows[f.name].to_numpy(dtype=object) != x[f.name]).astype(float)
    return total / len(schema)


@pytest.mark.parametrize("name", cf.methods.names(peers=True))
def test_three_answers_differ_and_are_sorted(name, setting):
    if name in _NEEDS and importlib.util.find_spec(_NEEDS[name]) is None:
        pytest.skip(f"{_NEEDS[name]} is not installed")
    train, model, X = setting
    schema = train.schema
    steps = _steps(train)
    r = fast_method(name).fit(model, train).explain(X, n_counterfactuals=3)
    assert r.found.sum() > 0, f"{name} found nothing"
    for q in X.index:
        cfs, x = r.for_query(q), X.loc[q]
        with_substep = 0
        for _, row in cfs.iterrows():
            small = _substeps(schema, steps, x, row)
            if not small:
                continue
            with_substep += 1
            for n in small:  # a move smaller than its step is kept only when the model needs it
                back = row.copy()
                back[n] = x[n]
                assert (
                    model.predict(pd.DataFrame([back]))[0] == model.predict(pd.DataFrame([x]))[0]
                ), (
                    f"{name}, query {q}: the do-nothing move of {n} ({x[n]} -> {row[n]}) "
                    "was not reverted"
                )
        assert with_substep <= 1, (
            f"{name}, query {q}: {with_substep} answers keep a move smaller than its step"
        )
        for (_, a), (_, b) in combinations(cfs.iterrows(), 2):
            assert not _near_duplicates(schema, steps, x, a, b), (
                f"{name}, query {q}: near-duplicate answers\n{a}\n{b}"
            )
        # nearest first in the call's measure (the measure of effort by default), else
        # in MACE's eq. (3) l1 (a method that takes no costs)
        if len(cfs) == 0:
            continue
        d = r.cost().loc[q].to_numpy() if r.costs is not None else _l1(schema, x, cfs)
        start = 1 if r.status[q] == "optimal" else 0  # a proven-optimal first answer keeps rank 0
        assert np.all(np.diff(d[start:]) >= -1e-9), (
            f"{name}, query {q}: answers not nearest first: {d}"
        )


def test_method_order_is_the_explicit_opt_out(setting):
    """``alternatives="method"``: the method's own answers and order; the default
    never reports more near-duplicates or sub-step moves than it."""
    train, model, X = setting
    mace = cf.MACE(norm="l1", rel_gap=1e-2, time_limit=20.0, random_state=0).fit(model, train)
    steps = _steps(train)
    counts = {}
    for mode in ("method", "distinct"):
        r = mace.explain(X, n_counterfactuals=3, alternatives=mode)
        bad = 0
        for q in X.index:
            cfs, x = r.for_query(q), X.loc[q]
            bad += sum(
                bool(_substeps(train.schema, steps, x, row)) for _, row in cfs.iloc[1:].iterrows()
            )
            bad += sum(
                _near_duplicates(train.schema, steps, x, a, b)
                for (_, a), (_, b) in combinations(cfs.iterrows(), 2)
            )
        counts[mode] = bad
    assert counts["distinct"] == 0
    assert counts["distinct"] <= counts["method"]


def test_bad_alternatives_value_is_rejected(setting):
    train, model, X = setting
    m = (
        cf.NearestCounterfactual().fit(model, train)
        if hasattr(cf, "NearestCounterfactual")
        else fast_method("nearest").fit(model, train)
    )
    with pytest.raises(cf.ValidationError, match="alternatives must be one of"):
        m.explain(X.iloc[:1], alternatives="any")
