"""Load on ``counterfact serve``: concurrent clients, mixed requests, latency as a ratio
to a direct library call on the same rows.

Starts the server itself (``counterfact serve`` on 127.0.0.1, a free port; German
Credit, logistic regression, methods nearest and mace), then for each level of
concurrency (1, 10 and 50 clients) every client sends a bounded number of mixed
requests: valid explanations (MACE one row; nearest one row), slow ones (MACE, two
rows, three counterfactuals each), predictions, and invalid requests (bad JSON,
unknown feature, value outside the domain, contradictory constraints, unknown
method, a constraint MACE cannot honour, too many rows, an oversized body).  A
prober calls ``/health`` every 20 ms throughout.  Reported: lost or unanswered
requests, 5xx answers, wrong status classes, the p50/p99 latency of
``/api/explain`` divided by the p50/p99 of the same call made directly on the
library in this process, and ``/health`` latency while the server is saturated.
Stops the server and writes ``benchmarks/out/serve_load.md``.

    python benchmarks/serve_load.py [--requests-per-client 4] [--levels 1,10,50]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from _common import write_table

import counterfact as cf

HOST = "127.0.0.1"
TIME_LIMIT = 10.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def start_server(port: int, log: Path) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "counterfact.cli", "serve", "--host", HOST, "--port", str(port),
           "--methods", "nearest,mace", "--max-pending", "512", "--time-limit", str(TIME_LIMIT), "-q"]
    env = {**os.environ, "TQDM_DISABLE": "1"}
    return subprocess.Popen(cmd, stdout=log.open("wb"), stderr=subprocess.STDOUT, env=env)


def wait_ready(httpx: Any, base: str, proc: subprocess.Popen[bytes], timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with status {proc.returncode} before answering")
        try:
            if httpx.get(base + "/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise SystemExit("the server did not answer /health in time")


def requests_for(rows: list[dict[str, Any]]) -> dict[str, list[tuple[str, str, bytes, str]]]:
    """Kinds of request -> list of (method, path, body, expected status class)."""
    r0 = rows[0]
    bad = {
        "bad json": b'{"rows": [',
        "unknown feature": {"rows": [{**r0, "income": 1}]},
        "outside domain": {"rows": [{**r0, "age": 150}]},
        "contradiction": {"rows": [r0], "constraints": {"immutable": ["age"], "increasing": ["age"]}},
        "unknown method": {"rows": [r0], "method": "magic"},
        "cannot honour": {"rows": [r0], "method": "mace", "constraints": {"causal": [
            {"child": "credit_amount", "parents": ["duration_months"], "coef": {"duration_months": 10.0}}]}},
        "too many rows": {"rows": [r0] * 25},
        "body too large": {"rows": [r0], "pad": "x" * 70_000},
    }
    enc = lambda d: d if isinstance(d, bytes) else json.dumps(d).encode()  # noqa: E731
    return {
        "explain mace": [("POST", "/api/explain", enc({"rows": [r], "method": "mace", "time_limit": TIME_LIMIT}), "2xx") for r in rows],
        "explain nearest": [("POST", "/api/explain", enc({"rows": [r], "method": "nearest", "time_limit": TIME_LIMIT}), "2xx") for r in rows],
        "explain slow": [("POST", "/api/explain", enc({"rows": [rows[k], rows[(k + 1) % len(rows)]], "method": "mace",
                                                       "n_counterfactuals": 3, "time_limit": TIME_LIMIT}), "2xx")
                         for k in range(len(rows))],
        "predict": [("POST", "/api/predict", enc({"rows": rows[:3]}), "2xx")],
        "invalid": [("POST", "/api/explain", enc(b), "4xx") for b in bad.values()],
    }


MIX = ["explain mace", "invalid", "explain nearest", "explain slow", "invalid", "predict", "explain mace"]


async def run_level(httpx: Any, base: str, n_clients: int, per_client: int, catalogue: dict[str, list[Any]]) -> dict[str, Any]:
    records: list[dict[str, Any]] = []
    health: list[float] = []
    pending_seen: list[int] = []
    done = asyncio.Event()
    limits = httpx.Limits(max_connections=n_clients + 2, max_keepalive_connections=n_clients + 2)
    async with httpx.AsyncClient(base_url=base, timeout=600, limits=limits) as client:

        async def prober() -> None:
            while not done.is_set():
                t0 = time.perf_counter()
                try:
                    r = await client.get("/health")
                    health.append(time.perf_counter() - t0)
                    pending_seen.append(int(r.json().get("pending", 0)))
                except httpx.HTTPError:
                    health.append(float("inf"))
                await asyncio.sleep(0.02)

        async def worker(cid: int) -> None:
            for i in range(per_client):
                kind = MIX[(cid + i) % len(MIX)]
                options = catalogue[kind]
                method, path, body, expect = options[(cid * 7 + i) % len(options)]
                t0 = time.perf_counter()
                rec: dict[str, Any] = {"kind": kind, "expect": expect}
                try:
                    r = await client.request(method, path, content=body, headers={"content-type": "application/json"})
                    rec["status"] = r.status_code
                    rec["json"] = r.headers.get("content-type", "").startswith("application/json")
                    if r.status_code == 200 and path == "/api/explain":
                        rec["server_s"] = r.json()["elapsed_s"]
                except httpx.HTTPError as exc:
                    rec["status"] = None
                    rec["error"] = type(exc).__name__
                rec["seconds"] = time.perf_counter() - t0
                records.append(rec)

        probe = asyncio.create_task(prober())
        start = time.perf_counter()
        await asyncio.gather(*(worker(c) for c in range(n_clients)))
        wall = time.perf_counter() - start
        done.set()
        await probe
    return {"records": records, "health": health, "wall": wall, "max_pending": max(pending_seen or [0])}


def _setting() -> tuple[Any, Any]:
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    return train, test


def example_rows(n: int) -> list[dict[str, Any]]:
    """The first ``n`` held-out rows the model rejects (the server's /api/example rows)."""
    train, test = _setting()
    model = cf.models.fit(train, "lr", random_state=0)
    X = cf.rows_to_explain(model, test.X, data=train).iloc[:n]
    return [{k: (v.item() if hasattr(v, "item") else v) for k, v in r.items()} for _, r in X.iterrows()]


async def idle_health(httpx: Any, base: str, n: int = 100) -> list[float]:
    """/health latency with nothing else running (same kind of client as the load)."""
    out = []
    async with httpx.AsyncClient(base_url=base, timeout=60) as client:
        for _ in range(n):
            t0 = time.perf_counter()
            await client.get("/health")
            out.append(time.perf_counter() - t0)
            await asyncio.sleep(0.02)
    return out


def direct_baseline(rows: list[dict[str, Any]], repeats: int) -> dict[str, np.ndarray]:
    """The same explanations through the library in this process (same data, model, seeds)."""
    train, _ = _setting()
    model = cf.models.fit(train, "lr", random_state=0)
    out: dict[str, list[float]] = {"explain mace": [], "explain nearest": [], "explain slow": []}
    methods = {n: cf.methods.get(n, random_state=0, time_limit=TIME_LIMIT).fit(model, train) for n in ("mace", "nearest")}
    frame = train.schema.coerce(pd.DataFrame(rows, columns=train.schema.names))
    for m in methods.values():  # the server warms its methods up before serving: so does this
        m.explain(frame.iloc[[0]], target=1)
    for _ in range(repeats):
        for k in range(len(rows)):
            for kind, name, X, n in (("explain mace", "mace", frame.iloc[[k]], 1), ("explain nearest", "nearest", frame.iloc[[k]], 1),
                                     ("explain slow", "mace", frame.iloc[[k, (k + 1) % len(rows)]], 3)):
                t0 = time.perf_counter()
                methods[name].explain(X, n_counterfactuals=n, target=1)
                out[kind].append(time.perf_counter() - t0)
    return {k: np.asarray(v) for k, v in out.items()}


def q(a: Any, p: float) -> float:
    a = np.asarray(a, dtype=float)
    return float(np.percentile(a, p)) if a.size else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--levels", default="1,10,50", help="numbers of concurrent clients (default 1,10,50)")
    ap.add_argument("--requests-per-client", type=int, default=4, help="requests each client sends per level (default 4)")
    ap.add_argument("--rows", type=int, default=6, help="distinct example rows used (default 6)")
    args = ap.parse_args()
    import httpx

    levels = [int(x) for x in args.levels.split(",")]
    port = _free_port()
    base = f"http://{HOST}:{port}"
    log = Path(tempfile.mkstemp(prefix="serve_load_", suffix=".log")[1])
    rows = example_rows(args.rows)
    direct_before = direct_baseline(rows, repeats=1)  # measured before and after the load, pooled
    t0 = time.perf_counter()
    proc = start_server(port, log)
    try:
        wait_ready(httpx, base, proc)
        startup = time.perf_counter() - t0
        served = [httpx.get(f"{base}/api/example?index={k}").json()["row"] for k in range(args.rows)]
        if served != rows:
            raise SystemExit("the server's example rows differ from this script's; the comparison would be unfair")
        catalogue = requests_for(rows)
        idle = asyncio.run(idle_health(httpx, base))
        results = {n: asyncio.run(run_level(httpx, base, n, args.requests_per_client if n > 1 else 3 * args.requests_per_client, catalogue))
                   for n in levels}
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
    direct_after = direct_baseline(rows, repeats=1)
    direct = {k: np.concatenate([direct_before[k], direct_after[k]]) for k in direct_before}

    table = []
    for n, res in results.items():
        recs = pd.DataFrame(res["records"])
        answered = recs["status"].notna()
        status = recs["status"].fillna(0).astype(int)
        wrong = ((recs["expect"] == "2xx") & ~status.between(200, 299)) | ((recs["expect"] == "4xx") & ~status.between(400, 499))
        for kind in ("explain mace", "explain nearest", "explain slow"):
            lat = recs.loc[(recs["kind"] == kind) & answered, "seconds"]
            inside = recs.loc[(recs["kind"] == kind) & answered, "server_s"].dropna() if "server_s" in recs else []
            d = direct[kind]
            table.append({
                "clients": n, "requests": len(recs), "wall_s": res["wall"], "lost": int((~answered).sum()),
                "5xx": int(status.between(500, 599).sum()), "429": int((status == 429).sum()),
                "wrong_status": int(wrong.sum()), "request": kind, "n": len(lat),
                "p50_ratio": q(lat, 50) / q(d, 50), "p99_ratio": q(lat, 99) / q(d, 99),
                "in_server_p50_ratio": q(inside, 50) / q(d, 50),
                "p50_s": q(lat, 50), "direct_p50_s": q(d, 50),
                "health_p99_ms": 1000 * q(res["health"], 99), "health_max_ms": 1000 * max(res["health"] or [float("nan")]),
                "max_pending": res["max_pending"],
            })
    notes = [
        f"German Credit, logistic regression, methods nearest and mace; server started by this script on {HOST} "
        f"(start-up {startup:.1f} s, one process); time_limit {TIME_LIMIT:g} s per row.",
        f"per level: each client sends {args.requests_per_client} requests (the 1-client level {3 * args.requests_per_client}), "
        f"mixed {MIX}; invalid requests are of 8 kinds and must get a 4xx.",
        "lost = no HTTP answer; wrong_status = a valid request not answered 2xx or an invalid one not 4xx.",
        "p50_ratio/p99_ratio: latency of the HTTP request divided by the same explanation called directly on the library "
        "(same rows, model and seeds, in this run). Each method answers one request at "
        "a time, so under N clients the ratio includes queueing behind other requests for the same method; "
        "in_server_p50_ratio uses the server's own time for the explanation (elapsed_s, lock held: no queueing) instead.",
        "direct calls are measured before the server starts and after it stops (pooled).",
        f"/health while idle: p50 {1000 * q(idle, 50):.1f} ms, p99 {1000 * q(idle, 99):.1f} ms; health_p99_ms and "
        "health_max_ms are measured every 20 ms during the level (the server is saturated from 10 clients on: "
        "max_pending = clients).",
        "absolute seconds are context only (2-core machine shared with other work).",
    ]
    write_table("serve_load", pd.DataFrame(table), notes)
    log.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
