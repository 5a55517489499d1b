"""The table of a paper run for docs/papers/*.md: chosen metrics with 95 % intervals.

    python benchmarks/paper_table.py RESULTS [--metrics coverage found validity sparsity ...]
                                     [--by dataset model method]

RESULTS is a folder written by ``counterfact benchmark``.  One row per dataset x
model x method (the report's grouping): the queries explained, coverage with
its Wilson 95 % interval, and for every other metric the mean over the queries
with the half-width of its normal 95 % interval (``mean ± h``), as in the
report's summary tables (:func:`counterfact.benchmark._runner.summarise`).
``time_median`` is the median seconds per query (``a``: a batch method's
amortized time, batch time / n).  Printed as Markdown, with a line giving the
run's size: finished cells, seeds, folds, and the date of the last finished
cell.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
from pathlib import Path

import numpy as np
import pandas as pd
from _common import markdown

from counterfact.benchmark._runner import summarise


def _cell(value: float, half: float | None, digits: int) -> str:
    if not np.isfinite(value):
        return ""
    text = f"{value:.{digits}f}"
    if half is not None and np.isfinite(half):
        text += f" ± {half:.{digits}f}"
    return text


def table(results: Path, metrics: list[str], digits: int = 3) -> tuple[str, str]:
    """(the size line, the Markdown table) of a results folder."""
    summary = summarise(results)
    done = summary[summary.get("state", "done") == "done"]
    rows = []
    for _, r in done.sort_values(["dataset", "model", "method"]).iterrows():
        row = {
            "dataset": r["dataset"],
            "model": r["model"],
            "method": r["method"],
            "queries": int(r["queries"]),
        }
        for m in metrics:
            if m == "coverage":
                lo, hi = r.get("coverage_ci_low", np.nan), r.get("coverage_ci_high", np.nan)
                row[m] = f"{r['coverage']:.2f} [{lo:.2f}, {hi:.2f}]"
            elif m == "time_median":
                mark = "ᵃ" if r.get("time_kind") == "amortized" else ""
                row[m] = f"{r['time_median']:.3g}{mark}"
            else:
                row[m] = _cell(float(r.get(m, np.nan)), r.get(f"ci95_{m}"), digits)
        rows.append(row)
    bad = (
        summary[summary.get("state", "done").isin(["skipped", "error"])]
        if "state" in summary
        else summary.iloc[:0]
    )
    for _, r in bad.iterrows():
        rows.append(
            {
                "dataset": r["dataset"],
                "model": r["model"],
                "method": r["method"],
                "queries": r["state"],
            }
        )
    return _size_line(results), markdown(pd.DataFrame(rows).fillna(""))


def _size_line(results: Path) -> str:
    """Finished and failed cells, seeds, folds and when the last cell finished."""
    metas = [
        json.loads(p.read_text())
        for p in (results / "cells").glob("*.json")
        if not p.name.endswith(".result.json")
    ]
    finished = [m for m in metas if m.get("status") == "done"]
    last = max(
        ((results / "cells" / f"{m['cell']}.json").stat().st_mtime for m in finished), default=None
    )
    seeds = sorted({m["seed"] for m in finished})
    folds = sorted({m["fold"] for m in finished if "fold" in m})
    return (
        (
            f"{len(finished)} finished cells ({len(metas) - len(finished)} skipped or failed), "
            f"seeds {seeds}"
        )
        + (f", folds {folds}" if folds else "")
        + (
            f"; last cell finished {dt.datetime.fromtimestamp(last, dt.UTC):%Y-%m-%d %H:%M} UTC"
            if last
            else ""
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("results", type=Path)
    ap.add_argument(
        "--metrics",
        nargs="+",
        default=["coverage", "validity", "distance_l1", "sparsity", "time_median"],
    )
    ap.add_argument("--digits", type=int, default=3)
    args = ap.parse_args()
    size, text = table(args.results, args.metrics, args.digits)
    print(size)
    print()
    print(text)


if __name__ == "__main__":
    main()
