"""Global recourse on German Credit, Adult and Default of credit: how much of per-person
recourse a few common actions achieve, at what cost to each person, for which groups,
and what it costs in time.

    python benchmarks/global_recourse.py [--quick | --full]
                                         [--datasets german_credit,adult,default_credit]
                                         [--models lr,rf] [--rows-adult 300] [--rows-credit 1500]
                                         [--docs]

For each dataset (80/20 split, seed 0) and model (logistic regression; random forest of 20
trees of depth 5), a population of test rows -- every German Credit test row; a seeded sample
of 300 Adult and 1,500 Default-of-credit test rows by default (``--quick``), every test row
with ``--full`` -- is audited with MACE (``time_limit=20``), whose per-person counterfactuals
are proven nearest: each person's *minimal* cost.  Then ``cf.global_recourse`` reuses those
answers (``individual=``) and chooses 1, 3 and 5 common actions.  Figures, all ratios against
baselines measured in the same run:

* ``cov@k / per-person``: people covered by ``k`` common actions over people MACE found a
  counterfactual for (the per-person recourse coverage);
* ``cov@3 (<=2x min) / per-person``: the same with every action capped at twice each
  person's minimal cost (``max_cost_ratio=2``);
* ``cost@k / min (median)``: the median over covered people of their action's cost over their
  own minimal cost (>= 1 by MACE's proof);
* ``gap@3 <grouping>``: the largest coverage gap between groups (not flagged small) of the 3
  actions, with Newcombe's 95 % interval;
* ``global@3 / audit (s)``: seconds of ``global_recourse`` (3 actions, reusing the audit) over
  seconds of the per-person audit of the same rows.

Writes ``benchmarks/out/global_recourse.md`` (+ csv) and ``global_recourse_groups.md``; with
``--docs`` the figures of ``docs/audit.md`` (``docs/img/global_recourse_*.png``).

``--scale`` instead runs every test row of Adult and Default of credit with a fast per-person
method (the nearest observed counterfactual), the audit on a local Dask cluster of two workers
through the batch layer, and times ``global_recourse`` (3 actions, reusing the audit) against
it: ``global_recourse_scale.md``.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd
from _common import OUT, load_split, markdown, timed, write_table

import counterfact as cf

GROUPS = {
    "german_credit": ["personal_status_sex", "age"],
    "adult": ["sex", "race", "age"],
    "default_credit": ["SEX", "EDUCATION", "AGE"],
}
AGE = {
    "german_credit": ("age", [19, 25, 35, 45, 55, 76]),
    "adult": ("age", [17, 25, 35, 45, 55, 65, 91]),
    "default_credit": ("AGE", [21, 25, 35, 45, 55, 80]),
}
SEX = {"german_credit": "personal_status_sex", "adult": "sex", "default_credit": "SEX"}
FOREST = {"n_estimators": 20, "max_depth": 5}
KS = (1, 3, 5)


def _population(name: str, test: Any, args: argparse.Namespace) -> pd.DataFrame:
    n = {"adult": args.rows_adult, "default_credit": args.rows_credit}.get(name)
    if args.full or n is None or n >= len(test):
        return test.X
    return test.X.sample(n, random_state=0)


def _gap(s: pd.DataFrame, grouping: str) -> str:
    """The largest coverage gap of a grouping (groups not flagged small; all of them, marked
    ``*``, when every group is small), with its interval and the group."""
    rows = s[s["grouping"] == grouping]
    small = bool(len(rows)) and bool(rows["small"].all())
    rows = rows if small else rows[~rows["small"]]
    if not len(rows) or rows["coverage_gap"].isna().all():
        return "–"
    r = rows.loc[rows["coverage_gap"].idxmax()]
    star = "*" if small else ""
    if not r["coverage_gap"] > 0 or pd.isna(r["coverage_gap_ci_low"]):
        return "0" + star
    lo, hi = 100 * r["coverage_gap_ci_low"], 100 * r["coverage_gap_ci_high"]
    return f"{100 * r['coverage_gap']:.1f} [{lo:.1f}, {hi:.1f}] {r['group']}{star}"


def _config(
    name: str, kind: str, train: Any, test: Any, X: pd.DataFrame, args: argparse.Namespace
) -> tuple[dict, dict]:  # type: ignore[type-arg]
    model = cf.models.fit(train, kind, random_state=0, **(FOREST if kind == "rf" else {}))
    method = cf.MACE(time_limit=20.0, random_state=0).fit(model, train)
    age, edges = AGE[name]
    kw: dict[str, Any] = {
        "groups": GROUPS[name],
        "bins": {age: edges},
        "data": test,
        "statistics": cf.recourse.Statistics(random_state=0),
    }
    with tempfile.TemporaryDirectory() as tmp:
        batch = (
            cf.recourse.Batch(parallel="dask", n_jobs=2, chunk_size=100, out_dir=tmp)
            if args.full
            else None
        )
        audit, audit_s = timed(partial(cf.audit, method, X, batch=batch, **kw))
    found: dict[str, Any] = {}
    for k in KS:
        found[k], secs = timed(
            partial(cf.global_recourse, method, X, max_actions=k, individual=audit, **kw)
        )
        found[f"s{k}"] = secs
    found["capped"] = cf.global_recourse(
        method, X, max_actions=3, individual=audit, max_cost_ratio=2.0, **kw
    )
    o = found[3].summary().iloc[0]
    n_ind = int(o["n_individual"])
    row: dict[str, Any] = {
        "dataset": name,
        "model": kind,
        "rows": len(X),
        "rejected": found[3].n_rejected,
        "per-person recourse": o["individual_rate"],
    }
    for k in KS:
        row[f"cov@{k} / per-person"] = found[k].n_covered / n_ind if n_ind else math.nan
    row["cov@3 (<=2x min) / per-person"] = found["capped"].n_covered / n_ind if n_ind else math.nan
    for k in (3, 5):
        pr = found[k].per_row
        row[f"cost@{k} / min (median)"] = pr.loc[pr["covered"], "cost_ratio"].median()
    s3 = found[3].summary()
    row["gap@3 by sex (pp) [95%]"] = _gap(s3, SEX[name])
    row["gap@3 by age (pp) [95%]"] = _gap(s3, age)
    row["exact@3"] = bool(found[3].curve.iloc[-1]["optimal"])
    row["audit s"] = audit_s
    row["global@3 / audit (s)"] = found["s3"] / audit_s
    return row, found


def _curve_png(curves: dict[str, list[float]], path: Path) -> None:
    from counterfact.recourse._plots import _plt, _png

    plt = _plt()
    fig, ax = plt.subplots(figsize=(7.0, 4.0))
    for label, ys in curves.items():
        ax.plot(range(1, len(ys) + 1), ys, marker="o", label=label)
    ax.set_xlabel("number of common actions")
    ax.set_ylabel("covered / per-person recourse")
    ax.set_ylim(0, 1.05)
    ax.set_xticks(range(1, 6))
    ax.set_title("Coverage of k common actions, relative to one counterfactual per person")
    ax.legend(fontsize=8, frameon=False)
    path.write_bytes(_png(fig))


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    size = ap.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="seeded samples (the default)")
    size.add_argument(
        "--full",
        action="store_true",
        help="every test row, per-person step on 2 Dask workers (hours)",
    )
    ap.add_argument("--datasets", default="german_credit,adult,default_credit")
    ap.add_argument("--models", default="lr,rf")
    ap.add_argument("--rows-adult", type=int, default=300)
    ap.add_argument("--rows-credit", type=int, default=1500)
    ap.add_argument(
        "--max-train", type=int, default=5000, help="training rows (seeded sample) unless --full"
    )
    ap.add_argument(
        "--docs", action="store_true", help="also write the figures of docs/audit.md (docs/img/)"
    )
    ap.add_argument(
        "--scale",
        action="store_true",
        help="every test row of Adult and Default of credit, nearest "
        "observed counterfactuals on 2 Dask workers: the global step's time against the audit's",
    )
    args = ap.parse_args()
    if args.scale:
        _scale(args)
        return
    sampled = (
        f"German Credit every test row, seeded samples of {args.rows_adult} Adult and "
        f"{args.rows_credit} Default-of-credit test rows"
    )
    notes = [
        "population: "
        f"{'every test row' if args.full else sampled} "
        "(80/20 split, seed 0); training rows: "
        f"{'all' if args.full else f'a seeded sample of at most {args.max_train}'}; forest: "
        f"{FOREST}",
        "per-person recourse: MACE (time_limit=20 s, proven nearest) in cf.audit; "
        "global_recourse reuses its answers (individual=), max_features=2, solver='auto' (the "
        "exact max-coverage MILP on HiGHS when small, else greedy; then a local search on cost); "
        "exact@3: the coverage of the 3 actions is proven the best among the candidates",
        "cov@k / per-person: people covered by k common actions over people with a per-person "
        "counterfactual; cost@k / min: median over covered people of (their action's cost / "
        "their proven minimal cost), in the measure of effort (changes + MAD-units)",
        "gap@3: largest coverage gap of the 3 actions between groups with >= 30 rejected rows "
        "(best-covered minus group, percentage points, Newcombe 95% interval, the group named; * "
        "every group has fewer than 30 rejected rows: indicative only); sex is "
        "personal_status_sex on German Credit; 2-core machine shared with other jobs",
    ]
    rows, groups, curves = [], [], {}
    for name in [s.strip() for s in args.datasets.split(",") if s.strip()]:
        split = load_split(name, cf.datasets.load, notes, None if args.full else args.max_train)
        if split is None:
            continue
        train, test = split
        X = _population(name, test, args)
        for kind in [s.strip() for s in args.models.split(",") if s.strip()]:
            row, found = _config(name, kind, train, test, X, args)
            rows.append(row)
            print(row, flush=True)
            curves[f"{name} {kind}"] = [
                r / max(int(found[5].summary().iloc[0]["n_individual"]), 1)
                for r in found[5].curve["n_covered"]
            ]
            keep = [
                "grouping",
                "group",
                "n_rejected",
                "small",
                "individual_rate",
                "coverage",
                "coverage_ci_low",
                "coverage_ci_high",
                "coverage_gap",
                "coverage_gap_ci_low",
                "coverage_gap_ci_high",
                "cost_ratio",
                "cost_ratio_ci_low",
                "cost_ratio_ci_high",
            ]
            groups.append(found[3].summary()[keep].assign(dataset=name, model=kind))
            if args.docs and name == "adult" and kind == "rf":
                _docs(found[3])
    write_table("global_recourse", pd.DataFrame(rows), notes)
    g = pd.concat(groups, ignore_index=True)
    write_table(
        "global_recourse_groups",
        g[["dataset", "model", *[c for c in g.columns if c not in ("dataset", "model")]]],
        notes[:2],
        quiet=True,
    )
    if args.docs:
        _curve_png(curves, _img() / "global_recourse_curve.png")


def _scale(args: argparse.Namespace) -> None:
    """Every test row: the audit on 2 Dask workers, then global_recourse reusing it."""
    from counterfact.methods._pipeline._batch import parallel_backend

    notes = [
        "population: every test row (80/20 split, seed 0); models trained on the whole training "
        f"split; forest: {FOREST}",
        "per-person: the nearest observed counterfactual (cf.NearestObservable) in cf.audit on a "
        "local Dask cluster of 2 worker processes (chunks of 500 rows, started before the "
        "clock); global_recourse: 3 actions, reusing the audit, in the calling process; 2-core "
        "machine shared with other jobs",
    ]
    rows = []
    names = [
        s.strip() for s in args.datasets.split(",") if s.strip() and s.strip() != "german_credit"
    ]
    for name in names:
        split = load_split(name, cf.datasets.load, notes)
        if split is None:
            continue
        train, test = split
        for kind in [s.strip() for s in args.models.split(",") if s.strip()]:
            model = cf.models.fit(train, kind, random_state=0, **(FOREST if kind == "rf" else {}))
            method = cf.NearestObservable().fit(model, train)
            age, edges = AGE[name]
            kw: dict[str, Any] = {
                "groups": GROUPS[name],
                "bins": {age: edges},
                "data": test,
                "statistics": cf.recourse.Statistics(n_bootstrap=200),
            }
            batch = cf.recourse.Batch(parallel="dask", n_jobs=2, chunk_size=500)
            with parallel_backend("dask", n_workers=2):
                audit, audit_s = timed(partial(cf.audit, method, test.X, batch=batch, **kw))
            g, secs = timed(
                partial(cf.global_recourse, method, test.X, max_actions=3, individual=audit, **kw)
            )
            row = {
                "dataset": name,
                "model": kind,
                "rows": len(test.X),
                **_scale_figures(g, audit_s, secs),
            }
            rows.append(row)
            print(row, flush=True)
    write_table("global_recourse_scale", pd.DataFrame(rows), notes)


def _scale_figures(g: Any, audit_s: float, secs: float) -> dict[str, Any]:
    """One row of the scale table: coverage, candidate counts and seconds of a result."""
    o = g.summary().iloc[0]
    c, t = g.meta["candidates"], g.meta["seconds"]
    return {
        "rejected": g.n_rejected,
        "per-person recourse": o["individual_rate"],
        "cov@3": g.coverage,
        "cov@3 / per-person": o["relative_coverage"],
        "candidates": c["pool"],
        "verified": c["verified"],
        "pairs": c["pairs"],
        "predicted": c["predicted"],
        "solver": g.curve.iloc[-1]["solver"],
        "audit s": audit_s,
        "global s": secs,
        "global / audit": secs / audit_s,
        "verify s": t["verify"],
        "candidates s": t["candidates"],
        "select s": t["select"],
    }


def _img() -> Path:
    img = Path(__file__).resolve().parent.parent / "docs" / "img"
    img.mkdir(parents=True, exist_ok=True)
    return img


def _docs(g: Any) -> None:
    from counterfact.recourse._global._report import coverage_plot

    (_img() / "global_recourse_adult_sex.png").write_bytes(coverage_plot(g, "sex"))
    OUT.mkdir(parents=True, exist_ok=True)
    g.to_html(OUT / "global_recourse_adult_rf.html")
    table = g.actions[["description", "n_works", "coverage", "n_new", "n_assigned", "cost_median"]]
    (OUT / "global_recourse_adult_rf_actions.md").write_text(markdown(table.reset_index()) + "\n")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
