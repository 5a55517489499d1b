"""L2C at scale: the pipeline's selection computed once for a whole batch, the
batch-size rule, the device rule and a small-but-real training run."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.methods._pipeline import different, diversity_steps, keep_different
from counterfact.methods._pipeline._diversity import keep_different_arrays
from counterfact.testing import make_setting

torch = pytest.importorskip("torch")

from counterfact.methods.l2c import L2C, TrainingOptions  # noqa: E402
from counterfact.methods.l2c._device import CUDA_MIN_BATCH, pick_device  # noqa: E402
from counterfact.methods.l2c._representation import bin_edges  # noqa: E402
from counterfact.methods.l2c._training import auto_batch_size  # noqa: E402


def small(training=None, **kw):
    """A fast L2C; ``training``: fields of :class:`TrainingOptions` that replace the fast ones."""
    options = TrainingOptions(
        **{"max_epochs": 30, "learning_rate": 3e-3, "patience": 10, **(training or {})}
    )
    return L2C(training=options, **{"n_samples": 100, "random_state": 0, "device": "cpu", **kw})


@pytest.fixture(scope="module")
def rf():
    s = make_setting("rf")
    rejected = s.train.X[s.model.predict(s.train.X) != cf.datasets.favourable("german_credit")]
    return s, small().fit(s.model, s.train), rejected


def _same(a: cf.CounterfactualResult, b: cf.CounterfactualResult) -> None:
    pd.testing.assert_series_equal(a.status, b.status, check_names=False)
    pd.testing.assert_frame_equal(
        a.counterfactuals.sort_index(), b.counterfactuals.sort_index(), check_dtype=False
    )


# ------------------------------------------------------ batched selection
def test_batch_equals_one_query_at_a_time(rf):
    """100 answers asked for 8 rows at once (one pool, selection arrays computed
    once) and for each row alone: the same answers, in the same order."""
    _, m, X = rf
    X = X.iloc[:8]
    batch = m.explain(X, n_counterfactuals=100)
    assert batch.found.sum() > 8, "too few answers for the comparison to mean much"
    alone = [m.explain(X.iloc[[k]], n_counterfactuals=100) for k in range(len(X))]
    _same(batch, cf.CounterfactualResult.concat(alone))


def test_batch_equals_one_query_at_a_time_without_sparsification(rf):
    _, m, X = rf
    m2 = copy.deepcopy(m).set_params(sparsify=False)
    X = X.iloc[:5]
    batch = m2.explain(X, n_counterfactuals=100)
    assert batch.found.mean() >= 5
    _same(
        batch,
        cf.CounterfactualResult.concat(
            [m2.explain(X.iloc[[k]], n_counterfactuals=100) for k in range(len(X))]
        ),
    )


def test_vectorised_diversity_rule_equals_the_pairwise_rule(rf):
    """keep_different (arrays, each row against all kept ones at once) keeps
    exactly the rows that the pairwise rule ``different`` keeps."""
    s, m, X = rf
    m2 = copy.deepcopy(m).set_params(sparsify=False)
    res = m2.explain(X.iloc[:3], n_counterfactuals=100, alternatives="method")
    steps = diversity_steps(s.train.schema, s.train.mad())
    checked = 0
    for q in res.queries.index:
        rows = res.for_query(q).reset_index(drop=True)
        if len(rows) < 3:
            continue
        x = res.queries.loc[q]
        kept, skipped = keep_different(s.train.schema, rows, x, steps, 100)
        naive: list[int] = []
        for r in range(len(rows)):
            if all(different(s.train.schema, rows.iloc[r], rows.iloc[p], x, steps) for p in naive):
                naive.append(r)
        assert kept == naive and skipped == len(rows) - len(naive)
        checked += 1
    assert checked


def test_keep_different_arrays_stops_at_k():
    ch = np.array([[True, False], [False, True], [True, True]])
    V = np.array([[0.0], [5.0], [9.0]])
    C = np.zeros((3, 1), dtype=object)
    assert keep_different_arrays(ch, V, C, np.array([1.0]), 2) == ([0, 1], 0)
    same = np.array([[True, False]] * 3)
    assert keep_different_arrays(same, np.array([[0.0], [0.5], [3.0]]), C, np.array([1.0]), 5) == (
        [0, 2],
        1,
    )


# ------------------------------------------------------------ batch size
def test_batch_size_grows_with_the_training_set():
    sizes = [auto_batch_size(n) for n in (50, 640, 2_000, 6_700, 19_200, 29_000, 500_000)]
    assert sizes[:2] == [64, 64] and sizes[-2:] == [1024, 1024]
    assert sizes == sorted(sizes)
    assert all(b & (b - 1) == 0 for b in sizes)  # powers of two
    assert auto_batch_size(19_200) == 512


def test_auto_batch_size_is_used_and_an_int_is_kept():
    s = make_setting("lr")
    assert small(training={"max_epochs": 1}).fit(s.model, s.train).batch_size_ == auto_batch_size(
        round(0.8 * len(s.train.X))
    )
    assert (
        small(training={"max_epochs": 1, "batch_size": 32}).fit(s.model, s.train).batch_size_ == 32
    )
    with pytest.raises(cf.exceptions.ValidationError, match="batch_size"):
        small(training={"batch_size": "big"}).fit(s.model, s.train)


# ---------------------------------------------------------------- device
def test_auto_device_is_the_cpu_without_cuda(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert pick_device(torch, "auto", batch_size=4096).type == "cpu"
    s = make_setting("lr")
    m = small(training={"max_epochs": 1}, device="auto").fit(s.model, s.train)
    assert m.device_ == "cpu"


def test_auto_device_rule_where_cuda_exists(monkeypatch):
    """CUDA only for training with large batches, whichever the gradient (the rule;
    nothing is allocated on the device here)."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert pick_device(torch, "auto", batch_size=CUDA_MIN_BATCH).type == "cuda"
    assert pick_device(torch, "auto", batch_size=CUDA_MIN_BATCH - 1).type == "cpu"
    assert pick_device(torch, "auto", batch_size=64).type == "cpu"
    assert pick_device(torch, "auto").type == "cpu"  # a loaded generator, no training
    assert pick_device(torch, "cpu", batch_size=4096).type == "cpu"
    assert pick_device(torch, "cuda:1").type == "cuda"  # an explicit device is honoured
    with pytest.raises(cf.ValidationError, match=r"device='cuda:2'\): this torch sees 2 CUDA"):
        pick_device(torch, "cuda:2")  # ... when this torch can reach it


# ------------------------------------------------------------- training
def test_a_value_holding_most_rows_gets_its_own_bin():
    v = np.r_[np.zeros(900), np.arange(1, 301, dtype=float)]
    edges = bin_edges(v, 4, 50)
    assert (
        edges[0] == 0 and edges[1] == 1 and edges.size == 5
    )  # {0} and three bins of the positive values
    assert np.array_equal(
        bin_edges(np.arange(1000, dtype=float), 4, 50),
        np.quantile(np.arange(1000.0), [0, 0.25, 0.5, 0.75, 1]),
    )


def test_training_reaches_coverage_and_diverse_valid_samples(rf):
    """A forest (score-function training) on a small real dataset: every rejected
    row gets a verified answer without fallback, with many distinct valid samples."""
    _, m, X = rf
    res = m.explain(X.iloc[:30], n_counterfactuals=100)
    assert cf.metrics.coverage(res) >= 0.95
    assert res.diagnostics["n_valid"].mean() >= 10
    assert (res.diagnostics["source"] == "l2c").all()  # no second draw, no relaxed threshold
    assert res.found.mean() >= 2
