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

Then the hostile scenarios of issue 29, each on a server of its own:

* **drops**: 50 clients, 10 % of which send large MACE requests (20 rows, 5 answers
  each, 30 s per row) and drop them after 0.5 s; the others send small requests
  (MACE and nearest, one row).  Reported: 5xx answers, the p50/p99 latency of the
  small requests divided by the same requests sent one at a time to the same server
  with nothing else running (the unloaded run, measured first), ``/health`` p99,
  and how long ``pending`` takes to return to 0.  Run with ``--method-concurrency
  1`` (one request per method at a time, as before issue 29, but cancellable) and
  with the default 2 (each request on its own copy of the method).
* **quotas**: 10 clients, each from its own loopback address (127.0.0.x), send
  requests as fast as they can to a server with ``--requests-per-minute 30
  --counterfactuals-per-hour 10``; reported: the 429s (by quota), their
  ``Retry-After``, and no 5xx.  Written to ``benchmarks/out/serve_hostile.md``.

    python benchmarks/serve_load.py [--requests-per-client 4] [--levels 1,10,50] [--skip-mixed]
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
from _common import OUT, _markdown, write_table

import counterfact as cf

HOST = "127.0.0.1"
TIME_LIMIT = 10.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def start_server(port: int, log: Path, extra: list[str] | None = None) -> subprocess.Popen[bytes]:
    """``counterfact serve`` on HOST:port; quotas off unless ``extra`` sets them (every client
    of this script comes from 127.0.0.1 unless it binds another loopback address)."""
    cmd = [
        sys.executable,
        "-m",
        "counterfact.cli",
        "serve",
        "--host",
        HOST,
        "--port",
        str(port),
        "--methods",
        "nearest,mace",
        "--max-pending",
        "512",
        "--time-limit",
        str(TIME_LIMIT),
        "--max-rows",
        "20",
        "--requests-per-minute",
        "0",
        "--counterfactuals-per-hour",
        "0",
        *(extra or []),
        "-q",
    ]
    env = {**os.environ, "TQDM_DISABLE": "1"}
    return subprocess.Popen(cmd, stdout=log.open("wb"), stderr=subprocess.STDOUT, env=env)


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


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
        "contradiction": {
            "rows": [r0],
            "constraints": {"immutable": ["age"], "increasing": ["age"]},
        },
        "unknown method": {"rows": [r0], "method": "magic"},
        "cannot honour": {
            "rows": [r0],
            "method": "mace",
            "constraints": {
                "causal": [
                    {
                        "child": "credit_amount",
                        "parents": ["duration_months"],
                        "coef": {"duration_months": 10.0},
                    }
                ]
            },
        },
        "too many rows": {"rows": [r0] * 25},
        "body too large": {"rows": [r0], "pad": "x" * 70_000},
    }
    enc = lambda d: d if isinstance(d, bytes) else json.dumps(d).encode()  # noqa: E731
    return {
        "explain mace": [
            (
                "POST",
                "/api/explain",
                enc({"rows": [r], "method": "mace", "time_limit": TIME_LIMIT}),
                "2xx",
            )
            for r in rows
        ],
        "explain nearest": [
            (
                "POST",
                "/api/explain",
                enc({"rows": [r], "method": "nearest", "time_limit": TIME_LIMIT}),
                "2xx",
            )
            for r in rows
        ],
        "explain slow": [
            (
                "POST",
                "/api/explain",
                enc(
                    {
                        "rows": [rows[k], rows[(k + 1) % len(rows)]],
                        "method": "mace",
                        "n_counterfactuals": 3,
                        "time_limit": TIME_LIMIT,
                    }
                ),
                "2xx",
            )
            for k in range(len(rows))
        ],
        "predict": [("POST", "/api/predict", enc({"rows": rows[:3]}), "2xx")],
        "invalid": [("POST", "/api/explain", enc(b), "4xx") for b in bad.values()],
    }


MIX = [
    "explain mace",
    "invalid",
    "explain nearest",
    "explain slow",
    "invalid",
    "predict",
    "explain mace",
]


async def run_level(
    httpx: Any, base: str, n_clients: int, per_client: int, catalogue: dict[str, list[Any]]
) -> dict[str, Any]:
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
                    r = await client.request(
                        method, path, content=body, headers={"content-type": "application/json"}
                    )
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
    return {
        "records": records,
        "health": health,
        "wall": wall,
        "max_pending": max(pending_seen or [0]),
    }


def _setting() -> tuple[Any, Any]:
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    return train, test


def example_rows(n: int) -> list[dict[str, Any]]:
    """The first ``n`` held-out rows the model rejects (the server's /api/example rows)."""
    train, test = _setting()
    model = cf.models.fit(train, "lr", random_state=0)
    X = cf.rows_to_explain(model, test.X, data=train).iloc[:n]
    return [
        {k: (v.item() if hasattr(v, "item") else v) for k, v in r.items()} for _, r in X.iterrows()
    ]


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
    methods = {
        n: cf.methods.get(n, random_state=0, time_limit=TIME_LIMIT).fit(model, train)
        for n in ("mace", "nearest")
    }
    frame = train.schema.coerce(pd.DataFrame(rows, columns=train.schema.names))
    for m in methods.values():  # the server warms its methods up before serving: so does this
        m.explain(frame.iloc[[0]], target=1)
    for _ in range(repeats):
        for k in range(len(rows)):
            for kind, name, X, n in (
                ("explain mace", "mace", frame.iloc[[k]], 1),
                ("explain nearest", "nearest", frame.iloc[[k]], 1),
                ("explain slow", "mace", frame.iloc[[k, (k + 1) % len(rows)]], 3),
            ):
                t0 = time.perf_counter()
                methods[name].explain(X, n_counterfactuals=n, target=1)
                out[kind].append(time.perf_counter() - t0)
    return {k: np.asarray(v) for k, v in out.items()}


def q(a: Any, p: float) -> float:
    a = np.asarray(a, dtype=float)
    return float(np.percentile(a, p)) if a.size else float("nan")


def mixed_load(args: argparse.Namespace, httpx: Any) -> None:
    """The mixed load at 1, 10 and 50 clients (serve_load.md)."""
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
        served = [
            httpx.get(f"{base}/api/example?index={k}").json()["row"] for k in range(args.rows)
        ]
        if served != rows:
            raise SystemExit(
                "the server's example rows differ from this script's; the comparison would "
                "be unfair"
            )
        catalogue = requests_for(rows)
        idle = asyncio.run(idle_health(httpx, base))
        results = {
            n: asyncio.run(
                run_level(
                    httpx,
                    base,
                    n,
                    args.requests_per_client if n > 1 else 3 * args.requests_per_client,
                    catalogue,
                )
            )
            for n in levels
        }
    finally:
        stop_server(proc)
    direct_after = direct_baseline(rows, repeats=1)
    direct = {k: np.concatenate([direct_before[k], direct_after[k]]) for k in direct_before}

    table = []
    for n, res in results.items():
        recs = pd.DataFrame(res["records"])
        answered = recs["status"].notna()
        status = recs["status"].fillna(0).astype(int)
        wrong = ((recs["expect"] == "2xx") & ~status.between(200, 299)) | (
            (recs["expect"] == "4xx") & ~status.between(400, 499)
        )
        for kind in ("explain mace", "explain nearest", "explain slow"):
            lat = recs.loc[(recs["kind"] == kind) & answered, "seconds"]
            inside = (
                recs.loc[(recs["kind"] == kind) & answered, "server_s"].dropna()
                if "server_s" in recs
                else []
            )
            d = direct[kind]
            table.append(
                {
                    "clients": n,
                    "requests": len(recs),
                    "wall_s": res["wall"],
                    "lost": int((~answered).sum()),
                    "5xx": int(status.between(500, 599).sum()),
                    "429": int((status == 429).sum()),
                    "wrong_status": int(wrong.sum()),
                    "request": kind,
                    "n": len(lat),
                    "p50_ratio": q(lat, 50) / q(d, 50),
                    "p99_ratio": q(lat, 99) / q(d, 99),
                    "in_server_p50_ratio": q(inside, 50) / q(d, 50),
                    "p50_s": q(lat, 50),
                    "direct_p50_s": q(d, 50),
                    "health_p99_ms": 1000 * q(res["health"], 99),
                    "health_max_ms": 1000 * max(res["health"] or [float("nan")]),
                    "max_pending": res["max_pending"],
                }
            )
    notes = [
        "German Credit, logistic regression, methods nearest and mace; server started by "
        f"this script on {HOST} (start-up {startup:.1f} s, one process); time_limit "
        f"{TIME_LIMIT:g} s per row.",
        f"per level: each client sends {args.requests_per_client} requests (the 1-client "
        f"level {3 * args.requests_per_client}), mixed {MIX}; invalid requests are of 8 "
        "kinds and must get a 4xx.",
        "lost = no HTTP answer; wrong_status = a valid request not answered 2xx or an "
        "invalid one not 4xx.",
        "p50_ratio/p99_ratio: latency of the HTTP request divided by the same explanation "
        "called directly on the library (same rows, model and seeds, in this run). Each "
        "method answers two requests at a time (--method-concurrency 2, the default), so "
        "under N clients the ratio includes queueing behind other requests for the same "
        "method and sharing the 2 cores; in_server_p50_ratio uses the server's own time for "
        "the explanation (elapsed_s, from the moment its method started on it: no queueing) "
        "instead.",
        "direct calls are measured before the server starts and after it stops (pooled).",
        f"/health while idle: p50 {1000 * q(idle, 50):.1f} ms, p99 {1000 * q(idle, 99):.1f} "
        "ms; health_p99_ms and health_max_ms are measured every 20 ms during the level (the "
        "server is saturated from 10 clients on: max_pending = clients).",
        "absolute seconds are context only (2-core machine shared with other work).",
    ]
    write_table("serve_load", pd.DataFrame(table), notes)
    log.unlink(missing_ok=True)


# ------------------------------------------------------------------ hostile clients
def _raw_post(port: int, body: bytes) -> socket.socket:
    """Send a POST /api/explain on a raw socket and return it (the caller drops it)."""
    s = socket.create_connection((HOST, port))
    s.sendall(
        b"POST /api/explain HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    return s


def small_requests(rows: list[dict[str, Any]]) -> list[tuple[str, bytes]]:
    """The small requests of the drop scenario: one row, MACE or nearest."""
    out = []
    for r in rows:
        for m in ("mace", "nearest"):
            out.append(
                (
                    f"small {m}",
                    json.dumps({"rows": [r], "method": m, "time_limit": TIME_LIMIT}).encode(),
                )
            )
    return out


async def unloaded(
    httpx: Any, base: str, smalls: list[tuple[str, bytes]], repeats: int
) -> dict[str, list[float]]:
    """Each small request sent alone, one after the other, to the idle server."""
    out: dict[str, list[float]] = {}
    async with httpx.AsyncClient(base_url=base, timeout=600) as client:
        for _ in range(repeats):
            for kind, body in smalls:
                t0 = time.perf_counter()
                await client.post(
                    "/api/explain", content=body, headers={"content-type": "application/json"}
                )
                out.setdefault(kind, []).append(time.perf_counter() - t0)
    return out


async def run_drops(
    httpx: Any,
    base: str,
    port: int,
    n_clients: int,
    per_client: int,
    big: bytes,
    smalls: list[tuple[str, bytes]],
    drop: bool = True,
) -> dict[str, Any]:
    """``n_clients`` clients; every tenth sends the large request and drops it after 0.5 s
    (``drop=False``: those clients send nothing, the control run of the same small load)."""
    records: list[dict[str, Any]] = []
    health: list[float] = []
    drop_times: list[float] = []
    done = asyncio.Event()
    limits = httpx.Limits(max_connections=n_clients + 2, max_keepalive_connections=n_clients + 2)
    async with httpx.AsyncClient(base_url=base, timeout=600, limits=limits) as client:

        async def prober() -> None:
            while not done.is_set():
                t0 = time.perf_counter()
                await client.get("/health")
                health.append(time.perf_counter() - t0)
                await asyncio.sleep(0.02)

        async def dropper() -> None:
            for _ in range(per_client if drop else 0):
                sock = await asyncio.to_thread(_raw_post, port, big)
                await asyncio.sleep(0.5)
                sock.close()
                drop_times.append(time.perf_counter())
                await asyncio.sleep(1.0)

        async def worker(cid: int) -> None:
            for i in range(per_client):
                kind, body = smalls[(cid * 3 + i) % len(smalls)]
                t0 = time.perf_counter()
                try:
                    r = await client.post(
                        "/api/explain", content=body, headers={"content-type": "application/json"}
                    )
                    status: int | None = r.status_code
                except httpx.HTTPError:
                    status = None
                records.append(
                    {"kind": kind, "status": status, "seconds": time.perf_counter() - t0}
                )

        probe = asyncio.create_task(prober())
        n_drop = max(1, n_clients // 10)
        start = time.perf_counter()
        await asyncio.gather(
            *(dropper() for _ in range(n_drop)), *(worker(c) for c in range(n_clients - n_drop))
        )
        wall = time.perf_counter() - start
        settle = time.perf_counter()
        while (await client.get("/health")).json()["pending"] and time.perf_counter() - settle < 60:
            await asyncio.sleep(0.02)
        done.set()
        await probe
    return {
        "records": records,
        "health": health,
        "wall": wall,
        "droppers": n_drop,
        "clients": n_clients,
        "drops": len(drop_times),
        "idle_after_s": time.perf_counter() - max(drop_times or [settle]),
    }


def drop_recovery(
    httpx: Any, base: str, port: int, big: bytes, small: bytes, repeats: int = 3
) -> dict[str, float]:
    """On the otherwise idle server: drop the large request after 0.5 s, time until nothing is
    pending, then time one small request (as the cancellation test does)."""
    pending_s, after = [], []
    with httpx.Client(base_url=base, timeout=600) as client:
        for _ in range(repeats):
            sock = _raw_post(port, big)
            time.sleep(0.5)
            sock.close()
            t0 = time.perf_counter()
            while client.get("/health").json()["pending"] and time.perf_counter() - t0 < 60:
                time.sleep(0.01)
            pending_s.append(time.perf_counter() - t0)
            time.sleep(max(0.0, 2.0 - (time.perf_counter() - t0)))
            t1 = time.perf_counter()
            client.post("/api/explain", content=small, headers={"content-type": "application/json"})
            after.append(time.perf_counter() - t1)
    return {
        "pending_zero_s": float(np.median(pending_s)),
        "small_after_drop_s": float(np.median(after)),
    }


async def run_quotas(
    httpx: Any, base: str, n_clients: int, per_client: int, row: dict[str, Any]
) -> list[dict[str, Any]]:
    """Each client from its own loopback address, as fast as it can: predictions and
    explanations."""
    records: list[dict[str, Any]] = []
    predict = json.dumps({"rows": [row]}).encode()
    explain = json.dumps({"rows": [row], "method": "nearest", "n_counterfactuals": 3}).encode()

    async def client_run(cid: int) -> None:
        transport = httpx.AsyncHTTPTransport(local_address=f"127.0.0.{10 + cid}")
        async with httpx.AsyncClient(base_url=base, timeout=600, transport=transport) as client:
            for i in range(per_client):
                path, body = ("/api/explain", explain) if i % 2 else ("/api/predict", predict)
                r = await client.post(
                    path, content=body, headers={"content-type": "application/json"}
                )
                detail = r.json().get("detail", "") if r.status_code == 429 else ""
                records.append(
                    {
                        "client": cid,
                        "path": path,
                        "status": r.status_code,
                        "quota": "counterfactuals/hour"
                        if "counterfactuals" in detail
                        else "requests/minute"
                        if detail
                        else "",
                        "retry_after": float(r.headers.get("Retry-After", "nan")),
                    }
                )

    await asyncio.gather(*(client_run(c) for c in range(n_clients)))
    return records


def _drop_row(name: str, res: dict[str, Any], solo: dict[str, list[float]]) -> list[dict[str, Any]]:
    recs = pd.DataFrame(res["records"])
    status = recs["status"].fillna(0).astype(int)
    out = []
    for kind in sorted(recs["kind"].unique()):
        lat = recs.loc[(recs["kind"] == kind) & recs["status"].notna(), "seconds"]
        out.append(
            {
                "server": name,
                "clients": res["clients"],
                "droppers": res["droppers"],
                "drops": res["drops"],
                "request": kind,
                "n": len(lat),
                "5xx": int(status[recs["kind"] == kind].between(500, 599).sum()),
                "lost": int(recs.loc[recs["kind"] == kind, "status"].isna().sum()),
                "p50_ratio": q(lat, 50) / q(solo[kind], 50),
                "p99_ratio": q(lat, 99) / q(solo[kind], 99),
                "p50_s": q(lat, 50),
                "p99_s": q(lat, 99),
                "unloaded_p50_s": q(solo[kind], 50),
                "unloaded_p99_s": q(solo[kind], 99),
                "health_p99_ms": 1000 * q(res["health"], 99),
                "health_max_ms": 1000 * max(res["health"] or [float("nan")]),
                "idle_after_last_drop_s": res["idle_after_s"],
            }
        )
    return out


def hostile(args: argparse.Namespace, httpx: Any) -> None:
    """The drop scenario (method concurrency 1 and 2) and the quota run (serve_hostile.md)."""
    rows = example_rows(20)
    big = json.dumps(
        {"rows": rows, "method": "mace", "n_counterfactuals": 5, "time_limit": 30}
    ).encode()
    smalls = small_requests(rows[:3])
    table: list[dict[str, Any]] = []
    for concurrency in (1, 2):
        port = _free_port()
        base = f"http://{HOST}:{port}"
        log = Path(tempfile.mkstemp(prefix="serve_hostile_", suffix=".log")[1])
        proc = start_server(port, log, ["--method-concurrency", str(concurrency)])
        try:
            wait_ready(httpx, base, proc)
            solo = asyncio.run(unloaded(httpx, base, smalls, repeats=3))
            recovery = drop_recovery(httpx, base, port, big, smalls[0][1])
            control = asyncio.run(
                run_drops(
                    httpx,
                    base,
                    port,
                    args.drop_clients,
                    args.requests_per_client,
                    big,
                    smalls,
                    drop=False,
                )
            )
            res = asyncio.run(
                run_drops(
                    httpx, base, port, args.drop_clients, args.requests_per_client, big, smalls
                )
            )
        finally:
            stop_server(proc)
            log.unlink(missing_ok=True)
        rows_c = {r["request"]: r for r in _drop_row("", control, solo)}
        for r in _drop_row(f"method concurrency {concurrency}", res, solo):
            r["p99_vs_no_drops"] = r["p99_s"] / rows_c[r["request"]]["p99_s"]
            r["health_p99_no_drops_ms"] = rows_c[r["request"]]["health_p99_ms"]
            if r["request"] == smalls[0][0]:
                r["solo_drop_pending_0_s"] = recovery["pending_zero_s"]
                r["solo_drop_small_ratio"] = recovery["small_after_drop_s"] / q(
                    solo[smalls[0][0]], 50
                )
            table.append(r)
    port = _free_port()
    base = f"http://{HOST}:{port}"
    log = Path(tempfile.mkstemp(prefix="serve_quota_", suffix=".log")[1])
    proc = start_server(
        port, log, ["--requests-per-minute", "30", "--counterfactuals-per-hour", "10"]
    )
    try:
        wait_ready(httpx, base, proc)
        quota = pd.DataFrame(asyncio.run(run_quotas(httpx, base, 10, 40, rows[0])))
    finally:
        stop_server(proc)
        log.unlink(missing_ok=True)
    _write_hostile(pd.DataFrame(table), quota, args)


def _write_hostile(drops: pd.DataFrame, quota: pd.DataFrame, args: argparse.Namespace) -> None:
    counts = quota.groupby("status").size().to_dict()
    by_quota = quota[quota["status"] == 429].groupby("quota").size().to_dict()
    ra = quota.loc[quota["status"] == 429, "retry_after"]
    quota_rows = pd.DataFrame(
        [
            {
                "clients": quota["client"].nunique(),
                "requests": len(quota),
                "200": counts.get(200, 0),
                "429": counts.get(429, 0),
                "429 requests/minute": by_quota.get("requests/minute", 0),
                "429 counterfactuals/hour": by_quota.get("counterfactuals/hour", 0),
                "5xx": int(quota["status"].between(500, 599).sum()),
                "other": int((~quota["status"].isin([200, 429])).sum()),
                "retry_after_min_s": float(ra.min()) if len(ra) else float("nan"),
                "retry_after_max_s": float(ra.max()) if len(ra) else float("nan"),
            }
        ]
    )
    drops = drops.drop(columns=["droppers"]).rename(columns={"drops": "dropped requests"})
    notes = [
        f"drop scenario: {args.drop_clients} clients; {max(1, args.drop_clients // 10)} of "
        f"them (10 %) each send {args.requests_per_client} MACE requests of 20 rows x 5 "
        "counterfactuals (time_limit 30 s per row, about 40 s of work each) and close the "
        f"connection after 0.5 s; the others send {args.requests_per_client} small requests "
        "each (one row; MACE or nearest).",
        "p50_ratio / p99_ratio: latency of the small requests under this load divided by "
        "the same requests sent one at a time to the same server with nothing else running "
        "(unloaded run, 3 repeats, measured first in the same run).",
        "p99_vs_no_drops: p99 divided by the p99 of the control run, the same small "
        "requests from the same clients with the droppers silent (same server, just "
        "before); health_p99_ms (health_p99_no_drops_ms): /health polled every 20 ms during "
        "the scenario (the control run); idle_after_last_drop_s: seconds from the last "
        "dropped connection until no request was pending (includes the small requests still "
        "running).",
        "solo_drop_pending_0_s: on the idle server, seconds from dropping one large request "
        "until nothing is pending (median of 3); solo_drop_small_ratio: a small MACE "
        "request sent 2 s after that drop, divided by its unloaded p50 (the cancellation "
        "test's measure).",
        "method concurrency 1: one request per method at a time (as before issue 29; now "
        "cancellable); 2: each running request on its own copy of the fitted method (the "
        "default).",
        "quota run: 10 clients, each from its own loopback address (127.0.0.10..19), 40 "
        "requests each as fast as possible, alternating /api/predict and /api/explain "
        "(nearest, n_counterfactuals 3, reserving 3 counterfactuals each, settled to the "
        "number answered); server quotas --requests-per-minute 30 "
        "--counterfactuals-per-hour 10.",
        "absolute seconds are context only (2-core machine shared with other work).",
    ]
    OUT.mkdir(parents=True, exist_ok=True)
    write_table("serve_hostile", drops, notes)
    quota_rows.to_csv(OUT / "serve_hostile_quotas.csv", index=False)
    with (OUT / "serve_hostile.md").open("a") as fh:
        fh.write("\n## quotas\n\n" + _markdown(quota_rows) + "\n")
    print(_markdown(quota_rows))


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--levels", default="1,10,50", help="numbers of concurrent clients (default 1,10,50)"
    )
    ap.add_argument(
        "--requests-per-client",
        type=int,
        default=4,
        help="requests each client sends per level (default 4)",
    )
    ap.add_argument("--rows", type=int, default=6, help="distinct example rows used (default 6)")
    ap.add_argument(
        "--drop-clients", type=int, default=50, help="clients of the drop scenario (default 50)"
    )
    ap.add_argument("--skip-mixed", action="store_true", help="run only the hostile scenarios")
    ap.add_argument("--skip-hostile", action="store_true", help="run only the mixed load")
    args = ap.parse_args()
    import httpx

    if not args.skip_mixed:
        mixed_load(args, httpx)
    if not args.skip_hostile:
        hostile(args, httpx)


if __name__ == "__main__":
    main()
