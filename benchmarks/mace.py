"""MACE against the paper (Karimi et al., AISTATS 2020): the shape of Tables 2, 3, 4 and 6.

    python benchmarks/mace.py [--queries 10] [--datasets adult compas default_credit_taiwan]
                              [--models tree rf lr mlp] [--norms l0 l1 linf]
                              [--rel-gap 0.01] [--time-limit 60] [--unbounded-queries 3]
                              [--age-queries N] [--max-train N] [--tag NAME]

For every dataset x model x norm: MACE and the `nearest` baseline (the paper's
"minimum observable", MO) explain the same test rows that the model classifies
as the unfavourable class (paper protocol: 500 rows; `--queries 50` or more for a
faithful run, the default is a quick one).  Reported per cell:

* coverage of both methods (Table 2: MACE and MO are 100% by design);
* `improvement_vs_MO` = 100 * mean(1 - d_MACE / d_MO) over the rows both
  explained (Table 3), and `mace<=mo` = how many rows have
  d_MACE <= d_MO x (1 + rel_gap) (must be all of them);
* median / p90 seconds per counterfactual (Table 6) and the oracle calls;
* model sizes (trees, nodes, depth, MLP units).

Extra rows: scikit-learn's default forest (100 trees, unbounded depth), and the
Table-4 experiment: Adult forest, age made mutable; for the rows whose
unrestricted counterfactual changes age, the share of rows and the relative
distance increase 100 * mean(d_restricted / d_unrestricted - 1) when age is immutable.

Writes benchmarks/out/mace.md and mace.csv (+ mace_age.*).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
import pandas as pd
from _common import load_split, write_table

import counterfact as cf

#: each method's own objective (MACE's eq. (3) under its norm, CE-OCL's): what this measures
OWN = cf.Requirements(costs="own")

KIND_PARAMS = {
    "tree": ("tree", {}),
    "rf": ("rf", {"n_estimators": 100, "max_depth": 8}),
    "rf_unbounded": ("rf", {"n_estimators": 100, "max_depth": None}),
    "lr": ("lr", {}),
    "mlp": ("mlp", {"hidden_layer_sizes": (10, 10)}),
    "gbm": ("gbm", {"n_estimators": 100, "max_depth": 3}),
    "xgb": ("xgb", {"n_estimators": 100, "max_depth": 4}),
    "lgbm": ("lgbm", {"n_estimators": 100}),
}


def model_size(model) -> str:  # type: ignore[no-untyped-def]
    clf = model.named_steps["clf"]
    n_in = len(model.named_steps["pre"].get_feature_names_out())
    if hasattr(clf, "booster_"):
        info = clf.booster_.dump_model()["tree_info"]
        leaves = sum(t["num_leaves"] for t in info)
        return f"{len(info)} boosted trees (lightgbm), {leaves} leaves, {n_in} inputs"
    if hasattr(clf, "get_booster"):
        dump = clf.get_booster().get_dump()
        nodes = sum(d.count(chr(10)) for d in dump)
        return (
            f"{len(dump)} boosted trees (xgboost), {nodes} nodes, max depth {clf.max_depth}, "
            f"{n_in} inputs"
        )
    if hasattr(clf, "estimators_"):
        trees = [e.tree_ for e in np.ravel(clf.estimators_)]
        nodes = sum(t.node_count for t in trees)
        depth = max(t.max_depth for t in trees)
        return f"{len(trees)} trees, {nodes} nodes, max depth {depth}, {n_in} inputs"
    if hasattr(clf, "tree_"):
        return f"1 tree, {clf.tree_.node_count} nodes, depth {clf.tree_.max_depth}, {n_in} inputs"
    if hasattr(clf, "coefs_"):
        return f"MLP {n_in}-{'-'.join(str(c.shape[1]) for c in clf.coefs_)}"
    return f"linear, {n_in} inputs"


def unfavourable_rows(model: Any, test: cf.Dataset, n: int) -> pd.DataFrame:
    """The first ``n`` test rows the model does not assign to the dataset's favourable class."""
    X = test.X
    fav = test.metadata.get("favourable_class", model.classes_[-1])
    pred = model.predict(X)
    return X[pred != fav].iloc[:n]


def run_cell(
    model: Any,
    train: Any,
    X: Any,
    norm: Any,
    args: Any,
    constraints: Any = None,
    oracle: str = "auto",
) -> Any:
    mace = cf.MACE(
        norm=norm, rel_gap=args.rel_gap, time_limit=args.time_limit, solver=oracle, random_state=0
    ).fit(model, train)
    t0 = time.perf_counter()
    r_mace = mace.explain(X, constraints=constraints, requirements=OWN)
    wall = time.perf_counter() - t0
    mo = cf.NearestObservable(norm=norm).fit(model, train)
    r_mo = mo.explain(X, constraints=constraints, requirements=OWN)
    return mace, r_mace, r_mo, wall


def distances(result: cf.CounterfactualResult, key: str) -> pd.Series:
    d = result.diagnostics.get(key)
    if d is None:
        return pd.Series(np.nan, index=result.status.index)
    d = pd.to_numeric(d, errors="coerce")
    found = result.found > 0
    return d.where(found)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--queries", type=int, default=10)
    ap.add_argument("--datasets", nargs="+", default=["adult", "compas", "default_credit_taiwan"])
    ap.add_argument("--models", nargs="+", default=["tree", "rf", "lr", "mlp"])
    ap.add_argument("--norms", nargs="+", default=["l0", "l1", "linf"])
    ap.add_argument("--rel-gap", type=float, default=0.01)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument(
        "--unbounded-queries",
        type=int,
        default=3,
        help="queries for sklearn's default (unbounded) forest; 0 to skip",
    )
    ap.add_argument(
        "--age-queries",
        type=int,
        default=None,
        help="queries for the Table-4 age experiment (default: --queries); 0 to skip",
    )
    ap.add_argument(
        "--max-train",
        type=int,
        default=None,
        help="subsample the training rows (faster model fits)",
    )
    ap.add_argument(
        "--tag",
        default="",
        help="suffix of the output files (mace_<tag>.md), for runs split by dataset",
    )
    ap.add_argument(
        "--oracles",
        nargs="+",
        default=["auto"],
        choices=["auto", "bnb", "z3", "highs", "scip", "cpsat"],
        help="oracles to run side by side; non-auto oracles other than the default run on "
        "tree-ensemble cells only",
    )
    ap.add_argument(
        "--combine",
        nargs="+",
        default=None,
        metavar="CSV",
        help="only write the Z3 / CP-SAT side-by-side table (mace_<tag>_side_by_side.md) from "
        "per-query tables of earlier runs (mace_*_queries.csv; a later file's cells replace an "
        "earlier one's)",
    )
    args = ap.parse_args()
    if args.combine:
        parts = [pd.read_csv(f) for f in args.combine]
        per = pd.concat(parts, ignore_index=True).drop_duplicates(
            ["dataset", "model", "norm", "oracle", "query"], keep="last"
        )
        name = f"mace_{args.tag}" if args.tag else "mace"
        write_table(f"{name}_side_by_side", side_by_side(per), [f"from {', '.join(args.combine)}"])
        return

    rows = []
    per_query: list[dict] = []
    age_rows = []
    name = f"mace_{args.tag}" if args.tag else "mace"
    notes = [
        f"relative gap {args.rel_gap}, time limit {args.time_limit} s per query, {args.queries} "
        "queries per cell (first test rows predicted as the unfavourable class; target: the "
        "favourable one)",
        "improvement_vs_MO = 100 * mean(1 - d_MACE/d_MO) over rows both explained (paper Table 3)",
        "seconds are per query, n_jobs=1, on this machine; the paper reports 1-25 s (LR, tree), "
        "20-108 s (forest), 59-44,470 s (MLP)",
    ]
    for ds in args.datasets:
        split = load_split(ds, cf.datasets.load, notes, args.max_train)
        if split is None:
            continue
        train, test = split
        kinds = list(args.models)
        if args.unbounded_queries and "rf" in kinds:
            kinds.append("rf_unbounded")
        for kind in kinds:
            base, params = KIND_PARAMS[kind]
            t0 = time.perf_counter()
            model = cf.models.fit(train, base, random_state=0, **params)
            fit_s = time.perf_counter() - t0
            acc = float((model.predict(test.X) == test.y.to_numpy()).mean())
            n_q = args.unbounded_queries if kind == "rf_unbounded" else args.queries
            X = unfavourable_rows(model, test, n_q)
            is_ensemble = kind.startswith("rf") or kind in ("gbm", "xgb", "lgbm")
            cells = [
                (n, o)
                for n in args.norms
                for o in args.oracles
                if o == "auto" or is_ensemble or len(args.oracles) == 1
            ]
            for norm, oracle in cells:
                mace, r_mace, r_mo, _wall = run_cell(model, train, X, norm, args, oracle=oracle)
                d_mace = distances(r_mace, "delta_max")
                d_mo = distances(r_mo, "distance")
                both = d_mace.notna() & d_mo.notna()
                ratio = (1 - d_mace[both] / d_mo[both]) if both.any() else pd.Series(dtype=float)
                no_worse = d_mace[both] <= d_mo[both] * (1 + args.rel_gap) + 1e-12
                n_no_worse = int(no_worse.sum())
                rt = r_mace.runtime[r_mace.found > 0]
                calls = pd.to_numeric(r_mace.diagnostics.get("n_oracle_calls"), errors="coerce")
                rows.append(
                    {
                        "dataset": ds,
                        "model": kind,
                        "norm": norm,
                        "oracle": mace.solver_,
                        "queries": len(X),
                        "coverage_MACE": float((r_mace.found > 0).mean()) if len(X) else np.nan,
                        "coverage_MO": float((r_mo.found > 0).mean()) if len(X) else np.nan,
                        "optimal": int((r_mace.status == "optimal").sum()),
                        "timeout": int((r_mace.status == "timeout").sum()),
                        "improvement_vs_MO_%": 100 * float(ratio.mean()) if len(ratio) else np.nan,
                        "mace<=mo": f"{n_no_worse}/{int(both.sum())}",
                        "median_s": float(rt.median()) if len(rt) else np.nan,
                        "p90_s": float(rt.quantile(0.9)) if len(rt) else np.nan,
                        "max_s": float(rt.max()) if len(rt) else np.nan,
                        "oracle_calls_median": float(calls.median())
                        if calls is not None
                        else np.nan,
                        "mean_d_MACE": float(d_mace.mean()),
                        "mean_d_MO": float(d_mo.mean()),
                        "test_acc": acc,
                        "fit_s": fit_s,
                        "model_size": model_size(model),
                    }
                )
                print(pd.DataFrame(rows[-1:]).to_string(index=False), flush=True)
                for q in X.index:
                    per_query.append(
                        {
                            "dataset": ds,
                            "model": kind,
                            "norm": norm,
                            "oracle": mace.solver_,
                            "query": q,
                            "status": r_mace.status.loc[q],
                            "seconds": float(r_mace.runtime.loc[q]),
                            "delta_max": float(d_mace.loc[q]),
                            "d_MO": float(d_mo.loc[q]),
                        }
                    )
                # partial tables after every cell: a long run that stops keeps what it measured
                write_table(name, pd.DataFrame(rows), notes, quiet=True)
                write_table(f"{name}_queries", pd.DataFrame(per_query), quiet=True)
            if (
                ds == "adult"
                and kind == "rf"
                and (args.age_queries is None or args.age_queries > 0)
            ):
                age_rows += age_experiment(model, train, test, args)
    table = pd.DataFrame(rows)
    write_table(name, table, notes)
    if per_query and {"z3", "cpsat"} <= set(args.oracles):
        write_table(f"{name}_side_by_side", side_by_side(pd.DataFrame(per_query)), notes)
    if age_rows:
        write_table(
            f"{name}_age",
            pd.DataFrame(age_rows),
            [
                "Paper Table 4: Adult forest; age mutable in the unrestricted run, immutable in "
                "the restricted one",
                "% age-change = rows whose unrestricted counterfactual changes age; rel. increase "
                "= 100*mean(d_restr/d_unrestr - 1) over those rows",
            ],
        )


def side_by_side(per_query: pd.DataFrame) -> pd.DataFrame:
    """Z3 and CP-SAT on the same queries, one row per dataset x model x norm:
    median and p90 seconds, proven-optimal counts, the ratio of the medians
    (CP-SAT / Z3) and what ``solver="auto"`` picks for the model."""
    rows = []
    for (ds, kind, norm), g in per_query.groupby(["dataset", "model", "norm"], sort=False):
        by = {o: h.set_index("query") for o, h in g.groupby("oracle")}
        if not {"z3", "cpsat"} <= set(by):
            continue
        z, c = by["z3"], by["cpsat"]
        common = z.index.intersection(c.index)
        z, c = z.loc[common], c.loc[common]
        rows.append(
            {
                "dataset": ds,
                "model": kind,
                "norm": norm,
                "queries": len(common),
                "Z3 median s": float(z["seconds"].median()),
                "CP-SAT median s": float(c["seconds"].median()),
                "CP-SAT / Z3": float(c["seconds"].median() / z["seconds"].median()),
                "Z3 p90 s": float(z["seconds"].quantile(0.9)),
                "CP-SAT p90 s": float(c["seconds"].quantile(0.9)),
                "Z3 optimal": int((z["status"] == "optimal").sum()),
                "CP-SAT optimal": int((c["status"] == "optimal").sum()),
                "auto": "cpsat" if kind in ("gbm", "lgbm") else "z3",
            }
        )
    return pd.DataFrame(rows)


def age_experiment(model, train, test, args) -> list[dict]:  # type: ignore[no-untyped-def]
    schema = train.schema
    if "age" not in schema:
        return []
    free = train.with_schema(schema.with_actionability(age="free"))
    n = args.age_queries if args.age_queries is not None else args.queries
    X = unfavourable_rows(model, test, n)
    out = []
    for norm in args.norms:
        for name, factory in (
            (
                "MACE",
                lambda nm=norm: cf.MACE(
                    norm=nm, rel_gap=args.rel_gap, time_limit=args.time_limit, random_state=0
                ),
            ),
            ("MO", lambda nm=norm: cf.NearestObservable(norm=nm)),
        ):
            key = "delta_max" if name == "MACE" else "distance"
            m = factory().fit(model, free)
            r = m.explain(X, requirements=OWN)
            cfs = r.counterfactuals
            changed_age = [
                q
                for q in X.index
                if len(r.for_query(q)) and r.for_query(q)["age"].iloc[0] != X.loc[q, "age"]
            ]
            inc = []
            if changed_age:
                r2 = m.explain(
                    X.loc[changed_age],
                    constraints=cf.Constraints(immutable=["age"]),
                    requirements=OWN,
                )
                d1 = distances(r, key).loc[changed_age]
                d2 = distances(r2, key)
                ok = d1.notna() & d2.notna()
                inc = list((d2[ok] / d1[ok] - 1).to_numpy())
            out.append(
                {
                    "norm": norm,
                    "method": name,
                    "queries": len(X),
                    "found": int((r.found > 0).sum()),
                    "age_change_%": 100 * len(changed_age) / max(1, int((r.found > 0).sum())),
                    "rel_dist_increase_%": 100 * float(np.mean(inc)) if inc else np.nan,
                    "n_restricted": len(inc),
                    "n_cf_rows": len(cfs),
                }
            )
            print(out[-1], flush=True)
    return out


if __name__ == "__main__":
    main()
