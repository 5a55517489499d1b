"""Sparsification: in no returned UFCE, MD-PSO or L2C counterfactual can a single change
be reverted to the query's value while the real model still gives the target class and
the constraints still hold (German Credit and COMPAS, small models, a few rejected rows)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.constraints import violations
from counterfact.constraints._bounds import changed
from counterfact.testing._fast import fast_method

METHODS = ["ufce", "mdpso", "l2c"]


@pytest.fixture(scope="module", params=["german_credit", "compas"])
def setting(request):
    data = cf.datasets.load(request.param)
    if (
        request.param == "compas"
    ):  # MACE's setting: prior counts may go down (the default: a record only grows)
        counts = ("priors_count", "juv_fel_count", "juv_misd_count", "juv_other_count")
        data = data.with_schema(data.schema.with_actionability(**dict.fromkeys(counts, "free")))
    rng = np.random.default_rng(0)
    idx = np.sort(rng.choice(len(data), size=min(600, len(data)), replace=False))
    sub = data.subset(data.frame.index[idx])
    train, test = sub.split(test_size=0.25, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    fav = cf.datasets.favourable(request.param)
    target_pred = model.predict(test.X)
    rows = test.X[target_pred != fav] if fav is not None else test.X
    return request.param, train, model, rows.iloc[:6]


def _revertible(schema, model, x, row, target, constraints):
    """Features whose change can be undone alone (model still flips, constraints hold)."""
    out = []
    for f in schema:
        if not changed(f, x[f.name], row[f.name]):
            continue
        back = row.copy()
        back[f.name] = x[f.name]
        frame = schema.coerce(pd.DataFrame([back], columns=schema.names))
        if model.predict(frame)[0] == target and violations(x, frame, schema, constraints).empty:
            out.append(f.name)
    return out


@pytest.mark.parametrize("name", METHODS)
def test_no_single_change_can_be_reverted(name, setting):
    if name == "l2c" and importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed")
    dataset, train, model, X = setting
    schema = train.schema
    constraints = cf.Constraints(max_changes=max(3, len(schema) // 2))
    r = fast_method(name).fit(model, train).explain(X, n_counterfactuals=2, constraints=constraints)
    assert r.found.sum() > 0, f"{name} found nothing on {dataset}: nothing to check"
    assert "n_reverted" in r.diagnostics
    for (q, rank), row in r.counterfactuals.iterrows():
        bad = _revertible(schema, model, X.loc[q], row, r.target[q], constraints)
        assert not bad, f"{name} on {dataset}, query {q} rank {rank}: changes {bad} can be undone"


def test_nearest_option(setting):
    _, train, model, X = setting
    plain = cf.NearestObservable().fit(model, train).explain(X)
    sparse = cf.NearestObservable(sparsify=True).fit(model, train).explain(X)
    schema = train.schema
    for (q, _), row in sparse.counterfactuals.iterrows():
        assert not _revertible(schema, model, X.loc[q], row, sparse.target[q], None)
    # the plain baseline returns observed rows; sparsified ones change no more features
    n_plain = (plain.diffs().groupby(["query", "rank"]).size()).sum()
    n_sparse = (sparse.diffs().groupby(["query", "rank"]).size()).sum()
    assert n_sparse <= n_plain
    assert set(sparse.status[sparse.found > 0]) <= {"optimal", "feasible"}
