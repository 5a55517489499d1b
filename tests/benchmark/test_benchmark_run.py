"""The benchmark runner end to end on a small spec, the report, and the CLI."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pandas as pd
import pytest

import counterfact as cf
from counterfact.cli import main

SPEC = {
    "name": "tiny",
    # the papers' actionability (every feature free): the bundled defaults leave the
    # nearest observed row little to offer
    "datasets": [{"name": "german_credit", "max_rows": 300, "actionability": "free"}],
    "models": ["lr", {"kind": "tree", "params": {"max_depth": 4}}],
    "methods": [
        {"name": "nearest", "label": "nearest-l1"},
        {"name": "nearest", "label": "nearest-l0", "params": {"norm": "l0"}},
        # fails when its cell runs (a target the model does not have), not when the spec
        # is read
        {"name": "nearest", "label": "broken", "explain": {"target": 7}},
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
    for col in (
        "dataset",
        "model",
        "method",
        "seed",
        "query",
        "rank",
        "features",
        "status",
        "time",
    ):
        assert col in table.columns
    assert any(c.startswith("metric_") for c in table.columns)
    # every answer has its effort (the default measure), the first one also as a metric
    answers = table[table["rank"] >= 0]
    assert len(answers) and answers["effort"].notna().all() and (answers["effort"] >= 1).all()
    firsts = answers[answers["rank"] == 0]
    assert (firsts["effort"] == firsts["metric_effort"]).all()
    summary = pd.read_csv(out / "summary.csv")
    assert summary.loc[summary["state"] == "done", "effort"].notna().all()
    broken = summary[summary["method"] == "broken"]
    assert (broken["state"] == "error").all() and broken["reason"].str.contains("Target").all()


def test_resume_skips_finished_cells_and_retries_failed_ones(results):
    out, _ = results
    cells = sorted((out / "cells").glob("*__s0.json"))
    status = {p: json.loads(p.read_text())["status"] for p in cells}
    assert set(status.values()) == {"done", "error"}  # the "broken" method's cells fail
    stamps = {p: p.stat().st_mtime_ns for p in cells}
    cf.benchmark.run(SPEC, out=out, verbose=False)
    after = {p: p.stat().st_mtime_ns for p in cells}
    assert all(after[p] == stamps[p] for p in cells if status[p] == "done")
    # a failed (or skipped) cell is run again: the missing piece may have been supplied since
    assert all(after[p] != stamps[p] for p in cells if status[p] == "error")


def test_unsupported_combination_is_skipped(tmp_path):
    spec = dict(
        SPEC,
        methods=["nearest"],
        models=["lr"],
        constraints={
            "causal": [
                {
                    "child": "duration_months",
                    "parents": ["credit_amount"],
                    "coef": {"credit_amount": 0.001},
                }
            ]
        },
    )
    spec["datasets"] = [{"name": "german_credit", "max_rows": 200}]
    try:
        cf.datasets.load("german_credit").schema["duration_months"]
        cf.datasets.load("german_credit").schema["credit_amount"]
    except cf.SchemaError:
        pytest.skip("feature names differ")
    cf.benchmark.run(spec, out=tmp_path, verbose=False)
    meta = json.loads(
        next(
            p for p in (tmp_path / "cells").glob("*.json") if not p.name.endswith(".result.json")
        ).read_text()
    )
    assert meta["status"] == "skipped" and "causal" in meta["reason"]


def test_report_html_and_md(results, tmp_path):
    out, _ = results
    html_path = cf.report.build(out, fmt="html", out=tmp_path / "r.html")
    text = html_path.read_text()
    assert (
        text.count("<img") >= 3
        and "Recourse cards" in text
        and "Friedman" in text
        and "Glossary" in text
    )
    assert "nearest-l1" in text and "german_credit / lr" in text
    md = cf.report.build(out, fmt="md", out=tmp_path / "r.md")
    assert "![" in md.read_text() and (tmp_path / "r_files").is_dir()


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.mark.skipif(
    _chromium() is None, reason="Chromium is not installed (Debian package 'chromium')"
)
def test_report_renders_in_headless_chromium(results, tmp_path):
    out, _ = results
    page = cf.report.build(out, fmt="html", out=tmp_path / "r.html")
    source = page.read_text()
    n_img, n_tables = source.count("<img"), source.count("<table")
    titles = re.findall(r"<h2>(.*?)</h2>", source)
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    dom = subprocess.run(
        [_chromium(), *flags, "--enable-logging=stderr", "--v=0", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    # the page's own load handler counted what the browser actually laid out and decoded
    body = re.search(r"<body([^>]*)>", dom.stdout)
    assert body is not None and 'data-rendered="yes"' in body.group(1), dom.stdout[:500]
    attrs = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', body.group(1)))
    assert int(attrs["images"]) == n_img >= 4  # key-metric bars, time distribution, trade-offs
    assert int(attrs["images-decoded"]) == n_img, "an embedded plot did not decode"
    assert int(attrs["tables"]) == n_tables
    for t in (
        "german_credit / lr",
        "german_credit / tree",
        "Skipped or failed cells",
        "Glossary",
        "Plots",
        "Statistical tests",
        "Recourse cards",
    ):
        assert t in titles and f"<h2>{t}</h2>" in dom.stdout
    assert "Uncaught" not in dom.stderr, dom.stderr[-2000:]
    shot = tmp_path / "shot.png"
    res = subprocess.run(
        [_chromium(), *flags, f"--screenshot={shot}", "--window-size=1200,2000", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0 and shot.stat().st_size > 10_000


def test_cli_benchmark_and_report(tmp_path, capsys):
    spec = tmp_path / "s.json"
    spec.write_text(json.dumps(dict(SPEC, methods=["nearest"], models=["lr"])))
    assert main(["benchmark", str(spec), "--out", str(tmp_path / "res")]) == 0
    assert main(["report", str(tmp_path / "res"), "--format", "html"]) == 0
    assert (tmp_path / "res" / "report.html").exists()


PAPERS = ("mace", "ceocl", "ufce", "mdpso", "l2c")


@pytest.mark.parametrize("paper", PAPERS)
def test_paper_specs_are_valid(paper):
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "papers" / f"{paper}.yaml"
    spec = cf.benchmark.load_spec(path)
    assert spec.name == paper and spec.reference and spec.datasets and spec.methods
    for m in spec.methods:  # every method's parameters pass its own validation
        cf.methods.get(m.name, **m.params)._validate_params()
    quick = cf.benchmark.load_spec(path, queries=2)
    assert quick.queries == min(2, spec.queries) and all(d.queries == 2 for d in quick.datasets)
    # the papers' tables keep each method's own objective
    assert spec.costs == "own"


def test_effort_is_the_same_scale_whatever_the_method_searched(tmp_path):
    """A cell run under costs 'own' records the same effort for its answers as one computed
    by hand with cf.Costs() on the training rows; a bad costs name is refused up front."""
    spec = {**SPEC, "methods": [SPEC["methods"][0]], "models": ["lr"], "costs": "own"}
    table = cf.benchmark.run(spec, out=tmp_path, verbose=False)
    meta = json.loads(next((tmp_path / "cells").glob("*lr*nearest*s0.json")).read_text())
    assert meta["costs"] == "own"
    data = cf.datasets.load("german_credit")
    row = table[table["rank"] == 0].iloc[0]
    spec_obj = cf.benchmark.load_spec(spec)
    from counterfact.benchmark._runner import _load_split

    train, test = _load_split(spec_obj.datasets[0], spec_obj, 0)
    bound = cf.Costs().bind(train.schema, train.X)
    answer = pd.DataFrame([json.loads(row["features"])])[data.schema.names]
    query = test.X.loc[row["query"]]
    assert bound.evaluate(query, answer)[0] == pytest.approx(row["effort"])
    with pytest.raises(cf.ValidationError, match="costs must be one of"):
        cf.benchmark.load_spec({**spec, "costs": "cheapest"})


def test_spec_dataset_options_split_actionability_models_and_queries(tmp_path):
    spec = {
        "name": "opts",
        "datasets": [
            {
                "name": "student_performance",
                "split": "school",
                "models": ["lr"],
                "queries": 2,
                "actionability": {"*": "free", "Medu": "immutable"},
            },
            {"name": "heloc", "models": ["lr"]},  # not bundled: skipped unless installed
        ],
        "models": ["lr", {"kind": "tree", "params": {"max_depth": 3}}],
        "methods": ["nearest"],
        "queries": 5,
        "query_class": "unfavourable",
    }
    table = cf.benchmark.run(spec, out=tmp_path, verbose=False, queries=4)
    assert set(table["model"]) == {"lr"}  # the dataset restricts its models
    # heloc runs too when COUNTERFACT_DATA_DIR points at it (4 queries: the override)
    assert table[table["dataset"] == "heloc"].drop_duplicates("query").shape[0] in (0, 4)
    table = table[table["dataset"] == "student_performance"]
    assert table.drop_duplicates("query").shape[0] == 2  # the dataset's own cap beats the override
    data = cf.datasets.load("student_performance")
    school = pd.Series(data.metadata["splits"]["school"]).reindex(data.frame.index)
    assert set(table["query"]) <= set(data.frame.index[school == "test"])
    cfs = [json.loads(f) for f in table["features"].dropna()]
    queries = data.frame.loc[table.dropna(subset=["features"])["query"]]
    assert cfs and all(c["Medu"] == q for c, q in zip(cfs, queries["Medu"], strict=True))
    summary = pd.read_csv(tmp_path / "summary.csv")
    heloc = summary[summary["dataset"] == "heloc"]
    try:
        cf.datasets.load("heloc")
    except cf.DatasetNotFoundError:
        assert (
            len(heloc) == 1
            and heloc["state"].iloc[0] == "skipped"
            and "heloc" in heloc["reason"].iloc[0].lower()
        )


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"actionability": "sometimes"}, "actionability"),
        ({"models": ["svm"]}, "unknown model ids"),
        ({"split": "no_split"}, "no predefined split"),
    ],
)
def test_spec_dataset_errors(tmp_path, bad, message):
    spec = {
        "datasets": [{"name": "german_credit", "max_rows": 100, **bad}],
        "models": ["lr"],
        "methods": ["nearest"],
        "queries": 1,
    }
    if "split" in bad:
        cf.benchmark.run(spec, out=tmp_path, verbose=False)
        meta = json.loads(
            next(
                p
                for p in (tmp_path / "cells").glob("*.json")
                if not p.name.endswith(".result.json")
            ).read_text()
        )
        assert meta["status"] == "error" and message in meta["reason"]
    else:
        with pytest.raises(cf.ValidationError, match=message):
            cf.benchmark.load_spec(spec)


@pytest.mark.parametrize(
    "model, method, message",
    [
        ({"kind": "lr"}, {"name": "mace", "params": {"norm": "l7"}}, r"method 'mace': .*'norm'"),
        ({"kind": "lr", "params": {"C": -1}}, "nearest", r"model kind 'lr': .*'C' parameter"),
        ({"kind": "rf", "params": {"n_estimators": 0}}, "nearest", r"'n_estimators' parameter"),
    ],
)
def test_a_bad_parameter_value_is_refused_before_anything_runs(tmp_path, model, method, message):
    """The whole spec is checked before any cell runs: a method's or a scikit-learn model's
    parameter values too (they failed when their cell was reached, with exit code 1)."""
    spec = {
        "datasets": [{"name": "german_credit", "max_rows": 100}],
        "models": [model],
        "methods": [method],
        "queries": 1,
    }
    with pytest.raises(cf.ValidationError, match=message):
        cf.benchmark.load_spec(spec)
    with pytest.raises(cf.ValidationError, match=message):
        cf.benchmark.run(spec, out=tmp_path, verbose=False)
    assert not (tmp_path / "cells").exists()


def test_feedback_gives_each_query_its_own_ranges(tmp_path):
    from counterfact.methods.ufce._feedback import feedback_levels

    spec = {
        "datasets": [{"name": "bupa_liver"}],
        "models": ["lr"],
        "methods": [{"name": "ufce", "params": {"variant": 1}}],
        "queries": 3,
        "n_counterfactuals": 2,
        "feedback": {"level": 1.0},
    }
    table = cf.benchmark.run(spec, out=tmp_path, verbose=False)
    data = cf.datasets.load("bupa_liver")
    train, _ = data.split(test_size=0.2, random_state=0)
    found = table.dropna(subset=["features"])
    assert len(found) > 0 and (found["metric_actionability"] == 1).all()
    for q, f in zip(found["query"], found["features"], strict=True):
        c = feedback_levels(train, data.frame.loc[q], 1.0)
        row = json.loads(f)
        for name, (lo, hi) in c.ranges.items():
            assert lo - 1e-9 <= row[name] <= hi + 1e-9 or row[name] == data.frame.loc[q, name]


def test_a_method_can_explain_a_stated_subset_of_each_cells_queries(tmp_path):
    """`queries:` on a method entry: that method explains a seeded subset of the
    queries the others get (an expensive peer on a stated sample); the summary
    shows its own count."""
    spec = {
        "datasets": [{"name": "german_credit", "max_rows": 300}],
        "models": ["lr"],
        "methods": [
            {"name": "nearest", "label": "all"},
            {"name": "nearest", "label": "few", "queries": 2},
        ],
        "queries": 5,
    }
    table = cf.benchmark.run(spec, out=tmp_path, verbose=False)
    per_method = table.drop_duplicates(["method", "query"]).groupby("method")["query"].apply(set)
    assert (
        len(per_method["all"]) == 5
        and len(per_method["few"]) == 2
        and per_method["few"] <= per_method["all"]
    )
    summary = pd.read_csv(tmp_path / "summary.csv").set_index("method")
    assert summary.loc["few", "queries"] == 2 and summary.loc["all", "queries"] == 5
    with pytest.raises(cf.ValidationError, match="method 'few' queries must be >= 1"):
        cf.benchmark.load_spec(
            {**spec, "methods": [{"name": "nearest", "label": "few", "queries": 0}]}
        )
