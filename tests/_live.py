"""What the browser and server tests share: Debian's Chromium and its launch flags, an app
served by uvicorn on a free port of 127.0.0.1 in a thread, and ``counterfact serve`` run as
its own process there; each stopped when its block ends."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
HAS_CHROMIUM = Path(CHROMIUM).exists()
NO_CHROMIUM = "Chromium is not installed (Debian package 'chromium')"
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@contextmanager
def live(app: Any) -> Iterator[str]:
    """The app's address while uvicorn serves it on 127.0.0.1; stopped (and checked
    stopped) when the block ends."""
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.should_exit = True
        thread.join(15)
        assert not thread.is_alive()


def free_port() -> int:
    """A port of 127.0.0.1 nobody listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serve_process(*options: str) -> Iterator[tuple[int, str, subprocess.Popen[bytes]]]:
    """``counterfact serve OPTIONS`` as its own process on a free port of 127.0.0.1, once it
    answers ``/health``: ``(port, base address, process)``.  Stopped (SIGTERM, then killed)
    when the block ends."""
    import httpx

    port = free_port()
    cmd = [sys.executable, "-m", "counterfact.cli", "serve", "--host", "127.0.0.1"]
    cmd += ["--port", str(port), "--max-rows", "20", "--requests-per-minute", "0", "-q"]
    proc = subprocess.Popen(
        [*cmd, *options],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "TQDM_DISABLE": "1"},
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                err = proc.stderr.read().decode() if proc.stderr else ""
                raise AssertionError(f"the server exited: {err}")
            try:
                if httpx.get(base + "/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        else:
            raise AssertionError("the server did not answer /health within 180 s")
        yield port, base, proc
    finally:
        if proc.poll() is None:
            proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
