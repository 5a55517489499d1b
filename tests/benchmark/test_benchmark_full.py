"""The papers' protocols at the papers' size: the ``full:`` section of a spec,
k-fold cells, chunked cells that resume part-way, and ``benchmark --full``."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import counterfact as cf
from counterfact.cli import main

PAPERS = Path(__file__).resolve().parents[2] / "benchmarks" / "papers"

# (queries, seeds, folds) of each paper's protocol (None: every test row)
FULL_SIZES = {
    "mace": (500, (0,), None),
    "ufce": (50, (0,), 5),
    "l2c": (None, (0, 1, 2, 3, 4), None),
    "ceocl": (30, (0,), None),
    "mdpso": (5, (0,), None),
}


@pytest.mark.parametrize("paper", sorted(FULL_SIZES))
def test_full_resolves_to_the_papers_size(paper):
    queries, seeds, folds = FULL_SIZES[paper]
    default = cf.benchmark.load_spec(PAPERS / f"{paper}.yaml")
    full = cf.benchmark.load_spec(PAPERS / f"{paper}.yaml", full=True)
    assert (full.queries, full.seeds, full.folds, full.protocol) == (queries, seeds, folds, "full")
    assert default.protocol == "default" and default.full is not None
    # the default stays the quick run; only the sizes change
    assert default.queries is not None and (queries is None or default.queries <= queries)
    assert (full.datasets, full.models, full.methods) == (
        default.datasets,
        default.models,
        default.methods,
    )
    # a cap still applies on top of the full protocol
    capped = cf.benchmark.load_spec(PAPERS / f"{paper}.yaml", full=True, queries=3)
    assert capped.queries == 3 and capped.seeds == seeds and capped.folds == folds
    # resolving a resolved spec again changes nothing
    assert cf.benchmark.load_spec(full, full=True) == full


def test_cells_of_the_full_protocol():
    from counterfact.benchmark._outcome import _spec_cells

    ufce = cf.benchmark.load_spec(PAPERS / "ufce.yaml", full=True)
    cells = _spec_cells(ufce)
    per_fold = len(ufce.datasets) * len(ufce.models) * len(ufce.methods)
    assert len(cells) == 5 * per_fold and {c.rsplit("__", 1)[1] for c in cells} == {
        f"f{i}" for i in range(5)
    }
    l2c = cf.benchmark.load_spec(PAPERS / "l2c.yaml", full=True)
    assert {c.split("__")[3] for c in _spec_cells(l2c)} == {f"s{i}" for i in range(5)}


BASE = {
    "datasets": [{"name": "german_credit", "max_rows": 200}],
    "models": ["lr"],
    "methods": ["nearest"],
    "queries": 2,
}


@pytest.mark.parametrize(
    "full, message",
    [
        ({"querys": 10}, r"unknown full keys \['querys'\]"),
        ({"queries": 0}, "full.queries"),
        ({"queries": "many"}, "full.queries"),
        ({"folds": 1}, "folds must be an integer >= 2"),
        ({"seeds": []}, "at least one seed"),
        ({"time_limit": -5}, "time_limit must be a positive"),
        ({"chunk_size": 0}, "full.chunk_size"),
        ({"datasets": {"adult": {"queries": 5}}}, "unknown dataset ids"),
        ({"datasets": {"german_credit": {"rows": 5}}}, "unknown full.datasets"),
        ({"datasets": ["german_credit"]}, "full.datasets must map"),
        ({}, "non-empty mapping"),
        ("500", "non-empty mapping"),
    ],
)
def test_malformed_full_section_is_rejected_before_running(full, message, tmp_path):
    with pytest.raises(cf.ValidationError, match=message):
        cf.benchmark.load_spec({**BASE, "full": full})
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({**BASE, "full": full}))
    assert main(["benchmark", str(path), "--out", str(tmp_path / "res"), "--full"]) == 2
    assert not (tmp_path / "res" / "cells").exists()  # nothing ran


def test_full_needs_a_full_section_and_folds_need_a_free_split(tmp_path):
    with pytest.raises(cf.ValidationError, match="no 'full:' section"):
        cf.benchmark.load_spec(BASE, full=True)
    cf.benchmark.load_spec(BASE)  # without --full it is fine
    fixed = {
        **BASE,
        "datasets": [{"name": "student_performance", "split": "school"}],
        "full": {"folds": 3},
    }
    cf.benchmark.load_spec(fixed)
    with pytest.raises(cf.ValidationError, match="predefined split"):
        cf.benchmark.load_spec(fixed, full=True)
    with pytest.raises(cf.ValidationError, match="queries"):
        cf.benchmark.load_spec({**BASE, "queries": "some"})


def test_tiny_full_run_with_folds_chunks_and_resume(tmp_path):
    spec = {
        **BASE,
        "datasets": [{"name": "bupa_liver", "max_rows": 100}],
        "methods": [{"name": "ufce", "params": {"variant": 1}}],
        "full": {
            "queries": 5,
            "folds": 2,
            "chunk_size": 2,
            "datasets": {"bupa_liver": {"max_rows": 240}},
        },
    }
    out = tmp_path / "full"
    table = cf.benchmark.run(spec, out=out, verbose=False, full=True)
    assert sorted(table["fold"].unique()) == [0, 1]
    per_fold = table.drop_duplicates(["fold", "query"]).groupby("fold").size()
    assert (per_fold == 5).all()
    # the folds are disjoint test sets of the same 240 rows (the full section's row cap)
    q0, q1 = (set(table.loc[table["fold"] == f, "query"]) for f in (0, 1))
    assert not q0 & q1
    written = json.loads((out / "spec.json").read_text())
    assert written["protocol"] == "full" and written["folds"] == 2
    from counterfact.benchmark._runner import _load_split

    resolved = cf.benchmark.load_spec(spec, full=True)
    train, test = _load_split(resolved.datasets[0], resolved, 0, 1)
    assert (
        len(train) + len(test) == 240 and abs(len(test) - 120) <= 1 and q1 <= set(test.frame.index)
    )
    cell = "bupa_liver__lr__ufce__s0__f1"
    chunks = sorted((out / "cells" / f"{cell}.chunks").glob("chunk-*.json"))
    assert len(chunks) == 3  # 5 queries in chunks of 2
    before = pd.read_csv(out / "results.csv")

    # an interrupted cell: its record and last chunk are gone, the first chunks remain
    (out / "cells" / f"{cell}.json").unlink()
    (out / "cells" / f"{cell}.result.json").unlink()
    chunks[-1].unlink()
    stamps = {p: p.stat().st_mtime_ns for p in chunks[:-1]}
    cf.benchmark.run(spec, out=out, verbose=False, full=True)
    assert {p: p.stat().st_mtime_ns for p in chunks[:-1]} == stamps  # reused, not recomputed
    assert chunks[-1].exists()
    meta = json.loads((out / "cells" / f"{cell}.json").read_text())
    assert meta["status"] == "done" and meta["resumed_chunks"] == 2
    after = pd.read_csv(out / "results.csv")
    cols = ["fold", "query", "rank", "features", "status"]
    pd.testing.assert_frame_equal(before[cols], after[cols])

    # a chunk left by another run (other queries) is not trusted: it is explained again
    (out / "cells" / f"{cell}.json").unlink()
    chunks[0].write_text(chunks[1].read_text())
    cf.benchmark.run(spec, out=out, verbose=False, full=True)
    pd.testing.assert_frame_equal(before[cols], pd.read_csv(out / "results.csv")[cols])

    # chunked and whole cells give the same counterfactuals
    whole = cf.benchmark.run(
        {**spec, "full": {**spec["full"], "chunk_size": 100}},
        out=tmp_path / "whole",
        verbose=False,
        full=True,
    )
    pd.testing.assert_frame_equal(
        before[cols].reset_index(drop=True),
        whole[cols].astype(before[cols].dtypes.to_dict()).reset_index(drop=True),
    )


def test_cli_full_with_a_cap(tmp_path, capsys):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({**BASE, "full": {"queries": 50, "seeds": [0, 1]}}))
    out = tmp_path / "res"
    assert main(["benchmark", str(path), "--out", str(out), "--full", "--queries", "3", "-q"]) == 0
    table = pd.read_csv(out / "results.csv")
    assert sorted(table["seed"].unique()) == [0, 1]
    assert (table.drop_duplicates(["seed", "query"]).groupby("seed").size() == 3).all()
    assert main(["benchmark", str(path), "--out", str(tmp_path / "quick"), "-q"]) == 0
    quick = pd.read_csv(tmp_path / "quick" / "results.csv")
    assert sorted(quick["seed"].unique()) == [0] and quick["query"].nunique() == 2
