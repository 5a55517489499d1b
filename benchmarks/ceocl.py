"""CE-OCL against the paper (Maragno, Röber & Birbil 2022): the shape of Tables 2-3, HiGHS vs SCIP,
and the epsilon-enlarged trust region at 4000 hull points.

    python benchmarks/ceocl.py [--queries 5] [--datasets adult compas heloc give_me_some_credit]
                               [--models lr tree rf gbm mlp] [--n-cfs 1 3] [--trust none hull]
                               [--backends highs scip] [--norm l2] [--alpha 0.1] [--time-limit 60]
                               [--max-train 5000] [--hull-queries 5] [--hull-points 4000]

Main table (`ceocl.md`), one row per dataset x model x n_cf x trust region x backend
(Tables 2-3: `--queries 30` is the paper's protocol; the default is a quick run).
The queries are the first test rows that the model classifies as the unfavourable
class; the target is the favourable one; the dataset loaders' immutables hold.
Scores are the paper's (DiCE's, Mothilal et al. 2020) from `counterfact.metrics`,
averaged over queries with their standard error:

* `validity` = distinct valid counterfactuals / requested (DiCE's; every returned
  row is re-checked with the real model, so < 1 means fewer rows than asked);
* `valid_rows` = share of the returned rows that the real model puts in the
  target class (must be 1.0: the bar);
* `cat_prox`, `cont_prox` (MAD-normalised, <= 0; the paper's Table 2-3
  continuous proximity is not normalised, so only the sign and ordering compare),
  `sparsity` (DiCE's: share of unchanged features), and for n_cf = 3 the three
  diversity scores `cat_div`, `cont_div`, `count_div`;
* `median_s` / `p90_s` seconds per query (all solves of the query), and a
  side-by-side table (`ceocl_backends.md`) of HiGHS and SCIP times per cell.

Trust-region timing (`ceocl_trust.md`): Adult, LR and MLP, the epsilon-enlarged
hull (`trust_epsilon=0.05`, linf) with `--hull-points` hull points, both backends,
median / max seconds per query (target: median < 10 s), against the same
queries without a trust region (baseline measured in the same run).

Writes benchmarks/out/ceocl*.md and .csv.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from _common import load_split, write_table

import counterfact as cf

#: each method's own objective (MACE's eq. (3) under its norm, CE-OCL's): what this measures
OWN = cf.Requirements(costs="own")

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"

KIND_PARAMS: dict[str, tuple[str, dict[str, Any]]] = {
    "lr": ("lr", {}),
    "tree": ("tree", {"max_depth": 6}),
    "rf": ("rf", {"n_estimators": 50, "max_depth": 5}),
    "gbm": ("gbm", {"n_estimators": 50, "max_depth": 3}),
    "mlp": ("mlp", {"hidden_layer_sizes": (10, 10)}),
}


def load(name: str) -> cf.Dataset:
    """A bundled dataset, or the user's copy under ../shared/datasets/<name>."""
    try:
        return cf.datasets.load(name)
    except cf.exceptions.DatasetNotFoundError:
        return cf.datasets.load(name, path=str(SHARED / name))


def unfavourable_rows(model: Any, test: cf.Dataset, n: int) -> pd.DataFrame:
    fav = test.metadata.get("favourable_class", model.classes_[-1])
    X = test.X
    return X[model.predict(X) != fav].iloc[:n]


def _mean_se(s: pd.Series) -> tuple[float, float]:
    s = pd.to_numeric(s, errors="coerce").dropna()
    if not len(s):
        return np.nan, np.nan
    return float(s.mean()), float(s.std(ddof=1) / np.sqrt(len(s))) if len(s) > 1 else 0.0


def scores(
    res: cf.CounterfactualResult, train: cf.Dataset, n_cf: int, model: Any
) -> dict[str, float]:
    """The paper's scores (means over queries, ``_se`` their standard errors)."""
    m = cf.metrics
    out: dict[str, float] = {}
    per = {
        "validity": m.validity(res, n_requested=n_cf),
        "cat_prox": m.categorical_proximity(res),
        "cont_prox": m.continuous_proximity(res, train=train),
        "sparsity": m.dice_sparsity(res),
    }
    if n_cf > 1:
        per.update(
            cat_div=m.categorical_diversity(res),
            cont_div=m.continuous_diversity(res, train=train),
            count_div=m.count_diversity(res),
        )
    for k, s in per.items():
        out[k], out[f"{k}_se"] = _mean_se(s)
    cfs = res.counterfactuals
    if len(cfs):
        # independent re-check of every returned row with the user's model
        pred = model.predict(cfs.reset_index(drop=True))
        tgt = res.target.reindex(cfs.index.get_level_values(0)).to_numpy()
        out["valid_rows"] = float(np.mean(pred == tgt))
    else:
        out["valid_rows"] = np.nan
    return out


def run_cell(
    model: Any,
    train: cf.Dataset,
    X: pd.DataFrame,
    *,
    backend: str,
    n_cf: int,
    trust: str | None,
    args: Any,
    **extra: Any,
) -> tuple[cf.CEOCL, cf.CounterfactualResult]:
    extra.setdefault("trust_epsilon", args.trust_epsilon if trust else 0.0)
    method = cf.CEOCL(
        norm=args.norm,
        alpha=args.alpha,
        trust_region=trust,
        solver=backend,
        time_limit=args.time_limit,
        random_state=0,
        **extra,
    ).fit(model, train)
    return method, method.explain(X, n_counterfactuals=n_cf, requirements=OWN)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--queries", type=int, default=5)
    ap.add_argument(
        "--datasets", nargs="+", default=["adult", "compas", "heloc", "give_me_some_credit"]
    )
    ap.add_argument("--models", nargs="+", default=list(KIND_PARAMS))
    ap.add_argument("--n-cfs", nargs="+", type=int, default=[1, 3])
    ap.add_argument(
        "--trust", nargs="+", default=["none", "hull"], choices=["none", "hull", "clusters"]
    )
    ap.add_argument("--backends", nargs="+", default=["highs", "scip"], choices=["highs", "scip"])
    ap.add_argument(
        "--trust-epsilon", type=float, default=0.0, help="enlargement of the hull in the main table"
    )
    ap.add_argument("--norm", default="l2", choices=["l2", "l1", "l0"])
    ap.add_argument("--alpha", type=float, default=0.1, help="sparsity penalty per changed feature")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument(
        "--max-train",
        type=int,
        default=5000,
        help="subsample the training rows (model fits, hull size)",
    )
    ap.add_argument(
        "--hull-queries",
        type=int,
        default=5,
        help="queries of the 4000-point trust-region timing; 0 to skip",
    )
    ap.add_argument("--hull-points", type=int, default=4000)
    ap.add_argument("--hull-epsilon", type=float, default=0.05)
    ap.add_argument("--skip-main", action="store_true", help="only the trust-region timing")
    ap.add_argument("--tag", default="", help="suffix of the output names (ceocl<tag>.md, ...)")
    args = ap.parse_args()
    warnings.filterwarnings("ignore", category=FutureWarning)

    rows: list[dict[str, Any]] = []
    notes = [
        f"norm {args.norm}, alpha {args.alpha}, time limit {args.time_limit} s per query, "
        f"{args.queries} queries per cell, training rows capped at {args.max_train}; trust region "
        f"'hull' = convex hull (enlarged by epsilon {args.trust_epsilon}) of target-class training "
        "rows predicted as the target (at most 4000 points)",
        "validity = distinct valid CFs / requested (DiCE); valid_rows = share of returned rows "
        "the real model flips (bar: 1.0)",
        "cont_prox is MAD-normalised (counterfact.metrics); the paper's is in raw units",
        "seconds per query, n_jobs=1, on a 2-core machine shared with other jobs: compare ratios "
        "within this table",
    ]
    if not args.skip_main:
        for ds in args.datasets:
            split = load_split(ds, load, notes, args.max_train)
            if split is None:
                continue
            train, test = split
            for kind in args.models:
                base, params = KIND_PARAMS[kind]
                model = cf.models.fit(train, base, random_state=0, **params)
                acc = float((model.predict(test.X) == test.y.to_numpy()).mean())
                X = unfavourable_rows(model, test, args.queries)
                for n_cf in args.n_cfs:
                    for trust in args.trust:
                        for backend in args.backends:
                            t0 = time.perf_counter()
                            _method, res = run_cell(
                                model,
                                train,
                                X,
                                backend=backend,
                                n_cf=n_cf,
                                trust=None if trust == "none" else trust,
                                args=args,
                            )
                            wall = time.perf_counter() - t0
                            rt = res.runtime
                            st = res.status.value_counts()
                            row = {
                                "dataset": ds,
                                "model": kind,
                                "n_cf": n_cf,
                                "trust": trust,
                                "backend": backend,
                                "queries": len(X),
                                "found": int((res.found > 0).sum()),
                                "optimal": int(st.get("optimal", 0)),
                                "infeasible": int(st.get("infeasible", 0)),
                                "timeout": int(st.get("timeout", 0) + st.get("feasible", 0)),
                                **scores(res, train, n_cf, model),
                                "median_s": float(rt.median()) if len(rt) else np.nan,
                                "p90_s": float(rt.quantile(0.9)) if len(rt) else np.nan,
                                "max_s": float(rt.max()) if len(rt) else np.nan,
                                "wall_s": wall,
                                "test_acc": acc,
                            }
                            rows.append(row)
                            print(
                                {
                                    k: (round(v, 4) if isinstance(v, float) else v)
                                    for k, v in row.items()
                                    if not k.endswith("_se")
                                },
                                flush=True,
                            )
        table = pd.DataFrame(rows)
        if len(table):
            show = [c for c in table.columns if not c.endswith("_se") and c not in ("wall_s",)]
            write_table(f"ceocl{args.tag}", table[show], notes)
            table.to_csv(
                Path(__file__).resolve().parent / "out" / f"ceocl{args.tag}_full.csv", index=False
            )
            if len(args.backends) > 1:
                side = table.pivot_table(
                    index=["dataset", "model", "n_cf", "trust"],
                    columns="backend",
                    values=["median_s", "max_s", "valid_rows"],
                    aggfunc="first",
                )
                side.columns = [f"{b}_{v}" for v, b in side.columns]
                side = side.reset_index()
                if {"highs_median_s", "scip_median_s"} <= set(side.columns):
                    side["scip/highs"] = side["scip_median_s"] / side["highs_median_s"]
                write_table(
                    f"ceocl{args.tag}_backends",
                    side,
                    ["HiGHS and SCIP seconds per query, same queries, same machine (shared)"],
                )
    if args.hull_queries > 0:
        trust_timing(args)


def trust_timing(args: Any) -> None:
    """Adult, LR and MLP: the epsilon-enlarged hull with ``--hull-points`` points, both backends."""
    data = load("adult")
    train, test = data.split(test_size=0.2, random_state=0)
    out = []
    for kind in ("lr", "mlp"):
        base, params = KIND_PARAMS[kind]
        model = cf.models.fit(train, base, random_state=0, **params)
        X = unfavourable_rows(model, test, args.hull_queries)
        for backend in args.backends:
            for label, extra in (
                ("none", {}),
                (
                    f"eps-hull {args.hull_points}",
                    {
                        "trust_region": "hull",
                        "trust_epsilon": args.hull_epsilon,
                        "max_hull_points": args.hull_points,
                    },
                ),
            ):
                trust = extra.pop("trust_region", None)
                _method, res = run_cell(
                    model, train, X, backend=backend, n_cf=1, trust=trust, args=args, **extra
                )
                rt = res.runtime
                d = res.diagnostics
                cfs = res.counterfactuals
                pred = model.predict(cfs.reset_index(drop=True)) if len(cfs) else np.array([])
                tgt = (
                    res.target.reindex(cfs.index.get_level_values(0)).to_numpy()
                    if len(cfs)
                    else np.array([])
                )
                out.append(
                    {
                        "model": kind,
                        "backend": backend,
                        "trust": label,
                        "hull_points": int(
                            pd.to_numeric(d.get("hull_points"), errors="coerce").median()
                        )
                        if "hull_points" in d
                        else 0,
                        "n_vars": float(pd.to_numeric(d.get("n_vars"), errors="coerce").median()),
                        "queries": len(X),
                        "found": int((res.found > 0).sum()),
                        "optimal": int((res.status == "optimal").sum()),
                        "valid_rows": float(np.mean(pred == tgt)) if len(cfs) else np.nan,
                        "median_s": float(rt.median()),
                        "max_s": float(rt.max()),
                        "mean_objective": float(
                            pd.to_numeric(d["objective"], errors="coerce").mean()
                        ),
                    }
                )
                print(out[-1], flush=True)
    table = pd.DataFrame(out)
    base = table[table.trust == "none"].set_index(["model", "backend"])["median_s"]
    table["x_vs_no_trust"] = [
        r.median_s / base.get((r.model, r.backend), np.nan) for r in table.itertuples()
    ]
    write_table(
        f"ceocl{args.tag}_trust",
        table,
        [
            f"Adult (all {len(train)} training rows), {args.hull_queries} queries, 1 CF, norm "
            f"{args.norm}, alpha {args.alpha}; trust region: hull of up to {args.hull_points} "
            f"target-class points enlarged by epsilon {args.hull_epsilon} (linf)",
            "target: median < 10 s per query for LR and MLP; x_vs_no_trust = median / median "
            "without trust region (same run)",
            "2-core machine shared with other jobs",
        ],
    )


if __name__ == "__main__":
    main()
