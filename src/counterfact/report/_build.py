"""Render a benchmark results folder as a self-contained HTML or Markdown report."""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import ValidationError
from . import _plots

__all__ = ["build", "higher_is_better"]

_HIGHER = ("validity", "coverage", "diversity", "plausib", "feasib", "actionab", "harmonic", "score", "proximity")
_LOWER = ("distance", "sparsity", "l0", "l1", "linf", "gower", "time", "violation", "changes", "jac", "euc", "lof")


def higher_is_better(metric: str) -> bool | None:
    """Direction of a metric judged from its name (None when unknown)."""
    m = metric.lower()
    if any(k in m for k in _LOWER):
        return False
    if any(k in m for k in _HIGHER):
        return True
    return None


def _img_html(png: bytes, alt: str) -> str:
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode()}"/>'


def _per_query(table: pd.DataFrame) -> pd.DataFrame:
    pq = table.drop_duplicates(["dataset", "model", "method", "seed", "query"]).copy()
    pq.columns = [c.removeprefix("metric_") for c in pq.columns]
    return pq


def _metric_columns(pq: pd.DataFrame) -> list[str]:
    skip = {"seed", "query", "rank", "time"}
    return [c for c in pq.columns if c not in skip and pd.api.types.is_numeric_dtype(pq[c]) and pq[c].notna().any()]


def _cards(out: Path, limit: int) -> list[dict[str, Any]]:
    from ..result import CounterfactualResult

    cards = []
    for meta_path in sorted((out / "cells").glob("*.json")):
        if meta_path.name.endswith(".result.json"):
            continue
        meta = json.loads(meta_path.read_text())
        if meta.get("status") != "done":
            continue
        r = CounterfactualResult.from_json((out / "cells" / f"{meta['cell']}.result.json").read_text())
        for q in list(r.queries.index)[:limit]:
            cfs = r.for_query(q)
            changes = []
            for rank, row in cfs.iterrows():
                diff = [
                    (f.name, r.queries.loc[q, f.name], row[f.name])
                    for f in r.schema
                    if str(r.queries.loc[q, f.name]) != str(row[f.name])
                ]
                changes.append({"rank": rank, "diff": diff, "confidence": r.confidence.get((q, rank), np.nan)})
            cards.append({
                "cell": f"{meta['dataset']} / {meta['model']} / {meta['method']}",
                "query": q, "status": r.status[q], "row": r.queries.loc[q],
                "before": r.query_confidence.get(q, np.nan), "target": r.target[q], "changes": changes,
            })
    return cards


def build(results: str | Path, *, fmt: str = "html", out: str | Path | None = None, cards_per_cell: int = 2) -> Path:
    """Write the report and return its path.

    The HTML report is self-contained (images embedded) and readable offline.
    The Markdown report writes its images beside it in ``<name>_files/``.
    """
    from ..benchmark import average_ranks, collect, friedman, nemenyi_cd, summarise

    if fmt not in ("html", "md"):
        raise ValidationError(f"Report format must be 'html' or 'md'. Got {fmt!r}.")
    results = Path(results)
    if not (results / "cells").is_dir():
        raise ValidationError(f"{results} is not a benchmark results folder (no cells/ inside); run `counterfact benchmark` first.")
    table = collect(results)
    summary = summarise(results, table)
    target = Path(out) if out else results / f"report.{fmt}"
    spec_d = json.loads((results / "spec.json").read_text()) if (results / "spec.json").exists() else {}
    spec_name = spec_d.get("name", "benchmark")
    intro = _intro(spec_d, table)
    sections: list[tuple[str, str, list[tuple[str, bytes]]]] = []  # (title, html/markdown table, images)

    if len(table) == 0:
        sections.append(("No finished cells", summary.to_html(index=False) if fmt == "html" else summary.to_markdown(index=False) if hasattr(summary, "to_markdown") else summary.to_string(), []))
    else:
        pq = _per_query(table)
        metrics = _metric_columns(pq)
        done = summary[summary.get("state", "done") == "done"] if "state" in summary else summary
        for (ds, mo), sub in done.groupby(["dataset", "model"]):
            cols = ["method", "queries", "coverage", "time_median", "time_p90", *[m for m in metrics if m in sub.columns]]
            sections.append((f"{ds} / {mo}", _table(sub[[c for c in cols if c in sub.columns]], fmt), []))
        skipped = summary[summary["state"].isin(["skipped", "error"])] if "state" in summary else summary.iloc[0:0]
        if len(skipped):
            sections.append(("Skipped or failed cells", _table(skipped[["dataset", "model", "method", "state", "reason"]], fmt), []))
        images: list[tuple[str, bytes]] = []
        for m in metrics[:8]:
            images.append((m, _plots.metric_bars(pq, m)))
        images.append(("time", _plots.time_distribution(pq)))
        sp = next((m for m in metrics if "sparsity" in m.lower()), None)
        dv = next((m for m in metrics if "diversity" in m.lower()), None)
        if sp and dv:
            images.append((f"{sp} vs {dv}", _plots.tradeoff(pq, sp, dv)))
        sections.append(("Plots", "", images))
        stat_rows: list[dict[str, Any]] = []
        cd_images: list[tuple[str, bytes]] = []
        for m in metrics:
            hib = higher_is_better(m)
            if hib is None:
                continue
            blocks = pq.groupby(["dataset", "model", "method"])[m].mean().unstack("method")
            if blocks.shape[1] < 2:
                continue
            fr = friedman(blocks, higher_is_better=hib)
            ranks = average_ranks(blocks, higher_is_better=hib)
            if len(ranks) == 0:
                continue
            avg = ranks.mean(axis=0)
            k, n = ranks.shape[1], ranks.shape[0]
            cd = nemenyi_cd(k, n) if 2 <= k <= 10 else float("nan")
            stat_rows.append({"metric": m, "better": "higher" if hib else "lower", "N": n, "k": k, "chi2": fr["chi2"], "p": fr["p_value"], "CD": cd, **{f"rank {c}": v for c, v in avg.items()}})
            if len(cd_images) < 4:
                cd_images.append((f"critical difference: {m}", _plots.cd_diagram(avg, cd, f"{m} (average rank, {'higher' if hib else 'lower'} is better; N={n})")))
        if stat_rows:
            sections.append(("Ranks, Friedman test and Nemenyi critical difference", _table(pd.DataFrame(stat_rows), fmt), cd_images))
        cards = _cards(results, cards_per_cell)
        sections.append(("Recourse cards", _cards_markup(cards, fmt), []))
    text = _render(spec_name, sections, fmt, target, intro)
    target.write_text(text)
    return target


def _intro(spec: dict[str, Any], table: pd.DataFrame) -> str:
    """One paragraph: what the spec is, where its protocol comes from, and the size of the run."""
    parts = []
    if spec.get("description"):
        parts.append(str(spec["description"]).strip())
    if spec.get("reference"):
        parts.append(f"Protocol: {spec['reference']}.")
    if spec:
        parts.append(
            f"Up to {spec.get('queries')} queries per dataset, {spec.get('n_counterfactuals')} counterfactual(s) per query, "
            f"seeds {spec.get('seeds')}, time limit {spec.get('time_limit')} s per query."
        )
    if len(table):
        n = table.drop_duplicates(["dataset", "model", "method", "seed", "query"]).groupby(["dataset", "model", "method", "seed"]).size()
        parts.append(f"Finished cells: {len(n)}, explained queries: {int(n.sum())}.")
    return " ".join(parts)


# After the page loads, record how many tables and images it holds and how many images
# decoded, so a headless browser's DOM dump shows whether everything rendered.
_CHECK_JS = (
    "window.addEventListener('load',function(){var b=document.body,im=document.images,ok=0;"
    "for(var i=0;i<im.length;i++){if(im[i].complete&&im[i].naturalWidth>0){ok++;}}"
    "b.setAttribute('data-images',im.length);b.setAttribute('data-images-decoded',ok);"
    "b.setAttribute('data-tables',document.getElementsByTagName('table').length);"
    "b.setAttribute('data-rendered','yes');});"
)


def _table(df: pd.DataFrame, fmt: str) -> str:
    df = df.copy()
    for c in df.columns:
        if pd.api.types.is_float_dtype(df[c]):
            df[c] = df[c].map(lambda v: "" if pd.isna(v) else f"{v:.4g}")
    if fmt == "html":
        return df.to_html(index=False, escape=True, classes="tbl", border=0)
    header = "| " + " | ".join(map(str, df.columns)) + " |"
    sep = "| " + " | ".join("---" for _ in df.columns) + " |"
    body = ["| " + " | ".join(str(v).replace("|", "/").replace("\n", " ") for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join([header, sep, *body])


def _cards_markup(cards: list[dict[str, Any]], fmt: str) -> str:
    parts = []
    for c in cards:
        before = f"{c['before']:.3f}" if pd.notna(c["before"]) else "?"
        if fmt == "html":
            rows = "".join(f"<td>{html.escape(str(k))}</td>" for k in c["row"].index)
            vals = "".join(f"<td>{html.escape(str(v))}</td>" for v in c["row"].to_numpy())
            items = []
            for ch in c["changes"]:
                after = f"{ch['confidence']:.3f}" if pd.notna(ch["confidence"]) else "?"
                diff = "; ".join(f"{html.escape(str(f))}: {html.escape(str(a))} &rarr; {html.escape(str(b))}" for f, a, b in ch["diff"])
                items.append(f"<li>#{ch['rank']}: {diff} <i>(P(target) {before} &rarr; {after})</i></li>")
            lst = "<ul>" + "".join(items) + "</ul>" if items else "<p>no counterfactual</p>"
            parts.append(
                f'<div class="card"><b>{html.escape(c["cell"])}</b> &mdash; query {html.escape(str(c["query"]))}, '
                f'status {html.escape(str(c["status"]))}, target {html.escape(str(c["target"]))}, P(target) now {before}'
                f'<table class="tbl"><tr>{rows}</tr><tr>{vals}</tr></table>{lst}</div>'
            )
        else:
            lines = [f"**{c['cell']}** — query {c['query']}, status {c['status']}, target {c['target']}, P(target) now {before}", ""]
            for ch in c["changes"]:
                after = f"{ch['confidence']:.3f}" if pd.notna(ch["confidence"]) else "?"
                lines.append(f"- #{ch['rank']}: " + "; ".join(f"{f}: {a} → {b}" for f, a, b in ch["diff"]) + f" (P(target) {before} → {after})")
            if not c["changes"]:
                lines.append("- no counterfactual")
            parts.append("\n".join(lines))
    return "\n".join(parts) if fmt == "html" else "\n\n".join(parts)


_CSS = """body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px}
.tbl{border-collapse:collapse;font-size:0.85em;margin:0.5em 0}.tbl td,.tbl th{border:1px solid #ccc;padding:2px 6px}
.card{border:1px solid #ddd;border-radius:6px;padding:0.6em;margin:0.6em 0}img{max-width:100%;margin:0.5em 0}"""


def _render(name: str, sections: list[tuple[str, str, list[tuple[str, bytes]]]], fmt: str, target: Path, intro: str = "") -> str:
    if fmt == "html":
        body = [f"<h1>Benchmark report: {html.escape(name)}</h1>"]
        if intro:
            body.append(f'<p class="intro">{html.escape(intro)}</p>')
        for title, table, images in sections:
            body.append(f"<h2>{html.escape(title)}</h2>{table}")
            body += [f"<figure>{_img_html(png, alt)}<figcaption>{html.escape(alt)}</figcaption></figure>" for alt, png in images]
        return f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{html.escape(name)}</title><style>{_CSS}</style><script>{_CHECK_JS}</script></head><body>{"".join(body)}</body></html>'
    files = target.parent / f"{target.stem}_files"
    lines = [f"# Benchmark report: {name}", ""]
    if intro:
        lines += [intro, ""]
    for title, table, images in sections:
        lines += [f"## {title}", "", table, ""]
        for i, (alt, png) in enumerate(images):
            files.mkdir(parents=True, exist_ok=True)
            p = files / f"{len(lines)}_{i}.png"
            p.write_bytes(png)
            lines.append(f"![{alt}]({files.name}/{p.name})")
        lines.append("")
    return "\n".join(lines)
