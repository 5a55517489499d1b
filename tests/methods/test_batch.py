"""Batch explanation: chunking, resume, failing chunks, a local Dask cluster, Ray and a
killed worker; what a chunked run takes (per-row lists, Series, a user's own model class),
checked before any chunk runs."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.exceptions import ValidationError
from counterfact.methods._pipeline._batch import explain_in_chunks


@pytest.fixture(scope="module")
def setting():
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.3, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    method = cf.NearestObservable().fit(model, train)
    return method, test.X.iloc[:60]


def test_chunks_equal_single_run(setting, tmp_path):
    method, X = setting
    rep = explain_in_chunks(method, X, chunk_size=16, out_dir=tmp_path, n_counterfactuals=2)
    assert rep.n_chunks == 4 and sorted(rep.done) == [0, 1, 2, 3] and not rep.failed
    assert len(list(tmp_path.glob("chunk-*.json"))) == 4
    # each chunk's wall time, measured where it ran
    assert sorted(rep.chunk_seconds) == [0, 1, 2, 3] and all(
        s > 0 for s in rep.chunk_seconds.values()
    )
    assert sorted(rep.chunk_cpu_seconds) == [0, 1, 2, 3] and all(
        s > 0 for s in rep.chunk_cpu_seconds.values()
    )
    direct = method.explain(X, n_counterfactuals=2)
    pd.testing.assert_frame_equal(
        rep.result.counterfactuals, direct.counterfactuals, check_dtype=False
    )
    # resume: nothing is recomputed
    rep2 = explain_in_chunks(method, X, chunk_size=16, out_dir=tmp_path, n_counterfactuals=2)
    assert sorted(rep2.skipped) == [0, 1, 2, 3] and not rep2.done and not rep2.chunk_seconds


def test_a_folder_of_another_run_is_refused(setting, tmp_path):
    """Resuming mixes nothing: chunks written for other rows, another chunk size, other
    keywords, or a model retrained on the same data are refused, naming the folder."""
    method, X = setting
    explain_in_chunks(method, X.iloc[:20], chunk_size=8, out_dir=tmp_path)
    data = cf.datasets.load("german_credit")
    train, _ = data.split(test_size=0.3, random_state=0)
    other = cf.NearestObservable().fit(cf.models.fit(train, "lr", random_state=0, C=0.1), train)
    for m, rows, kw in [
        (method, X.iloc[20:40], {"chunk_size": 8}),
        (method, X.iloc[:20], {"chunk_size": 5}),
        (method, X.iloc[:20], {"chunk_size": 8, "n_counterfactuals": 2}),
        (other, X.iloc[:20], {"chunk_size": 8}),
    ]:
        with pytest.raises(cf.ValidationError, match="holds chunks of a different run"):
            explain_in_chunks(m, rows, out_dir=tmp_path, **kw)
    again = explain_in_chunks(method, X.iloc[:20], chunk_size=8, out_dir=tmp_path)
    assert sorted(again.skipped) == [0, 1, 2]
    # chunks that no run file vouches for are refused too
    (tmp_path / "chunks-run.json").unlink()
    with pytest.raises(cf.ValidationError, match="holds chunks of a different run"):
        explain_in_chunks(method, X.iloc[:20], chunk_size=8, out_dir=tmp_path)


def test_per_row_constraints_and_targets_are_cut_with_the_rows(setting):
    method, X = setting
    rows = X.iloc[:10]
    cons = [cf.Constraints(immutable=["age"] if k % 2 else ["duration_months"]) for k in range(10)]
    targets = [1 - p for p in method.model_.predict(rows)]
    rep = explain_in_chunks(method, rows, chunk_size=3, constraints=cons, target=targets)
    assert not rep.failed and len(rep.result.queries) == 10
    direct = method.explain(rows, constraints=cons, target=targets)
    pd.testing.assert_frame_equal(
        rep.result.counterfactuals, direct.counterfactuals, check_dtype=False
    )
    assert rep.result.status.tolist() == direct.status.tolist()


@pytest.mark.parametrize("chunk_size", [0, -1, 1.5, True])
def test_a_chunk_size_that_means_nothing_is_refused_by_explain_too(setting, chunk_size):
    method, X = setting
    with pytest.raises(ValidationError, match="chunk_size must be a whole number of rows"):
        method.explain(X.iloc[:4], n_jobs=2, chunk_size=chunk_size)


def test_no_number_of_workers_runs_the_chunks_here(setting):
    method, X = setting
    report = explain_in_chunks(method, X.iloc[:4], chunk_size=2, n_jobs=None)
    assert sorted(report.done) == [0, 1] and len(report.result.queries) == 4


@pytest.mark.parametrize("n_jobs", [0, 1.5, True])
def test_a_number_of_workers_that_means_nothing_is_refused(setting, n_jobs):
    method, X = setting
    with pytest.raises(cf.ValidationError, match=r"n_jobs must be a whole number"):
        method.explain(X.iloc[:2], n_jobs=n_jobs)
    with pytest.raises(cf.ValidationError, match=r"n_jobs must be a whole number"):
        explain_in_chunks(method, X.iloc[:2], n_jobs=n_jobs, parallel="dask")


def test_failing_chunk_keeps_the_others(setting, tmp_path):
    method, X = setting
    X = X.copy()
    X.iloc[20, 0] = (
        "not-a-category" if X.dtypes.iloc[0] is np.dtype(object) else np.nan
    )  # poisons chunk 1
    with pytest.warns(UserWarning, match="1 of the 4 chunks failed, and the result leaves out"):
        rep = explain_in_chunks(method, X, chunk_size=16, out_dir=tmp_path)
    assert list(rep.failed) == [1] and "ValidationError" in rep.failed[1]
    assert sorted(rep.done) == [0, 2, 3]
    assert len(rep.result) == 60 - 16
    assert (tmp_path / "failed.json").exists()


@pytest.mark.slow
def test_local_dask_cluster_two_workers(setting, tmp_path):
    pytest.importorskip("distributed")
    method, X = setting
    rep = explain_in_chunks(method, X, chunk_size=10, n_jobs=2, parallel="dask", out_dir=tmp_path)
    assert not rep.failed and len(rep.result) == len(X)
    assert len(rep.chunk_seconds) == rep.n_chunks and all(s > 0 for s in rep.chunk_seconds.values())
    direct = method.explain(X)
    pd.testing.assert_frame_equal(
        rep.result.counterfactuals.sort_index(),
        direct.counterfactuals.sort_index(),
        check_dtype=False,
    )


@pytest.mark.slow
def test_ray_runs_each_chunk_as_a_task_and_writes_it(setting, tmp_path):
    """Ray through the batch layer: one Ray task per chunk, each written as it arrives
    (joblib's Ray backend supports no generator; before, parallel="ray" raised)."""
    pytest.importorskip("ray")
    method, X = setting
    rep = explain_in_chunks(method, X, chunk_size=20, n_jobs=2, parallel="ray", out_dir=tmp_path)
    assert not rep.failed and sorted(rep.done) == [0, 1, 2]
    assert len(list(tmp_path.glob("chunk-*.json"))) == 3
    direct = method.explain(X)
    pd.testing.assert_frame_equal(
        rep.result.counterfactuals, direct.counterfactuals, check_dtype=False
    )
    # and explain's own n_jobs on Ray, and on Dask without a client (a local cluster)
    for parallel in ("ray", "dask"):
        pd.testing.assert_frame_equal(
            method.explain(X, n_jobs=2, parallel=parallel).counterfactuals,
            direct.counterfactuals,
        )


@pytest.mark.slow
def test_ray_joins_the_cluster_at_its_address(setting, ray_cluster, monkeypatch):
    """address= with parallel="ray" joins that cluster (before, it was silently ignored and
    a local Ray started), and leaves it after the run."""
    import ray

    joined: list[dict] = []
    init = ray.init
    monkeypatch.setattr(ray, "init", lambda **kw: (joined.append(kw), init(**kw))[1])
    method, X = setting
    rep = explain_in_chunks(method, X, chunk_size=20, parallel="ray", address=ray_cluster)
    assert [kw.get("address") for kw in joined] == [ray_cluster]
    assert not rep.failed and sorted(rep.done) == [0, 1, 2] and not ray.is_initialized()
    pd.testing.assert_frame_equal(
        rep.result.counterfactuals, method.explain(X).counterfactuals, check_dtype=False
    )


@pytest.mark.slow
def test_dask_runs_on_the_scheduler_at_its_address(setting):
    """address= with parallel="dask" submits the chunks to that scheduler (a cluster of
    its own here, on 127.0.0.1), which sees one task per chunk; the caller's cluster is
    left running."""
    distributed = pytest.importorskip("distributed")
    method, X = setting
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        rep = explain_in_chunks(
            method, X, chunk_size=20, parallel="dask", address=cluster.scheduler_address
        )
        # Dask names a task's prefix after its function, without the leading underscore
        seen = cluster.scheduler.task_prefixes.get("chunk_task")
        assert seen is not None and seen.state_counts["memory"] == 3  # one per chunk
        assert cluster.status.name == "running"
    assert not rep.failed and sorted(rep.done) == [0, 1, 2]
    pd.testing.assert_frame_equal(
        rep.result.counterfactuals, method.explain(X).counterfactuals, check_dtype=False
    )


def test_an_address_is_refused_where_it_would_be_ignored(setting):
    """An address names a Dask scheduler or a Ray cluster: on the backends that run on this
    machine it would be ignored, so it is refused, before any work starts."""
    method, X = setting
    for parallel in (None, "loky", "threading"):
        with pytest.raises(cf.ValidationError, match=r"names a cluster.*parallel='dask'"):
            explain_in_chunks(method, X, parallel=parallel, address="tcp://127.0.0.1:8786")
        with pytest.raises(cf.ValidationError, match="runs on this machine"):
            cf.recourse.Batch(parallel=parallel, address="127.0.0.1:6379")
    with pytest.raises(cf.ValidationError, match="non-empty string"):
        cf.recourse.Batch(parallel="ray", address="")


def test_a_backend_not_known_is_refused_before_any_work(setting):
    """A misspelt backend is refused by name, with the ones there are, before the rows are
    prepared or any retrained copy fitted (before, joblib raised late, without Dask or Ray
    among the names)."""
    method, X = setting
    said = r"parallel='rayy' is not a backend\. Pass one of \['dask', 'loky', .*'ray'"
    with pytest.raises(cf.ValidationError, match=said):
        method.explain(X, n_jobs=2, parallel="rayy")
    with pytest.raises(cf.ValidationError, match=said):
        method.explain(X, parallel="rayy", requirements=cf.Requirements(robustness=0.9))
    with pytest.raises(cf.ValidationError, match=said):
        explain_in_chunks(method, X, parallel="rayy")
    with pytest.raises(cf.ValidationError, match=said):
        cf.recourse.Batch(parallel="rayy")
    assert cf.recourse.Batch(parallel="ray", address="auto").address == "auto"


@pytest.mark.slow
def test_killed_dask_worker_loses_nothing(setting, tmp_path):
    distributed = pytest.importorskip("distributed")
    method, X = setting
    X = pd.concat([X] * 3)
    X.index = range(len(X))
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    client = distributed.Client(cluster)
    killed = []

    def kill_one() -> None:
        # wait until some chunks are finished, then kill one worker process
        deadline = time.time() + 60
        while time.time() < deadline and len(list(tmp_path.glob("chunk-*.json"))) < 2:
            time.sleep(0.05)
        nanny = next(iter(cluster.workers.values()))
        proc = nanny.process.process if nanny.process is not None else None
        if proc is not None and proc.is_alive():
            # SIGKILL the worker's OS process directly: the wrapper's kill() needs the nanny's loop
            os.kill(proc.pid, signal.SIGKILL)
            killed.append(True)

    t = threading.Thread(target=kill_one)
    try:
        t.start()
        rep = explain_in_chunks(
            method, X, chunk_size=5, n_jobs=2, parallel="dask", out_dir=tmp_path
        )
        t.join()
    finally:
        client.close()
        cluster.close()
    assert killed, "the worker was not killed during the run"
    assert not rep.failed and len(rep.result) == len(X)
    assert len(list(tmp_path.glob("chunk-*.json"))) == rep.n_chunks


# ------------------------------------------- what a chunked run takes, checked first
@pytest.mark.parametrize("n", [3, 5])
def test_a_per_row_list_of_another_length_is_refused(setting, n):
    method, X = setting
    X = X.iloc[:9]
    frozen = [cf.Constraints(immutable=["duration_months", "credit_amount"])] * n
    with pytest.raises(ValidationError, match=f"constraints lists {n} entries for the 9 rows"):
        explain_in_chunks(method, X, chunk_size=3, constraints=frozen)
    with pytest.raises(ValidationError, match=f"target lists {n} entries for the 9 rows"):
        explain_in_chunks(method, X, chunk_size=3, target=[1] * n)


def test_a_target_series_is_matched_to_the_rows_by_label(setting):
    method, X = setting
    X = X.iloc[:9]
    labels = pd.Series([0, 1] * 4 + [0], index=X.index)
    shuffled = labels.iloc[::-1]
    for run in (
        lambda t: method.explain(X, target=t),
        lambda t: explain_in_chunks(method, X, chunk_size=4, target=t).result,
    ):
        assert list(run(shuffled).target) == list(labels)
    other = pd.Series([1] * 9, index=range(1000, 1009))
    with pytest.raises(ValidationError, match="index does not label each of the 9 rows"):
        method.explain(X, target=other)
    with pytest.raises(ValidationError, match="index does not label each of the 9 rows"):
        explain_in_chunks(method, X, chunk_size=4, target=other)


def test_a_single_row_as_a_series_is_one_query(setting):
    method, X = setting
    X = X.iloc[:9]
    report = explain_in_chunks(method, X.iloc[3], chunk_size=2)
    assert report.n_chunks == 1 and list(report.result.queries.index) == [X.index[3]]
    direct = method.explain(X.iloc[3])
    pd.testing.assert_frame_equal(
        report.result.counterfactuals, direct.counterfactuals, check_dtype=False
    )


def test_a_chunk_file_copied_over_another_is_refused_on_resume(setting, tmp_path):
    method, X = setting
    X = X.iloc[:9]
    explain_in_chunks(method, X, chunk_size=3, out_dir=tmp_path)
    shutil.copy(tmp_path / "chunk-00000.json", tmp_path / "chunk-00001.json")
    with pytest.raises(ValidationError, match=r"chunk-00001\.json holds the rows"):
        explain_in_chunks(method, X, chunk_size=3, out_dir=tmp_path)


def test_every_chunk_failing_is_said_not_silent(setting):
    """The report lists every failure (an audit turns them into "unknown" rows), and a
    warning says the first chunk's error."""
    method, X = setting
    X = X.iloc[:9]
    broken = X.copy()
    broken["credit_amount"] = float("nan")
    with pytest.warns(UserWarning, match="Every one of the 3 chunks failed; chunk 0: "):
        report = explain_in_chunks(method, broken, chunk_size=3)
    assert report.result is None and sorted(report.failed) == [0, 1, 2]


def test_a_target_series_that_does_not_label_the_rows_says_which_labels(setting):
    method, X = setting
    X = X.iloc[:3]
    twice = pd.Series([1, 1, 1], index=[X.index[0], X.index[0], X.index[1]])
    with pytest.raises(ValidationError, match=r"labels given twice: \[") as err:
        method.explain(X, target=twice)
    assert f"rows of X not in it: [{int(X.index[2])}]" in str(err.value)


SCRIPT = """
import counterfact as cf
from counterfact.methods._pipeline._batch import explain_in_chunks


class Mine:
    '''A model class that lives only in this script (its __main__).'''

    def __init__(self, inner):
        self.inner = inner
        self.classes_ = inner.classes_

    def predict(self, X):
        return self.inner.predict(X)

    def predict_proba(self, X):
        return self.inner.predict_proba(X)


data = cf.datasets.load("german_credit")
train, test = data.split(test_size=0.3, random_state=0)
fitted = cf.models.fit(train, "lr", random_state=0)
method = cf.NearestObservable().fit(Mine(getattr(fitted, "model", fitted)), train)
report = explain_in_chunks(method, test.X.iloc[:4], chunk_size=2, n_jobs=2)
print("failed", len(report.failed), "answered", len(report.result.queries))
"""


def test_a_model_class_from_the_users_script_reaches_the_workers(tmp_path):
    script = tmp_path / "mine.py"
    script.write_text(textwrap.dedent(SCRIPT))
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "failed 0 answered 4" in done.stdout


WARNING_SCRIPT = """
import warnings

import counterfact as cf
from counterfact.methods._pipeline._batch import explain_in_chunks


class Tired(UserWarning):
    pass


class Warns:
    # a model that warns each time it scores rows, in whichever process scores them

    def __init__(self, inner):
        self.inner, self.classes_ = inner, inner.classes_

    def predict(self, X):
        return self.classes_[self.predict_proba(X).argmax(axis=1)]

    def predict_proba(self, X):
        warnings.warn("scored by a tired model", RuntimeWarning)
        warnings.warn("the model is tired", Tired)
        return self.inner.predict_proba(X)


data = cf.datasets.load("german_credit")
train, test = data.split(test_size=0.3, random_state=0)
fitted = cf.models.fit(train, "lr", random_state=0)
method = cf.MDPSO(random_state=0).fit(Warns(getattr(fitted, "model", fitted)), train)
X = cf.rows_to_explain(fitted, test).iloc[:4]
for name, run in (
    ("explain", lambda: method.explain(X, n_jobs=2, chunk_size=2)),
    ("chunks", lambda: explain_in_chunks(method, X, chunk_size=2, n_jobs=2)),
):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run()
    said = {(w.category.__name__, str(w.message).split(" (raised")[0]) for w in caught}
    print(name, sorted(said))
"""


def test_warnings_raised_in_worker_processes_reach_the_caller(tmp_path):
    """A model's warnings in loky workers are passed on to the caller once each (a
    category of its own as a UserWarning naming it), not lost on the workers' stderr."""
    script = tmp_path / "warns.py"
    script.write_text(textwrap.dedent(WARNING_SCRIPT))
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    for name in ("explain", "chunks"):
        line = next(ln for ln in done.stdout.splitlines() if ln.startswith(name + " "))
        assert "('RuntimeWarning', 'scored by a tired model')" in line, line
        assert "('UserWarning', 'Tired: the model is tired')" in line, line


def test_a_result_without_answers_has_the_schemas_dtypes_in_chunks_or_not(setting):
    method, X = setting
    nothing = cf.Constraints(relations=["credit_amount <= 0"])  # below every loan
    alone = method.explain(X.iloc[:4], constraints=nothing)
    chunked = explain_in_chunks(method, X.iloc[:4], chunk_size=2, constraints=nothing).result
    assert len(alone.counterfactuals) == 0 and (alone.status == "infeasible").all()
    pd.testing.assert_frame_equal(alone.counterfactuals, chunked.counterfactuals)
    assert alone.counterfactuals["credit_amount"].dtype.kind in "if"  # not object


def test_an_unfitted_method_is_refused_in_its_own_words(setting):
    _, X = setting
    with pytest.raises(cf.NotFittedError, match="not fitted"):
        explain_in_chunks(cf.NearestObservable(), X.iloc[:4], chunk_size=2)
