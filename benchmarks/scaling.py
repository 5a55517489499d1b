"""Batch explanation at scale: throughput at 1 and 2 workers, through joblib (loky),
a local Dask cluster and local Ray, as ratios measured in the same run.

    python benchmarks/scaling.py [--rows 10000] [--exact-rows 200]
                                 [--methods nearest,l2c] [--rows-for mdpso=1000]

`nearest` (and `mdpso`, `l2c` when installed) explain 10,000 Adult rows; the exact
methods (`mace`, `ceocl`) explain 200 rows the same way.  ``--methods`` runs a
subset (its rows replace that method's rows in ``benchmarks/out/scaling.*``, the
others are kept), ``--rows-for`` sets one method's row count.  The Dask cluster
and Ray are started, and every backend's workers are warmed up with one single-row
task each, before the clock starts (that time is the ``setup_s`` column), so the
throughput compares the explaining itself.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import math
import sys
import tempfile
import time
from collections.abc import Iterator

import pandas as pd
from _common import OUT, timed, write_table

import counterfact as cf
from counterfact.methods._pipeline._batch import explain_in_chunks, parallel_backend

FAST = {
    "nearest": {},
    "mdpso": {"swarm": {"n_particles": 30, "max_iter": 30}},
    "l2c": {"training": {"max_epochs": 20}},
}
EXACT = {"mace": {"time_limit": 30.0}, "ceocl": {"time_limit": 30.0}}
#: the backends compared (Ray where it is installed)
BACKENDS = ("loky", "dask", *(("ray",) if importlib.util.find_spec("ray") else ()))


def _method(name: str, params: dict, model, train):  # type: ignore[no-untyped-def]
    try:
        return cf.methods.get(name, random_state=0, **params).fit(model, train)
    except (cf.ValidationError, cf.MissingDependencyError, TypeError) as exc:
        print(f"skip {name}: {exc}")
        return None


@contextlib.contextmanager
def _one_thread() -> Iterator[None]:
    """One BLAS/OpenMP/torch thread in this process, as joblib gives each loky
    worker (cpu_count // n_jobs) and Dask each worker (OMP_NUM_THREADS=1): so that
    the in-process 1-worker baseline does not use both cores through threads."""
    from threadpoolctl import threadpool_limits

    torch = sys.modules.get("torch")
    before = torch.get_num_threads() if torch is not None else None
    with threadpool_limits(limits=1):
        if torch is not None:
            torch.set_num_threads(1)
        try:
            yield
        finally:
            if torch is not None and before is not None:
                torch.set_num_threads(before)


def _run(  # type: ignore[no-untyped-def]
    m, X: pd.DataFrame, chunk: int, backend: str, workers: int
):
    """(report, seconds explaining, seconds of cluster start-up)."""
    t0 = time.perf_counter()
    ctx = (
        parallel_backend(backend, n_workers=workers)
        if backend in ("dask", "ray")
        else _one_thread()
        if workers == 1
        else _null()
    )
    with ctx:
        # Warm-up, outside the clock: one single-row task per worker, so that worker
        # processes are started and have imported the libraries (torch, ...) once.
        explain_in_chunks(m, X.iloc[:workers], chunk_size=1, n_jobs=workers, parallel=backend)
        setup = time.perf_counter() - t0
        with tempfile.TemporaryDirectory() as tmp:
            rep, secs = timed(
                lambda: explain_in_chunks(
                    m, X, chunk_size=chunk, out_dir=tmp, n_jobs=workers, parallel=backend
                )
            )
    return rep, secs, setup


class _null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--exact-rows", type=int, default=200)
    ap.add_argument("--chunk", type=int, default=500, help="largest chunk; small runs use rows/8")
    ap.add_argument(
        "--methods", default=None, help="comma-separated subset of " + ",".join([*FAST, *EXACT])
    )
    ap.add_argument(
        "--rows-for", action="append", default=[], metavar="NAME=N", help="rows for one method"
    )
    args = ap.parse_args()
    wanted = (
        None if args.methods is None else [s.strip() for s in args.methods.split(",") if s.strip()]
    )
    rows_for = {k: int(v) for k, v in (s.split("=", 1) for s in args.rows_for)}
    data = cf.datasets.load("adult")
    train, test = data.split(test_size=0.3, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    rows = []
    available = set(cf.methods.names())
    plan = [(n, p, args.rows) for n, p in FAST.items()] + [
        (n, p, args.exact_rows) for n, p in EXACT.items()
    ]
    for name, params, n_rows in plan:
        if wanted is not None and name not in wanted:
            continue
        if name not in available:
            print(f"skip {name}: not part of this install")
            continue
        t0 = time.perf_counter()
        m = _method(name, params, model, train)
        fit_s = time.perf_counter() - t0
        if m is None:
            continue
        X = test.X.iloc[: rows_for.get(name, n_rows)]
        chunk = min(args.chunk, max(10, math.ceil(len(X) / 8)))
        base = None
        for backend in BACKENDS:
            same = None
            for workers in (1, 2):
                rep, secs, setup = _run(m, X, chunk, backend, workers)
                thr = len(X) / secs
                base = base or thr
                same = same or thr
                rows.append(
                    {
                        "method": name,
                        "rows": len(X),
                        "chunk": chunk,
                        "backend": backend,
                        "workers": workers,
                        "fit_s": fit_s,
                        "setup_s": setup,
                        "seconds": secs,
                        "rows_per_s": thr,
                        "ratio_vs_loky_1": thr / base,
                        "ratio_vs_1_worker": thr / same,
                        "failed_chunks": len(rep.failed),
                        "coverage": float((rep.result.found > 0).mean())
                        if rep.result is not None
                        else float("nan"),
                    }
                )
                print(rows[-1], flush=True)
    table = pd.DataFrame(rows)
    previous = OUT / "scaling.csv"
    if wanted is not None and previous.exists():
        old = pd.read_csv(previous)
        table = pd.concat(
            [old[~old["method"].isin(table["method"].unique())], table], ignore_index=True
        )
    write_table(
        "scaling",
        table,
        [
            "Adult, logistic regression; ratio_vs_loky_1: throughput relative to loky "
            "(in-process) with 1 worker, same method and run; ratio_vs_1_worker: 2 workers "
            "vs 1 on the same backend",
            "the Dask cluster (1 or 2 worker processes, 1 thread each) and Ray (1 or 2 "
            "CPUs, one per task) are started and the workers warmed up (one single-row "
            "task each) before timing (setup_s); loky "
            "with 1 worker runs in-process, limited to one BLAS/OpenMP/torch thread like "
            "the workers",
            "2-core machine, shared with other jobs: 2 workers can at best double throughput",
        ],
    )


if __name__ == "__main__":
    main()
