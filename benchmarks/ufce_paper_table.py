"""UFCE's Table 7 (Suffian et al. 2024, RQ3) from a run of
``benchmarks/papers/ufce.yaml``, with 95 % intervals.

    python benchmarks/ufce_paper_table.py RESULTS

RESULTS is a folder written by ``counterfact benchmark benchmarks/papers/ufce.yaml``
(with ``--full``: 5 folds).  One row per dataset x method, pooled over the folds:

* ``queries``: the queries explained in all folds;
* ``with a counterfactual, per 50 [95% CI]``: the share of queries with at
  least one verified counterfactual, times 50 (the paper counts out of 50 per
  fold), with its Wilson interval over all the queries;
* ``per fold``: the same count in each fold;
* ``prox_euc`` and ``changes``: each query's mean over its returned
  counterfactuals (the paper scores only its chosen one), averaged over the
  queries that have one, ± the half-width of the normal 95 % interval;
* ``time median s``: seconds per query (``a``: a batch method's amortized
  time, batch time / n).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from _common import markdown, mean_ci, wilson

from counterfact.benchmark._runner import collect


def _mean_ci(x: pd.Series) -> str:
    m, h = mean_ci(x.dropna())
    if not np.isfinite(m):
        return ""
    return f"{m:.3g}" if not np.isfinite(h) else f"{m:.3g} ± {h:.2g}"


def table(results: Path) -> pd.DataFrame:
    long = collect(results)
    # the metrics are per query (repeated on each of its counterfactuals' rows)
    key = ["dataset", "model", "method", "seed", "fold", "query"]  # fold: --full runs only
    first = long.sort_values("rank", na_position="last").drop_duplicates(
        [c for c in key if c in long.columns]
    )
    rows = []
    for (ds, method), g in first.groupby(["dataset", "method"], sort=True):
        found = g["metric_found"].fillna(0) > 0
        n, k = len(g), int(found.sum())
        lo, hi = wilson(k, n)
        per_fold = found.groupby(g["fold"]).sum()
        amortized = (g.get("time_kind") == "amortized").all() if "time_kind" in g else False
        rows.append(
            {
                "dataset": ds,
                "method": method,
                "queries": n,
                "with a counterfactual, per 50 [95% CI]": (
                    f"{50 * k / n:.1f} [{50 * lo:.1f}, {50 * hi:.1f}]"
                ),
                "per fold": "/".join(str(int(v)) for v in per_fold),
                "prox_euc": _mean_ci(g.loc[found, "metric_prox_euc"]),
                "changes": _mean_ci(g.loc[found, "metric_changes"]),
                "time median s": f"{g['time'].median():.3g}" + ("ᵃ" if amortized else ""),
            }
        )
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("results", type=Path)
    args = ap.parse_args()
    print(markdown(table(args.results)))


if __name__ == "__main__":
    main()
