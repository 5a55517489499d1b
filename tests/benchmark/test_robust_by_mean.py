"""benchmarks/robust_by_mean.py's choice on known candidates: per call, the cheapest
answers whose mean prediction reaches the level, else each row's most robust answer;
each run is its own call."""

from __future__ import annotations

import pandas as pd
from bench_scripts import load

by_mean = load("robust_by_mean")


def _cands(run: str, rows: dict[str, list[tuple[float, float]]]) -> pd.DataFrame:
    """(cost, predicted) options per query; the judges and more copies echo the prediction."""
    return pd.DataFrame(
        [
            {
                "run": run,
                "dataset": "d",
                "model": "rf",
                "query": q,
                "setting": f"s{i}",
                "cost": c,
                "predicted": p,
                "judges": p,
                "more": p,
            }
            for q, options in rows.items()
            for i, (c, p) in enumerate(options)
        ]
    )


#: a: 1 at 0.5 or 2 at 0.9; b: 1 at 0.6 or 5 at 0.95
TWO = {"a": [(1.0, 0.5), (2.0, 0.9)], "b": [(1.0, 0.6), (5.0, 0.95)]}


def _chosen(frame: pd.DataFrame) -> dict[str, float]:
    return dict(zip(frame["query"], frame["cost"], strict=True))


def test_the_mean_is_reached_at_least_cost_by_brute_force():
    cands = _cands("r", TWO)
    # every pair of options, the cheapest whose mean prediction reaches p
    pairs = [(ca + cb, (pa + pb) / 2, ca, cb) for ca, pa in TWO["a"] for cb, pb in TWO["b"]]
    for p in (0.5, 0.55, 0.7, 0.75, 0.8, 0.9, 0.925):
        total, _, ca, cb = min(x for x in pairs if x[1] >= p - 1e-12)
        chosen = by_mean.allocate(cands, p)
        assert _chosen(chosen) == {"a": ca, "b": cb}, p
        assert chosen["predicted"].mean() >= p - 1e-12
        assert chosen["cost"].sum() == total


def test_a_mean_out_of_reach_keeps_each_rows_most_robust_answer():
    chosen = by_mean.allocate(_cands("r", TWO), 0.99)
    assert _chosen(chosen) == {"a": 2.0, "b": 5.0}
    assert chosen["predicted"].mean() < 0.99


def test_each_run_reaches_the_mean_on_its_own():
    # run s is robust for free; it must not pay for run r's rows
    cands = pd.concat([_cands("r", TWO), _cands("s", {"c": [(1.0, 1.0)], "d": [(1.0, 1.0)]})])
    points, costs = by_mean.study(cands, rows=4)
    at = points.set_index("setting").loc["mean 0.8"]
    assert at["answered"] == 4 and at["who"] == by_mean.BY_MEAN
    mine = costs[costs["setting"] == "mean 0.8"].set_index("query")["cost"]
    assert mine.to_dict() == {"r:a": 2.0, "r:b": 5.0, "s:c": 1.0, "s:d": 1.0}
    assert at["valid (judges)"] == round((0.9 + 0.95 + 1.0 + 1.0) / 4, 3)
