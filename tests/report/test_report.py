"""The benchmark report as a reviewer reads it: summary tables, folded full tables,
glossary, key-metric plots, tests only where they mean something, honest times,
cards with only the changes -- checked in a real headless Chromium."""

from __future__ import annotations

import json
import math
import os
import re

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from _live import CHROMIUM, LAUNCH_ARGS
from counterfact.benchmark._runner import collect
from counterfact.benchmark._stats import nemenyi_cd
from counterfact.constraints._bounds import changed
from counterfact.report import KEY_METRICS
from counterfact.report._stats_section import MIN_BLOCKS, stats_section
from counterfact.result import CounterfactualResult

pytest.importorskip("jinja2")
pytest.importorskip("matplotlib")

KEY_COLUMNS = {k.column for k in KEY_METRICS}

SPEC = {
    "name": "report-check",
    # the papers' actionability (every feature free): the bundled defaults leave the
    # nearest observed row little to offer
    "datasets": [{"name": "german_credit", "max_rows": 300, "actionability": "free"}],
    "models": ["lr", {"kind": "tree", "params": {"max_depth": 4}}],
    "methods": [
        {"name": "nearest", "label": "nearest-l1"},
        {"name": "nearest", "label": "nearest-l0", "params": {"norm": "l0"}},
        # a batch method (amortized time), kept small so that the test stays fast
        {
            "name": "mdpso",
            "params": {"swarm": {"n_particles": 10, "max_iter": 10}},
            "models": ["lr"],
        },
    ],
    "queries": 3,
    "n_counterfactuals": 2,
    "seeds": [0],
    # the two nearest variants differ by their own norm, so the run ranks by it
    "costs": "own",
}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    cf.benchmark.run(SPEC, out=out, verbose=False)
    page = cf.report.build(out, fmt="html", out=out / "report.html")
    return out, page


def test_summary_tables_glossary_and_folded_full_tables(results):
    _, page = results
    text = page.read_text()
    titles = re.findall(r"<h2>(.*?)</h2>", text)
    assert titles == [
        "german_credit / lr",
        "german_credit / tree",
        "Glossary",
        "Plots",
        "Statistical tests",
        "Recourse cards",
    ]
    summaries = re.findall(r'<div class="scroll summary-table">(.*?)</div>', text, flags=re.S)
    assert len(summaries) == 2
    for s in summaries:
        headers = [
            re.sub(r"<.*?>", "", h).strip()
            for h in re.findall(r"<th[^>]*>(.*?)</th>", s, flags=re.S)
        ]
        assert headers[: 1 + len(KEY_METRICS)] == ["method", *[k.label for k in KEY_METRICS]]
        assert headers.count("coverage \u2191") == 1
        assert "\u2193" in " ".join(headers)
    assert text.count("<details>") >= 3 and "All 4" in text  # "All 4x metrics for ..."
    for k in KEY_METRICS:  # every key metric has a formula and a source in the glossary
        assert k.formula.split(":")[0][:30] in text.replace("&#39;", "'")
    assert "Dem\u0161ar 2006" in text


def test_best_value_highlighted_and_rounded(results):
    out, page = results
    summary = pd.read_csv(out / "summary.csv")
    lr = summary[(summary["model"] == "lr") & (summary["state"] == "done")].set_index("method")
    text = page.read_text()
    block = re.search(r'<div class="scroll summary-table">(.*?)</div>', text, flags=re.S).group(1)
    best = min(lr["distance_l1"])
    best_method = lr["distance_l1"].idxmin()
    row = re.search(
        rf"<tr>\s*<td[^>]*>{re.escape(best_method)}</td>(.*?)</tr>", block, flags=re.S
    ).group(1)
    cells = re.findall(r'<td id="(T_\w+_row\d+_col(\d+))"[^>]*>(.*?)</td>', row)
    prox_col = 1 + [k.column for k in KEY_METRICS].index("distance_l1")
    cell_id, _, shown = next(c for c in cells if int(c[1]) == prox_col)
    assert f"#{cell_id}" in block and "font-weight: bold" in block  # Styler CSS for the best cell
    mean, _, half = shown.partition(" \u00b1 ")
    assert float(mean) == pytest.approx(best, abs=5e-4) and len(mean.split(".")[-1]) <= 4
    assert float(half) == pytest.approx(lr.loc[best_method, "ci95_distance_l1"], abs=5e-4)
    assert "0.30000000" not in text and "1.000000" not in text


def test_amortized_time_is_labelled_and_training_time_separate(results):
    out, page = results
    table = collect(out)
    kinds = table.drop_duplicates(["method"]).set_index("method")["time_kind"]
    assert kinds["mdpso"] == "amortized" and kinds["nearest-l1"] == "per query"
    summary = pd.read_csv(out / "summary.csv")
    u = summary[summary["method"] == "mdpso"].iloc[0]
    assert math.isnan(u["time_p90"]) and u["fit_seconds"] > 0  # no fake spread; training time kept
    text = page.read_text()
    assert "\u1d43" in text and "batch time / n" in text
    block = re.search(r'<div class="scroll summary-table">(.*?)</div>', text, flags=re.S).group(1)
    batch_row = re.search(r"<td[^>]*>mdpso</td>(.*?)</tr>", block, flags=re.S).group(1)
    assert "\u1d43" in batch_row
    n_row = re.search(r"<td[^>]*>nearest-l1</td>(.*?)</tr>", block, flags=re.S).group(1)
    assert "\u1d43" not in n_row


def test_markdown_report(results, tmp_path):
    out, _ = results
    md = cf.report.build(out, fmt="md", out=tmp_path / "r.md").read_text()
    assert "| method | coverage \u2191 |" in md and "<details>" in md and "## Glossary" in md
    assert "(1/\\|Q\\|)" in md  # pipes escaped, not replaced
    figures = re.findall(r"!\[[^\]]*\]\((r_files/[^)]+)\)", md)
    assert figures and all((tmp_path / f).exists() for f in figures)


def _synthetic(n_blocks: int, methods: dict[str, float], seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for b in range(n_blocks):
        for m, shift in methods.items():
            for q in range(4):
                v = shift + 0.1 * rng.random()
                rows.append(
                    {
                        "dataset": f"d{b}",
                        "model": "lr",
                        "method": m,
                        "seed": 0,
                        "query": q,
                        "coverage": 1.0,
                        "validity": 1.0,
                        "distance_l1": v,
                        "sparsity": v / 2,
                        "time": 0.01 + v,
                    }
                )
    return pd.DataFrame(rows)


def test_statistical_tests_only_where_they_mean_something():
    from scipy import stats

    few = stats_section(_synthetic(MIN_BLOCKS - 1, {"a": 0.1, "b": 0.5, "c": 0.9}), "html")
    assert few["table"] == "" and f"N = {MIN_BLOCKS - 1} complete blocks" in few["untested"]
    two = stats_section(_synthetic(8, {"a": 0.1, "b": 0.5}), "html")
    assert two["table"] == "" and "2 methods" in two["untested"]
    pq = _synthetic(7, {"a": 0.1, "b": 0.5, "c": 0.9})
    enough = stats_section(pq, "html")
    # validity and coverage tie everywhere: not tested, and said so
    assert "validity" in enough["untested"] and "ties in every block" in enough["untested"]
    assert "Friedman" in enough["caveat"] and "N below" in enough["caveat"]
    tested = re.findall(
        r"<td[^>]*>(proximity|sparsity|time per query \(s\)) [\u2191\u2193]</td>", enough["table"]
    )
    assert tested == ["proximity", "sparsity", "time per query (s)"]
    means = pq.groupby(["dataset", "model", "method"])["distance_l1"].mean().unstack("method")
    ref = stats.friedmanchisquare(*(means[c] for c in means.columns))
    assert f"{ref.pvalue:.3g}" in enough["table"] and ">7<" in enough["table"]
    cd = nemenyi_cd(3, 7)
    assert f"{cd:.3g}" in enough["table"]
    assert all(set(f.metrics) <= KEY_COLUMNS for f in enough["figures"]) and enough["figures"]


@pytest.mark.skipif(
    not os.path.exists(CHROMIUM), reason="Chromium is not installed at /usr/bin/chromium"
)
def test_report_in_headless_chromium(results, tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api")
    out, page_path = results
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(page_path.as_uri())
            page.wait_for_function(
                "document.body.getAttribute('data-rendered') === 'yes'", timeout=30_000
            )
            page.screenshot(path=str(tmp_path / "report_top.png"))
            assert not errors
            n_img = page.evaluate("document.images.length")
            assert n_img >= len(KEY_METRICS) and page.evaluate(
                "document.body.dataset.imagesDecoded"
            ) == str(n_img)
            # open every folded table, then measure
            page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
            widths = page.evaluate(
                """() => {
                  const vw = window.innerWidth, bad = [];
                  for (const t of document.querySelectorAll('table')) {
                    let box = t.parentElement, scroller = null;
                    while (box && box !== document.body) {
                      const o = getComputedStyle(box).overflowX;
                      if (o === 'auto' || o === 'scroll') { scroller = box; break; }
                      box = box.parentElement;
                    }
                    const r = t.getBoundingClientRect();
                    const fits = r.right <= vw + 1;
                    const scrolls = scroller !== null
                                    && scroller.getBoundingClientRect().right <= vw + 1
                                    && scroller.clientWidth < vw;
                    if (!fits && !scrolls) bad.push(t.outerHTML.slice(0, 120));
                  }
                  return {page: document.documentElement.scrollWidth, vw: vw, bad: bad,
                          tables: document.querySelectorAll('table').length};
                }"""
            )
            assert widths["tables"] >= 5
            assert widths["page"] <= widths["vw"], "the page itself scrolls sideways"
            assert widths["bad"] == [], widths["bad"]
            # every plotted metric is a key metric
            plotted = page.evaluate(
                "[...document.querySelectorAll('figure')].map(f => f.dataset.metrics)"
            )
            assert plotted and all(set(m.split(",")) <= KEY_COLUMNS for m in plotted), plotted
            # cards list only changed features, at resolution
            answers = page.evaluate(
                """[...document.querySelectorAll('.card li')].map(li => ({
                    cell: li.closest('.card').dataset.cell,
                    query: li.closest('.card').dataset.query,
                    rank: li.dataset.rank,
                    changes: [...li.querySelectorAll('b.feature')].map(b => [b.textContent,
                        b.nextElementSibling.textContent,
                        b.nextElementSibling.nextElementSibling.textContent])}))"""
            )
            assert answers
            loaded: dict[str, CounterfactualResult] = {}
            for a in answers:
                if a["cell"] not in loaded:
                    loaded[a["cell"]] = CounterfactualResult.from_json(
                        (out / "cells" / f"{a['cell']}.result.json").read_text()
                    )
                r = loaded[a["cell"]]
                q = next(i for i in r.queries.index if str(i) == a["query"])
                x, c = r.queries.loc[q], r.counterfactuals.loc[(q, int(a["rank"]))]
                truly = {f.name for f in r.schema if changed(f, x[f.name], c[f.name])}
                listed = [f for f, _, _ in a["changes"]]
                assert set(listed) == truly and len(listed) == len(truly)
                for f, before, after in a["changes"]:
                    assert before != after
                    feat = r.schema[f]
                    if feat.is_numeric and feat.resolution is not None and feat.resolution >= 1:
                        assert (
                            "." not in before and "." not in after
                        )  # at resolution, no float noise
            page.set_viewport_size({"width": 1400, "height": 1000})
            page.screenshot(path=str(tmp_path / "report_full.png"), full_page=True)
        finally:
            browser.close()
    assert (tmp_path / "report_full.png").stat().st_size > 50_000
    assert json.loads((out / "spec.json").read_text())["name"] == "report-check"


def test_time_plot_keeps_a_lone_amortized_diamond_inside_the_axes(monkeypatch):
    pytest.importorskip("matplotlib")
    from counterfact.report import _plots

    figs = []
    monkeypatch.setattr(_plots, "_png", lambda fig: figs.append(fig) or b"")
    per_query = pd.DataFrame(
        {"method": ["A"] * 3 + ["B"] * 3, "time": [0.01, 0.02, 0.015, 3.2, 3.2, 3.2]}
    )
    _plots.time_distribution(per_query, amortized={"B"})
    low, high = figs[0].axes[0].get_ylim()
    assert low < 0.01 and high > 3.2 * 1.5


def test_intro_names_the_run_size_of_a_full_protocol():
    from counterfact.report._build import _intro

    text = _intro(
        {"queries": None, "n_counterfactuals": 1, "seeds": [0], "time_limit": 60}, pd.DataFrame()
    )
    assert "Every eligible test row per dataset" in text and "None" not in text
    assert "1 counterfactual per query" in text
    text = _intro(
        {"queries": 25, "n_counterfactuals": 3, "seeds": [0, 1], "time_limit": None}, pd.DataFrame()
    )
    assert (
        "Up to 25 queries per dataset, 3 counterfactuals per query" in text
        and "no time limit" in text
    )


def test_summary_intervals_match_scipy_on_the_per_query_rows(results):
    """Coverage carries scipy's Wilson interval, each mean the normal 95 % half-width
    of the per-query values; both are shown in the summary table."""
    from scipy import stats

    out, page = results
    table = collect(out)
    summary = pd.read_csv(out / "summary.csv")
    done = summary[summary["state"] == "done"]
    per_query = table.drop_duplicates(["dataset", "model", "method", "seed", "query"])
    for _, row in done.iterrows():
        g = per_query[
            (per_query["dataset"] == row["dataset"])
            & (per_query["model"] == row["model"])
            & (per_query["method"] == row["method"])
        ]
        k, n = int((g["rank"] >= 0).sum()), len(g)
        ci = stats.binomtest(k, n).proportion_ci(method="wilson")
        assert row["coverage_ci_low"] == pytest.approx(ci.low) and row[
            "coverage_ci_high"
        ] == pytest.approx(ci.high)
        d = g["metric_distance_l1"].dropna()
        if len(d) >= 2:
            assert row["ci95_distance_l1"] == pytest.approx(stats.norm.ppf(0.975) * stats.sem(d))
    text = page.read_text()
    block = re.search(r'<div class="scroll summary-table">(.*?)</div>', text, flags=re.S).group(1)
    assert re.search(r">\d\.\d+ \[\d\.\d+, \d\.\d+\]<", block)  # coverage [low, high]
    full = re.findall(r"<details.*?</details>", text, flags=re.S)
    assert full and not any(
        "ci95_" in f or "coverage_ci_" in f for f in full
    )  # the full tables stay as they were


def test_a_value_with_an_interval_has_the_interval_decimals():
    """A column of whole numbers (coverage 1 everywhere) still reads ``1.00 [0.93, 1.00]``
    and ``1.00 ± 0.00``, never ``1 [0.93, 1.00]``."""
    from counterfact.report._tables import summary_table

    block = pd.DataFrame(
        {
            "method": ["A", "B"],
            "coverage": [1.0, 1.0],
            "coverage_ci_low": [0.929, 0.929],
            "coverage_ci_high": [1.0, 1.0],
            "validity": [1.0, 1.0],
            "ci95_validity": [0.0, 0.0],
            "queries": [50, 50],
        }
    )
    md = summary_table(block, "md")
    assert "1.00 [0.93, 1.00]" in md and "1.00 ± 0.00" in md
    assert "1 [" not in md and "| 1 ±" not in md
