"""Batch explanation at scale: throughput at 1 and 2 workers, through joblib (loky)
and through a local Dask cluster, as ratios measured in the same run.

    python benchmarks/scaling.py [--rows 10000] [--exact-rows 200]

`nearest` (and `mdpso`, `l2c` when installed) explain 10,000 Adult rows; the exact
methods (`mace`, `ceocl`) explain 200 rows the same way.
"""

from __future__ import annotations

import argparse
import tempfile

import pandas as pd
from _common import timed, write_table

import counterfact as cf
from counterfact.batch import explain_in_chunks

FAST = {"nearest": {}, "mdpso": {"n_particles": 30, "max_iter": 30}, "l2c": {"max_epochs": 20}}
EXACT = {"mace": {"time_limit": 30.0}, "ceocl": {"time_limit": 30.0}}


def _method(name: str, params: dict, model, train):  # type: ignore[no-untyped-def]
    try:
        return cf.methods.get(name, random_state=0, **params).fit(model, train)
    except (cf.ValidationError, cf.MissingDependencyError, TypeError) as exc:
        print(f"skip {name}: {exc}")
        return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--exact-rows", type=int, default=200)
    ap.add_argument("--chunk", type=int, default=500)
    args = ap.parse_args()
    data = cf.datasets.load("adult")
    train, test = data.split(test_size=0.3, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    rows = []
    available = set(cf.methods.names())
    plan = [(n, p, args.rows) for n, p in FAST.items()] + [(n, p, args.exact_rows) for n, p in EXACT.items()]
    for name, params, n_rows in plan:
        if name not in available:
            print(f"skip {name}: not part of this install")
            continue
        m = _method(name, params, model, train)
        if m is None:
            continue
        X = test.X.iloc[:n_rows]
        chunk = args.chunk if n_rows > 1000 else max(10, n_rows // 8)
        base = None
        for backend in ("loky", "dask"):
            for workers in (1, 2):
                with tempfile.TemporaryDirectory() as tmp:
                    rep, secs = timed(lambda b=backend, w=workers, t=tmp, mm=m, xx=X, c=chunk: explain_in_chunks(mm, xx, chunk_size=c, out_dir=t, n_jobs=w, backend=b))
                thr = len(X) / secs
                base = base or thr
                rows.append({
                    "method": name, "rows": len(X), "backend": backend, "workers": workers, "seconds": secs,
                    "rows_per_s": thr, "ratio_vs_loky_1": thr / base, "failed_chunks": len(rep.failed),
                    "coverage": float((rep.result.found > 0).mean()) if rep.result is not None else float("nan"),
                })
                print(rows[-1])
    write_table("scaling", pd.DataFrame(rows), ["throughput ratios are relative to loky with 1 worker, same method, same run", "2-core machine: 2 workers can at best double throughput"])


if __name__ == "__main__":
    main()
