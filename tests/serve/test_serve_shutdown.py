"""Stopping the server (SIGTERM, as a service manager does) with a long explanation running:
it waits at most its grace period, then cancels the work and exits, instead of running the
request to its end.  The server is the project's own command on 127.0.0.1."""

from __future__ import annotations

import signal
import threading
import time

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
pytest.importorskip("z3")

import httpx

from _live import serve_process
from counterfact.serve._cli import SHUTDOWN_GRACE


def test_sigterm_stops_a_long_explanation_after_the_grace_period():
    options = ("--model", "rf", "--methods", "mace", "--method-concurrency", "1")
    with serve_process(*options) as (_, base, proc), httpx.Client(base_url=base) as c:
        n = c.get("/api/example?index=0").json()["total"]
        rows = [c.get(f"/api/example?index={k % n}").json()["row"] for k in range(20)]
        # minutes of work on a forest (about 4 alone): 20 rows, 5 answers each, regions
        body = {"rows": rows, "method": "mace", "n_counterfactuals": 5, "time_limit": 30}
        body["regions"] = True

        def ask() -> None:
            try:
                httpx.post(base + "/api/explain", json=body, timeout=600)
            except httpx.HTTPError:
                pass  # the server went away under the request: what stopping means

        client = threading.Thread(target=ask, daemon=True)
        client.start()
        started = time.monotonic()
        while c.get("/health").json()["pending"] == 0:
            assert time.monotonic() - started < 30, "the request never started"
            time.sleep(0.05)
        time.sleep(1.0)
        stopped = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(SHUTDOWN_GRACE + 60)
        took = time.monotonic() - stopped
        client.join(10)
    # the grace period, then the solver's next check; a loaded machine gets 15 s more
    assert took <= SHUTDOWN_GRACE + 15, took
