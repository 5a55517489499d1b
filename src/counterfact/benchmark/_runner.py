"""The benchmark runner: datasets x models x methods x seeds, resumable.

Output folder layout::

    out/
      spec.json                 the spec as run
      models/<ds>-<model>-<seed>.joblib   fitted models (reused on resume)
      cells/<cell>.json         one per cell: status (done | skipped | error), reason, timings
      cells/<cell>.result.json  the CounterfactualResult of a finished cell
      cells/<cell>.metrics.csv  its metrics per query (``effort``: the first answer's effort)
      cells/<cell>.effort.csv   every answer's effort, in the result's answer order
      cells/<cell>.chunks/      with ``chunk_size``: each finished chunk of a cell (resumed from)
      results.csv / .parquet    long table: one row per (cell, query, rank)
      summary.csv               one row per dataset x model x method

Every answer's *effort* -- the default measure of effort, 1 per changed feature plus each
move in MAD-units of the cell's training data -- is recorded whatever measure the methods
searched in (the spec's ``costs:``), so that the tables compare every method on one scale.
"""

from __future__ import annotations

import json
import re
import shutil
import time
import traceback
from collections.abc import Mapping
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import joblib
import numpy as np
import pandas as pd

from .. import datasets, methods, models
from ..constraints import Constraints, Costs, Requirements
from ..exceptions import (
    CounterfactError,
    DatasetNotFoundError,
    MissingDependencyError,
    UnsupportedConstraintError,
    UnsupportedModelError,
    ValidationError,
)
from ..methods import CounterfactualMethod
from ..methods._pipeline import explain as explain_at
from ..metrics import LOFPlausibility
from ..result import CounterfactualResult
from ._spec import DatasetSpec, MethodSpec, ModelSpec, Spec, load_spec

__all__ = ["EFFORT", "changed_settings", "collect", "effort", "run", "summarise"]

#: the column of every answer's effort (the default measure), in results and summaries
EFFORT = "effort"
#: keys of a spec that name or describe it and change no cell's result
_COSMETIC = ("name", "description", "reference")

#: what ``costs`` a cell ran under when the spec names none
DEFAULT_MEASURE = "effort"

# a combination the method cannot handle, or an input not available on this machine
_SKIP_ERRORS = (
    UnsupportedModelError,
    MissingDependencyError,
    UnsupportedConstraintError,
    DatasetNotFoundError,
)


def _safe(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", s)


def _cell_id(ds: str, model: str, method: str, seed: int, fold: int | None = None) -> str:
    return _safe(f"{ds}__{model}__{method}__s{seed}" + ("" if fold is None else f"__f{fold}"))


def _cells(spec: Spec) -> list[tuple[Any, Any, Any, int, int | None]]:
    """Every (dataset, model, method, seed, fold) cell of ``spec`` (fold ``None`` without
    ``folds``)."""
    folds: list[int | None] = list(range(spec.folds)) if spec.folds else [None]
    return [
        (ds, mo, me, seed, fold)
        for seed in spec.seeds
        for ds in spec.datasets
        for fold in folds
        for mo in spec.models
        for me in spec.methods
        if (me.models is None or mo.id in me.models) and (ds.models is None or mo.id in ds.models)
    ]


def _pick_queries(
    model: Any, test: Any, spec: Spec, seed: int, n: int | None = None
) -> pd.DataFrame:
    """Up to ``n`` (default ``spec.queries``; ``None``: all) eligible test rows, drawn with
    ``seed``."""
    X = test.X
    n = spec.queries if n is None else n
    pred = np.asarray(model.predict(X))
    classes = np.asarray(model.classes_)
    if spec.query_class == "negative":
        X = X[pred == classes[0]]
    elif spec.query_class == "unfavourable":
        fav = test.metadata.get("favourable_class", classes[-1])
        X = X[pred != fav]
    elif spec.query_class not in (None, "any"):
        X = X[pred == spec.query_class]
    rng = np.random.default_rng(seed)
    if n is not None and len(X) > n:
        X = X.iloc[np.sort(rng.choice(len(X), size=n, replace=False))]
    return X


def _load_split(ds: DatasetSpec, spec: Spec, seed: int, fold: int | None = None) -> tuple[Any, Any]:
    """Load a dataset entry, apply its actionability override and row cap, and split it
    (with ``spec.folds``: fold ``fold`` of a stratified k-fold partition drawn with ``seed``)."""
    data = datasets.load(ds.name, **ds.options)
    if ds.actionability:
        kinds = dict(ds.actionability)
        default = kinds.pop("*", None)
        unknown = sorted(set(kinds) - set(data.schema.names))
        if unknown:
            raise ValidationError(
                f"Benchmark spec: dataset {ds.id!r} actionability names unknown features "
                f"{unknown}. Features: {data.schema.names}."
            )
        every = {f.name: default for f in data.schema} if default else {}
        data = data.with_schema(data.schema.with_actionability(**{**every, **kinds}))
    if ds.max_rows and len(data) > ds.max_rows:
        rng = np.random.default_rng(seed)
        data = data.subset(
            data.frame.index[np.sort(rng.choice(len(data), ds.max_rows, replace=False))]
        )
    if spec.folds and fold is not None:
        from sklearn.model_selection import StratifiedKFold

        parts = list(
            StratifiedKFold(n_splits=spec.folds, shuffle=True, random_state=seed).split(
                data.frame, data.y
            )
        )
        tr, te = parts[fold]
        return data.subset(data.frame.index[tr]), data.subset(data.frame.index[te])
    if ds.split is None:
        return data.split(test_size=spec.test_size, random_state=seed)
    splits = data.metadata.get("splits") or {}
    if ds.split not in splits:
        raise ValidationError(
            f"Benchmark spec: dataset {ds.id!r} has no predefined split {ds.split!r}. "
            f"Available: {sorted(splits)}."
        )
    flag = pd.Series(splits[ds.split]).reindex(data.frame.index)
    return data.subset(data.frame.index[flag == "train"]), data.subset(
        data.frame.index[flag == "test"]
    )


def _explain(
    method: Any,
    X: pd.DataFrame,
    train: Any,
    spec: Spec,
    constraints: Any,
    n_jobs: int,
    extra: dict[str, Any],
    lof: Any = None,
    chunks: Path | None = None,
) -> tuple[Any, pd.DataFrame]:
    """Explain ``X``; with ``spec.feedback`` each query gets its own feedback
    constraints (UFCE's simulated user, Sec. 5: one Constraints per row, in one
    call) and is evaluated against them.  ``lof``: the split's shared plausibility
    detector (fitted once per split, not per cell).  With ``spec.chunk_size`` and
    a ``chunks`` folder, the queries are explained chunk by chunk, each chunk's
    result saved there and reused when the cell is resumed (each query is seeded
    from its own values, so chunked and whole runs give the same result)."""
    if spec.feedback:
        constraints = _feedback_constraints(train, X, spec.feedback, constraints)
    if spec.chunk_size is None or chunks is None or len(X) <= spec.chunk_size:
        result = method.explain(
            X,
            n_counterfactuals=spec.n_counterfactuals,
            constraints=constraints,
            n_jobs=n_jobs,
            **extra,
        )
    else:
        chunking = (chunks, spec.chunk_size)
        result = _explain_in_chunks(method, X, spec, constraints, n_jobs, extra, chunking)
    return result, result.evaluate(train, lof=lof)


def _feedback_constraints(
    train: Any, X: pd.DataFrame, feedback: Mapping[str, Any], constraints: Any
) -> list[Any]:
    """One Constraints per query: ``constraints`` merged with the simulated user's feedback."""
    # lazy: a method's subpackage loads only when it is used (see counterfact.methods); only
    # specs with UFCE-style feedback need this one
    from ..methods.ufce import feedback_levels

    return [
        constraints.merge(
            feedback_levels(train, X.loc[q], feedback["level"], two_sided=feedback["two_sided"])
        )
        for q in X.index
    ]


def _explain_in_chunks(
    method: Any,
    X: pd.DataFrame,
    spec: Spec,
    constraints: Any,
    n_jobs: int,
    extra: dict[str, Any],
    chunking: tuple[Path, int],
) -> CounterfactualResult:
    """Explain ``X`` in chunks of ``size`` rows, each chunk's result saved in the folder
    ``chunks`` and reused when the cell is resumed (``chunking = (chunks, size)``)."""
    chunks, size = chunking
    chunks.mkdir(parents=True, exist_ok=True)
    parts: list[CounterfactualResult] = []
    for k in range(0, len(X), size):
        path = chunks / f"chunk-{k // size:05d}.json"
        if path.exists():  # a chunk of an interrupted run, if it holds these very queries
            saved = CounterfactualResult.from_json(path.read_text())
            if list(saved.queries.index) == list(X.index[k : k + size]):
                parts.append(saved)
                continue
        # the result equals one explain call (each query is seeded from its values)
        part = explain_at(
            method,
            X.iloc[k : k + size],
            n_counterfactuals=spec.n_counterfactuals,
            n_jobs=n_jobs,
            constraints=constraints[k : k + size] if isinstance(constraints, list) else constraints,
            **extra,
        )
        tmp = path.with_suffix(".tmp")
        tmp.write_text(part.to_json())
        tmp.replace(path)
        parts.append(part)
    return CounterfactualResult.concat(parts, model=getattr(method, "model_", None))


def run(
    spec: str | Path | Mapping[str, Any] | Spec,
    *,
    out: str | Path = "results",
    resume: bool = True,
    n_jobs: int = 1,
    verbose: bool = True,
    queries: int | None = None,
    time_limit: float | None = None,
    full: bool = False,
) -> pd.DataFrame:
    """Run every cell of ``spec`` and write the results under ``out``.

    Combinations a method cannot handle (an unsupported model, a missing
    optional dependency, an unsupported constraint kind) are recorded as
    ``skipped`` with the reason; other errors as ``error`` with the traceback,
    and the run goes on.  With ``resume`` (default), finished cells are not
    run again, and a folder of another run (:func:`changed_settings`) is
    refused rather than mixed with this one.  Skipped and failed
    cells are tried again, so supplying a missing dataset or extra and
    running the same command completes the run.  ``queries`` caps the
    number of queries per dataset for a quicker run of the same protocol;
    ``time_limit`` replaces the spec's per-query time limit; ``full`` runs the
    spec's ``full:`` section (the protocol at the paper's size, see
    :func:`load_spec`).  A run resumes cell by cell; with the spec's
    ``chunk_size`` it also resumes inside a cell, chunk by chunk.  Returns the
    long results table.  Without ``resume``, a folder of another run is refused too (its
    cells would stay beside the new ones).
    """
    spec = load_spec(spec, queries=queries, full=full)
    if time_limit is not None:
        spec = replace(spec, time_limit=float(time_limit))
    out = Path(out)
    _refuse_other_settings(out, spec, resume)
    _start_folder(out, spec)
    cells = _cells(spec)
    bar = None
    if verbose:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(cells), desc=f"benchmark {spec.name}", unit="cell")
    # the current split and its plausibility detector, shared by its cells
    split: dict[str, Any] = {}
    for ds, mo, me, seed, fold in cells:
        cid = _cell_id(ds.id, mo.id, me.id, seed, fold)
        meta_path = out / "cells" / f"{cid}.json"
        if bar is not None:
            bar.set_postfix_str(cid[:40])
        if not (resume and _finished(meta_path)):
            meta = _run_cell(
                out, spec, (ds, mo, me, seed, fold), split, resume=resume, n_jobs=n_jobs
            )
            meta_path.write_text(json.dumps(meta, indent=1, default=str))
        if bar is not None:
            bar.update()
    if bar is not None:
        bar.close()
    table = collect(out)
    summarise(out, table)
    return table


def _refuse_other_settings(out: Path, spec: Spec, resume: bool) -> None:
    """Refuse to run into ``out`` when its cells ran under other settings and would be
    mixed with this run's (:func:`mixed_runs`)."""
    mixed = mixed_runs(out, spec, resume)
    if mixed is None:
        return
    ways = "a fresh out folder, delete that one, or pass resume=False to run every cell again"
    if not resume:
        ways = "a fresh out folder, or delete that one"
    raise ValidationError(f"out {str(out)!r} {mixed}. Use {ways}.")


def mixed_runs(out: str | Path, spec: Spec, resume: bool) -> str | None:
    """Why running ``spec`` into ``out`` would mix two runs, in words (None: it would not):
    its cells ran under other settings (:func:`changed_settings`) and would be resumed
    from, or, without ``resume``, some are cells this spec does not run again, which would
    stay in the tables and the report beside the new ones."""
    changed = changed_settings(out, spec)
    if not changed:
        return None
    said = f"holds cells run under other settings ({'; '.join(changed)})"
    if resume:
        return f"{said}; resuming would mix them"
    stale = other_cells(out, spec)
    if not stale:
        return None
    named = ", ".join(stale[:3]) + (", ..." if len(stale) > 3 else "")
    return (
        f"{said}, {len(stale)} of them cells this spec does not run ({named}); running every "
        "cell again would leave them in the tables and the report"
    )


def other_cells(out: str | Path, spec: Spec) -> list[str]:
    """The cells recorded in ``out`` that ``spec`` does not run (sorted names)."""
    ours = {_cell_id(ds.id, mo.id, me.id, seed, fold) for ds, mo, me, seed, fold in _cells(spec)}
    found = (p.name[: -len(".json")] for p in Path(out).glob("cells/*.json"))
    return sorted(c for c in found if not c.endswith(".result") and c not in ours)


def changed_settings(out: str | Path, spec: Spec) -> list[str]:
    """The settings of the run recorded in ``out`` (its ``spec.json``) that ``spec`` changes
    (another time limit, number of queries, method, ...; use a fresh ``out``, delete that
    one, or ``resume=False`` to run every cell again),
    each as ``"key old -> new"`` (``[]``: the same run, or a folder without finished or
    failed cells, which there is nothing to mix with). Its name and descriptions do not
    count."""
    out = Path(out)
    cells = [p for p in out.glob("cells/*.json") if not p.name.endswith(".result.json")]
    if not (out / "spec.json").is_file() or not cells:
        return []
    try:
        old = json.loads((out / "spec.json").read_text())
    except (OSError, ValueError):
        return ["spec.json unreadable"]
    new = json.loads(json.dumps(_spec_dict(spec), default=str))
    changed = []
    for key in sorted(set(old) | set(new)):
        if key in _COSMETIC or key not in old or old[key] == new.get(key):
            continue  # a key missing from an older spec.json is not a change
        a, b = old.get(key), new.get(key)
        simple = all(v is None or isinstance(v, (str, int, float)) for v in (a, b))
        said = [f"{v!r}" if isinstance(v, str) else ("not set" if v is None else v) for v in (a, b)]
        changed.append(f"{key} {said[0]} -> {said[1]}" if simple else f"{key} changed")
    return changed


def _start_folder(out: Path, spec: Spec) -> None:
    """The results folder with its ``cells/`` and ``models/`` subfolders and the spec as run."""
    (out / "cells").mkdir(parents=True, exist_ok=True)
    (out / "models").mkdir(parents=True, exist_ok=True)
    (out / "spec.json").write_text(json.dumps(_spec_dict(spec), indent=1, default=str))


def _run_cell(
    out: Path,
    spec: Spec,
    cell: tuple[DatasetSpec, ModelSpec, MethodSpec, int, int | None],
    split: dict[str, Any],
    *,
    resume: bool,
    n_jobs: int,
) -> dict[str, Any]:
    """Run one cell and save its result and metrics; returns its record (status done, skipped or
    error)."""
    ds, mo, me, seed, fold = cell
    cid = _cell_id(ds.id, mo.id, me.id, seed, fold)
    meta: dict[str, Any] = {
        "cell": cid,
        "dataset": ds.id,
        "model": mo.id,
        "method": me.id,
        "seed": seed,
    }
    if fold is not None:
        meta["fold"] = fold
    try:
        train, test, lof = _split(split, ds, spec, seed, fold)
        model = _fitted_model(out, ds, mo, seed, fold, train, meta)
        X = _cell_queries(model, test, spec, ds, me, seed, meta)
        if spec.chunk_size is not None:
            meta["chunk_size"] = spec.chunk_size
        constraints = Constraints.from_dict(spec.constraints).merge(
            Constraints.from_dict(ds.constraints)
        )
        method = _method(spec, me, seed)
        meta["runtime_kind"] = runtime_kind(method)
        t0 = time.perf_counter()
        method.fit(model, train)
        meta["fit_seconds"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        chunk_dir = _chunk_dir(out / "cells" / f"{cid}.chunks", resume, meta)
        result, metrics = _explain(
            method, X, train, spec, constraints, n_jobs, _explain_options(spec, me), lof, chunk_dir
        )
        meta["explain_seconds"] = time.perf_counter() - t0
        meta["costs"] = spec.costs or DEFAULT_MEASURE
        (out / "cells" / f"{cid}.result.json").write_text(result.to_json())
        _save_effort(out / "cells" / cid, result, method, train, metrics)
        meta.update(
            status="done",
            n_queries=len(X),
            coverage=float((result.found > 0).mean()) if len(X) else float("nan"),
        )
    except _SKIP_ERRORS as exc:
        meta.update(status="skipped", reason=str(exc))
    except Exception as exc:  # record and go on: one broken cell must not stop the run
        meta.update(
            status="error",
            reason=f"{type(exc).__name__}: {exc}",
            traceback=traceback.format_exc(limit=8),
        )
    return meta


def _explain_options(spec: Spec, me: MethodSpec) -> dict[str, Any]:
    """The method's extra explain() keywords, with the spec's measure (``costs:``) in its
    requirements."""
    extra = dict(me.explain)
    if spec.costs is None:
        return extra
    req = extra.get("requirements")
    if req is None:
        extra["requirements"] = Requirements(costs=spec.costs)
    elif isinstance(req, Requirements):
        extra["requirements"] = replace(req, costs=spec.costs)
    else:
        raise ValidationError(
            f"Benchmark spec: method {me.id!r} explain.requirements must be a cf.Requirements; "
            "set the measure with the spec's costs: key."
        )
    return extra


def effort(result: CounterfactualResult, method: Any, train: Any) -> pd.Series:
    """Each answer's effort (the default measure: 1 per changed feature plus each move in
    MAD-units of ``train``), whatever measure the method searched in; index ``(query, rank)``."""
    cfs = result.counterfactuals
    bound = Costs().bind(method.schema_, train.X)
    out = np.full(len(cfs), np.nan)
    for q, rows in cfs.groupby(level=0, sort=False) if len(cfs) else []:
        out[cfs.index.get_indexer(rows.index)] = bound.evaluate(result.queries.loc[q], rows)
    return pd.Series(out, index=cfs.index, name=EFFORT, dtype=float)


def _save_effort(
    stem: Path, result: CounterfactualResult, method: Any, train: Any, metrics: pd.DataFrame
) -> None:
    """Every answer's effort (``<cell>.effort.csv``, in the result's answer order) and each
    query's first answer's effort as the metric ``effort`` (``<cell>.metrics.csv``)."""
    per_answer = effort(result, method, train)
    pd.DataFrame({EFFORT: per_answer.to_numpy()}).to_csv(
        stem.with_name(stem.name + ".effort.csv"), index=False
    )
    first = per_answer[per_answer.index.get_level_values(1) == 0]
    metrics = metrics.copy()
    metrics[EFFORT] = (
        pd.Series(first.to_numpy(), index=first.index.get_level_values(0))
        .reindex(metrics.index)
        .to_numpy(dtype=float)
    )
    metrics.to_csv(stem.with_name(stem.name + ".metrics.csv"))


def _split(
    cache: dict[str, Any], ds: DatasetSpec, spec: Spec, seed: int, fold: int | None
) -> tuple[Any, Any, Any]:
    """Train and test rows of the cell and the split's plausibility detector (fitted once per
    split, not per cell).  The cells of one split run one after another, so ``cache`` keeps only
    the current one."""
    key = (ds.id, seed, fold)
    if cache.get("key") != key:
        cache.clear()
        cache["split"] = _load_split(ds, spec, seed, fold)
        cache["key"] = key
    if "lof" not in cache:
        cache["lof"] = LOFPlausibility(cache["split"][0])
    train, test = cache["split"]
    return train, test, cache["lof"]


def _fitted_model(
    out: Path,
    ds: DatasetSpec,
    mo: ModelSpec,
    seed: int,
    fold: int | None,
    train: Any,
    meta: dict[str, Any],
) -> Any:
    """The cell's model: loaded from ``out/models/`` when an earlier cell fitted it, else fitted and
    saved there."""
    mpath = (
        out
        / "models"
        / (
            f"{_safe(ds.id)}-{_safe(mo.id)}-{seed}"
            + ("" if fold is None else f"-f{fold}")
            + ".joblib"
        )
    )
    if mpath.exists():
        return joblib.load(mpath)
    t0 = time.perf_counter()
    model = models.fit(train, mo.kind, random_state=seed, **mo.params)
    meta["model_fit_seconds"] = time.perf_counter() - t0
    joblib.dump(model, mpath)
    return model


def _cell_queries(
    model: Any,
    test: Any,
    spec: Spec,
    ds: DatasetSpec,
    me: MethodSpec,
    seed: int,
    meta: dict[str, Any],
) -> pd.DataFrame:
    """The queries of the cell; a method with its own ``queries`` explains a seeded subset of
    them."""
    X = _pick_queries(model, test, spec, seed, ds.queries or spec.queries)
    if me.queries is not None and len(X) > me.queries:
        keep = np.random.default_rng(seed).choice(len(X), size=me.queries, replace=False)
        X = X.iloc[np.sort(keep)]
        meta["method_queries"] = me.queries
    return X


def _method(spec: Spec, me: MethodSpec, seed: int) -> Any:
    """The cell's method (not fitted): the spec's parameters, the seed, and the spec's time limit
    unless the method's parameters set one."""
    params = {"random_state": seed, **me.params}
    cls: Any = methods.get_class(me.name)
    if spec.time_limit is not None and "time_limit" in cls._param_names():
        params.setdefault("time_limit", spec.time_limit)
    return methods.get(me.name, **params)


def _chunk_dir(chunk_dir: Path, resume: bool, meta: dict[str, Any]) -> Path:
    """The cell's chunk folder: its chunks are reused on resume, deleted otherwise."""
    if chunk_dir.exists():
        if resume:
            meta["resumed_chunks"] = len(list(chunk_dir.glob("chunk-*.json")))
        else:
            shutil.rmtree(chunk_dir)
    return chunk_dir


def _finished(meta_path: Path) -> bool:
    """Whether a cell's record says it finished.  Skipped and failed cells are
    run again on resume: the missing dataset or extra may have been supplied
    since (e.g. ``COUNTERFACT_DATA_DIR`` set after a first run without it)."""
    if not meta_path.exists():
        return False
    try:
        record = json.loads(meta_path.read_text())
    except (OSError, ValueError):
        return False
    return isinstance(record, dict) and record.get("status") == "done"


def runtime_kind(method: Any) -> str:
    """``"amortized"`` for a method that explains queries in batches (its
    per-query time is the batch's time divided by the batch size, not a
    measurement of each query), else ``"per query"``."""
    batch = getattr(type(method), "_explain_batch", None)
    return (
        "amortized"
        if batch is not None and batch is not CounterfactualMethod._explain_batch
        else "per query"
    )


def _time_kind(meta: Mapping[str, Any], times: pd.Series) -> str:
    """The cell's runtime kind; results written before it was recorded count as
    amortized when every query of the cell has the same time."""
    kind = meta.get("runtime_kind")
    if kind:
        return str(kind)
    t = times.dropna().to_numpy(dtype=float)
    return "amortized" if t.size > 1 and np.allclose(t, t[0], rtol=1e-12, atol=0) else "per query"


def _spec_dict(spec: Spec) -> dict[str, Any]:
    d = asdict(spec)
    if d.get("queries") is None:
        d["queries"] = "all"
    return d


def collect(out: str | Path, *, write: bool = True) -> pd.DataFrame:
    """The long results table (one row per cell x query x rank; queries with no
    counterfactual get one row with rank -1) from a results folder; with ``write``
    (the default) also writes ``results.csv`` and, when pyarrow is installed,
    ``results.parquet`` into it.  A cell file that cannot be read is a
    :class:`ValidationError` naming it."""
    out = Path(out)
    rows = []
    for meta_path in sorted((out / "cells").glob("*.json")):
        if meta_path.name.endswith(".result.json"):
            continue
        meta = _cell_record(meta_path)
        if meta.get("status") != "done":
            continue
        cid = meta["cell"]
        r, m = _cell_answers(out / "cells", cid)
        per_answer = _read_effort(out / "cells" / f"{cid}.effort.csv", r)
        kind = _time_kind(meta, r.runtime)
        reasons = r.reason
        for q in r.queries.index:
            base = {
                "dataset": meta["dataset"],
                "model": meta["model"],
                "method": meta["method"],
                "seed": meta["seed"],
                **({"fold": meta["fold"]} if "fold" in meta else {}),
                "query": q,
                "status": r.status[q],
                "reason": reasons[q],
                "time": r.runtime[q],
                "time_kind": kind,
                "fit_seconds": meta.get("fit_seconds", np.nan),
            }
            base.update({f"metric_{k}": v for k, v in m.loc[q].items() if k not in base})
            cfs = r.for_query(q)
            if len(cfs) == 0:
                rows.append({**base, "rank": -1, "features": None})
            for rank, row in cfs.iterrows():
                rows.append(
                    {
                        **base,
                        "rank": rank,
                        EFFORT: per_answer.get((q, rank), np.nan),
                        "features": json.dumps(
                            {k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()}
                        ),
                    }
                )
    table = pd.DataFrame(rows)
    if write and len(table):
        table.to_csv(out / "results.csv", index=False)
        try:
            table.to_parquet(out / "results.parquet", index=False)
        except ImportError:
            pass
    return table


def _redo(cell: str) -> str:
    """How to compute a cell whose files cannot be read afresh."""
    return (
        f"Delete that cell's files (cells/{cell}.*), then run the benchmark again with the "
        "same --out: it computes the cells it finds no record of."
    )


def _cell_record(path: Path) -> dict[str, Any]:
    """A cell's record (``cells/<cell>.json``), or a :class:`ValidationError` naming the file."""
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ValidationError(
            f"The benchmark cell file {str(path)!r} cannot be read ({exc}). {_redo(path.stem)}"
        ) from None
    if not isinstance(record, dict) or "cell" not in record:
        raise ValidationError(
            f"The benchmark cell file {str(path)!r} is not a cell record (no 'cell' key). "
            + _redo(path.stem)
        )
    return record


def _cell_answers(folder: Path, cid: str) -> tuple[CounterfactualResult, pd.DataFrame]:
    """A finished cell's result and per-query metrics, or a :class:`ValidationError` naming
    the file that cannot be read."""
    path = folder / f"{cid}.result.json"
    try:
        result = CounterfactualResult.from_json(path.read_text())
        path = folder / f"{cid}.metrics.csv"
        metrics = pd.read_csv(path, index_col=0)
        metrics.index = result.queries.index
    except (OSError, ValueError, CounterfactError) as exc:
        raise ValidationError(
            f"The benchmark cell file {str(path)!r} cannot be read ({exc}). {_redo(cid)}"
        ) from None
    return result, metrics


def _read_effort(path: Path, result: CounterfactualResult) -> pd.Series:
    """The answers' effort saved with a cell (index ``(query, rank)``; empty for a cell
    written before it was recorded)."""
    cfs = result.counterfactuals
    if not path.exists():
        return pd.Series(dtype=float)
    values = pd.read_csv(path)[EFFORT].to_numpy(dtype=float)
    if len(values) != len(cfs):
        return pd.Series(dtype=float)
    return pd.Series(values, index=cfs.index, dtype=float)


def _wilson(k: int, n: int) -> tuple[float, float]:
    """Wilson score 95 % interval of ``k`` of ``n`` (scipy's)."""
    if n == 0:
        return (np.nan, np.nan)
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return (float(ci.low), float(ci.high))


def _ci_half_width(values: pd.Series) -> float:
    """Half-width of the normal 95 % interval of the mean of ``values`` (NaNs
    dropped; NaN with fewer than two values)."""
    from scipy.stats import norm

    v = pd.to_numeric(values, errors="coerce").dropna()
    if len(v) < 2:
        return float("nan")
    return float(norm.ppf(0.975) * v.std(ddof=1) / np.sqrt(len(v)))


def _summarise_done(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of :func:`summarise` for the finished cells of ``table``."""
    per_query = table.drop_duplicates(["dataset", "model", "method", "seed", "query"])
    keys = ["dataset", "model", "method"]
    metric_cols = [
        c
        for c in per_query.columns
        if c.startswith("metric_") and pd.api.types.is_numeric_dtype(per_query[c])
    ]
    g = per_query.groupby(keys)
    summ = g[metric_cols].mean()
    summ.columns = [c.removeprefix("metric_") for c in summ.columns]
    summ["queries"] = g.size()
    summ["coverage"] = g["rank"].apply(lambda s: float((s >= 0).mean()))
    # 95 % intervals: Wilson's for coverage (a proportion), the normal one for
    # the per-query means (half-width; NaN with fewer than two values)
    wil = g["rank"].apply(lambda s: _wilson(int((s >= 0).sum()), len(s)))
    summ["coverage_ci_low"] = wil.map(lambda t: t[0])
    summ["coverage_ci_high"] = wil.map(lambda t: t[1])
    half = g[metric_cols].agg(_ci_half_width)
    half.columns = [f"ci95_{c.removeprefix('metric_')}" for c in half.columns]
    summ = summ.join(half)
    _add_times(summ, g, per_query, keys)
    summ["state"] = "done"
    return summ.reset_index()


def _add_times(summ: pd.DataFrame, g: Any, per_query: pd.DataFrame, keys: list[str]) -> None:
    """Median and p90 time per query, the kind of time and the mean fit time, in place."""
    summ["time_median"] = g["time"].median()
    summ["time_p90"] = g["time"].quantile(0.9)
    if "time_kind" in per_query:
        summ["time_kind"] = g["time_kind"].agg(
            lambda s: "amortized" if (s == "amortized").any() else "per query"
        )
        # a batch average has no spread: its p90 would only repeat the median
        summ.loc[summ["time_kind"] == "amortized", "time_p90"] = np.nan
    if "fit_seconds" in per_query:
        cell_keys = [*keys, "seed", *(["fold"] if "fold" in per_query else [])]
        summ["fit_seconds"] = (
            per_query.drop_duplicates(cell_keys).groupby(keys)["fit_seconds"].mean()
        )


def _unfinished_cells(out: Path) -> list[dict[str, Any]]:
    """The skipped and errored cells saved in ``out/cells``, with their reasons."""
    others = []
    for meta_path in sorted((out / "cells").glob("*.json")):
        if meta_path.name.endswith(".result.json"):
            continue
        meta = _cell_record(meta_path)
        if meta.get("status") in ("skipped", "error"):
            others.append(
                {
                    "dataset": meta["dataset"],
                    "model": meta["model"],
                    "method": meta["method"],
                    "state": meta["status"],
                    "reason": meta.get("reason", ""),
                }
            )
    return others


def summarise(
    out: str | Path, table: pd.DataFrame | None = None, *, write: bool = True
) -> pd.DataFrame:
    """Per dataset x model x method: coverage (with its Wilson 95 % interval,
    ``coverage_ci_low`` / ``coverage_ci_high``), mean of each metric over queries
    (with the half-width of its normal 95 % interval, ``ci95_<metric>``),
    median and p90 time per query (p90 left empty for amortized times, see
    :func:`runtime_kind`), the kind of time and the mean fit (training) time;
    also the skipped/error cells with their reasons.  With ``write`` (the default) the
    table is also written to ``summary.csv`` in the folder."""
    out = Path(out)
    table = collect(out, write=write) if table is None else table
    parts = []
    if len(table):
        parts.append(_summarise_done(table))
    others = _unfinished_cells(out)
    if others:
        parts.append(pd.DataFrame(others).drop_duplicates(["dataset", "model", "method"]))
    summary = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    if write:
        summary.to_csv(out / "summary.csv", index=False)
    return summary
