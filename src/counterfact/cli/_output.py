"""Standard output carries only the requested output.

While a command works, everything written to standard output -- by Python code
or by a C library writing to file descriptor 1 (a solver's banner) -- goes to
standard error instead; the command prints its output afterwards.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..exceptions import ValidationError

__all__ = ["emit", "info", "stdout_to_stderr"]


def _flush_c_stdio() -> None:
    """Flush the C library's stdout buffer (a solver's printf output)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        libc.fflush(None)
    except (OSError, AttributeError, TypeError):  # no C library to flush (not a POSIX system)
        pass


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Send file descriptor 1 and ``sys.stdout`` to standard error for the block."""
    old_sys = sys.stdout
    with contextlib.suppress(AttributeError, ValueError, OSError):
        old_sys.flush()
    saved: int | None = None
    try:
        saved = os.dup(1)
        os.dup2(2, 1)
    except OSError:  # fd 1 or 2 closed: only the Python-level redirect
        saved = None
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        with contextlib.suppress(AttributeError, ValueError, OSError):
            sys.stderr.flush()
        _flush_c_stdio()
        sys.stdout = old_sys
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)


def info(args: Any, message: str) -> None:
    """A progress or status line on standard error (silenced by ``-q``)."""
    if not getattr(args, "quiet", False):
        print(f"counterfact: {message}", file=sys.stderr, flush=True)


#: reasons the method's certificate text already says in its own words
_SAID = ("no counterfactual exists", "query already predicted as", "time limit reached", "no counterfactual found")


def _table(result: Any) -> str:
    lines = [repr(result), ""]
    reasons = getattr(result, "reason", None)
    for q in result.queries.index:
        conf = result.query_confidence.get(q)
        conf_text = "n/a" if conf is None or conf != conf else f"{conf:.3f}"
        lines.append(f"query {q} (status {result.status[q]}, P(target={result.target[q]}) now {conf_text}):")
        if int(result.found.get(q, 0)) == 0:
            why = str(reasons.get(q, "")) if reasons is not None else ""
            try:  # the method's words: a proof (MACE, CE-OCL 'infeasible') or not
                text = result.certificate(q)
            except Exception:  # a result without diagnostics: the reason alone
                text = ""
            if not text:
                text = f"no counterfactual{': ' + why if why else ''}"
            elif why and why not in text and not why.startswith(_SAID):
                text += f" ({why})"
            lines.append(f"  {text}")
            continue
        desc = result.describe(q)
        lines += ["  " + ln.split(":", 1)[-1].strip() if ", #" in ln else "  " + ln for ln in desc.splitlines()]
    return "\n".join(lines)


def emit(result: Any, fmt: str, out: str | None) -> None:
    """Print ``result`` (or write it to ``out``) as a table, CSV or JSON."""
    if fmt == "json":
        text = result.to_json()
    elif fmt == "csv":
        text = result.to_frame().to_csv()
    else:
        text = _table(result)
    if out:
        try:
            Path(out).write_text(text)
        except OSError as exc:
            raise ValidationError(f"--out {out!r} cannot be written: {exc.strerror or exc}.") from None
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()
