"""The benchmark runner end to end on a small spec, the report, and the CLI."""

from __future__ import annotations

import json
import shutil
import subprocess

import pandas as pd
import pytest

import counterfact as cf
from counterfact.cli import main

SPEC = {
    "name": "tiny",
    "datasets": [{"name": "german_credit", "max_rows": 300}],
    "models": ["lr", {"kind": "tree", "params": {"max_depth": 4}}],
    "methods": [
        {"name": "nearest", "label": "nearest-l1"},
        {"name": "nearest", "label": "nearest-l0", "params": {"norm": "l0"}},
        {"name": "nearest", "label": "broken", "params": {"norm": "l7"}},
    ],
    "queries": 3,
    "n_counterfactuals": 2,
    "seeds": [0],
}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    table = cf.benchmark.run(SPEC, out=out, verbose=False)
    return out, table


def test_run_writes_tables(results):
    out, table = results
    assert (out / "results.csv").exists() and (out / "summary.csv").exists()
    assert set(table["method"]) == {"nearest-l1", "nearest-l0"}
    assert set(table["model"]) == {"lr", "tree"}
    for col in ("dataset", "model", "method", "seed", "query", "rank", "features", "status", "time"):
        assert col in table.columns
    assert any(c.startswith("metric_") for c in table.columns)
    summary = pd.read_csv(out / "summary.csv")
    broken = summary[summary["method"] == "broken"]
    assert (broken["state"] == "error").all() and broken["reason"].str.contains("norm").all()


def test_resume_skips_finished_cells(results):
    out, _ = results
    cells = sorted((out / "cells").glob("*__s0.json"))
    stamps = {p: p.stat().st_mtime_ns for p in cells}
    cf.benchmark.run(SPEC, out=out, verbose=False)
    assert {p: p.stat().st_mtime_ns for p in cells} == stamps


def test_unsupported_combination_is_skipped(tmp_path):
    spec = dict(SPEC, methods=["nearest"], models=["lr"], constraints={"causal": [{"child": "duration_months", "parents": ["credit_amount"], "coef": {"credit_amount": 0.001}}]})
    spec["datasets"] = [{"name": "german_credit", "max_rows": 200}]
    try:
        cf.datasets.load("german_credit").schema["duration_months"]
        cf.datasets.load("german_credit").schema["credit_amount"]
    except cf.SchemaError:
        pytest.skip("feature names differ")
    cf.benchmark.run(spec, out=tmp_path, verbose=False)
    meta = json.loads(next(p for p in (tmp_path / "cells").glob("*.json") if not p.name.endswith(".result.json")).read_text())
    assert meta["status"] == "skipped" and "causal" in meta["reason"]


def test_report_html_and_md(results, tmp_path):
    out, _ = results
    html_path = cf.report.build(out, fmt="html", out=tmp_path / "r.html")
    text = html_path.read_text()
    assert text.count("<img") >= 3 and "Recourse cards" in text and "Friedman" in text
    assert "nearest-l1" in text and "german_credit / lr" in text
    md = cf.report.build(out, fmt="md", out=tmp_path / "r.md")
    assert "![" in md.read_text() and (tmp_path / "r_files").is_dir()


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.mark.skipif(_chromium() is None, reason="Chromium is not installed (Debian package 'chromium')")
def test_report_renders_in_headless_chromium(results, tmp_path):
    out, _ = results
    page = cf.report.build(out, fmt="html", out=tmp_path / "r.html")
    shot = tmp_path / "shot.png"
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([_chromium(), *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert dom.stdout.count("<img") >= 3 and "Recourse cards" in dom.stdout
    res = subprocess.run([_chromium(), *flags, f"--screenshot={shot}", "--window-size=1200,2000", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and shot.stat().st_size > 10_000


def test_cli_benchmark_and_report(tmp_path, capsys):
    spec = tmp_path / "s.json"
    spec.write_text(json.dumps(dict(SPEC, methods=["nearest"], models=["lr"])))
    assert main(["benchmark", str(spec), "--out", str(tmp_path / "res")]) == 0
    assert main(["report", str(tmp_path / "res"), "--format", "html"]) == 0
    assert (tmp_path / "res" / "report.html").exists()
