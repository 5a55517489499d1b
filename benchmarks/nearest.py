"""Time per query of the `nearest` baseline on Adult (all training rows as reference),
at n_jobs=1 and n_jobs=2, reported as a ratio measured in the same run.

    python benchmarks/nearest.py [--queries 200]
"""

from __future__ import annotations

import argparse

import pandas as pd
from _common import timed, write_table

import counterfact as cf


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--queries", type=int, default=200)
    args = ap.parse_args()
    data = cf.datasets.load("adult")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    method, fit_s = timed(lambda: cf.NearestObservable(norm="l1").fit(model, train))
    X = test.X.iloc[: args.queries]
    rows = []
    base = None
    for n_jobs in (1, 2):
        r, secs = timed(lambda n=n_jobs: method.explain(X, n_counterfactuals=3, n_jobs=n))
        per_q = secs / len(X)
        base = base or per_q
        rows.append(
            {
                "n_jobs": n_jobs,
                "queries": len(X),
                "reference_rows": len(train),
                "seconds_total": secs,
                "ms_per_query": 1000 * per_q,
                "speed-up vs n_jobs=1": base / per_q,
                "coverage": float((r.found > 0).mean()),
            }
        )
    write_table(
        "nearest",
        pd.DataFrame(rows),
        [
            f"Adult, LR model, {len(train)} reference rows; fit {fit_s:.2f} s",
            "ratios are within this run",
        ],
    )


if __name__ == "__main__":
    main()
