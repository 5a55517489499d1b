"""CE-OCL against MACE on the same queries and models: seconds per query, and where
CE-OCL's time goes.

    python benchmarks/exact_speed.py [--queries 5]
                                     [--datasets german_credit compas graduate_admission]
                                     [--models rf mlp rf_onehot] [--n-cfs 1 3] [--time-limit 30]
                                     [--tag NAME] [--baseline benchmarks/out/exact_speed_before.csv]

For every dataset x model (forest: 50 trees, depth 6; MLP: two hidden layers of 20
units, as in the measurement that motivated this table) both exact methods, each
under its own objective (``costs="own"``; CE-OCL: squared l2 over observed
ranges; MACE: normalised l1, relative gap 1 %), explain the same first
``--queries`` test rows the model assigns to the unfavourable class, one query
per call, with 1 and 3 counterfactuals.  Reported per cell:

* median seconds per query of each method, and the ratio CE-OCL / MACE (the
  target: at most 2 with 3 counterfactuals);
* CE-OCL's split of its own time: building the model (``build_seconds``) and
  the solves, summed over queries, and the number of solves;
* how many counterfactuals each returned (every one verified by the real model).

With ``--baseline`` (a CSV this script wrote earlier, e.g. before a code
change) the table adds that run's ratio beside today's.  Ratios measured in
one run are robust to machine load; absolute seconds are context only.

Writes benchmarks/out/exact_speed[_TAG].md and .csv.

    python benchmarks/exact_speed.py --effort [--quick] [--methods MACE CEOCL] [--repeat N]

compares instead each exact method under the default measure of effort (1 per
changed feature plus each move in MADs, what ``explain`` uses when no costs are
given) with its time under its own objective (``costs="own"``: MACE's eq. (3),
CE-OCL's objective, the default before the measure), on German Credit, Adult
and COMPAS x logistic regression, forest and MLP: per cell the median seconds
per query under each, their ratio effort / own (target: at most 1.5), the
same ratio in CPU seconds, and the queries proven optimal under each.  Both
are timed on the same queries in the same run, one query per call,
alternating.  ``--quick``: 3 queries, smaller training sets and models;
``--methods MACE``: one method only; ``--repeat N``: each cell timed N times,
medians reported (with ``--datasets adult --models mlp``: one cell, repeated).
Writes benchmarks/out/exact_speed_effort[_quick][_TAG].md.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
import pandas as pd
from _common import load_split, timed, write_table

import counterfact as cf

#: each method's own objective (MACE's eq. (3) under its norm, CE-OCL's): what this measures
OWN = cf.Requirements(costs="own")

KIND_PARAMS: dict[str, tuple[str, dict[str, Any]]] = {
    "lr": ("lr", {}),
    "rf": ("rf", {"n_estimators": 50, "max_depth": 6}),
    "mlp": ("mlp", {"hidden_layer_sizes": (20, 20)}),
    # the same forest behind a pipeline that one-hot encodes every discrete feature
    # (ordinal ones included), as users write it: the case that was 19x MACE
    "rf_onehot": ("rf", {"n_estimators": 50, "max_depth": 6}),
}


QUICK_PARAMS: dict[str, dict[str, Any]] = {
    "rf": {"n_estimators": 20, "max_depth": 5},
    "mlp": {"hidden_layer_sizes": (10, 10)},
}


def fit_model(kind: str, train: cf.Dataset, *, quick: bool = False) -> Any:
    """The cell's model: ``cf.models.fit`` or, for ``rf_onehot``, a scikit-learn Pipeline
    (``quick``: smaller forests and networks)."""
    base, params = KIND_PARAMS[kind]
    if quick:
        params = QUICK_PARAMS.get(kind, params)
    if kind != "rf_onehot":
        return cf.models.fit(train, base, random_state=0, **params)
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder

    discrete = [f.name for f in train.schema if not f.is_numeric]
    pre = ColumnTransformer(
        [("oh", OneHotEncoder(handle_unknown="ignore"), discrete)], remainder="passthrough"
    )
    pipe = Pipeline([("pre", pre), ("rf", RandomForestClassifier(random_state=0, **params))])
    return pipe.fit(train.X, train.y)


def unfavourable_rows(model: Any, test: cf.Dataset, n: int) -> pd.DataFrame:
    fav = test.metadata.get("favourable_class", model.classes_[-1])
    X = test.X
    return X[model.predict(X) != fav].iloc[:n]


def per_query(
    method: Any, X: pd.DataFrame, n_cf: int
) -> tuple[list[float], list[int], pd.DataFrame]:
    """Explain one query per call; wall seconds, counterfactuals returned, diagnostics
    (with the status as ``_status``)."""
    secs, counts, diags = [], [], []
    for i in range(len(X)):
        t0 = time.perf_counter()
        res = method.explain(X.iloc[[i]], n_counterfactuals=n_cf, requirements=OWN)
        secs.append(time.perf_counter() - t0)
        counts.append(len(res.counterfactuals))
        diags.append(res.diagnostics.iloc[0].copy())
        diags[-1]["_status"] = res.status.iloc[0]
    return secs, counts, pd.DataFrame(diags)


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--queries", type=int, default=5)
    p.add_argument("--datasets", nargs="+", default=None)
    p.add_argument("--models", nargs="+", default=None, choices=sorted(KIND_PARAMS))
    p.add_argument("--n-cfs", nargs="+", type=int, default=[1, 3])
    p.add_argument("--time-limit", type=float, default=30.0)
    p.add_argument("--max-train", type=int, default=3000)
    p.add_argument("--tag", default="")
    p.add_argument(
        "--baseline", default=None, help="an earlier run's CSV: its ratio is shown beside today's"
    )
    p.add_argument(
        "--effort", action="store_true", help="the measure of effort against costs='own'"
    )
    p.add_argument("--quick", action="store_true", help="with --effort: a small, fast run")
    p.add_argument(
        "--methods",
        nargs="+",
        default=["MACE", "CEOCL"],
        choices=["MACE", "CEOCL"],
        help="with --effort: the exact methods timed",
    )
    p.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="with --effort: time each cell this many times and report the medians "
        "(a shared machine is noisy)",
    )
    return p.parse_args()


def main() -> None:
    args = parse_args()
    if args.effort:
        effort_table(args)
        return
    args.datasets = args.datasets or ["german_credit", "compas", "graduate_admission"]
    args.models = args.models or ["rf", "mlp"]
    notes = [
        f"{args.queries} queries per cell (the first test rows predicted unfavourable), one query "
        f"per call, time limit {args.time_limit:g} s per query; forest 50 trees depth 6, MLP (20, "
        "20); rf_onehot: the same forest behind a scikit-learn Pipeline that one-hot encodes "
        "every discrete feature (ordinal ones included)",
        "costs='own': CE-OCL's l2 objective (HiGHS); MACE's l1, relative gap 1 %; ratio = "
        "median CE-OCL s / median MACE s",
        "ceocl_build_s / ceocl_solve_s: CE-OCL's time summed over the cell's queries (model "
        "building, including the incumbent search, vs solver calls); *_optimal: queries whose "
        "first answer is proven optimal",
    ]
    table = pd.DataFrame(
        [row for ds, mk, cell in cells(args, notes) for row in speed_rows(ds, mk, cell, args)]
    )
    if args.baseline and len(table):
        before = pd.read_csv(args.baseline)
        keep = before[["dataset", "model", "n_cf", "ratio", "ceocl_median_s"]].rename(
            columns={"ratio": "ratio_before", "ceocl_median_s": "ceocl_median_s_before"}
        )
        table = table.merge(keep, on=["dataset", "model", "n_cf"], how="left")
        notes.append(
            "ratio_before / ceocl_median_s_before: from the earlier run "
            f"{args.baseline.split('/')[-1]}"
        )
    write_table("exact_speed" + (f"_{args.tag}" if args.tag else ""), table, notes)


def cells(args: argparse.Namespace, notes: list[str]) -> Any:
    """Every dataset x model cell: ``(dataset, model kind, (model, train, queries))``."""
    for ds in args.datasets:
        split = load_split(ds, cf.datasets.load, notes, max_train=args.max_train)
        if split is None:
            continue
        train, test = split
        for mk in args.models:
            model = fit_model(mk, train, quick=args.quick)
            X = unfavourable_rows(model, test, args.queries)
            if len(X):
                yield ds, mk, (model, train, X)


def speed_rows(ds: str, mk: str, cell: tuple[Any, Any, pd.DataFrame], args: Any) -> list[dict]:
    """CE-OCL against MACE in one cell, one row per number of counterfactuals."""
    model, train, X = cell
    ceocl, fit_ce = timed(
        lambda: cf.CEOCL(time_limit=args.time_limit, random_state=0).fit(model, train)
    )
    mace, fit_mace = timed(
        lambda: cf.MACE(time_limit=args.time_limit, random_state=0).fit(model, train)
    )
    rows = []
    for n_cf in args.n_cfs:
        s_ce, c_ce, d_ce = per_query(ceocl, X, n_cf)
        s_ma, c_ma, d_ma = per_query(mace, X, n_cf)
        build = float(
            pd.to_numeric(d_ce.get("build_seconds", pd.Series(dtype=float)), errors="coerce").sum()
        )
        med_ce, med_ma = float(np.median(s_ce)), float(np.median(s_ma))
        solves = pd.to_numeric(d_ce.get("n_solves", pd.Series(dtype=float)), errors="coerce")
        row = {
            "dataset": ds,
            "model": mk,
            "n_cf": n_cf,
            "queries": len(X),
            "ceocl_median_s": med_ce,
            "mace_median_s": med_ma,
            "ratio": med_ce / med_ma if med_ma > 0 else np.nan,
            "ceocl_build_s": build,
            "ceocl_solve_s": float(np.sum(s_ce)) - build,
            "ceocl_solves": float(solves.mean()),
            "ceocl_cfs": float(np.mean(c_ce)),
            "ceocl_optimal": int((d_ce["_status"] == "optimal").sum()),
            "mace_optimal": int((d_ma["_status"] == "optimal").sum()),
            "mace_cfs": float(np.mean(c_ma)),
            "fit_s_ceocl": fit_ce,
            "fit_s_mace": fit_mace,
        }
        rows.append(row)
        print(row, flush=True)
    return rows


# ------------------------------------------------------- measure of effort vs own
EFFORT_DATASETS = ["german_credit", "adult", "compas"]
EFFORT_MODELS = ["lr", "rf", "mlp"]


def effort_table(args: argparse.Namespace) -> None:
    """Each exact method under the default measure of effort against ``costs="own"``
    (module docstring)."""
    if args.quick:
        args.queries, args.max_train = min(args.queries, 3), min(args.max_train, 1500)
        args.time_limit = min(args.time_limit, 20.0)
    args.datasets = args.datasets or EFFORT_DATASETS
    args.models = args.models or EFFORT_MODELS
    notes = [
        f"{args.queries} queries per cell (the first test rows predicted unfavourable), one "
        f"query and one counterfactual per call, time limit {args.time_limit:g} s per query; "
        + (
            "forest 20 trees depth 5, MLP (10, 10)"
            if args.quick
            else "forest 50 trees depth 6, MLP (20, 20)"
        ),
        "effort: the default measure (1 per changed feature plus each move in MADs); own: "
        "costs='own' (MACE's eq. (3) l1, CE-OCL's l2 objective: the default before); "
        "ratio = median s under effort / median s under own, same queries, same run, "
        "alternating (target: at most 1.5); cpu_ratio: the same with the process's CPU "
        "seconds (the solvers' threads included), steadier than wall time on a shared "
        "machine; *_optimal: queries proven optimal",
    ]
    if args.repeat > 1:
        notes.append(
            f"each cell timed {args.repeat} times: medians over the runs, and the range of "
            "the wall ratio (ratio_min, ratio_max)"
        )
    rows = []
    for ds, mk, (model, train, X) in cells(args, notes):
        for name in args.methods:
            method = getattr(cf, name)(time_limit=args.time_limit, random_state=0).fit(model, train)
            runs = [effort_cell(method, X) for _ in range(max(1, args.repeat))]
            rows.append({"dataset": ds, "model": mk, "method": name, **_median_run(runs)})
            print(rows[-1], flush=True)
    table = pd.DataFrame(rows)
    name = "exact_speed_effort" + ("_quick" if args.quick else "")
    write_table(name + (f"_{args.tag}" if args.tag else ""), table, notes)


def _median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One row from repeated timings of a cell: the median of each figure (the range of
    the wall ratio beside it when there are several runs)."""
    if len(runs) == 1:
        return runs[0]
    out = {k: float(np.median([r[k] for r in runs])) for k in runs[0]}
    out["queries"] = runs[0]["queries"]
    ratios = [r["ratio"] for r in runs]
    out["ratio_min"], out["ratio_max"] = float(np.min(ratios)), float(np.max(ratios))
    return out


def effort_cell(method: Any, X: pd.DataFrame) -> dict[str, Any]:
    """Median wall and CPU seconds per query under the measure of effort and under
    ``costs="own"``."""
    secs: dict[str, list[float]] = {"effort": [], "own": []}
    cpu: dict[str, list[float]] = {"effort": [], "own": []}
    proven = {"effort": 0, "own": 0}
    for i in range(len(X)):
        for key, costs in (("own", "own"), ("effort", None)):
            req = cf.Requirements(costs=costs)
            row = X.iloc[[i]]
            c0 = time.process_time()
            res, s = timed(lambda r=row, c=req: method.explain(r, requirements=c))
            cpu[key].append(time.process_time() - c0)
            secs[key].append(s)
            proven[key] += int(res.status.iloc[0] == "optimal")
    med = {k: float(np.median(v)) for k, v in secs.items()}
    med_cpu = {k: float(np.median(v)) for k, v in cpu.items()}
    return {
        "queries": len(X),
        "effort_median_s": med["effort"],
        "own_median_s": med["own"],
        "ratio": med["effort"] / med["own"] if med["own"] > 0 else np.nan,
        "cpu_ratio": med_cpu["effort"] / med_cpu["own"] if med_cpu["own"] > 0 else np.nan,
        "effort_optimal": proven["effort"],
        "own_optimal": proven["own"],
    }


if __name__ == "__main__":
    main()
