"""The scripts that turn a paper run into the tables of docs/papers/*.md, on a
tiny real run: their numbers are recomputed here from the long results table."""

from __future__ import annotations

import numpy as np
import pytest
from bench_scripts import load
from scipy import stats

import counterfact as cf
from counterfact.benchmark._runner import collect


@pytest.fixture(scope="module")
def mace_run(tmp_path_factory):
    pytest.importorskip("z3")
    out = tmp_path_factory.mktemp("mace_run")
    spec = {
        "name": "mace-tiny",
        "datasets": [{"name": "compas", "max_rows": 800}],
        "models": ["lr"],
        "methods": [
            {"name": "mace", "label": "MACE-l1", "params": {"norm": "l1", "rel_gap": 0.001}},
            {"name": "nearest", "label": "MO-l1", "params": {"norm": "l1"}},
        ],
        "queries": 6,
        "n_counterfactuals": 1,
        "query_class": "unfavourable",
        "seeds": [0],
        "time_limit": 30,
    }
    cf.benchmark.run(spec, out=out, verbose=False)
    return out


def test_mace_paper_table_recomputes_coverage_and_improvement(mace_run):
    mod = load("mace_paper_table")
    df = mod.table(mace_run)
    assert list(df["norm"]) == ["l1"] and int(df["queries"].iloc[0]) == 6
    long = collect(mace_run).drop_duplicates(["method", "query"])
    mace = long[long["method"] == "MACE-l1"].set_index("query")
    mo = long[long["method"] == "MO-l1"].set_index("query")
    both = mace.index[mace["metric_found"] > 0].intersection(mo.index[mo["metric_found"] > 0])
    imp = 100 * (1 - mace.loc[both, "metric_distance_l1"] / mo.loc[both, "metric_distance_l1"])
    shown = df["improvement vs MO %"].iloc[0]
    assert shown.startswith(f"{imp.mean():.1f}")
    if len(both) > 1:
        assert shown.endswith(
            f"± {stats.norm.ppf(0.975) * imp.std(ddof=1) / np.sqrt(len(both)):.1f}"
        )
    k = int((mace["metric_found"] > 0).sum())
    ci = stats.binomtest(k, 6).proportion_ci(method="wilson")
    assert df["MACE coverage [95% CI]"].iloc[0] == f"{k / 6:.2f} [{ci.low:.2f}, {ci.high:.2f}]"
    # MACE is exact: never farther than the nearest observed row
    assert int(df["MACE <= MO"].iloc[0]) == int(df["n both"].iloc[0]) == len(both)
    assert int(df["optimal"].iloc[0]) + int(df["at limit"].iloc[0]) == k


def test_paper_table_prints_intervals_and_the_run_size(mace_run):
    mod = load("paper_table")
    size, text = mod.table(mace_run, ["coverage", "distance_l1", "time_median"])
    assert size.startswith("2 finished cells (0 skipped or failed), seeds [0]")
    rows = [line for line in text.splitlines()[2:]]
    assert len(rows) == 2 and all("[" in r for r in rows)  # coverage with its interval
    assert "±" in rows[0]  # MACE's distance over more than one answer: mean ± half-width


def test_ufce_paper_table_counts_per_fold(tmp_path):
    spec = {
        "name": "ufce-tiny",
        "datasets": ["graduate_admission"],
        "models": [{"kind": "lr", "label": "lr"}],
        "methods": [{"name": "ufce", "label": "UFCE1", "params": {"variant": 1}}, "nearest"],
        "feedback": {"level": 0.5, "two_sided": False},
        "queries": 8,
        "n_counterfactuals": 3,
        "query_class": "negative",
        "seeds": [0],
        "folds": 2,
        "time_limit": 30,
    }
    cf.benchmark.run(spec, out=tmp_path, verbose=False)
    df = load("ufce_paper_table").table(tmp_path)
    long = collect(tmp_path).drop_duplicates(["method", "fold", "query"])
    for _, row in df.iterrows():
        g = long[long["method"] == row["method"]]
        found = g["metric_found"].fillna(0) > 0
        assert row["queries"] == len(g) == 16
        assert row["per fold"] == "/".join(str(int(v)) for v in found.groupby(g["fold"]).sum())
        k = int(found.sum())
        ci = stats.binomtest(k, 16).proportion_ci(method="wilson")
        assert (
            row["with a counterfactual, per 50 [95% CI]"]
            == f"{50 * k / 16:.1f} [{50 * ci.low:.1f}, {50 * ci.high:.1f}]"
        )
        if k:
            assert row["changes"].startswith(f"{g.loc[found, 'metric_changes'].mean():.3g}")
