"""What the browser tests share: Debian's Chromium and its launch flags, and an app served by
uvicorn on a free port of 127.0.0.1 in a thread, stopped when the block ends."""

from __future__ import annotations

import shutil
import socket
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
