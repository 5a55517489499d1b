"""The base class's side of the time-limit contract: each query's clock starts when
its own work starts (per sub-batch for batch methods), and runtime is per query."""

from __future__ import annotations

import time
from typing import ClassVar

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.methods import Candidates, CounterfactualMethod


class SlowOne(CounterfactualMethod):
    name: ClassVar[str] = "slow_one"
    seen: ClassVar[list] = []

    def __init__(self, *, time_limit: float | None = None, random_state: int | None = None, verbose: int = 0):
        self.time_limit = time_limit
        self.random_state = random_state
        self.verbose = verbose

    def _explain_one(self, query):
        SlowOne.seen.append(query.time_left())
        time.sleep(0.05)
        return Candidates(pd.DataFrame(columns=self.schema_.names), None, {})


class SlowBatch(SlowOne):
    name: ClassVar[str] = "slow_batch"
    batches: ClassVar[list] = []

    def _explain_batch(self, queries):
        SlowBatch.batches.append([(q.position, q.started, q.time_left()) for q in queries])
        time.sleep(0.01 * len(queries))
        return [Candidates(pd.DataFrame(columns=self.schema_.names), None, {}) for _ in queries]


@pytest.fixture(scope="module")
def setting():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=300), "b": rng.normal(size=300)})
    frame["y"] = (frame["a"] + frame["b"] > 0).astype(int)
    data = cf.Dataset.from_frame(frame, target="y")
    return data, cf.models.fit(data, "lr")


def test_each_query_gets_its_full_limit(setting):
    data, model = setting
    SlowOne.seen.clear()
    m = SlowOne(time_limit=0.5).fit(model, data)
    r = m.explain(data.X.iloc[:8])
    assert len(SlowOne.seen) == 8
    # the 8th query starts ~0.35 s after the first; its clock is still full
    assert min(SlowOne.seen) > 0.5 - 0.04, SlowOne.seen
    assert (r.runtime >= 0.05).all() and (r.runtime < 0.5).all()


def test_batch_methods_run_in_sub_batches_with_their_own_clock(setting):
    data, model = setting
    SlowBatch.batches.clear()
    m = SlowBatch(time_limit=10.0).fit(model, data)
    X = data.X.iloc[:40]
    r = m.explain(X)
    groups = SlowBatch.batches
    assert len(groups) >= 2 and sum(len(g) for g in groups) == 40
    positions = [p for g in groups for p, _, _ in g]
    assert positions == list(range(40))
    for g in groups:
        assert len({s for _, s, _ in g}) == 1  # one start per sub-batch
        assert min(t for _, _, t in g) > 10.0 - 0.05
    starts = [g[0][1] for g in groups]
    assert starts == sorted(starts) and starts[-1] > starts[0]
    # runtime: the sub-batch's wall time shared by its queries
    assert np.allclose(r.runtime.iloc[: len(groups[0])], r.runtime.iloc[0])
    assert (r.runtime > 0).all()
