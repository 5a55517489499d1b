"""Render a benchmark results folder as a self-contained HTML or Markdown report.

Layout, per dataset x model block: a summary table of the key metrics (see
:data:`~counterfact.report.KEY_METRICS`) with direction arrows, rounded, the
best value per column highlighted, and the full metric table folded beneath
it; then a glossary, one plot per key metric plus the trade-off scatter plots,
the statistical tests (only where they mean something) and recourse cards.
The pages are Jinja2 templates (``report/templates``); the tables are pandas
Stylers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .._utils._deps import import_optional
from .._utils._validation import check_writable, is_whole
from ..benchmark._runner import collect, summarise
from ..exceptions import ValidationError
from ._cards import collect_cards
from ._figures import Figure, key_metric_figures
from ._glossary import GLOSSARY, KEY_METRICS, higher_is_better
from ._stats_section import stats_section
from ._tables import AMORTIZED_MARK, _is_interval, full_table, plain_table, summary_table

__all__ = ["build", "higher_is_better"]

_ARROWS = "\u2191 higher is better, \u2193 lower is better."
_AMORTIZED = (
    f"{AMORTIZED_MARK} amortized: this method explains queries in batches, so its time per "
    "query is the batch time / n, not a per-query measurement; its training time is the "
    "separate 'fit (s)' column."
)
_SUMMARY_SKIP = ("seed", "query", "rank")

# After the page loads, record how many tables and images it holds and how many images
# decoded, so a headless browser's DOM dump shows whether everything rendered.
_CHECK_JS = (
    "window.addEventListener('load',function(){var b=document.body,im=document.images,ok=0;"
    "for(var i=0;i<im.length;i++){if(im[i].complete&&im[i].naturalWidth>0){ok++;}}"
    "b.setAttribute('data-images',im.length);b.setAttribute('data-images-decoded',ok);"
    "b.setAttribute('data-tables',document.getElementsByTagName('table').length);"
    "b.setAttribute('data-rendered','yes');});"
)


@dataclass
class Block:
    """One dataset x model section."""

    title: str
    summary: str
    full: str
    n_metrics: int
    amortized: bool = False
    methods: list[str] = field(default_factory=list)


def _per_query(table: pd.DataFrame) -> pd.DataFrame:
    pq = table.drop_duplicates(["dataset", "model", "method", "seed", "query"]).copy()
    pq.columns = [c.removeprefix("metric_") for c in pq.columns]
    return pq


def _env(fmt: str) -> Any:
    jinja2 = import_optional("jinja2", purpose="benchmark reports")
    return jinja2.Environment(
        loader=jinja2.PackageLoader("counterfact.report", "templates"),
        autoescape=jinja2.select_autoescape(
            enabled_extensions=("html.j2",), default_for_string=False
        ),
        trim_blocks=fmt == "md",
        lstrip_blocks=fmt == "md",
        keep_trailing_newline=True,
    )


def build(
    results: str | Path,
    *,
    fmt: str = "html",
    out: str | Path | None = None,
    cards_per_cell: int = 2,
) -> Path:
    """Write the report and return its path.

    The HTML report is self-contained (images embedded) and readable offline;
    wide tables scroll inside their own box.  The Markdown report writes its
    images beside it in ``<name>_files/``.  Needs the ``report`` extra
    (matplotlib, jinja2).
    """
    results = Path(results)
    target = Path(out) if out else results / f"report.{fmt}"
    _check_inputs(results, fmt, target, cards_per_cell)
    env = _env(fmt)
    table = collect(results, write=False)  # the report only reads the folder
    summary = summarise(results, table, write=False)
    spec_d = (
        json.loads((results / "spec.json").read_text()) if (results / "spec.json").exists() else {}
    )
    blocks: list[Block] = []
    figures: list[Figure] = []
    stats: dict[str, Any] = stats_section(pd.DataFrame(), fmt)
    cards: list[Any] = []
    if len(table):
        pq = _per_query(table)
        done = summary[summary["state"] == "done"] if "state" in summary else summary
        blocks = _blocks(done, fmt)
        figures = key_metric_figures(pq, _amortized(done))
        stats = stats_section(pq, fmt)
        cards = collect_cards(results, cards_per_cell)
    if fmt == "md":
        _write_images(target, [*figures, *stats["figures"]])
    template = env.get_template("report.html.j2" if fmt == "html" else "report.md.j2")
    text = template.render(
        name=f"Benchmark report: {spec_d.get('name', 'benchmark')}",
        intro=_intro(spec_d, table),
        blocks=blocks,
        skipped=_skipped(summary, fmt),
        glossary=KEY_METRICS,
        glossary_other=GLOSSARY,
        figures=figures,
        stats=stats,
        cards=cards,
        check_js=_CHECK_JS,
        arrows_note=_ARROWS,
        amortized_note=_AMORTIZED,
    )
    try:
        target.write_text(text)
    except OSError as exc:
        raise ValidationError(f"The report cannot be written to {str(target)!r}: {exc}.") from None
    return target


def _check_inputs(results: Path, fmt: str, target: Path, cards_per_cell: Any) -> None:
    """Refuse, before any work, a format, folder, output path or card count that cannot be
    used."""
    if fmt not in ("html", "md"):
        raise ValidationError(f"Report format must be 'html' or 'md'. Got {fmt!r}.")
    if not is_whole(cards_per_cell) or cards_per_cell < 0:
        raise ValidationError(
            f"cards_per_cell must be a whole number of recourse cards per cell, 0 or more. "
            f"Got {cards_per_cell!r}."
        )
    if not (results / "cells").is_dir():
        raise ValidationError(
            f"{results} is not a benchmark results folder (no cells/ inside); run "
            "`counterfact benchmark` first."
        )
    if not any(p for p in (results / "cells").glob("*.json") if ".result." not in p.name):
        raise ValidationError(
            f"{results}/cells holds no cell yet: the benchmark has not finished a cell "
            "(it may still be running, or it stopped before the first). Run `counterfact "
            "benchmark` with this --out to compute the cells."
        )
    check_writable(target, option="out")


def _skipped(summary: pd.DataFrame, fmt: str) -> str:
    """The table of skipped and failed cells with their reasons ("" when there is none)."""
    if "state" not in summary:
        return ""
    bad = summary[summary["state"].isin(["skipped", "error"])]
    if not len(bad):
        return ""
    return plain_table(
        bad[["dataset", "model", "method", "state", "reason"]].reset_index(drop=True),
        fmt,
        css_class="tbl reasons",
    )


def _amortized(done: pd.DataFrame) -> set[str]:
    """The methods whose time per query is a batch average (see
    :func:`counterfact.benchmark.run`)."""
    if "time_kind" not in done:
        return set()
    return set(done.loc[done["time_kind"] == "amortized", "method"])


def _blocks(done: pd.DataFrame, fmt: str) -> list[Block]:
    """One block per dataset x model of the finished summary rows: summary and full tables."""
    blocks = []
    for (ds, mo), sub in done.groupby(["dataset", "model"], sort=True):
        sub = sub.dropna(axis=1, how="all")
        n_metrics = sum(
            1
            for c in sub.columns
            if c not in _SUMMARY_SKIP
            and not _is_interval(c)
            and pd.api.types.is_numeric_dtype(sub[c])
        )
        blocks.append(
            Block(
                f"{ds} / {mo}",
                summary_table(sub, fmt),
                full_table(sub, fmt, skip=_SUMMARY_SKIP),
                n_metrics,
                amortized=bool("time_kind" in sub and (sub["time_kind"] == "amortized").any()),
                methods=list(sub["method"]),
            )
        )
    return blocks


def _write_images(target: Path, figures: list[Figure]) -> None:
    """Markdown: each figure's PNG beside the report in ``<name>_files/``, its relative path on the
    figure."""
    files = target.parent / f"{target.stem}_files"
    for i, fig in enumerate(figures):
        files.mkdir(parents=True, exist_ok=True)
        p = files / f"figure_{i}.png"
        p.write_bytes(fig.png_bytes)
        fig.path = f"{files.name}/{p.name}"


def _intro(spec: dict[str, Any], table: pd.DataFrame) -> str:
    """One paragraph: what the spec is, where its protocol comes from, and the size of the run."""
    parts = []
    if spec.get("description"):
        parts.append(_sentence(str(spec["description"])))
    if spec.get("reference"):
        parts.append(f"Protocol: {spec['reference']}.")
    if spec:
        parts.append(
            (
                "Every eligible test row per dataset, "
                if spec.get("queries") is None
                else f"Up to {spec.get('queries')} queries per dataset, "
            )
            + f"{spec.get('n_counterfactuals')} "
            f"counterfactual{'' if spec.get('n_counterfactuals') == 1 else 's'} per query, "
            f"{_seeds(spec.get('seeds'))}, "
            + (
                "no time limit."
                if spec.get("time_limit") is None
                else f"time limit {spec.get('time_limit')} s per query."
            )
        )
    if len(table):
        n = (
            table.drop_duplicates(["dataset", "model", "method", "seed", "query"])
            .groupby(["dataset", "model", "method", "seed"])
            .size()
        )
        parts.append(f"Finished cells: {len(n)}, explained queries: {int(n.sum())}.")
    return " ".join(parts)


def _sentence(text: str) -> str:
    """``text`` stripped, ending with a full stop unless it already ends a sentence."""
    text = text.strip()
    return text if not text or text[-1] in ".!?" else text + "."


def _seeds(seeds: Any) -> str:
    """``seed 0`` or ``seeds 0, 1, 2`` from the spec's seeds."""
    values = list(seeds) if isinstance(seeds, (list, tuple)) else [seeds]
    return ("seed " if len(values) == 1 else "seeds ") + ", ".join(map(str, values))
