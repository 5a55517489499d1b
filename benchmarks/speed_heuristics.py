"""Speed of the heuristic methods where users wait: MD-PSO per query and L2C's amortisation.

    python benchmarks/speed_heuristics.py [--part mdpso|l2c|all] [--queries 5] [--rows 5]
                                          [--datasets ...] [--models lr rf mlp] [--tag NAME]
                                          [--max-epochs 200] [--no-dice]
                                          [--large-datasets adult default_credit heloc]
                                          [--large-models rf mlp] [--large-rows 200]

Every figure is a ratio against a baseline measured in the same run; absolute
seconds are context only.

**MD-PSO** (``--part mdpso``): COMPAS, German Credit, Hill-Valley, Arrhythmia
and LSVT with a random forest (100 trees, depth 8), ``--queries`` random test
rows (default 5), 3 counterfactuals, *one query per call* (the latency a user
sees).  Baseline: DiCE-random (``cf.methods.get("dice")``, dice-ml) on the
same rows and model, capped at ``--dice-limit`` seconds per query (a query
that reaches the cap counts at the cap, so its ratio is a bound).  The two
methods alternate query by query, so that both see the same machine load.
Columns: median seconds per query, the ratio MD-PSO / DiCE-random (target
<= 1), the paper's proximity (eq. 8 + eq. 10, MAD-weighted; lower is
nearer) averaged over each query's counterfactuals and for its first one
only (``proximity_first``, which does not depend on how many were found),
validity and coverage.

**L2C** (``--part l2c``): German Credit and Graduate Admission with a
logistic regression, a random forest (100 trees, depth 8) and an MLP; 100
counterfactuals per row (the paper's setting).  L2C is trained once
(``train_s``) and then explains the whole test split (200 / 100 rows) in one
call (``l2c_s_per_row``); DiCE-random and MD-PSO explain ``--rows`` of the
same rows one per call with 100 counterfactuals (``dice_s_per_row``,
``mdpso_s_per_row``).  ``break_even_rows`` = the number of rows from which
L2C's training plus inference is cheaper than the other method:
``train_s / (other_s_per_row - l2c_s_per_row)`` (target <= 20);
``inference_speedup_vs_dice`` = ``dice_s_per_row / l2c_s_per_row`` (target
>= 50); ``inference_ratio_vs_mdpso`` = ``l2c_s_per_row / mdpso_s_per_row``
(target <= 0.1).  Validity and coverage come from the verified results.
``--no-dice`` leaves DiCE-random out (its 100 answers per row take seconds).

**L2C at scale** (part of ``--part l2c``, table ``speed_heuristics_l2c_large``):
Adult, Default of credit and HELOC (HELOC is read from the user's copy: set
``COUNTERFACT_DATA_DIR`` or ``COUNTERFACT_HELOC``; a dataset that cannot be
loaded is reported as skipped) with a random forest and an MLP; L2C with its
defaults (no fallback), trained once with at most ``--max-epochs`` epochs,
explains ``--large-rows`` random test rows the model rejects, 100
counterfactuals asked.  Columns: coverage (rows with at least one verified
answer; target >= 0.95), distinct answers per row (the reported ones, after
verification, the diversity rule and sparsification; target >= 10), the
distinct valid samples per row before selection, the batch size and device
chosen, epochs, training and inference seconds.

Writes ``benchmarks/out/speed_heuristics_<part>[_<tag>].md`` and ``.csv``.
Runs are bounded by default (a few minutes per part on a 2-core machine);
``--queries``/``--rows`` raise the sample sizes.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import warnings
from typing import Any

import numpy as np
import pandas as pd
from _common import OUT, _markdown

import counterfact as cf
from counterfact._utils._deps import is_available

MDPSO_SETS = ["compas", "german_credit", "hill_valley", "arrhythmia", "lsvt"]
L2C_SETS = ["german_credit", "graduate_admission"]
LARGE_SETS = ["adult", "default_credit", "heloc"]
LOAD_ARGS: dict[str, dict[str, Any]] = {"graduate_admission": {"threshold": 0.7}}


def _split(name: str) -> tuple[cf.Dataset, cf.Dataset]:
    data = cf.datasets.load(name, **LOAD_ARGS.get(name, {}))
    return data.split(test_size=0.2, random_state=0)


def _pick(test: cf.Dataset, n: int, seed: int = 0) -> pd.DataFrame:
    X = test.X
    idx = np.random.default_rng(seed).choice(len(X), size=min(n, len(X)), replace=False)
    return X.iloc[np.sort(idx)]


def _one_per_call(
    method: Any, Q: pd.DataFrame, k: int
) -> tuple[list[float], list[cf.CounterfactualResult]]:
    times, results = [], []
    for i in range(len(Q)):
        t0 = time.perf_counter()
        results.append(method.explain(Q.iloc[[i]], n_counterfactuals=k))
        times.append(time.perf_counter() - t0)
    return times, results


def _quality(results: list[cf.CounterfactualResult], train: cf.Dataset, k: int) -> dict[str, float]:
    """Metrics of one-query results, averaged over the queries."""
    mad = train.mad()
    m = cf.metrics
    prox, first, valid, found, n_found = [], [], [], [], []
    for res in results:
        hit = bool((res.found > 0).iloc[0])
        found.append(hit)
        n_found.append(float(res.found.iloc[0]))
        valid.append(float(m.validity(res, n_requested=k).iloc[0]))
        if hit:
            p = (-m.continuous_proximity(res, mad=mad)).fillna(0) + (
                1.0 - m.categorical_proximity(res)
            ).fillna(0)
            prox.append(float(p.iloc[0]))
            x, c0 = res.queries.iloc[0], res.counterfactuals.iloc[[0]].reset_index(drop=True)
            a = -m.continuous_proximity(x, c0, train.schema, mad=mad)
            b = 1.0 - m.categorical_proximity(x, c0, train.schema)
            first.append((0.0 if np.isnan(a) else float(a)) + (0.0 if np.isnan(b) else float(b)))
    return {
        "proximity": float(np.mean(prox)) if prox else float("nan"),
        "proximity_first": float(np.mean(first)) if first else float("nan"),
        "validity": float(np.mean(valid)),
        "coverage": float(np.mean(found)),
        "cfs_per_row": float(np.mean(n_found)),
    }


# ----------------------------------------------------------------- MD-PSO
def mdpso_part(
    datasets: list[str], n_queries: int, k: int, dice_limit: float, dice_max_features: int
) -> pd.DataFrame:
    rows = []
    for ds in datasets:
        train, test = _split(ds)
        model = cf.models.fit(train, "rf", random_state=0)
        Q = _pick(test, n_queries)
        row: dict[str, Any] = {
            "dataset": ds,
            "features": len(train.schema),
            "queries": len(Q),
            "k": k,
        }
        pso = cf.MDPSO(random_state=0).fit(model, train)
        dice = None
        if is_available("dice_ml") and len(train.schema) <= dice_max_features:
            dice = cf.methods.get(
                "dice", dice_method="random", random_state=0, time_limit=dice_limit
            ).fit(model, train)
        # query by query, MD-PSO then DiCE-random, so that both see the same machine load
        t_pso, r_pso, t_dice, r_dice = [], [], [], []
        for i in range(len(Q)):
            t, r = _one_per_call(pso, Q.iloc[[i]], k)
            t_pso += t
            r_pso += r
            if dice is not None:
                t, r = _one_per_call(dice, Q.iloc[[i]], k)
                t_dice += t
                r_dice += r
        q = _quality(r_pso, train, k)
        row.update(
            {"mdpso_median_s": float(np.median(t_pso)), **{f"mdpso_{a}": b for a, b in q.items()}}
        )
        row["mdpso_iterations"] = float(
            np.median([r.diagnostics["n_iterations"].iloc[0] for r in r_pso])
        )
        if dice is not None:
            q = _quality(r_dice, train, k)
            capped = sum(1 for r in r_dice if (r.status == "timeout").any())
            row.update(
                {
                    "dice_median_s": float(np.median(t_dice)),
                    **{f"dice_{a}": b for a, b in q.items()},
                    "dice_capped": capped,
                }
            )
            # a baseline that answered nothing is no baseline: leave the ratio empty, unless every
            # query ran into the cap (DiCE-random needs more than the cap: the ratio is an upper
            # bound)
            answered = sum(int((r.found > 0).sum()) for r in r_dice)
            all_capped = capped == len(r_dice)
            row["ratio_mdpso_vs_dice"] = (
                row["mdpso_median_s"] / row["dice_median_s"]
                if answered or all_capped
                else float("nan")
            )
            row["ratio_is_bound"] = bool(
                capped > len(r_dice) // 2
            )  # the median DiCE query was capped
            if not answered:
                reasons = {str(v) for r in r_dice for v in r.reason if v}
                row["dice_note"] = (
                    "DiCE-random answered no query: " + "; ".join(sorted(reasons))[:200]
                )
        rows.append(row)
        print(row, flush=True)
    return pd.DataFrame(rows)


# -------------------------------------------------------------------- L2C
def l2c_part(
    datasets: list[str],
    kinds: list[str],
    n_rows: int,
    k: int,
    dice_limit: float,
    max_epochs: int,
    dice: bool = True,
) -> pd.DataFrame:
    rows = []
    # torch is imported before any clock starts: a process pays that once (1-2 s), not per training
    import torch  # noqa: F401

    for ds in datasets:
        train, test = _split(ds)
        for kind in kinds:
            model = cf.models.fit(train, kind, random_state=0)
            row: dict[str, Any] = {"dataset": ds, "model": kind, "test_rows": len(test), "k": k}
            l2c = cf.L2C(random_state=0, training={"max_epochs": max_epochs})
            t0 = time.perf_counter()
            l2c.fit(model, train)
            row["train_s"] = time.perf_counter() - t0
            row["epochs"] = l2c.n_epochs_
            row["gradient"] = l2c.gradient_
            t0 = time.perf_counter()
            res = l2c.explain(test.X, n_counterfactuals=k)
            row["l2c_s_per_row"] = (time.perf_counter() - t0) / len(test)
            row["l2c_generate_s_per_row"] = float(res.runtime.mean())
            row["l2c_validity"] = float(cf.metrics.validity(res).mean())
            row["l2c_coverage"] = float(cf.metrics.coverage(res))
            row["l2c_cfs_per_row"] = float(res.found.mean())
            l2c.set_params(sparsify=False)
            t0 = time.perf_counter()
            raw = l2c.explain(test.X, n_counterfactuals=k)
            row["l2c_nosparsify_s_per_row"] = (time.perf_counter() - t0) / len(test)
            row["l2c_nosparsify_coverage"] = float(cf.metrics.coverage(raw))
            row["l2c_nosparsify_cfs_per_row"] = float(raw.found.mean())
            Q = _pick(test, n_rows, seed=1)
            others: dict[str, Any] = {"mdpso": lambda: cf.MDPSO(random_state=0)}
            if dice and is_available("dice_ml"):
                others["dice"] = lambda: cf.methods.get(
                    "dice",
                    dice_method="random",
                    n_candidates=k,
                    random_state=0,
                    time_limit=dice_limit,
                )
            for label, make in others.items():
                m = make().fit(model, train)
                times, results = _one_per_call(m, Q, k)
                per_row = float(np.mean(times))
                q = _quality(results, train, k)
                row[f"{label}_s_per_row"] = per_row
                row[f"{label}_coverage"] = q["coverage"]
                row[f"{label}_cfs_per_row"] = q["cfs_per_row"]
                gain = per_row - row["l2c_s_per_row"]
                row[f"break_even_rows_vs_{label}"] = (
                    float(np.ceil(row["train_s"] / gain)) if gain > 0 else float("inf")
                )
            row["inference_ratio_vs_mdpso"] = row["l2c_s_per_row"] / row["mdpso_s_per_row"]
            row["batch_size"] = l2c.batch_size_
            row["device"] = l2c.device_
            if "dice_s_per_row" in row:
                row["inference_speedup_vs_dice"] = row["dice_s_per_row"] / row["l2c_s_per_row"]
                row["inference_speedup_vs_dice_nosparsify"] = (
                    row["dice_s_per_row"] / row["l2c_nosparsify_s_per_row"]
                )
            rows.append(row)
            print(row, flush=True)
    return pd.DataFrame(rows)


def _rejected(test: cf.Dataset, model: Any, ds: str, n: int) -> pd.DataFrame:
    """``n`` random test rows the model does not assign the favourable class."""
    X = test.X[np.asarray(model.predict(test.X)) != cf.datasets.favourable(ds)]
    idx = np.random.default_rng(2).choice(len(X), size=min(n, len(X)), replace=False)
    return X.iloc[np.sort(idx)]


def l2c_large_part(
    datasets: list[str], kinds: list[str], n_rows: int, k: int, max_epochs: int
) -> pd.DataFrame:
    """Coverage and distinct answers of L2C (defaults, no fallback) on large datasets."""
    rows = []
    for ds in datasets:
        try:
            train, test = _split(ds)
        except (cf.exceptions.ValidationError, cf.exceptions.DatasetNotFoundError) as err:
            # not bundled and no copy given (HELOC)
            rows.append({"dataset": ds, "note": f"skipped: {str(err).splitlines()[0][:120]}"})
            print(rows[-1], flush=True)
            continue
        for kind in kinds:
            model = cf.models.fit(train, kind, random_state=0)
            Q = _rejected(test, model, ds, n_rows)
            row: dict[str, Any] = {
                "dataset": ds,
                "model": kind,
                "train_rows": len(train.X),
                "rows": len(Q),
                "k": k,
            }
            l2c = cf.L2C(random_state=0, training={"max_epochs": max_epochs})
            t0 = time.perf_counter()
            l2c.fit(model, train)
            row.update(
                {
                    "train_s": time.perf_counter() - t0,
                    "epochs": l2c.n_epochs_,
                    "batch_size": l2c.batch_size_,
                    "device": l2c.device_,
                    "gradient": l2c.gradient_,
                }
            )
            t0 = time.perf_counter()
            res = l2c.explain(Q, n_counterfactuals=k)
            row["l2c_s_per_row"] = (time.perf_counter() - t0) / max(len(Q), 1)
            row["coverage"] = float(cf.metrics.coverage(res))
            row["answers_per_row"] = float(res.found.mean())
            row["answers_per_row_median"] = float(res.found.median())
            row["valid_samples_per_row"] = float(
                pd.to_numeric(res.diagnostics["n_valid"], errors="coerce").mean()
            )
            row["validity"] = float(cf.metrics.validity(res).mean())
            row["best_epoch"] = int(np.argmax([h["validation_validity"] for h in l2c.history_])) + 1
            raw = l2c.set_params(sparsify=False).explain(Q, n_counterfactuals=k)
            row["coverage_nosparsify"] = float(cf.metrics.coverage(raw))
            row["answers_per_row_nosparsify"] = float(raw.found.mean())
            rows.append(row)
            print(row, flush=True)
    return pd.DataFrame(rows)


def _write(stem: str, table: pd.DataFrame, notes: list[str], started: float) -> None:
    """The table as ``benchmarks/out/<stem>.md`` (with the run's machine, load and command) and
    ``.csv``."""
    OUT.mkdir(parents=True, exist_ok=True)
    table.to_csv(OUT / f"{stem}.csv", index=False)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        f"# {stem}",
        "",
        f"machine: {platform.machine()}, {os.cpu_count()} cores, load average {load:.1f} at the "
        f"end, python {platform.python_version()}; {time.perf_counter() - started:.0f} s. Command: "
        f"`python benchmarks/speed_heuristics.py {' '.join(os.sys.argv[1:])}`",
        "",
        *[f"- {n}" for n in notes],
        "",
        _markdown(table),
        "",
    ]
    (OUT / f"{stem}.md").write_text("\n".join(lines))
    print("\n".join(lines))


MDPSO_NOTES = [
    "ratio_mdpso_vs_dice = median seconds per query, MD-PSO / DiCE-random (target <= 1); empty "
    "when DiCE-random answered no query before its cap; ratio_is_bound: the median DiCE-random "
    "query reached the cap, so its true time is longer and the ratio an upper bound.",
    "proximity: eq. (8) + eq. (10) of the MD-PSO paper (MAD-weighted; lower is nearer), averaged "
    "over each query's counterfactuals, then over queries with a counterfactual; proximity_first: "
    "the same for each query's first (best) counterfactual only, which does not depend on how "
    "many were found.",
]
L2C_NOTES = [
    "break_even_rows_vs_X = ceil(train_s / (X_s_per_row - l2c_s_per_row)): from this many rows "
    "on, L2C's training plus inference costs less than X (target <= 20); train_s is L2C's fit() "
    "with torch already imported (a process pays the import once).",
    "inference_ratio_vs_mdpso = l2c_s_per_row / mdpso_s_per_row (target <= 0.1); "
    "inference_speedup_vs_dice = dice_s_per_row / l2c_s_per_row (target >= 50); l2c_s_per_row is "
    "the whole explain() call (verification and the sparsification pass included); "
    "l2c_generate_s_per_row is L2C's own sampling; *_nosparsify: the same trained L2C with "
    "sparsify=False.",
]
LARGE_NOTES = [
    "coverage: rows with at least one verified answer (no fallback; target >= 0.95); "
    "answers_per_row: the reported counterfactuals per row (verified, distinct under the "
    "diversity rule, sparsified; target >= 10); valid_samples_per_row: L2C's distinct valid "
    "samples per row before the pipeline's selection; best_epoch: the epoch of the highest "
    "validation validity; answers_per_row_nosparsify: the same trained L2C with sparsify=False "
    "(every verified, distinct sample).",
]


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--part", choices=["mdpso", "l2c", "all"], default="all")
    ap.add_argument("--datasets", nargs="+", default=None, help="override the part's datasets")
    ap.add_argument(
        "--models", nargs="+", default=["lr", "rf", "mlp"], help="L2C part: model kinds"
    )
    ap.add_argument("--queries", type=int, default=5, help="MD-PSO part: test rows per dataset")
    ap.add_argument(
        "--rows",
        type=int,
        default=3,
        help="L2C part: rows DiCE-random and MD-PSO explain (100 CFs each)",
    )
    ap.add_argument("--k", type=int, default=3, help="MD-PSO part: counterfactuals per query")
    ap.add_argument(
        "--dice-limit",
        type=float,
        default=60.0,
        help="seconds per DiCE query (a capped query counts at the cap)",
    )
    ap.add_argument("--dice-max-features", type=int, default=400)
    ap.add_argument("--no-dice", action="store_true", help="L2C part: leave DiCE-random out")
    ap.add_argument("--max-epochs", type=int, default=200, help="L2C part: epoch cap")
    ap.add_argument(
        "--large-datasets",
        nargs="*",
        default=LARGE_SETS,
        help="L2C part: large datasets (none: skip)",
    )
    ap.add_argument(
        "--large-models",
        nargs="+",
        default=["rf", "mlp"],
        help="L2C part: model kinds on the large datasets",
    )
    ap.add_argument(
        "--large-rows",
        type=int,
        default=200,
        help="L2C part: rejected test rows explained per large cell",
    )
    ap.add_argument(
        "--large-max-epochs",
        type=int,
        default=None,
        help="L2C part: epoch cap on the large datasets (default --max-epochs)",
    )
    ap.add_argument("--tag", default="")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    np.seterr(all="ignore")
    parts = ["mdpso", "l2c"] if args.part == "all" else [args.part]
    suffix = f"_{args.tag}" if args.tag else ""
    for part in parts:
        started = time.perf_counter()
        if part == "mdpso":
            table = mdpso_part(
                args.datasets or MDPSO_SETS,
                args.queries,
                args.k,
                args.dice_limit,
                args.dice_max_features,
            )
            head = (
                f"Random forest (100 trees, depth 8), 80/20 split seed 0, {args.queries} random "
                f"test rows per dataset, {args.k} counterfactuals, one query per explain() call "
                "(MD-PSO and DiCE-random alternate query by query, so that both see the same "
                f"load); DiCE-random capped at {args.dice_limit:g} s per query (dice_capped: "
                "queries that reached the cap, counted at the cap)."
            )
            _write(f"speed_heuristics_mdpso{suffix}", table, [head, *MDPSO_NOTES], started)
            continue
        table = l2c_part(
            args.datasets or L2C_SETS,
            args.models,
            args.rows,
            100,
            args.dice_limit,
            args.max_epochs,
            not args.no_dice,
        )
        head = (
            "100 counterfactuals per row (the paper's setting); L2C with its defaults (at most "
            f"{args.max_epochs} epochs), trained once, explains the whole test split in one call; "
            f"MD-PSO{'' if args.no_dice else ' and DiCE-random'} explain {args.rows} of the same "
            "rows, one per call."
        )
        _write(f"speed_heuristics_l2c{suffix}", table, [head, *L2C_NOTES], started)
        if args.large_datasets:
            started = time.perf_counter()
            epochs = args.large_max_epochs or args.max_epochs
            table = l2c_large_part(
                args.large_datasets, args.large_models, args.large_rows, 100, epochs
            )
            head = (
                f"L2C with its defaults (at most {epochs} epochs, no fallback), 80/20 split seed "
                f"0, {args.large_rows} random rejected test rows per cell, 100 counterfactuals "
                "asked."
            )
            _write(f"speed_heuristics_l2c_large{suffix}", table, [head, *LARGE_NOTES], started)


if __name__ == "__main__":
    main()
