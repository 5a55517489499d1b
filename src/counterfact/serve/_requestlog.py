"""An append-only request log of the API: who asked what, and what was revealed (JSON lines).

One line per ``/api/*`` request, written when its answer is sent::

    {"time": "2025-01-02T10:11:12.345Z", "client": "10.0.0.7", "token": "sha256:3f1c...",
     "method": "POST", "path": "/api/explain", "status": 200, "seconds": 0.41,
     "request": {"rows": [...], "method": "mace", "n_counterfactuals": 2,
                 "constraints": {...}, ...},
     "revealed": {"counterfactuals": 2, "rows": [{"row": 0, "status": "optimal",
                  "counterfactuals": [{...}], "probabilities": [0.51]}]}}

``token`` is a fingerprint of the bearer token presented (never the token);
``request`` is the validated body (for ``/api/explain`` and ``/api/predict``);
``revealed`` is what the answer disclosed about the model: every
counterfactual row and probability, every predicted probability.  Refused
requests (401, 413, 422, 429) are logged with their status and ``error``.

The file is opened for appending only (``O_APPEND``), each line is written
with one ``write`` call, and the log never truncates or rewrites it, so that
several server processes (``--workers``) can share one file.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any

from ..exceptions import ValidationError

__all__ = ["RequestLog", "token_fingerprint"]


def token_fingerprint(token: str | None) -> str | None:
    """``sha256:<12 hex>`` of a presented token (None without one): links a client's lines,
    reveals nothing."""
    if not token:
        return None
    return "sha256:" + hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()[:12]


class RequestLog:
    """Append JSON lines to ``path`` (created with mode 0600 when missing).

    Raises :class:`~counterfact.exceptions.ValidationError` at once when the
    file cannot be opened for appending.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()
        try:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        except OSError as exc:
            raise ValidationError(
                f"--request-log {str(self.path)!r} cannot be opened for appending "
                f"({exc.strerror or exc}); pass a "
                "writable file."
            ) from None
        self._lock = threading.Lock()

    def write(self, record: dict[str, Any]) -> None:
        """Append one record (a ``time`` field is added first)."""
        now = _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        line = json.dumps({"time": now, **record}, default=str, separators=(",", ":")) + "\n"
        data = line.encode("utf-8")
        with self._lock:
            if self._fd < 0:
                return
            written = os.write(self._fd, data)
            while written < len(data):  # pragma: no cover - a short write on a full disk
                written += os.write(self._fd, data[written:])

    def close(self) -> None:
        """Close the file (later writes are dropped)."""
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
