"""Reproducible batches: every query is seeded from (random_state, its position in the
whole input), so serial, ``n_jobs=2`` and ``explain_in_chunks`` with any chunk size
give identical counterfactuals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.methods._pipeline import explain as explain_at
from counterfact.methods._pipeline._batch import explain_in_chunks
from counterfact.methods._pipeline._prepare import position_seeds as _position_seeds


@pytest.fixture(scope="module")
def german():
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.3, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    favourable = cf.datasets.favourable("german_credit")
    rejected = test.X[model.predict(test.X) != favourable]
    return train, model, rejected.iloc[:24]


def _factories():
    out = [
        pytest.param(lambda: cf.MDPSO(n_particles=16, max_iter=30, patience=8, random_state=3), id="mdpso"),
        pytest.param(lambda: cf.UFCE(n_grid=8, n_pairs=3, random_state=3), id="ufce"),
    ]

    def l2c():
        pytest.importorskip("torch")
        return cf.L2C(max_epochs=8, learning_rate=3e-3, n_samples=40, patience=4, device="cpu", random_state=3)

    out.append(pytest.param(l2c, id="l2c"))
    return out


def _same(a: cf.CounterfactualResult, b: cf.CounterfactualResult, what: str) -> None:
    pd.testing.assert_series_equal(a.status, b.status, check_names=False, obj=f"status ({what})")
    pd.testing.assert_frame_equal(
        a.counterfactuals.sort_index(), b.counterfactuals.sort_index(), check_dtype=False, obj=f"counterfactuals ({what})"
    )


@pytest.mark.parametrize("factory", _factories())
def test_serial_parallel_and_chunks_agree(factory, german):
    train, model, X = german
    method = factory().fit(model, train)
    serial = method.explain(X, n_counterfactuals=2)
    assert serial.found.sum() > 0, "nothing found: the comparison would be empty"
    _same(serial, method.explain(X, n_counterfactuals=2, n_jobs=2), "n_jobs=2")
    for size in (7, 50):
        rep = explain_in_chunks(method, X, chunk_size=size, n_counterfactuals=2)
        assert not rep.failed, rep.failed
        _same(serial, rep.result, f"chunks of {size}")


def test_seeds_depend_on_position_only():
    a = _position_seeds(5, 0, 10)
    b = _position_seeds(5, 7, 3)
    for k in range(3):
        assert np.random.default_rng(a[7 + k]).random() == np.random.default_rng(b[k]).random()
    # another random_state gives other streams; None draws fresh entropy per call
    c = _position_seeds(6, 0, 1)
    assert np.random.default_rng(a[0]).random() != np.random.default_rng(c[0]).random()
    n1, n2 = _position_seeds(None, 0, 1), _position_seeds(None, 0, 1)
    assert np.random.default_rng(n1[0]).random() != np.random.default_rng(n2[0]).random()


def test_query_alone_equals_query_in_batch(german):
    """A query explained on its own (at its position) gets the batch's answer."""
    train, model, X = german
    method = cf.MDPSO(n_particles=16, max_iter=30, patience=8, random_state=3).fit(model, train)
    full = method.explain(X.iloc[:6])
    alone = explain_at(method, X.iloc[[4]], offset=4)
    pd.testing.assert_frame_equal(full.for_query(X.index[4]), alone.for_query(X.index[4]), check_dtype=False)
