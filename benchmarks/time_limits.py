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
import os
import time
from typing import Any

import numpy as np
import pandas as pd
from _common import load_split, write_table

import counterfact as cf
from counterfact.methods._pipeline._batch import explain_in_chunks

#: parameters that are not the time limit (L2C: a short training; the rest: defaults)
PARAMS = {
    "l2c": {"training": {"max_epochs": 10}, "device": "cpu"},
}


def _within(wall: float, limit: float) -> bool:
    return wall <= limit + max(0.5, 0.1 * limit)


def _time_queries(
    m: Any, X: pd.DataFrame
) -> tuple[list[float], list[float], list[Any], list[float]]:
    """One query per explain call: wall seconds, the method's own seconds, statuses and
    process-time / wall-time shares."""
    walls: list[float] = []
    inside: list[float] = []
    statuses: list[Any] = []
    shares: list[float] = []
    for k in range(len(X)):
        t0, c0 = time.perf_counter(), time.process_time()
        r = m.explain(X.iloc[[k]])
        walls.append(time.perf_counter() - t0)
        shares.append((time.process_time() - c0) / walls[-1])
        inside.append(float(r.runtime.iloc[0]))
        statuses.append(r.status.iloc[0])
    return walls, inside, statuses, shares


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
                m = cf.methods.get(
                    method,
                    time_limit=float(args.limits[0]),
                    random_state=0,
                    **PARAMS.get(method, {}),
                )
                t0 = time.perf_counter()
                m.fit(model, train)
                fit_s = time.perf_counter() - t0
            except Exception as exc:
                print(f"skip {method} on {name}: {type(exc).__name__}: {exc}")
                notes.append(f"{method} on {name}: skipped ({type(exc).__name__}: {exc})")
                continue
            for limit in args.limits:
                m.set_params(time_limit=float(limit))
                load = os.getloadavg()[0]
                walls, inside, statuses, shares = _time_queries(m, X)
                w = np.array(walls)
                over = w - np.nan_to_num(np.array(inside))
                rows.append(
                    {
                        "dataset": name,
                        "model": f"{kind}{'' if not model_params else ' 100x8'}",
                        "method": method,
                        "limit s": limit,
                        "queries": len(w),
                        "fit s": fit_s,
                        "wall/limit mean": float(w.mean() / limit),
                        "wall/limit max": float(w.max() / limit),
                        ("within limit+max(0.5s,10%)"): (
                            f"{int(sum(_within(x, limit) for x in w))}/{len(w)}"
                        ),
                        "outside method s max": float(over.max()),
                        "cpu/wall min": float(min(shares)),
                        "load avg": load,
                        "statuses": ", ".join(
                            f"{s} {n}" for s, n in pd.Series(statuses).value_counts().items()
                        ),
                    }
                )
                print(rows[-1], flush=True)
    return rows


def _dask(args: argparse.Namespace, notes: list[str]) -> list[dict]:
    from distributed import Client, LocalCluster

    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.3, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    method = cf.methods.get(args.dask_method, random_state=0).fit(model, train)
    X = pd.concat([test.X, train.X]).iloc[: args.batch]
    # the reference every chunked run must equal (through JSON, as chunks travel)
    serial = cf.CounterfactualResult.from_json(method.explain(X).to_json())
    runs: list[dict] = []
    for rep in range(args.repeats):
        for workers in (1, 2):  # alternated, so that a change of the machine's load hits both
            with (
                LocalCluster(
                    n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
                ) as cluster,
                Client(cluster) as client,
            ):
                client.run(
                    lambda: __import__("counterfact.methods")
                )  # worker imports before the clock
                load = os.getloadavg()[0]
                t0 = time.perf_counter()
                rep_ = explain_in_chunks(
                    method, X, chunk_size=args.chunk_size, n_jobs=workers, parallel="dask"
                )
                wall = time.perf_counter() - t0
            res = rep_.result
            same = (
                res is not None
                and res.counterfactuals.equals(serial.counterfactuals)
                and res.status.equals(serial.status)
            )
            busy = float(np.nansum(list(rep_.chunk_seconds.values())))
            cpu = float(np.nansum(list(rep_.chunk_cpu_seconds.values())))
            runs.append(
                {
                    "workers": workers,
                    "repeat": rep,
                    "wall": wall,
                    "busy": busy,
                    "cpu": cpu,
                    "load": load,
                    "failed": len(rep_.failed),
                    "same": same,
                }
            )
            print(runs[-1], flush=True)
    df = pd.DataFrame(runs)
    base = float(df[df.workers == 1].wall.min())
    rows = []
    for workers, g in df.groupby("workers"):
        rows.append(
            {
                "workers": workers,
                "queries": len(X),
                "chunk size": args.chunk_size,
                "method": args.dask_method,
                "runs": len(g),
                "wall s min": float(g.wall.min()),
                "wall s median": float(g.wall.median()),
                "speed-up vs 1 worker (min walls)": base / float(g.wall.min()),
                "speed-up vs 1 worker (median walls)": float(df[df.workers == 1].wall.median())
                / float(g.wall.median()),
                "chunk seconds / wall (parallelism)": float((g.busy / g.wall).median()),
                "chunk CPU s / chunk wall s": float((g.cpu / g.busy).median()),
                "load avg at start": float(g.load.median()),
                "failed chunks": int(g.failed.sum()),
                "same result as serial explain": bool(g.same.all()),
            }
        )
    notes.append(
        f"Dask: German Credit LR, {args.dask_method} (defaults, random_state=0), {len(X)} "
        f"queries in chunks of {args.chunk_size}; LocalCluster(threads_per_worker=1, "
        "processes) started and its workers' imports done before the clock; 1 and 2 workers "
        f"alternated, {args.repeats} runs each"
    )
    notes.append(
        "parallelism: the chunks' wall seconds measured in the workers, summed, over the "
        "run's wall time (2 means both workers busy all the time); load avg: the machine's "
        f"1-minute load average at the start of the run, on {os.cpu_count()} cores (other "
        "processes' load slows the 2-worker run most)"
    )
    notes.append(
        "chunk CPU s / chunk wall s: the workers' CPU seconds over their wall seconds while "
        "running chunks (1: a core to itself; 0.5: it waited half the time for a core held "
        "by other processes)"
    )
    notes.append(
        "same result: counterfactuals and statuses equal to one serial explain() of the whole batch"
    )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--queries", type=int, default=5, help="queries per cell")
    ap.add_argument("--limits", type=float, nargs="+", default=[1.0, 2.0, 5.0])
    ap.add_argument(
        "--methods", nargs="+", default=["nearest", "mace", "ceocl", "ufce", "mdpso", "l2c"]
    )
    ap.add_argument("--batch", type=int, default=200, help="queries of the Dask batch")
    ap.add_argument("--chunk-size", type=int, default=25)
    ap.add_argument("--dask-method", default="mdpso")
    ap.add_argument("--repeats", type=int, default=2, help="runs per worker count (alternated)")
    ap.add_argument("--skip-dask", action="store_true")
    ap.add_argument("--skip-limits", action="store_true")
    args = ap.parse_args()
    notes = [
        "wall: one explain() call per query (validation, search, verification), the model "
        "fitted before; the contract is wall <= limit + max(0.5 s, 10 %)",
        "outside method: wall minus the method's own runtime (input checks, snapping, "
        "verification, sparsification: the base class's share)",
        "Taiwan: 5000 training rows (seeded subsample of the 80 % split), RF 100 trees "
        "depth 8; German Credit: LR",
        "cpu/wall: the process's CPU seconds over the wall seconds of the query (below 1 "
        "for single-threaded work: it waited for a core); load avg: the machine's 1-minute "
        f"load average at the start of the cell, on {os.cpu_count()} cores",
    ]
    if not args.skip_limits:
        write_table("time_limits", pd.DataFrame(_cells(args, notes)), notes)
    if not args.skip_dask:
        dn: list[str] = []
        write_table("time_limits_dask", pd.DataFrame(_dask(args, dn)), dn)


if __name__ == "__main__":
    main()
