"""benchmarks/robust.py's verdict on known tables: for each peer point, the cheapest of
our settings at least as valid and covering at least as many rows, costs paired on the
rows both answer; the vouched view adds the rows said to reach p, the finer view reads
validity from the 20 more copies."""

from __future__ import annotations

import numpy as np
import pandas as pd
from bench_scripts import load

from counterfact.result._robustness import clopper_pearson

robust = load("robust")
FINER = "valid (20 more copies)"


def _point(who: str, setting: str, answered: int, valid: float, finer: float) -> dict:
    return {
        "dataset": "d",
        "model": "rf",
        "who": who,
        "setting": setting,
        "answered": answered,
        "valid (judges)": valid,
        FINER: finer,
    }


def _costs(who: str, setting: str, costs: dict[int, float]) -> pd.DataFrame:
    return pd.DataFrame(
        {"dataset": "d", "model": "rf", "who": who, "setting": setting, "query": list(costs)}
        | {"cost": list(costs.values())}
    )


def _tables():
    peer = (robust.FOREL, "alpha 0.2")
    table = pd.DataFrame(
        [
            _point(*peer, 4, 0.80, 0.70),
            _point("ours", "cheap", 5, 0.75, 0.75),  # too few judges agree; 20 copies do
            _point("ours", "dear", 5, 0.85, 0.60),  # valid enough on the judges, dearer
            _point(robust.SAID, "robustness 0.9", 4, 0.90, 0.65),  # the rows said to reach
            _point(robust.ELLICE, "epsilon 0.1", 0, float("nan"), float("nan")),
        ]
    )
    costs = pd.concat(
        [
            _costs(*peer, {1: 2.0, 2: 2.0, 3: 3.0, 4: 3.0}),
            _costs("ours", "cheap", {1: 1.0, 2: 1.0, 3: 2.0, 4: 2.0, 5: 9.0}),
            _costs("ours", "dear", {1: 4.0, 2: 4.0, 3: 4.0, 4: 4.0, 5: 1.0}),
            _costs(robust.SAID, "robustness 0.9", {1: 2.0, 2: 2.0, 3: 2.0, 9: 1.0}),
        ],
        ignore_index=True,
    )
    return table, costs


def _row(out: pd.DataFrame, peer: str) -> pd.Series:
    return out.set_index("peer").loc[peer]


def test_the_target_takes_the_cheapest_setting_at_least_as_valid_and_covering():
    table, costs = _tables()
    out = robust.verdict(table, costs)
    forel = _row(out, f"{robust.FOREL} alpha 0.2")
    # only "dear" is as valid on the judges: paired on rows 1-4, 4.0 against 2.5
    assert forel["ours at least as valid and covering"] == "dear"
    assert forel["rows both answer"] == 4
    assert (forel["our cost (paired)"], forel["peer cost (paired)"]) == (4.0, 2.5)
    assert not forel["target met"]
    # 4 rows both answer: too few to resample
    assert forel["cost difference 95 % CI"] == "too few rows (4)"
    # a peer point without answers has nothing to beat
    assert _row(out, f"{robust.ELLICE} epsilon 0.1")["target met"]


def test_the_vouched_view_counts_the_rows_said_to_reach():
    table, costs = _tables()
    out = robust.verdict(table, costs, ("ours", robust.SAID))
    forel = _row(out, f"{robust.FOREL} alpha 0.2")
    # 4 rows said to reach, 0.90 on the judges: paired on rows 1-3, 2.0 against 2.0
    assert forel["ours at least as valid and covering"] == "robustness 0.9 (rows said to reach)"
    assert forel["rows both answer"] == 3 and forel["target met"]


def test_the_finer_view_reads_validity_from_the_more_copies():
    table, costs = _tables()
    out = robust.verdict(table, costs, valid=FINER)
    forel = _row(out, f"{robust.FOREL} alpha 0.2")
    assert forel["peer valid"] == 0.70 and forel["our valid"] == 0.75
    assert forel["ours at least as valid and covering"] == "cheap"
    assert (forel["our cost (paired)"], forel["target met"]) == (1.5, True)


def test_the_difference_interval_is_paired_and_tells_ties_apart_from_gaps():
    same = np.array([1.0, 2.0, 3.0, 9.0])
    assert robust.difference_interval(same, same) == (0.0, 0.0)  # paired: no spread at all
    low, high = robust.difference_interval(same + 1.0, same)
    assert (low, high) == (1.0, 1.0)
    dear, cheap = np.array([4.0, 4.0, 4.0, 4.0, 4.0]), np.array([2.0, 2.0, 3.0, 3.0, 2.0])
    low, high = robust.difference_interval(dear, cheap)
    assert 1.0 <= low < high <= 2.0  # dearer on every row: the interval lies above 0
    rng = np.random.default_rng(1)
    noisy = rng.normal(5.0, 2.0, 30)
    low, high = robust.difference_interval(noisy, rng.normal(5.0, 2.0, 30))
    assert low < 0 < high  # two draws of one distribution: not told apart


def _run(answered: int, valid: float, said: int | str, where: float | str, seconds: float):
    return {
        "dataset": "d",
        "model": "rf",
        "who": "ours",
        "setting": "robustness 0.9",
        "rows": 10,
        "answered": answered,
        "coverage": answered / 10,
        "valid (judges)": valid,
        "valid 95 % CI": "",
        "median cost": 0.0,
        FINER: valid,
        "said to reach": said,
        "valid where said": where,
        "valid where said 95 % CI": "",
        "seconds per row": seconds,
    }


def test_runs_on_other_seeds_pool_their_rows_and_pair_costs_within_a_run():
    runs = [
        pd.DataFrame([_run(4, 0.75, 2, 1.0, 1.0)]),  # 15 of 20 pairs; 10 of 10 where said
        pd.DataFrame([_run(6, 0.9, 0, "-", 3.0)]),  # 27 of 30 pairs; none said to reach
    ]
    costs = [
        _costs("ours", "robustness 0.9", {1: 1.0, 2: 2.0, 3: 3.0, 4: 4.0}),
        _costs("ours", "robustness 0.9", {1: 5.0, 2: 6.0, 3: 7.0, 4: 8.0, 5: 9.0, 6: 10.0}),
    ]
    table, cost = robust.pooled(runs, costs, ["s0", "s1"])
    row = table.iloc[0]
    assert (row["rows"], row["answered"], row["coverage"]) == (20, 10, 0.5)
    assert row["valid (judges)"] == 0.84 and row[FINER] == 0.84  # 42 of 50 pairs
    assert row["valid 95 % CI"] == robust._share(42, 50)
    assert (row["said to reach"], row["valid where said"]) == (2, 1.0)
    assert row["valid where said 95 % CI"] == robust._share(10, 10)
    assert row["median cost"] == 5.5 and row["seconds per row"] == 2.0
    # the same query number in two runs is two rows: a peer answering run s0's rows only
    # is paired with s0's costs, not with s1's
    peer = _costs(robust.FOREL, "alpha 0.2", {1: 1.0, 2: 2.0}).assign(
        query=lambda c: "s0:" + c["query"].astype(str)
    )
    both = pd.concat([cost, peer], ignore_index=True)
    ours, theirs, n, _ = robust._paired(
        both, ("d", "rf"), ("ours", "robustness 0.9"), (robust.FOREL, "alpha 0.2")
    )
    assert (ours, theirs, n) == (1.5, 1.5, 2)


def _estimate(model: str, k: int, more: float, judges: float, query: int) -> dict:
    low, high = clopper_pearson(k, 8)
    return {
        "dataset": "d",
        "model": model,
        "setting": "robustness 0.9",
        "query": query,
        "accepted": k,
        "copies": 8,
        "low": low,
        "high": high,
        "reached": k == 8,
        "judges": judges,
        "more copies": more,
        "more copies n": 20,
    }


def test_the_estimate_check_groups_answers_by_held_out_copies_accepting():
    est = pd.DataFrame(
        [
            _estimate("rf", 8, 0.95, 1.0, 1),  # 19 of 20, inside [0.63, 1]
            _estimate("rf", 8, 0.40, 0.6, 2),  # 8 of 20, below 0.63: the interval misses
            _estimate("rf", 4, 0.50, 0.4, 3),
            _estimate("lr", 8, 1.00, 1.0, 1),
        ]
    )
    table = robust.calibration(est).set_index(["model", "held-out copies accepting"])
    assert list(table.index) == [
        ("lr", "8 of 8"),
        ("lr", "all"),
        ("rf", "4 of 8"),
        ("rf", "8 of 8"),
        ("rf", "all"),
    ]
    eight = table.loc[("rf", "8 of 8")]
    assert (eight["answers"], eight["estimate"]) == (2, 1.0)
    assert eight["estimate 95 % interval"] == "[0.63, 1.00]"
    assert eight["more copies accepting (mean)"] == 0.675
    assert eight["more copies 95 % CI"] == robust._share(27, 40)  # pairs pooled
    assert eight["judges accepting (mean)"] == 0.8
    assert eight["answers whose interval holds their more-copies share"] == 0.5
    assert table.loc[("rf", "4 of 8"), "answers whose interval holds their more-copies share"] == 1
    every = table.loc[("rf", "all")]  # 4, 8 and 8 of 8 copies; 2 of 3 intervals hold
    assert (every["answers"], every["estimate"]) == (3, round(5 / 6, 3))
    assert every["more copies accepting (mean)"] == round(1.85 / 3, 3)
    assert every["answers whose interval holds their more-copies share"] == 0.67
    # 8 of 8 against 8 of 20 disagree (Fisher p = 0.008); the others do not
    disagree = "answers whose two sets of copies disagree (Fisher, 5 %)"
    assert eight[disagree] == 0.5 and every[disagree] == round(1 / 3, 3)
    assert table.loc[("lr", "8 of 8"), disagree] == 0


def test_pooled_runs_keep_each_runs_estimates_apart(tmp_path, monkeypatch):
    monkeypatch.setattr(robust, "OUT", tmp_path)
    written = {}
    monkeypatch.setattr(robust, "_write_estimates", lambda name, est: written.update({name: est}))
    for run, more in (("s0", 0.9), ("s1", 0.5)):
        pd.DataFrame([_estimate("rf", 8, more, 1.0, 1)]).to_csv(
            tmp_path / f"{run}_estimates.csv", index=False
        )
    robust._merge_estimates("pooled", ["s0", "s1", "older"], pool=True)  # older: none kept
    est = written["pooled"]
    assert est["query"].tolist() == ["s0:1", "s1:1"]
    assert est["more copies"].tolist() == [0.9, 0.5]
    robust._merge_estimates("joined", ["s0"], pool=False)
    assert written["joined"]["query"].tolist() == [1]


def test_validity_is_compared_on_exact_pairs_not_on_three_decimals():
    """1,583 of 2,360 pairs (0.67076) is not "at least" 1,396 of 2,080 (0.67115), though
    both read 0.671: the verdict compares the pairs the CSV keeps."""
    peer = (robust.FOREL, "alpha 0.2")
    counts = robust.pair_columns(FINER)
    table = pd.DataFrame(
        [
            _point(*peer, 104, 0.8, 0.671) | dict(zip(counts, (1396, 2080), strict=True)),
            _point("ours", "cheap", 118, 0.8, 0.671) | dict(zip(counts, (1583, 2360), strict=True)),
            _point("ours", "dear", 118, 0.8, 0.697) | dict(zip(counts, (1645, 2360), strict=True)),
        ]
    )
    costs = pd.concat(
        [
            _costs(*peer, dict.fromkeys(range(104), 2.0)),
            _costs("ours", "cheap", dict.fromkeys(range(118), 1.0)),
            _costs("ours", "dear", dict.fromkeys(range(118), 2.0)),
        ],
        ignore_index=True,
    )
    out = robust.verdict(table, costs, valid=FINER)
    assert _row(out, f"{robust.FOREL} alpha 0.2")["ours at least as valid and covering"] == "dear"
    # without the counts (a table written before), each share is recovered from its rows
    assert robust.pair_counts(table.drop(columns=list(counts)).iloc[0], FINER) == (1396, 2080)


def test_pooling_sums_each_runs_exact_pairs():
    runs = [
        pd.DataFrame([_run(4, 0.75, 2, 1.0, 1.0)]),  # 15 of 20 pairs
        pd.DataFrame([_run(6, 0.9, 0, "-", 3.0)]),  # 27 of 30 pairs
    ]
    costs = [
        _costs("ours", "robustness 0.9", {1: 1.0, 2: 2.0, 3: 3.0, 4: 4.0}),
        _costs("ours", "robustness 0.9", {1: 5.0, 2: 6.0, 3: 7.0, 4: 8.0, 5: 9.0, 6: 10.0}),
    ]
    table, _ = robust.pooled(runs, costs, ["s0", "s1"])
    row = table.iloc[0]
    judges = "valid (judges)"
    assert tuple(row[c] for c in robust.pair_columns(judges)) == (42, 50)
    assert robust.exact_valid(row, judges) == 42 / 50
