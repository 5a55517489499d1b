"""Time limits as a contract, and the Dask speed-up of chunked batches.

1. For each method, on the Default of Credit Card Clients (Taiwan) random
   forest (100 trees, depth 8) and on German Credit (LR), the wall time of
   ``explain`` on one query at a time at ``time_limit`` 1, 2 and 5 s: the ratio
   wall/limit and whether it stays within ``limit + max(0.5 s, 10 %)``.
2. The wall time of a 200-query ``explain_in_chunks`` batch on a local Dask
   cluster with one worker and with two (ratio), the cluster started before
   the clock.

    python benchmarks/time_limits.py [--queries 5] [--limits 1 2 5] [--methods ...]
                                     [--batch 200] [--chunk-size 25] [--skip-dask]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from _common import load_split, write_table

import counterfact as cf
from counterfact.batch import explain_in_chunks

#: parameters that are not the time limit (L2C: a short training; the rest: defaults)
PARAMS = {
    "l2c": {"max_epochs": 10, "device": "cpu"},
}


def _within(wall: float, limit: float) -> bool:
    return wall <= limit + max(0.5, 0.1 * limit)


def _cells(args: argparse.Namespace, notes: list[str]) -> list[dict]:
    rows = []
    settings = [
        ("default_credit_taiwan", "rf", {"n_estimators": 100, "max_depth": 8}, 5000),
        ("german_credit", "lr", {}, None),
    ]
    for name, kind, model_params, max_train in settings:
        split = load_split(name, cf.datasets.load, notes, max_train=max_train)
        if split is None:
            continue
        train, test = split
        model = cf.models.fit(train, kind, random_state=0, **model_params)
        fav = cf.datasets.favourable(name)
        X = test.X[model.predict(test.X) != fav].iloc[: args.queries]
        for method in args.methods:
            try:  # fitted once; only the time limit changes between cells
                m = cf.methods.get(method, time_limit=float(args.limits[0]), random_state=0, **PARAMS.get(method, {}))
                t0 = time.perf_counter()
                m.fit(model, train)
                fit_s = time.perf_counter() - t0
            except Exception as exc:
                print(f"skip {method} on {name}: {type(exc).__name__}: {exc}")
                notes.append(f"{method} on {name}: skipped ({type(exc).__name__}: {exc})")
                continue
            for limit in args.limits:
                m.set_params(time_limit=float(limit))
                walls, inside, statuses = [], [], []
                for k in range(len(X)):
                    t0 = time.perf_counter()
                    r = m.explain(X.iloc[[k]], _position_offset=k)
                    walls.append(time.perf_counter() - t0)
                    inside.append(float(r.runtime.iloc[0]))
                    statuses.append(r.status.iloc[0])
                w = np.array(walls)
                over = w - np.nan_to_num(np.array(inside))
                rows.append({
                    "dataset": name, "model": f"{kind}{'' if not model_params else ' 100x8'}", "method": method,
                    "limit s": limit, "queries": len(w), "fit s": fit_s,
                    "wall/limit mean": float(w.mean() / limit), "wall/limit max": float(w.max() / limit),
                    "within limit+max(0.5s,10%)": f"{int(sum(_within(x, limit) for x in w))}/{len(w)}",
                    "outside method s max": float(over.max()),
                    "statuses": ", ".join(f"{s} {n}" for s, n in pd.Series(statuses).value_counts().items()),
                })
                print(rows[-1], flush=True)
    return rows


def _dask(args: argparse.Namespace, notes: list[str]) -> list[dict]:
    from distributed import Client, LocalCluster

    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.3, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    method = cf.methods.get(args.dask_method, random_state=0).fit(model, train)
    X = pd.concat([test.X, train.X]).iloc[: args.batch]
    rows, base, first = [], None, None
    for workers in (1, 2):
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(cluster):
            t0 = time.perf_counter()
            rep = explain_in_chunks(method, X, chunk_size=args.chunk_size, n_jobs=workers, backend="dask")
            wall = time.perf_counter() - t0
        base = base or wall
        if first is None:
            first = rep.result
        same = rep.result is not None and rep.result.counterfactuals.sort_index().equals(first.counterfactuals.sort_index())
        rows.append({
            "workers": workers, "queries": len(X), "chunk size": args.chunk_size, "method": args.dask_method,
            "wall s": wall, "speed-up vs 1 worker": base / wall, "failed chunks": len(rep.failed),
            "same result as 1 worker": same,
        })
        print(rows[-1], flush=True)
    notes.append(f"Dask: German Credit LR, {args.dask_method} (defaults, random_state=0), {len(X)} queries in chunks of "
                 f"{args.chunk_size}; LocalCluster(threads_per_worker=1) started before the clock")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--queries", type=int, default=5, help="queries per cell")
    ap.add_argument("--limits", type=float, nargs="+", default=[1.0, 2.0, 5.0])
    ap.add_argument("--methods", nargs="+", default=["nearest", "mace", "ceocl", "ufce", "mdpso", "l2c"])
    ap.add_argument("--batch", type=int, default=200, help="queries of the Dask batch")
    ap.add_argument("--chunk-size", type=int, default=25)
    ap.add_argument("--dask-method", default="mdpso")
    ap.add_argument("--skip-dask", action="store_true")
    ap.add_argument("--skip-limits", action="store_true")
    args = ap.parse_args()
    notes = [
        "wall: one explain() call per query (validation, search, verification), the model fitted before; "
        "the contract is wall <= limit + max(0.5 s, 10 %)",
        "outside method: wall minus the method's own runtime (input checks, snapping, verification, "
        "sparsification: the base class's share)",
        "Taiwan: 5000 training rows (seeded subsample of the 80 % split), RF 100 trees depth 8; German Credit: LR",
    ]
    if not args.skip_limits:
        write_table("time_limits", pd.DataFrame(_cells(args, notes)), notes)
    if not args.skip_dask:
        dn: list[str] = []
        write_table("time_limits_dask", pd.DataFrame(_dask(args, dn)), dn)


if __name__ == "__main__":
    main()
