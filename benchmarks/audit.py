"""Recourse audits of Adult and Default of credit: recourse rates and gaps per group,
rows proven stuck, and what the audit costs in time.

    python benchmarks/audit.py [--full] [--rows-adult 120] [--rows-credit 300] [--docs]
                               [--configs mace-lr,mace-rf,ufce-rf] [--no-dask]
                               [--timing-rows 300] [--work-dir DIR]

For each dataset (80/20 split, seed 0) a population of test rows is audited: a seeded
sample (default 120 Adult rows, 300 Default-of-credit rows, of which the model rejects
a share) or, with ``--full``, every test row, with the models trained on the whole
training split.  Each configuration -- MACE on a logistic regression, MACE on a small
random forest, UFCE on the same forest -- audits it grouped by sex, race (Adult) and age
bands, with age as the protected feature on Adult (MACE Table 4 generalised).  Timings,
as ratios measured in the same run:

* ``audit / explain``: wall time of ``cf.audit`` (serial, one thread) over a plain
  ``method.explain`` of the same rejected rows (serial, one thread): the audit's overhead;
* ``dask 1 / dask 2``: the audit's explaining through a local Dask cluster with one vs
  two worker processes (cluster started and warmed up before the clock).

With ``--full`` the audit of every rejected row runs once, chunked and resumable
(``--work-dir``), on a local Dask cluster with two workers; the two ratios and the
age sensitivity are measured on a seeded sample of ``--timing-rows`` rejected rows of
the same population (the six full audits took 24 minutes on two shared cores; the
ratios would run each of them four times).

Writes ``benchmarks/out/audit.md`` (+ csv), ``audit_groups.md`` (per-group table) and
the Adult MACE-forest report ``audit_adult_mace-rf.html``.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
from _common import OUT, timed, write_table

import counterfact as cf
from counterfact.methods._pipeline._batch import explain_in_chunks, parallel_backend
from counterfact.models import desired_class

GROUPS = {"adult": ["sex", "race", "age"], "default_credit": ["SEX", "EDUCATION", "AGE"]}
#: column-name role of each grouping in the table (Default of credit has no race column)
ROLE = {
    "sex": "sex",
    "race": "race/edu",
    "age": "age",
    "SEX": "sex",
    "EDUCATION": "race/edu",
    "AGE": "age",
}
PROTECTED = {
    "adult": "age",
    "default_credit": None,
}  # AGE is immutable in the Default-of-credit schema
#: months of the timeline the age sensitivity is measured under
HORIZON = 24
AGE_BANDS = {"adult": [17, 25, 35, 45, 55, 65, 91], "default_credit": [21, 25, 35, 45, 55, 80]}
CONFIGS = {
    "mace-lr": ("mace", "lr", {"time_limit": 20.0}),
    "mace-rf": ("mace", "rf", {"time_limit": 20.0}),
    "ufce-rf": ("ufce", "rf", {}),
}
FOREST = {"n_estimators": 20, "max_depth": 5}


@contextlib.contextmanager
def _one_thread() -> Iterator[None]:
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        yield


def _audit(method, X, data, name, n_bootstrap=1000, **kw):  # type: ignore[no-untyped-def]
    age = "age" if name == "adult" else "AGE"
    return cf.audit(
        method,
        X,
        groups=GROUPS[name],
        bins={age: AGE_BANDS[name]},
        data=data,
        statistics=cf.recourse.Statistics(n_bootstrap=n_bootstrap, random_state=0),
        **kw,
    )


def _sensitivity(method, X, data, name, **kw):  # type: ignore[no-untyped-def]
    """The age sensitivity: age moves only with time, so it is measured under the dataset's
    timeline (horizon :data:`HORIZON`), and "age frozen" means no waiting."""
    timeline = cf.Constraints(timeline=cf.datasets.timeline(name, horizon=HORIZON))
    return _audit(
        method, X, data, name, protected=PROTECTED[name], constraints=timeline, **kw
    ).sensitivity()


def _dask_seconds(method: Any, X: Any, data: Any, name: Any, workers: int, chunk: int) -> float:
    with parallel_backend("dask", n_workers=workers):
        explain_in_chunks(
            method, X.iloc[:workers], chunk_size=1, n_jobs=workers, parallel="dask"
        )  # warm-up
        with tempfile.TemporaryDirectory() as tmp:
            _, secs = timed(
                lambda: _audit(
                    method,
                    X,
                    data,
                    name,
                    n_bootstrap=0,
                    batch=cf.recourse.Batch(
                        parallel="dask", n_jobs=workers, chunk_size=chunk, out_dir=tmp
                    ),
                )
            )
    return secs


def _dask_ratio(method: Any, X: Any, rejected: Any, data: Any, name: Any) -> dict[str, float]:
    """The audit of ``X`` on 1 and on 2 Dask workers: both wall times and their ratio."""
    chunk = max(1, math.ceil(len(rejected) / 8))
    d1 = _dask_seconds(method, X, data, name, 1, chunk)
    d2 = _dask_seconds(method, X, data, name, 2, chunk)
    return {"dask1_s": d1, "dask2_s": d2, "dask 1 / dask 2": d1 / d2}


def _docs_figures(res) -> None:  # type: ignore[no-untyped-def]
    from counterfact.recourse import _plots
    from counterfact.recourse._text import measure_words

    img = Path(__file__).resolve().parent.parent / "docs" / "img"
    img.mkdir(parents=True, exist_ok=True)
    s = res.summary()
    label = measure_words(res.meta)  # the per-row cost's measure (the audit's)
    (img / "audit_adult_recourse_sex.png").write_bytes(_plots.recourse_rates(s, "sex"))
    sexes = res.meta["groups"]["sex"]["order"]
    (img / "audit_adult_cost_sex.png").write_bytes(
        _plots.cost_ecdf(res.per_row, "sex", sexes, label)
    )
    order = res.meta["groups"]["age"]["order"]
    (img / "audit_adult_cost_age.png").write_bytes(
        _plots.cost_ecdf(res.per_row, "age", order, label)
    )
    (img / "audit_adult_actions.png").write_bytes(_plots.actions_plot(res.actions()))


def _group_figures(row: dict[str, Any], summary: pd.DataFrame, name: str, sens: Any) -> None:
    """Add the largest burden ratio and recourse gap per grouping (groups not flagged
    small) and, when measured, the age sensitivity to ``row``."""
    for g in GROUPS[name]:
        sub = summary[(summary["grouping"] == g) & ~summary["small"]]
        row[f"burden ratio max ({ROLE[g]})"] = sub["burden_ratio"].max() if len(sub) else math.nan
        row[f"recourse gap max ({ROLE[g]})"] = sub["recourse_gap"].max() if len(sub) else math.nan
    if sens is not None:
        row["age changed"] = sens["share_changed"]
        row["age frozen: rel. cost increase"] = sens["rel_increase_mean"]
        row["age frozen: stuck"] = sens["n_proven_none_frozen"]


def _configurations(args: argparse.Namespace) -> Iterator[tuple]:  # type: ignore[type-arg]
    """Per dataset and configuration: (dataset, configuration, test split, population,
    fitted method, target class, the population's rejected rows)."""
    for name in [s.strip() for s in args.datasets.split(",") if s.strip()]:
        data = cf.datasets.load(name)
        train, test = data.split(test_size=0.2, random_state=0)
        if not args.full and len(train) > args.max_train:
            train = train.subset(train.frame.sample(args.max_train, random_state=0).index)
        n_pop = (
            len(test) if args.full else (args.rows_adult if name == "adult" else args.rows_credit)
        )
        X = test.X.sample(min(n_pop, len(test)), random_state=0) if n_pop < len(test) else test.X
        models = {
            "lr": cf.models.fit(train, "lr", random_state=0),
            "rf": cf.models.fit(train, "rf", random_state=0, **FOREST),
        }
        for key in [s.strip() for s in args.configs.split(",") if s.strip()]:
            mname, kind, params = CONFIGS[key]
            method = cf.methods.get(mname, random_state=0, **params).fit(models[kind], train)
            target = desired_class(models[kind], data=data)
            yield (
                name,
                key,
                test,
                X,
                method,
                target,
                cf.rows_to_explain(models[kind], X, target=target, data=data),
            )


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--full",
        action="store_true",
        help="every test row (about 25 minutes for the six configurations on 2 cores)",
    )
    ap.add_argument("--rows-adult", type=int, default=120)
    ap.add_argument("--rows-credit", type=int, default=300)
    ap.add_argument(
        "--max-train", type=int, default=5000, help="training rows (seeded sample) unless --full"
    )
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--datasets", default="adult,default_credit")
    ap.add_argument("--no-dask", action="store_true")
    ap.add_argument(
        "--docs",
        action="store_true",
        help="also write the Adult figures of docs/audit.md (docs/img/)",
    )
    ap.add_argument(
        "--timing-rows",
        type=int,
        default=300,
        help="with --full: rejected rows (seeded sample) for the timing ratios and the sensitivity",
    )
    ap.add_argument(
        "--work-dir",
        default=None,
        help="with --full: folder for the resumable chunks (default: a temporary folder)",
    )
    args = ap.parse_args()
    if args.full:
        _main_full(args)
        return
    rows, groups = [], []
    notes = [
        f"population: {'every test row' if args.full else 'a seeded sample of test rows'} (80/20 "
        "split, seed 0); training rows: "
        f"{'all' if args.full else f'a seeded sample of {args.max_train}'}; forest: {FOREST}",
        "only rejected rows are explained; recourse / proven none / unknown are shares of them; "
        "burden = mean normalised l1 (CERTIFAI) over the rejected rows with recourse",
        "audit / explain: wall time of the serial audit (one thread; predict, explain, per-row "
        "table, 1000-resample bootstraps, sensitivity excluded) over a plain serial explain of "
        "the same rows",
        "dask 1 / dask 2: the audit through a local Dask cluster with 1 vs 2 worker processes "
        "(started and warmed up before timing); 2-core machine shared with other jobs, so at "
        "most 2x",
    ]
    for name, key, test, X, method, target, Xr in _configurations(args):
        mname, kind, _ = CONFIGS[key]
        with _one_thread():
            method.explain(
                Xr.iloc[:1], target=target
            )  # warm-up (lazy imports, caches), off the clock
            _, plain = timed(lambda: method.explain(Xr, target=target))  # noqa: B023
            res, secs = timed(lambda: _audit(method, X, test, name, protected=None))  # noqa: B023
        sens = None
        if PROTECTED[name] and mname == "mace":
            with _one_thread():
                sens = _sensitivity(method, X, test, name)
        s = res.summary()
        o = s.iloc[0]
        row = {
            "dataset": name,
            "model": kind,
            "method": mname,
            "rows": int(o["n"]),
            "rejected": int(o["n_rejected"]),
            "recourse": o["recourse_rate"],
            "proven_none": int(o["n_proven_none"]),
            "unknown": int(o["n_unknown"]),
            "cost_median": o["cost_median"],
            "burden": o["burden"],
            "explain_s": plain,
            "audit_s": secs,
            "audit / explain": secs / plain,
        }
        _group_figures(row, s, name, sens)
        if not args.no_dask and len(Xr) >= 4:
            row.update(_dask_ratio(method, X, Xr, test, name))
        rows.append(row)
        print(row, flush=True)
        keep = [
            "grouping",
            "group",
            "n",
            "n_rejected",
            "small",
            "recourse_rate",
            "proven_none_rate",
            "unknown_rate",
            "cost_median",
            "burden",
            "burden_ratio",
            "recourse_gap",
        ]
        groups.append(s[keep].assign(dataset=name, model=kind, method=mname))
        if name == "adult" and key == "mace-rf":
            OUT.mkdir(parents=True, exist_ok=True)
            res.to_html(OUT / "audit_adult_mace-rf.html")
            res.save(OUT / "audit_adult_mace-rf", html=False)
            if args.docs:
                _docs_figures(res)
    write_table("audit", pd.DataFrame(rows), notes)
    g = pd.concat(groups, ignore_index=True)
    g = g[
        [
            "dataset",
            "model",
            "method",
            *[c for c in g.columns if c not in ("dataset", "model", "method")],
        ]
    ]
    write_table("audit_groups", g, notes[:2])


def _full_seconds(chunks: Path, seconds: float, fresh: bool) -> float:
    """The full audit's wall time: measured when this run computed every chunk (and kept
    beside the chunks), else the time kept by the run that did -- a resumed run re-measures
    only the timing sample, so the ratios can be taken again on a quieter machine."""
    kept = chunks / "full_seconds.txt"
    if fresh:
        kept.write_text(f"{seconds:.3f}\n")
        return seconds
    return float(kept.read_text()) if kept.exists() else math.nan


def _main_full(args: argparse.Namespace) -> None:
    """Every test row: one full audit on two Dask workers, ratios on a sample."""
    import time

    rows, groups = [], []
    notes = [
        "population: every test row (80/20 split, seed 0); models trained on the whole training "
        f"split; forest: {FOREST}",
        "only rejected rows are explained; recourse / proven none / unknown are shares of them; "
        "burden = mean normalised l1 (CERTIFAI) over the rejected rows with recourse",
        "full_s: wall time of the full audit on a local Dask cluster with 2 worker processes "
        "(chunks of 100 rows), measured by the run that computed the chunks; s/row = full_s / "
        "rejected",
        f"timing sample: a seeded sample of {args.timing_rows} rejected rows of the same "
        "population; audit / explain: serial audit (one thread, bootstraps excluded) over a "
        "plain serial explain of the same rows; dask 1 / dask 2: the audit on 1 vs 2 Dask "
        "workers (started and warmed up before timing); 2-core machine shared with other jobs, "
        "so at most 2x",
        "age sensitivity (Adult, MACE): on the timing sample",
    ]
    work = Path(args.work_dir) if args.work_dir else Path(tempfile.mkdtemp(prefix="audit-full-"))
    for name, key, test, X, method, target, Xr in _configurations(args):
        mname, kind, _ = CONFIGS[key]
        chunks = work / f"{name}-{key}"
        fresh = not chunks.exists()
        t0 = time.perf_counter()
        with parallel_backend("dask", n_workers=2):
            res = _audit(
                method,
                X,
                test,
                name,
                batch=cf.recourse.Batch(
                    parallel="dask", n_jobs=2, chunk_size=100, out_dir=str(chunks)
                ),
            )
        full_s = _full_seconds(chunks, time.perf_counter() - t0, fresh)
        s = res.summary()
        o = s.iloc[0]
        sample = Xr.sample(min(args.timing_rows, len(Xr)), random_state=0)
        with _one_thread():
            method.explain(sample.iloc[:1], target=target)  # warm-up, off the clock

            def plain_call() -> Any:
                return method.explain(sample, target=target)  # noqa: B023

            _, plain = timed(plain_call)
            _, secs = timed(lambda: _audit(method, sample, test, name, n_bootstrap=0))  # noqa: B023
        row = {
            "dataset": name,
            "model": kind,
            "method": mname,
            "rows": int(o["n"]),
            "rejected": int(o["n_rejected"]),
            "recourse": o["recourse_rate"],
            "proven_none": int(o["n_proven_none"]),
            "unknown": int(o["n_unknown"]),
            "cost_median": o["cost_median"],
            "burden": o["burden"],
            "full_s": full_s,
            "s/row": full_s / max(int(o["n_rejected"]), 1),
            "timing rows": len(sample),
            "audit / explain": secs / plain,
        }
        sens = None
        if PROTECTED[name] and mname == "mace":
            with _one_thread():
                sens = _sensitivity(method, sample, test, name, n_bootstrap=0)
        _group_figures(row, s, name, sens)
        if not args.no_dask:
            row.update(_dask_ratio(method, sample, sample, test, name))
        rows.append(row)
        print(row, flush=True)
        write_table("audit_full", pd.DataFrame(rows), notes)  # after every configuration
        keep = [
            "grouping",
            "group",
            "n",
            "n_rejected",
            "small",
            "recourse_rate",
            "proven_none_rate",
            "unknown_rate",
            "recourse_ci_low",
            "recourse_ci_high",
            "cost_median",
            "cost_median_ci_low",
            "cost_median_ci_high",
            "burden",
            "burden_ratio",
            "recourse_gap",
        ]
        groups.append(
            s[[c for c in keep if c in s.columns]].assign(dataset=name, model=kind, method=mname)
        )
        g = pd.concat(groups, ignore_index=True)
        g = g[
            [
                "dataset",
                "model",
                "method",
                *[c for c in g.columns if c not in ("dataset", "model", "method")],
            ]
        ]
        write_table("audit_full_groups", g, notes[:2])
        res.save(OUT / f"audit_full_{name}_{key}", html=False)
        if name == "adult" and key == "mace-rf":
            res.to_html(OUT / "audit_full_adult_mace-rf.html")
            if args.docs:
                _docs_figures(res)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
