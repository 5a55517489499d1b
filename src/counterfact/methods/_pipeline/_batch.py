"""Batch explanation at scale: chunked, resumable, fault-tolerant.

:func:`explain_in_chunks` splits a large query table into chunks, runs each
chunk as one task (through joblib: ``loky`` processes by default; ``"dask"``
for a ``dask.distributed`` cluster, ``"ray"`` for a Ray one, local or at an address), writes
each finished chunk's result to ``out_dir`` as soon as it arrives, and returns
the joined result.  A chunk that raises is recorded (with its error) and the
others still finish; re-running with the same ``out_dir`` skips the chunks
already written.  Every query is seeded from its own values, never from its
position (see ``CounterfactualMethod``), so the result does not depend on the
chunk size, the ``parallel`` backend or the number of workers: it equals
``method.explain(X)``.  No home-made scheduler: joblib's loky backend, or the
Dask scheduler or Ray itself (one task per chunk, submitted directly), do the
work, and Dask reschedules the tasks of a worker that dies.  Under
``Requirements(robustness=p)`` the retrained copies are fitted once, here, and travel
with the method, so no task refits them.
"""

from __future__ import annotations

import contextlib
import json
import pickle
import sys
import time
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cloudpickle
import joblib
import numpy as np
import pandas as pd
from joblib import Parallel, delayed, effective_n_jobs

from ..._utils._deps import import_optional
from ..._utils._progress import progress, should_show, summary_line
from ..._utils._relay import Record, recording, relay
from ...exceptions import ValidationError
from ...result import CounterfactualResult
from ._backends import (
    check_chunk_size,
    check_n_jobs,
    check_parallel,
    in_processes,
    parallel_backend,
)
from ._copies import Copies, adopt_copies
from ._explain import explain
from ._prepare import check_requirements, per_row_series, warn_out_of_domain
from ._protocol import PipelineMethod
from ._robustness import fit_robustness_copies

__all__ = ["BatchReport", "explain_in_chunks", "parallel_backend"]


@dataclass
class BatchReport:
    """Outcome of :func:`explain_in_chunks`."""

    result: CounterfactualResult | None
    n_chunks: int
    done: list[int] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)
    failed: dict[int, str] = field(default_factory=dict)
    #: wall seconds of each chunk run in this call, measured where it ran (the
    #: worker): their sum over the call's wall time is the parallelism achieved
    chunk_seconds: dict[int, float] = field(default_factory=dict)
    #: CPU seconds of each chunk's worker process over the same span (well below
    #: ``chunk_seconds``: the worker waited for a core that other processes held)
    chunk_cpu_seconds: dict[int, float] = field(default_factory=dict)


def _run_chunk(method: PipelineMethod, X: pd.DataFrame, kwargs: dict[str, Any]) -> str:
    """One chunk through the pipeline, silently (each row seeded from its own values)."""
    method._check_fitted()
    return explain(method, X, n_jobs=1, feedback=False, **kwargs).to_json()


def explain_in_chunks(
    method: PipelineMethod,
    X: pd.DataFrame,
    *,
    chunk_size: int = 500,
    out_dir: str | Path | None = None,
    n_jobs: int | None = 1,
    parallel: str | None = None,
    address: str | None = None,
    warn_partial: bool = True,
    **explain_kwargs: Any,
) -> BatchReport:
    """Explain ``X`` chunk by chunk (see the module docstring).

    Parameters
    ----------
    method : fitted CounterfactualMethod
    X : DataFrame
        Queries (unique index).
    chunk_size : int
        Rows per task.
    n_jobs : int or None
        Parallel tasks (None: one, here).
    out_dir : path, optional
        Where each chunk's result is written (``chunk-00007.json``) as it finishes, and
        where a re-run resumes from; a folder holding another run's chunks (another
        method, parameters, model, training data, queries, chunk size or keywords) is
        refused.
    parallel : {"loky", "threading", "dask", "ray"}, optional
        joblib's backend (default ``"loky"``); ``"dask"``: one task per chunk on Dask.
    address : str, optional
        A Dask scheduler (``tcp://host:8786``) or a Ray cluster (``host:6379``, ``"auto"``);
        refused for the backends that run on this machine.
    warn_partial : bool
        Warn when some chunks fail (``False``: the caller keeps their rows, as the audit).
    **explain_kwargs
        Passed to ``method.explain`` (``n_counterfactuals``, ``constraints``,
        ``target``, ``requirements``, ...); a ``constraints`` or ``target`` list
        with one entry per row of ``X`` is cut with the rows (a list of another length
        is refused; a Series is matched to the rows by its index).

    A failed chunk is in the report's ``failed`` (its rows have no result), and a warning
    says so. A progress bar and a closing line go to stderr under ``verbose`` or a terminal.
    """
    X = _one_row_frame(X)
    _check_chunks(chunk_size, X, parallel, address, n_jobs)
    warn_out_of_domain(method, X, stacklevel=2)  # once for the run, not per chunk
    explain_kwargs = _per_row_checked(explain_kwargs, X)
    out = None
    if out_dir is not None:
        out = claim_folder(Path(out_dir), method, X, chunk_size, explain_kwargs)
    size = int(chunk_size)
    chunks = [X.iloc[k : k + size] for k in range(0, len(X), size)]
    collector = _Collector(BatchReport(result=None, n_chunks=len(chunks)), out)
    todo = collector.resume(chunks)
    collector.bar = _bar(method, sum(len(chunks[i]) for i in todo))
    if todo:
        blob, tasks = _tasks(method, chunks, todo, size, explain_kwargs)
        _run_tasks(blob, tasks, collector, parallel, address, n_jobs)
    return _closed(method, collector, len(X), out, warn_partial)


def _closed(
    method: PipelineMethod, collector: _Collector, n_rows: int, out: Path | None, partial: bool
) -> BatchReport:
    """The run's report once every chunk has ended, its closing line said; a warning with
    the first chunk's error when every chunk failed (the report lists them all)."""
    report = collector.close(getattr(method, "model_", None))
    relay(collector.caught, stacklevel=3)
    if should_show(method.verbose, n_rows):
        print(_closing_line(report), file=sys.stderr, flush=True)
    if report.result is None and report.failed:
        warnings.warn(_all_failed(report, out), UserWarning, stacklevel=3)
    elif report.failed and partial:
        warnings.warn(_some_failed(report, out), UserWarning, stacklevel=3)
    return report


def _first_error(report: BatchReport) -> str:
    """The first failed chunk and the last line of its error."""
    first = min(report.failed)
    lines = [line for line in report.failed[first].strip().splitlines() if line.strip()]
    return f"chunk {first}: {lines[-1] if lines else 'no message'}"


def _all_failed(report: BatchReport, out: Path | None) -> str:
    """Every chunk failed: the first chunk's error, and where the others' are."""
    where = f" (each chunk's error is in {out / 'failed.json'})" if out is not None else ""
    return f"Every one of the {report.n_chunks} chunks failed{where}; {_first_error(report)}"


def _some_failed(report: BatchReport, out: Path | None) -> str:
    """Some chunks failed: how many, that their rows are left out, the first error."""
    where = (
        f"{out / 'failed.json'}; a re-run with this out_dir computes only them"
        if out is not None
        else "report.failed"
    )
    return (
        f"{len(report.failed)} of the {report.n_chunks} chunks failed, and the result "
        f"leaves out their rows (each chunk's error is in {where}); {_first_error(report)}"
    )


#: the keywords of ``explain`` that may hold one value per row (a list as long as ``X``)
_PER_ROW = ("constraints", "target")
#: the file in ``out_dir`` that says which run its chunks belong to
RUN_FILE = "chunks-run.json"


def _one_row_frame(X: Any) -> Any:
    """A single row given as a Series (as ``explain`` takes it) as a one-row frame."""
    return X.to_frame().T if isinstance(X, pd.Series) else X


def _per_row_checked(kwargs: dict[str, Any], X: pd.DataFrame) -> dict[str, Any]:
    """``kwargs`` with each per-row keyword checked against ``X`` before any chunk runs: a
    list of another length is refused (a chunk would otherwise take it whole), a Series
    is matched to the rows by its index."""
    out = dict(kwargs)
    for k in _PER_ROW:
        v = out.get(k)
        if isinstance(v, pd.Series):
            out[k] = per_row_series(v, X.index, k)
        elif isinstance(v, (list, tuple, np.ndarray)) and len(v) != len(X):
            raise ValidationError(
                f"{k} lists {len(v)} entries for the {len(X)} rows of X; give one per row, "
                "in X's order (or one for every row)."
            )
    return out


def _split_per_row(kwargs: dict[str, Any], n: int) -> tuple[dict[str, Any], dict[str, list]]:
    """``kwargs`` without the per-row values (one per row of ``X``: each chunk gets its own
    slice), and those values as lists."""
    per_row = {
        k: list(kwargs[k])
        for k in _PER_ROW
        if isinstance(kwargs.get(k), (list, tuple, np.ndarray, pd.Series)) and len(kwargs[k]) == n
    }
    return {k: v for k, v in kwargs.items() if k not in per_row}, per_row


def _tasks(
    method: PipelineMethod,
    chunks: list[pd.DataFrame],
    todo: list[int],
    size: int,
    kwargs: dict[str, Any],
) -> tuple[bytes, list[tuple[int, int, bytes]]]:
    """What every task shares (the method, the keywords, the robustness copies) and each
    chunk's task (its index, size, and its rows with its slice of the per-row values).
    Tasks take their inputs as pickled bytes (no Python object is shipped or scattered
    implicitly), so that a task can be re-run anywhere; cloudpickle writes them, so that a
    model class defined in a script or a notebook reaches the workers by value."""
    shared, per_row = _split_per_row(kwargs, sum(len(c) for c in chunks))
    blob = cloudpickle.dumps((method, shared, _shipped_copies(method, kwargs)))
    tasks = []
    for i in todo:
        own = {k: v[i * size : (i + 1) * size] for k, v in per_row.items()}
        tasks.append((i, len(chunks[i]), cloudpickle.dumps((chunks[i], own))))
    return blob, tasks


def run_fingerprint(
    method: PipelineMethod, X: pd.DataFrame, chunk_size: int, kwargs: dict[str, Any]
) -> str:
    """What decides the chunks' answers: the method's class and parameters, the fitted
    model, its training rows, the queries (ids and values), the chunk size and every
    keyword of ``explain``."""
    data = getattr(method, "data_", None)
    return str(
        joblib.hash(
            (
                type(method).__name__,
                method.get_params(),
                getattr(getattr(method, "model_", None), "model", None),
                None if data is None else data.frame,
                X,
                int(chunk_size),
                {k: v for k, v in kwargs.items() if k != "cancel"},  # a token decides nothing
            )
        )
    )


def claim_folder(
    out: Path, method: PipelineMethod, X: pd.DataFrame, chunk_size: int, kwargs: dict[str, Any]
) -> Path:
    """Create ``out`` for this run, or refuse it when it holds chunks of another run (or
    chunks no run file vouches for): resuming would mix their answers with this run's.
    Returns ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    fp = run_fingerprint(method, X, chunk_size, kwargs)
    stamp = out / RUN_FILE
    written = json.loads(stamp.read_text()).get("fingerprint") if stamp.exists() else None
    if written != fp and (written is not None or any(out.glob("chunk-*.json"))):
        raise ValidationError(
            f"out_dir {str(out)!r} holds chunks of a different run (another method, "
            "parameters, model, training data, queries, chunk size or explain keywords); "
            "resuming would mix their answers with this run's. Use a fresh out_dir, or "
            "delete that one."
        )
    stamp.write_text(json.dumps({"fingerprint": fp}))
    return out


def _shipped_copies(method: PipelineMethod, kwargs: dict[str, Any]) -> Copies | None:
    """Under robustness, the retrained copies, fitted here once to travel with the method
    (None otherwise). Each task unpickles a model of its own and would refit them: 32
    refits of Adult's MLP take about four minutes."""
    method._check_fitted()
    copies = fit_robustness_copies(method, check_requirements(kwargs.get("requirements")))
    return None if copies is None else copies.complete()


def _bar(method: PipelineMethod, total: int) -> Any:
    """The progress bar over the queries of a chunked run."""
    desc = f"{type(method).__name__} (chunks)"
    return progress(total=total, desc=desc, unit="query", verbose=method.verbose)


def _run_tasks(
    blob: bytes,
    tasks: list[tuple[int, int, bytes]],
    collector: _Collector,
    parallel: str | None,
    address: str | None,
    n_jobs: int,
) -> None:
    """Every chunk task on the chosen backend (one Dask task each, or joblib's)."""
    with parallel_backend(
        parallel, address=address, n_workers=n_jobs if n_jobs and n_jobs > 0 else None
    ) as client:
        if parallel == "dask":
            _run_on_dask(client, blob, tasks, collector)
        elif parallel == "ray":
            _run_on_ray(blob, tasks, collector)
        else:
            record = in_processes(parallel, effective_n_jobs(n_jobs or 1))
            _run_on_joblib(blob, tasks, n_jobs, collector, record=record)


def _check_chunks(
    chunk_size: Any, X: pd.DataFrame, parallel: Any, address: Any, n_jobs: Any
) -> None:
    """``chunk_size`` is an int >= 1, the query ids are unique, ``parallel`` is a backend
    and an ``address`` names a cluster only for one that runs on it (:func:`check_parallel`),
    ``n_jobs`` a number of workers."""
    check_parallel(parallel, address)
    check_n_jobs(n_jobs)
    check_chunk_size(chunk_size)
    if X.index.has_duplicates:
        raise ValidationError("X has duplicate index labels; query ids must be unique.")


def _closing_line(report: BatchReport) -> str:
    """The summary line of a chunked run, with the chunks that failed."""
    line = (
        summary_line(report.result.status, report.result.diagnostics)
        if report.result is not None
        else "no chunk finished"
    )
    if report.failed:
        line += f"; {len(report.failed)} of {report.n_chunks} chunks failed"
    return line


def _saved_chunk(path: Path, rows: pd.Index) -> CounterfactualResult:
    """A chunk an earlier run wrote, refused unless it explains exactly ``rows``."""
    result = CounterfactualResult.from_json(path.read_text())
    held = result.queries.index
    if not held.equals(rows):
        raise ValidationError(
            f"{path.name} holds the rows {list(held[:5])}, but this run's chunk has the rows "
            f"{list(rows[:5])}: the folder's chunk files were changed since they were "
            "written. Delete them (or the folder) to explain those rows afresh."
        )
    return result


class _Collector:
    """Receives each chunk as it finishes: writes it to ``out`` (atomically), keeps it,
    counts it."""

    def __init__(self, report: BatchReport, out: Path | None) -> None:
        self.report = report
        self.out = out
        self.results: dict[int, CounterfactualResult] = {}
        self.bar: Any = None
        #: the warnings the chunks raised where they ran (passed on at the end)
        self.caught: list[Record] = []

    def _path(self, i: int) -> Path | None:
        return None if self.out is None else self.out / f"chunk-{i:05d}.json"

    def resume(self, chunks: list[pd.DataFrame]) -> list[int]:
        """Load the chunks an earlier run wrote (each checked to hold its own rows); return
        the others."""
        todo = []
        for i, rows in enumerate(chunks):
            path = self._path(i)
            if path is not None and path.exists():
                self.results[i] = _saved_chunk(path, rows.index)
                self.report.skipped.append(i)
            else:
                todo.append(i)
        return todo

    def finished(
        self, i: int, size: int, text: str | None, err: str | None, seconds: tuple[float, float]
    ) -> None:
        """Chunk ``i`` (``size`` queries) ended with its result's JSON, or an error."""
        if self.bar is not None:
            self.bar.update(size)
        self.report.chunk_seconds[i], self.report.chunk_cpu_seconds[i] = seconds
        if err is not None or text is None:
            self.report.failed[i] = err or "the chunk returned no result"
            return
        path = self._path(i)
        if path is not None:
            tmp = path.with_suffix(".json.tmp")
            tmp.write_text(text)
            tmp.replace(path)
        self.results[i] = CounterfactualResult.from_json(text)
        self.report.done.append(i)

    def close(self, model: Any) -> BatchReport:
        """The report, with every chunk's result joined in order and the failures written out."""
        if self.bar is not None:
            self.bar.close()
        if self.out is not None:
            failed = {str(k): v for k, v in self.report.failed.items()}
            (self.out / "failed.json").write_text(json.dumps(failed, indent=1))
        if self.results:
            parts = [self.results[i] for i in sorted(self.results)]
            self.report.result = CounterfactualResult.concat(parts, model=model)
        return self.report


_NAN2 = (float("nan"), float("nan"))


def _run_on_joblib(
    blob: bytes,
    tasks: list[tuple[int, int, bytes]],
    n_jobs: int | None,
    collector: _Collector,
    record: bool = True,
) -> None:
    """One joblib task per chunk, results taken as they finish (``record``: the warnings
    too, in worker processes: :func:`~._backends.in_processes`)."""
    sizes = {i: size for i, size, _ in tasks}
    gen = Parallel(n_jobs=n_jobs, return_as="generator_unordered")(
        delayed(_chunk_task)(blob, chunk, i, record) for i, _, chunk in tasks
    )
    while True:
        try:
            i, text, err, seconds, caught = next(gen)
            collector.caught += caught
        except StopIteration:
            return
        except Exception as exc:  # the pool itself broke (a worker process died)
            said = f"a worker process died ({type(exc).__name__}: {exc})"
            for k in sorted(set(sizes) - set(collector.report.done) - set(collector.report.failed)):
                collector.finished(k, sizes[k], None, said, _NAN2)
            return
        collector.finished(i, sizes[i], text, err, seconds)


def _run_on_dask(
    client: Any, blob: bytes, tasks: list[tuple[int, int, bytes]], collector: _Collector
) -> None:
    """One Dask task per chunk, submitted to the client directly.

    The method is broadcast to every worker once and each task carries only its chunk.
    A task whose worker dies is recorded as failed with the cluster's error (Dask may
    report it as cancelled, its scattered method lost with the worker); a re-run with
    ``out_dir`` computes only the chunks not written.  Tasks go straight to
    the scheduler rather than through joblib's Dask backend: that backend let a
    one-thread worker run two chunks at once, which halved the throughput of
    the solver-based methods at two workers (measured: MACE and CE-OCL 1.0x).
    """
    distributed = import_optional("distributed", purpose="parallel='dask'")
    method_f = client.scatter(blob, broadcast=True, hash=False)
    sizes = {i: size for i, size, _ in tasks}
    futures = {
        # Dask runs tasks in threads: warnings are not recorded there (in_processes)
        client.submit(_chunk_task, method_f, chunk, i, False, pure=False): i
        for i, _, chunk in tasks
    }
    for fut in distributed.as_completed(list(futures)):
        i = futures[fut]
        seconds = (float("nan"), float("nan"))
        try:
            _, text, err, seconds, caught = fut.result()
            collector.caught += caught
        except (
            Exception
        ) as exc:  # the task itself never raises; this is the cluster (KilledWorker, ...)
            text, err = None, f"{type(exc).__name__}: {exc}"
        collector.finished(i, sizes[i], text, err, seconds)
        fut.release()


def _run_on_ray(blob: bytes, tasks: list[tuple[int, int, bytes]], collector: _Collector) -> None:
    """One Ray task per chunk, submitted to Ray directly and taken as each finishes (so
    that each chunk is written, and a run can resume, as it arrives): joblib's Ray
    backend returns only the whole list, at the end. The method is put in Ray's object
    store once."""
    ray = import_optional("ray", purpose="parallel='ray'")
    task = ray.remote(num_cpus=1)(_chunk_task)
    method_ref = ray.put(blob)
    pending = {task.remote(method_ref, chunk, i): (i, size) for i, size, chunk in tasks}
    while pending:
        (ref,), _ = ray.wait(list(pending), num_returns=1)
        i, size = pending.pop(ref)
        seconds = (float("nan"), float("nan"))
        try:
            _, text, err, seconds, caught = ray.get(ref)
            collector.caught += caught
        except Exception as exc:  # the task never raises; this is Ray (a worker died, ...)
            text, err = None, f"{type(exc).__name__}: {exc}"
        collector.finished(i, size, text, err, seconds)


def _chunk_task(
    blob: bytes, chunk: bytes, i: int, record: bool = True
) -> tuple[int, str | None, str | None, tuple[float, float], list[Record]]:
    """Worker entry point: never raises, so that joblib keeps the other chunks.
    Returns ``(chunk, result JSON or None, error or None, (wall, CPU) seconds in the
    worker, the warnings it raised)`` (``record=False``: none recorded, in threads)."""
    t0, c0 = time.perf_counter(), time.process_time()
    text, err = None, None
    with recording() if record else contextlib.nullcontext([]) as records:
        try:
            method, kwargs, copies = pickle.loads(blob)
            if copies is not None:
                adopt_copies(method, copies)
            X, own = pickle.loads(chunk)  # the chunk's rows and its slice of the per-row values
            text = _run_chunk(method, X, {**kwargs, **own})
        except Exception:
            err = traceback.format_exc(limit=5)
    return i, text, err, (time.perf_counter() - t0, time.process_time() - c0), records
