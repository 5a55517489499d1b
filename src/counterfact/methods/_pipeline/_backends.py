"""Where parallel work runs: joblib's backends, a Dask cluster or Ray, set up for the
duration of one call (:func:`parallel_backend`), for :func:`explain`'s ``n_jobs`` and for
:func:`~counterfact.methods.explain_in_chunks`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import joblib.parallel
import numpy as np
from joblib import parallel_config

from ..._utils._deps import import_optional
from ...exceptions import ValidationError

__all__ = ["RETURN_AS", "check_n_jobs", "check_parallel", "parallel_backend"]

#: the backends that run on a cluster at an address
CLUSTERS = ("dask", "ray")

#: how joblib returns results on each backend: as they come where it can, as a whole
#: list on Ray (its joblib backend supports no generator)
RETURN_AS = {"ray": "list"}


@contextlib.contextmanager
def parallel_backend(
    parallel: str | None, *, address: str | None = None, n_workers: int | None = None
) -> Iterator[Any]:
    """Context in which joblib uses the backend ``parallel``.

    ``"dask"``: connects to ``address`` (a scheduler) or, if none and no client
    exists, starts a local cluster with ``n_workers`` workers for the duration.
    ``"ray"``: registers Ray's joblib backend; connects to the Ray cluster at
    ``address`` (``"host:6379"``, ``"auto"``, ``"ray://host:10001"``) or, if none and
    Ray is not running, starts it locally with ``n_workers`` CPUs, for the duration
    (joblib's Ray backend returns a whole list only: see :data:`RETURN_AS`).
    Anything else is passed to ``joblib.parallel_config`` (an ``address`` is refused:
    :func:`check_parallel`).
    """
    check_parallel(parallel, address)
    if parallel == "dask":
        distributed = import_optional("distributed", purpose="parallel='dask'")
        client = None
        cluster = None
        try:
            client = distributed.get_client() if address is None else None
        except ValueError:
            client = None
        own = client is None
        if own:
            if address is not None:
                client = distributed.Client(address)
            else:
                cluster = distributed.LocalCluster(
                    n_workers=n_workers or 2,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                )
                client = distributed.Client(cluster)
        try:
            with parallel_config(backend="dask"):
                yield client
        finally:
            if own and client is not None:
                client.close()
                if cluster is not None:
                    cluster.close()
    elif parallel == "ray":
        with _ray(n_workers, address):
            yield None
    else:
        with parallel_config(backend=parallel or "loky"):
            yield None


def check_parallel(parallel: Any, address: Any = None) -> None:
    """``parallel`` names a backend: joblib's own or one registered with
    ``joblib.register_parallel_backend``, or ``"dask"`` or ``"ray"`` (set up here); an
    ``address`` names a Dask scheduler or a Ray cluster, and would be ignored by any other
    backend, so it is refused there. Checked before any work starts."""
    known = sorted({*getattr(joblib.parallel, "BACKENDS", {}), *CLUSTERS})
    if parallel is not None and (not isinstance(parallel, str) or parallel not in known):
        raise ValidationError(
            f"parallel={parallel!r} is not a backend. Pass one of {known} (or None: "
            "loky), or register your own with joblib.register_parallel_backend."
        )
    if address is None:
        return
    if not isinstance(address, str) or not address:
        raise ValidationError(f"address must be a non-empty string. Got {address!r}.")
    if parallel not in CLUSTERS:
        raise ValidationError(
            f"address={address!r} names a cluster, but parallel={parallel!r} runs on this "
            "machine. Pass parallel='dask' (a scheduler, 'tcp://host:8786') or "
            "parallel='ray' (a cluster, 'host:6379'), or drop the address."
        )


def check_n_jobs(n_jobs: Any) -> None:
    """``n_jobs`` is None or a whole number other than 0 (joblib's convention: ``-1`` all
    cores, ``-2`` all but one); checked before any work starts."""
    whole = isinstance(n_jobs, (int, np.integer)) and not isinstance(n_jobs, bool)
    if n_jobs is not None and (not whole or n_jobs == 0):
        raise ValidationError(
            f"n_jobs must be a whole number of parallel workers: 1 or more, or -1 for every "
            f"core (-2 for all but one). Got {n_jobs!r}."
        )


def in_processes(parallel: str | None, workers: int) -> bool:
    """Whether tasks run in other processes, one at a time in each (loky with more than
    one worker, Ray): where warnings can be recorded per task (:mod:`..._utils._relay`)
    and would otherwise not reach the caller.  Not Dask (its workers run tasks in
    threads) nor threads, where recording would change the whole process's warnings."""
    return parallel == "ray" or (parallel in (None, "loky") and workers > 1)


def check_chunk_size(chunk_size: Any, *, optional: bool = False) -> None:
    """``chunk_size`` is a whole number >= 1 (or None where ``optional``: chosen for the
    workers); checked before any work starts."""
    if optional and chunk_size is None:
        return
    whole = isinstance(chunk_size, (int, np.integer)) and not isinstance(chunk_size, bool)
    if not whole or chunk_size < 1:
        raise ValidationError(
            f"chunk_size must be a whole number of rows >= 1{' (or None)' if optional else ''}. "
            f"Got {chunk_size!r}."
        )


@contextlib.contextmanager
def _ray(n_workers: int | None, address: str | None) -> Iterator[Any]:
    """Ray's joblib backend, connected to the cluster at ``address`` or with Ray started
    locally, if needed; the connection is closed after, unless Ray was already running
    (then ``address`` is refused: a process joins one Ray cluster at a time)."""
    ray = import_optional("ray", purpose="parallel='ray'")
    from ray.util.joblib import register_ray

    register_ray()
    own = not ray.is_initialized()
    if not own and address is not None:
        raise ValidationError(
            f"Ray is already running in this process, so address={address!r} cannot be "
            "joined. Drop the address to use the running Ray, or call ray.shutdown() first."
        )
    if own and address is not None:
        ray.init(address=address, log_to_driver=False)
    elif own:
        ray.init(num_cpus=n_workers, include_dashboard=False, log_to_driver=False)
    try:
        with parallel_config(backend="ray"):
            yield ray
    finally:
        if own:
            ray.shutdown()
