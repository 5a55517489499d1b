"""MACE's paper tables (Karimi et al. 2020, Tables 2, 3 and 6) from a run of
``benchmarks/papers/mace.yaml``, with 95 % intervals.

    python benchmarks/mace_paper_table.py RESULTS

RESULTS is a folder written by ``counterfact benchmark benchmarks/papers/mace.yaml``.
One row per dataset x model x norm:

* ``queries``: the queries explained (test rows the model classifies as unfavourable);
* ``MACE coverage [95% CI]``: share of queries with a verified counterfactual,
  Wilson interval (Table 2);
* ``MO coverage``: the same for MO, the nearest training row of the other
  class that satisfies the dataset's actionability constraints (immutable
  features equal, monotone ones not decreased);
* ``optimal`` / ``at limit``: queries proven nearest within epsilon, and those
  answered at the time limit with the best counterfactual found (status ``feasible``);
* ``improvement vs MO %``: Table 3's ``100 * mean(1 - d_MACE / d_MO)`` over the
  queries both answered (``n both``), ``± `` the half-width of the normal 95 %
  interval; ``MACE <= MO``: on how many of those MACE's distance is not larger;
* ``MACE s median (p90)`` and ``MO s median``: seconds per query (Table 6).

Distances are the run's ``metric_distance_<norm>`` (normalised, as in the paper).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from _common import markdown, mean_ci, wilson

from counterfact.benchmark._runner import collect

NORMS = ("l0", "l1", "linf")
ORDER = {
    "adult": 0,
    "credit": 1,
    "compas": 2,
    "tree": 0,
    "forest": 1,
    "lr": 2,
    "mlp": 3,
}  # the paper's order


def table(results: Path) -> pd.DataFrame:
    long = collect(results)
    first = long.sort_values("rank", na_position="last").drop_duplicates(
        ["dataset", "model", "method", "seed", "query"]
    )
    rows = []
    groups = sorted(
        first.groupby(["dataset", "model"]),
        key=lambda kv: (ORDER.get(kv[0][0], 9), kv[0][0], ORDER.get(kv[0][1], 9), kv[0][1]),
    )
    for (ds, mo), g in groups:
        for norm in NORMS:
            mace, mo_ = (
                g[g["method"] == f"MACE-{norm}"].set_index("query"),
                g[g["method"] == f"MO-{norm}"].set_index("query"),
            )
            if mace.empty:
                continue
            col = f"metric_distance_{norm}"
            found = mace["metric_found"].fillna(0) > 0
            n, k = len(mace), int(found.sum())
            lo, hi = wilson(k, n)
            both = mace.index[found].intersection(mo_.index[mo_["metric_found"].fillna(0) > 0])
            dm, do = mace.loc[both, col].to_numpy(float), mo_.loc[both, col].to_numpy(float)
            ok = do > 0
            imp, half = mean_ci(100 * (1 - dm[ok] / do[ok]))
            t = mace["time"].to_numpy(float)
            rows.append(
                {
                    "dataset": ds,
                    "model": mo,
                    "norm": norm,
                    "queries": n,
                    "MACE coverage [95% CI]": f"{k / n:.2f} [{lo:.2f}, {hi:.2f}]" if n else "",
                    "MO coverage": f"{(mo_['metric_found'].fillna(0) > 0).mean():.2f}"
                    if len(mo_)
                    else "",
                    "optimal": int((mace["status"] == "optimal").sum()),
                    "at limit": int((mace["status"] == "feasible").sum()),
                    "improvement vs MO %": ""
                    if not np.isfinite(imp)
                    else f"{imp:.1f}" + (f" ± {half:.1f}" if np.isfinite(half) else ""),
                    "n both": int(ok.sum()),
                    "MACE <= MO": int((dm <= do + 1e-9).sum()),
                    "MACE s median (p90)": f"{np.nanmedian(t):.3g} ({np.nanpercentile(t, 90):.3g})"
                    if t.size
                    else "",
                    "MO s median": f"{np.nanmedian(mo_['time'].to_numpy(float)):.3g}"
                    if len(mo_)
                    else "",
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
