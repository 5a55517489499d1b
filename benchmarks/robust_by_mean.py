"""What a mean over the call would buy: a what-if study over the answers a run kept.

``Requirements(robustness=p)`` promises each person ``p``: every row gets the cheapest
answer predicted to reach it, or its most robust answer and the shortfall. Forel et al.'s
vote threshold and ElliCE promise nothing per person, and their validity is a mean over
the rows they choose to answer. This study asks what the library would gain by promising
a mean instead. From every first answer that a run's settings of ours gave a row
(``<run>_answers.csv``: plain, margins, copies, each robustness level; and on forests the
vote thresholds, which are rungs of the library's own ladder), it picks per row the answer
that minimises ``cost - lam * predicted`` with the least ``lam`` whose mean prediction over
the run's rows reaches ``p``; each run is one call. Such a Lagrangian choice costs no more
than any other whose mean prediction is at least its own, which may lie a little above
``p`` (a knapsack solved exactly could stop nearer ``p``). ``predicted`` is the library's
own prediction of the share of retrained copies that accept an answer, from the 16
choosing copies that no search and no judge is (``copies_for(mace, 8)``). Where no choice
reaches ``p``, each row keeps its most robust answer: the study's last levels show the
most a call can reach over every row it answers.

The chosen answers join the pooled curve as ``ours (mean over the call)`` and the verdict
of ``robust.py`` is taken again, on the judges and on the 20 more copies, with and
without them (``<name>_by_mean`` and ``<name>_by_mean_target``).

Limits: the candidates are the answers the run's settings kept, not a ladder run for
this purpose (so a row's options are those a per-row rule looked at); the choice uses the
same copies as ``robustness=p``.

    python benchmarks/robust.py --datasets german_credit --models rf --seed 1 --name grf_seed1
    python benchmarks/robust.py --merge grf_seed0,grf_seed1 --pool --name grf_pooled
    python benchmarks/robust_by_mean.py --runs grf_seed0,grf_seed1 --seeds 0,1 --name grf_pooled
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

import robust
from _common import OUT, write_table

from counterfact.constraints._requirements import ROBUSTNESS_COPIES
from counterfact.methods._pipeline._copies import copies_for, predicted_share, scores
from counterfact.methods._pipeline._prepare import targets_of

#: how the chosen answers are named in the curve
BY_MEAN = "ours (mean over the call)"
#: the mean predictions asked for
LEVELS = tuple(round(p, 3) for p in np.arange(0.3, 0.991, 0.025))
#: bisection steps on the multiplier (its range is [0, LAM_MAX])
STEPS, LAM_MAX = 60, 1e4


def candidates(run: str, seed: int, rows: int) -> pd.DataFrame:
    """Every distinct first answer of our settings per row of ``run`` (seed ``seed``),
    with its cost, its predicted share, and the share of the judges and of the more
    copies that accept it."""
    ans = pd.read_csv(OUT / f"{run}_answers.csv")
    ans = ans.rename(columns={ans.columns[0]: "query"})
    ans = ans[ans["_who"].isin(["ours", robust.FOREL])]
    d, kind = ans["_dataset"].iloc[0], ans["_model"].iloc[0]
    s = robust.setup(d, kind, rows, 1.0, seed)
    names = s.train.schema.names
    ans = ans.assign(query=ans["query"].astype(s.X.index.dtype))
    ans = ans.drop_duplicates(subset=["query", *names]).reset_index(drop=True)
    X = ans[names].astype(s.X.dtypes.to_dict())
    x = s.X.loc[ans["query"]]
    targets = np.array(targets_of(s.model, s.model.predict(x), None, len(x)), dtype=object)
    share = predicted_share(scores(copies_for(s.mace, ROBUSTNESS_COPIES).choosing, X, targets))
    cost = [float(s.effort.evaluate(x.iloc[i], X.iloc[[i]])[0]) for i in range(len(X))]
    return pd.DataFrame(
        {
            "run": run,
            "dataset": d,
            "model": kind,
            "query": ans["query"].to_numpy(),
            "setting": ans["_setting"].to_numpy(),
            "predicted": share,
            "cost": cost,
            "judges": robust._accepts(X, pd.Series(targets), s.judges).mean(axis=0),
            "more": robust._accepts(X, pd.Series(targets), s.reference).mean(axis=0),
        }
    )


def pick(cands: pd.DataFrame, lam: float) -> pd.DataFrame:
    """Per row, the answer least in ``cost - lam * predicted`` (the cheaper among equals)."""
    ordered = cands.sort_values(["query", "cost"], kind="stable")
    score = ordered["cost"] - lam * ordered["predicted"]
    return ordered.loc[score.groupby(ordered["query"], sort=False).idxmin()]


def allocate(cands: pd.DataFrame, p: float) -> pd.DataFrame:
    """One call's answers (``cands`` of one run): the least multiplier whose choice's
    mean prediction reaches ``p`` (bisection), else each row's most robust answer."""
    top = pick(cands, LAM_MAX)
    if top["predicted"].mean() < p:
        return top
    lo, hi = 0.0, LAM_MAX
    for _ in range(STEPS):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if pick(cands, mid)["predicted"].mean() >= p else (mid, hi)
    return pick(cands, hi)


def study(cands: pd.DataFrame, rows: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(one point per level, every chosen answer's cost) over the runs of ``cands``;
    ``rows``: the rows explained over all runs."""
    points, costs = [], []
    for p in LEVELS:
        chosen = pd.concat(
            [robust._of_run(allocate(g, p), r) for r, g in cands.groupby("run", sort=False)]
        )
        label = f"mean {p:g}"
        points.append(
            {
                "dataset": chosen["dataset"].iloc[0],
                "model": chosen["model"].iloc[0],
                "who": BY_MEAN,
                "setting": label,
                "rows": rows,
                "answered": len(chosen),
                "mean predicted": round(float(chosen["predicted"].mean()), 3),
                "valid (judges)": round(float(chosen["judges"].mean()), 3),
                f"valid ({robust.REFERENCE} more copies)": round(float(chosen["more"].mean()), 3),
                "median cost": round(float(chosen["cost"].median()), 2),
                **_pairs(chosen),
            }
        )
        costs.append(chosen.assign(who=BY_MEAN, setting=label))
    keep = ["dataset", "model", "who", "setting", "query", "cost"]
    return pd.DataFrame(points), pd.concat(costs)[keep]


def _pairs(chosen: pd.DataFrame) -> dict[str, int]:
    """The (answer, model) pairs accepted and judged behind the chosen answers' validities,
    so that the verdict compares exact shares (``robust.exact_valid``)."""
    return robust._count_columns(
        int(np.rint(chosen["judges"].sum() * robust.N_JUDGES)),
        len(chosen) * robust.N_JUDGES,
        int(np.rint(chosen["more"].sum() * robust.REFERENCE)),
        len(chosen) * robust.REFERENCE,
        robust.REFERENCE,
    )


def verdicts(name: str, points: pd.DataFrame, costs: pd.DataFrame) -> pd.DataFrame:
    """``robust.verdict`` of the pooled curve ``name`` on the judges and on the more
    copies, with our settings alone and with the mean's choices beside them."""
    table = pd.read_csv(OUT / f"{name}.csv")
    joined = pd.concat([table, points[[c for c in points if c in table]]], ignore_index=True)
    every = pd.concat([pd.read_csv(OUT / f"{name}_costs.csv"), costs], ignore_index=True)
    out = []
    more = f"{robust.REFERENCE} more copies"
    for valid, on in (("valid (judges)", "judges"), (f"valid ({more})", more)):
        for ours, counted in ((("ours",), "ours"), (("ours", BY_MEAN), f"ours + {BY_MEAN}")):
            v = robust.verdict(joined, every, ours, valid)
            out.append(v.assign(**{"validity on": on, "counted": counted}))
    return pd.concat(out, ignore_index=True)


def _args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--runs", required=True, help="comma-separated --name of each seed's run")
    p.add_argument("--seeds", required=True, help="each run's --seed, in the same order")
    p.add_argument("--name", required=True, help="the pooled curve (robust.py --merge --pool)")
    p.add_argument("--rows", type=int, default=50, help="the runs' --rows")
    args = p.parse_args(argv)
    if len(args.runs.split(",")) != len(args.seeds.split(",")):
        p.error("--runs and --seeds must name as many runs as seeds, in the same order")
    return args


def main(argv: list[str] | None = None) -> int:
    args = _args(argv)
    warnings.filterwarnings("ignore")
    runs, seeds = args.runs.split(","), [int(s) for s in args.seeds.split(",")]
    cands = pd.concat(
        [candidates(r, s, args.rows) for r, s in zip(runs, seeds, strict=True)],
        ignore_index=True,
    )
    rows = int(pd.read_csv(OUT / f"{args.name}.csv")["rows"].iloc[0])
    points, costs = study(cands, rows)
    notes = [
        f"Runs {', '.join(runs)} (seeds {args.seeds}); per run (one call), per row the "
        "answer least in cost - lam * predicted, with the least lam whose mean predicted "
        "share over the run's rows reaches the level, else each row's most robust answer.",
        "Candidates: every distinct first answer of our settings for the row (forests: "
        "the vote thresholds too, rungs of the library's ladder); predicted: from the "
        "library's 16 choosing copies; validity: the judges and the more copies of the "
        "run, never used to choose.",
    ]
    write_table(f"{args.name}_by_mean", points, notes, hidden=robust.count_columns(points))
    write_table(
        f"{args.name}_by_mean_target",
        verdicts(args.name, points, costs),
        [
            "robust.py's verdict (see its _target table), with the mean's choices counted "
            "among ours and without."
        ],
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
