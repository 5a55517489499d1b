"""Recourse over time: how many rejected applicants have recourse now, within 6, 12 and
24 months, at what cost, and how often waiting alone suffices.

For each dataset x model kind, ``--rows`` rejected test rows are explained by MACE under
the dataset's default timeline (``cf.datasets.timeline``: its features only time moves,
its rate-bound features, a month of waiting costing 1/24), one explain call per horizon
(0, 6, 12, 24 months), and each row's plan read per horizon (``result.plans``):

* share with recourse within each horizon (an answer whose elapsed time fits in it), with
  its Wilson 95 % interval;
* median cost of the plan by horizon (the default measure of effort plus the waiting),
  over the rows that have one;
* share of rows where waiting alone suffices within 24 months (the plan changes nothing
  but the features time moves);
* time per plan (the four calls) as a ratio to one ``explain`` of the same rows without
  a timeline, measured in the same run.

    python benchmarks/time.py            # German Credit, Adult, COMPAS x lr, rf, mlp; 50 rows
    python benchmarks/time.py --quick    # 5 rows, logistic regression and forest
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import wilson, write_table

import counterfact as cf
from counterfact.methods._pipeline._time import explain_by_horizon

DATASETS = ("german_credit", "adult", "compas")
#: model kinds and their sizes (forests kept small enough for the exact encodings)
MODELS = {"lr": {}, "rf": {"n_estimators": 20, "max_depth": 5}, "mlp": {}}
HORIZONS = (0, 6, 12, 24)


def cell(dataset: str, kind: str, rows: int, time_limit: float, seed: int) -> dict[str, object]:
    """One dataset x model: the plans of ``rows`` rejected rows, summarised."""
    data = cf.datasets.load(dataset)
    train, test = data.split(test_size=0.2, random_state=seed)
    model = cf.models.fit(train, kind, random_state=seed, **MODELS[kind])
    X = cf.rows_to_explain(model, test).head(rows)
    mace = cf.MACE(time_limit=time_limit, random_state=seed).fit(model, train)
    t0 = time.perf_counter()
    mace.explain(X)
    plain = time.perf_counter() - t0
    c = cf.Constraints(timeline=cf.datasets.timeline(train))
    t0 = time.perf_counter()
    result = explain_by_horizon(mace, X, HORIZONS, constraints=c)
    timed = time.perf_counter() - t0
    plans = pd.concat([result.plans(q, horizons=HORIZONS).assign(query=q) for q in X.index])
    return _summary(dataset, kind, len(X), plans, timed / max(plain, 1e-9))


def _summary(dataset: str, kind: str, n: int, plans: pd.DataFrame, ratio: float) -> dict:
    """The cell's row of the table from its plans (one row per query and horizon)."""
    out: dict[str, object] = {"dataset": dataset, "model": kind, "rows": n}
    for h in HORIZONS:
        at = plans[plans["horizon"] == h]
        found = at["plan"] != "none within the horizon"
        lo, hi = wilson(int(found.sum()), n)
        label = "now" if h == 0 else f"<= {h} mo"
        out[f"recourse {label}"] = f"{found.mean():.2f} [{lo:.2f}, {hi:.2f}]"
        cost = pd.to_numeric(at.loc[found, "cost"], errors="coerce").dropna()
        out[f"median cost {label}"] = round(float(np.median(cost)), 2) if len(cost) else np.nan
    last = plans[plans["horizon"] == HORIZONS[-1]]
    out["wait alone suffices"] = round(
        float(last["plan"].str.startswith("no change needed: wait").sum()) / max(n, 1), 2
    )
    out["proven (24 mo)"] = int(last["proven"].sum())
    out["time per plan / explain"] = round(ratio, 1)
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="5 rows; lr and rf only")
    p.add_argument("--rows", type=int, default=50)
    p.add_argument("--time-limit", type=float, default=20.0, help="seconds per explain call")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    rows = 5 if args.quick else args.rows
    kinds = ("lr", "rf") if args.quick else tuple(MODELS)
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for dataset in DATASETS:
            for kind in kinds:
                out.append(cell(dataset, kind, rows, args.time_limit, args.seed))
                print(out[-1], flush=True)
    notes = [
        f"MACE (default measure of effort), {rows} rejected test rows per cell, seed "
        f"{args.seed}, time limit {args.time_limit:g} s per call; each dataset's default "
        "timeline (cf.datasets.timeline: 24 months, waiting 1/24 a month, its rates)",
        "recourse within h months: share of rows whose plan for horizon h has an answer "
        "[Wilson 95 % interval]; median cost: effort plus waiting, rows with an answer",
        "wait alone suffices: the 24-month plan changes only features time moves",
        "time per plan / explain: the four explain calls of a plan (0, 6, 12, 24 months) "
        "over one explain of the same rows without a timeline, same run",
    ]
    write_table("time_quick" if args.quick else "time", pd.DataFrame(out), notes)


if __name__ == "__main__":
    main()
