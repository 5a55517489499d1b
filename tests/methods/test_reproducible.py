"""Reproducible answers: every query is seeded from (random_state, the row's values), so
a row gets the same answer alone, at any position of any batch, serially, with
``n_jobs=2`` and with ``explain_in_chunks`` of any chunk size."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.methods._pipeline._batch import explain_in_chunks
from counterfact.methods._pipeline._prepare import row_seeds
from counterfact.testing._fast import fast_method


@pytest.fixture(scope="module")
def german():
    data = cf.datasets.load("german_credit")
    # every feature free: the bundled defaults leave the nearest observed row nothing to offer
    data = data.with_schema(
        data.schema.with_actionability(**dict.fromkeys(data.schema.names, "free"))
    )
    train, test = data.split(test_size=0.3, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    favourable = cf.datasets.favourable("german_credit")
    rejected = test.X[model.predict(test.X) != favourable]
    return train, model, rejected.iloc[:24]


def _factories():
    out = [
        pytest.param(
            lambda: cf.MDPSO(
                swarm={"n_particles": 16, "max_iter": 30, "patience": 8}, random_state=3
            ),
            id="mdpso",
        ),
        pytest.param(lambda: cf.UFCE(n_grid=8, n_pairs=3, random_state=3), id="ufce"),
    ]

    def l2c():
        pytest.importorskip("torch")
        return cf.L2C(
            training={"max_epochs": 8, "learning_rate": 3e-3, "patience": 4},
            n_samples=40,
            device="cpu",
            random_state=3,
        )

    out.append(pytest.param(l2c, id="l2c"))
    return out


def _same(a: cf.CounterfactualResult, b: cf.CounterfactualResult, what: str) -> None:
    pd.testing.assert_series_equal(a.status, b.status, check_names=False, obj=f"status ({what})")
    pd.testing.assert_frame_equal(
        a.counterfactuals.sort_index(),
        b.counterfactuals.sort_index(),
        check_dtype=False,
        obj=f"counterfactuals ({what})",
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


def test_seeds_depend_on_the_row_only():
    frame = pd.DataFrame({"a": [1, 2, 1], "b": ["x", "y", "x"]})
    seeds = row_seeds(5, frame)
    draw = [np.random.default_rng(s).random() for s in seeds]
    assert draw[0] == draw[2] != draw[1]  # the same values, the same stream, wherever they stand
    assert np.random.default_rng(row_seeds(5, frame.iloc[[2]])[0]).random() == draw[0]
    # another random_state gives other streams; None draws fresh entropy per call
    assert np.random.default_rng(row_seeds(6, frame)[0]).random() != draw[0]
    n1, n2 = row_seeds(None, frame.iloc[:1]), row_seeds(None, frame.iloc[:1])
    assert np.random.default_rng(n1[0]).random() != np.random.default_rng(n2[0]).random()


@pytest.mark.parametrize("name", ["nearest", "mace", "ceocl", "ufce", "mdpso", "l2c"])
def test_one_row_alone_equals_the_same_row_inside_a_batch(name, german):
    """The page, the command line and a notebook agree on one person: explained alone
    (position 0) or as row 5 of a batch, the answer is the same."""
    train, model, X = german
    method = fast_method(name, random_state=3).fit(model, train)
    batch = method.explain(X.iloc[:6], n_counterfactuals=2)
    alone = method.explain(X.iloc[[4]], n_counterfactuals=2)
    q = X.index[4]
    assert batch.status[q] == alone.status[q]
    pd.testing.assert_frame_equal(batch.for_query(q), alone.for_query(q), check_dtype=False)
