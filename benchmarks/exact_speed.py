"""CE-OCL against MACE on the same queries and models: seconds per query, and where
CE-OCL's time goes.

    python benchmarks/exact_speed.py [--queries 5]
                                     [--datasets german_credit compas graduate_admission]
                                     [--models rf mlp rf_onehot] [--n-cfs 1 3] [--time-limit 30]
                                     [--tag NAME] [--baseline benchmarks/out/exact_speed_before.csv]

For every dataset x model (forest: 50 trees, depth 6; MLP: two hidden layers of 20
units, as in the measurement that motivated this table) both exact methods, each
with its own defaults (CE-OCL: squared l2 over observed ranges; MACE: normalised
l1, epsilon 1e-3), explain the same first ``--queries`` test rows the model
assigns to the unfavourable class, one query per call, with 1 and 3
counterfactuals.  Reported per cell:

* median seconds per query of each method, and the ratio CE-OCL / MACE (the
  target: at most 2 with 3 counterfactuals);
* CE-OCL's split of its own time: building the model (``build_seconds``) and
  the solves, summed over queries, and the number of solves;
* how many counterfactuals each returned (every one verified by the real model).

With ``--baseline`` (a CSV this script wrote earlier, e.g. before a code
change) the table adds that run's ratio beside today's.  Ratios measured in
one run are robust to machine load; absolute seconds are context only.

Writes benchmarks/out/exact_speed[_TAG].md and .csv.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
import pandas as pd
from _common import load_split, write_table

import counterfact as cf

KIND_PARAMS: dict[str, tuple[str, dict[str, Any]]] = {
    "rf": ("rf", {"n_estimators": 50, "max_depth": 6}),
    "mlp": ("mlp", {"hidden_layer_sizes": (20, 20)}),
    # the same forest behind a pipeline that one-hot encodes every discrete feature
    # (ordinal ones included), as users write it: the case that was 19x MACE
    "rf_onehot": ("rf", {"n_estimators": 50, "max_depth": 6}),
}


def fit_model(kind: str, train: cf.Dataset) -> Any:
    """The cell's model: ``cf.models.fit`` or, for ``rf_onehot``, a scikit-learn Pipeline."""
    base, params = KIND_PARAMS[kind]
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
        res = method.explain(X.iloc[[i]], n_counterfactuals=n_cf)
        secs.append(time.perf_counter() - t0)
        counts.append(len(res.counterfactuals))
        diags.append(res.diagnostics.iloc[0].copy())
        diags[-1]["_status"] = res.status.iloc[0]
    return secs, counts, pd.DataFrame(diags)


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--queries", type=int, default=5)
    p.add_argument(
        "--datasets", nargs="+", default=["german_credit", "compas", "graduate_admission"]
    )
    p.add_argument("--models", nargs="+", default=["rf", "mlp"], choices=sorted(KIND_PARAMS))
    p.add_argument("--n-cfs", nargs="+", type=int, default=[1, 3])
    p.add_argument("--time-limit", type=float, default=30.0)
    p.add_argument("--max-train", type=int, default=3000)
    p.add_argument("--tag", default="")
    p.add_argument(
        "--baseline", default=None, help="an earlier run's CSV: its ratio is shown beside today's"
    )
    args = p.parse_args()
    notes = [
        f"{args.queries} queries per cell (the first test rows predicted unfavourable), one query "
        f"per call, time limit {args.time_limit:g} s per query; forest 50 trees depth 6, MLP (20, "
        "20); rf_onehot: the same forest behind a scikit-learn Pipeline that one-hot encodes "
        "every discrete feature (ordinal ones included)",
        "CE-OCL defaults (l2, HiGHS); MACE defaults (l1, epsilon 1e-3); ratio = median CE-OCL s / "
        "median MACE s",
        "ceocl_build_s / ceocl_solve_s: CE-OCL's time summed over the cell's queries (model "
        "building, including the incumbent search, vs solver calls); *_optimal: queries whose "
        "first answer is proven optimal",
    ]
    rows = []
    for ds in args.datasets:
        split = load_split(ds, cf.datasets.load, notes, max_train=args.max_train)
        if split is None:
            continue
        train, test = split
        for mk in args.models:
            model = fit_model(mk, train)
            X = unfavourable_rows(model, test, args.queries)
            if not len(X):
                continue
            t0 = time.perf_counter()
            ceocl = cf.CEOCL(time_limit=args.time_limit, random_state=0).fit(model, train)
            fit_ce = time.perf_counter() - t0
            t0 = time.perf_counter()
            mace = cf.MACE(time_limit=args.time_limit, random_state=0).fit(model, train)
            fit_mace = time.perf_counter() - t0
            for n_cf in args.n_cfs:
                s_ce, c_ce, d_ce = per_query(ceocl, X, n_cf)
                s_ma, c_ma, d_ma = per_query(mace, X, n_cf)
                build = float(
                    pd.to_numeric(
                        d_ce.get("build_seconds", pd.Series(dtype=float)), errors="coerce"
                    ).sum()
                )
                med_ce, med_ma = float(np.median(s_ce)), float(np.median(s_ma))
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
                    "ceocl_solves": float(
                        pd.to_numeric(
                            d_ce.get("n_solves", pd.Series(dtype=float)), errors="coerce"
                        ).mean()
                    ),
                    "ceocl_cfs": float(np.mean(c_ce)),
                    "ceocl_optimal": int((d_ce["_status"] == "optimal").sum()),
                    "mace_optimal": int((d_ma["_status"] == "optimal").sum()),
                    "mace_cfs": float(np.mean(c_ma)),
                    "fit_s_ceocl": fit_ce,
                    "fit_s_mace": fit_mace,
                }
                rows.append(row)
                print(row, flush=True)
    table = pd.DataFrame(rows)
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


if __name__ == "__main__":
    main()
