"""Where parallel work runs: joblib's backends, a Dask cluster or Ray, set up for the
duration of one call (:func:`parallel_backend`), for :func:`explain`'s ``n_jobs`` and for
:func:`~counterfact.methods.explain_in_chunks`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from joblib import parallel_config

from ..._utils._deps import import_optional

__all__ = ["RETURN_AS", "parallel_backend"]

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
    ``"ray"``: registers Ray's joblib backend; starts Ray locally with ``n_workers``
    CPUs for the duration when it is not running (joblib's Ray backend returns a whole
    list only: see :data:`RETURN_AS`).
    Anything else is passed to ``joblib.parallel_config``.
    """
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
        with _ray(n_workers):
            yield None
    else:
        with parallel_config(backend=parallel or "loky"):
            yield None


@contextlib.contextmanager
def _ray(n_workers: int | None) -> Iterator[Any]:
    """Ray's joblib backend, with Ray started locally (and stopped after) if needed."""
    ray = import_optional("ray", purpose="parallel='ray'")
    from ray.util.joblib import register_ray

    register_ray()
    own = not ray.is_initialized()
    if own:
        ray.init(num_cpus=n_workers, include_dashboard=False, log_to_driver=False)
    try:
        with parallel_config(backend="ray"):
            yield ray
    finally:
        if own:
            ray.shutdown()
