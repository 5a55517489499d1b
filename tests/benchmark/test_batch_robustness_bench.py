"""``benchmarks/batch_robustness.py`` on a few German Credit rows: every run gives the
answers and estimates of one ``explain`` call, and the table says so."""

from __future__ import annotations

import pandas as pd
from bench_scripts import load


def test_every_batch_run_matches_one_call(tmp_path, monkeypatch):
    common = load("_common")
    monkeypatch.setattr(common, "OUT", tmp_path)
    bench = load("batch_robustness")
    args = ["--dataset", "german_credit", "--model", "lr", "--rows", "6", "--chunk-size", "2"]
    bench.main([*args, "--robustness", "0.6"])
    table = pd.read_csv(tmp_path / "batch_robustness_german_credit_lr.csv")
    assert len(table) == 4 and (table["chunks"] == 3).all()
    assert table["same answers and estimates as one call"].all()
    assert table.loc[0, "time / one call"] == 1
