"""Standard output carries only the requested output.

While a command works, everything written to standard output -- by Python code
or by a C library writing to file descriptor 1 (a solver's banner) -- goes to
standard error instead; the command prints its output afterwards.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import ValidationError
from ..result._robustness import (
    NO_MARGIN,
    held_words,
    robustness_note,
    robustness_words,
    scope_words,
)

__all__ = ["class_label", "csv_frame", "emit", "info", "stdout_to_stderr"]


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
_SAID = (
    "no counterfactual exists",
    "query already predicted as",
    "time limit reached",
    "no counterfactual found",
)


def class_label(value: Any, labels: Mapping[Any, str] | None) -> str:
    """``good (1)`` when the class has a name, else the class itself."""
    name = None if not labels else labels.get(value, labels.get(str(value)))
    return f"{name} ({value})" if name is not None and str(name) != str(value) else str(value)


def _probability(value: Any) -> str:
    return "n/a" if value is None or value != value else f"{100 * float(value):.1f} %"


def _answers(result: Any, q: Any, label: str) -> list[str]:
    """One line per answer of query ``q``: the changes, the probability after and, where
    the call named costs, the cost in the user's units; the answer's region when one
    was asked for; then what each changed feature is (the schema's descriptions)."""
    lines, seen = [], []
    costs = result.cost() if getattr(result, "costs", None) is not None else None
    held = result.robustness() if result.requirements.get("robustness") is not None else None
    for r in result.for_query(q).index:
        changes = result.changes(q, r)
        seen += [c.feature for c in changes if c.feature not in seen]
        after = result.confidence.get((q, r))
        cost = (
            f"; cost {result.costs.describe(float(costs.loc[(q, r)]))}" if costs is not None else ""
        )
        said = result._change_text(q, result.queries.loc[q], result.counterfactuals.loc[(q, r)])
        lines.append(f"  #{r}: {said} -> P({label}) {_probability(after)}{cost}")
        if held is not None:  # explain --robustness: the held-out copies' verdict
            lines.append(f"     {held_words(held.loc[(q, r)])}")
        region = result.regions.get((q, int(r)))
        if region is not None:  # the certified box around the answer (explain --regions)
            lines.append(f"     any of: {region.describe(result.schema)}")
    if held is not None and NO_MARGIN in robustness_note(result, q):
        lines.append(f"  {NO_MARGIN}")  # why a short row tried fewer settings
    notes = [f"{n}: {result.schema[n].description}" for n in seen if result.schema[n].description]
    if notes:
        lines.append(f"  ({'; '.join(notes)})")
    return lines


def _constraints_text(constraints: Any) -> str:
    """``"immutable age; max_changes 2"`` (``"none beyond the schema"`` without any)."""
    used = constraints.to_dict(strict=False) if constraints is not None else {}
    parts = []
    for kind, value in used.items():
        if kind == "timeline":
            parts.append(f"timeline {constraints.timeline.words()}")
            continue
        if kind == "ranges":
            value = ", ".join(f"{k} {_range_words(lo, hi)}" for k, (lo, hi) in value.items())
        elif isinstance(value, Mapping):
            value = ", ".join(f"{k} {v}" for k, v in value.items())
        elif isinstance(value, (list, tuple)):
            value = ", ".join(map(str, value))
        parts.append(f"{kind} {value}")
    return "; ".join(parts) if parts else "none beyond the schema"


def _range_words(low: Any, high: Any) -> str:
    """A range as a person reads it: ``"from 2 to 8"``, ``"up to 6000"``, ``"from 2"``."""

    def said(v: Any) -> str:
        return f"{v:g}" if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)

    if low is None:
        return f"up to {said(high)}" if high is not None else "unbounded"
    return f"from {said(low)}" + (f" to {said(high)}" if high is not None else "")


def _terms(result: Any, q: Any, scoped: bool) -> str:
    """What query ``q`` was explained under, beyond what its guarantee already said: its
    constraints; that no margin was asked, where the guarantee names no requirement
    (``scoped``: it ends with "required: ..." or the row's robustness setting,
    :func:`scope_words`); and the share of retrained models asked for ("asked for": a row
    may fall short of it, and its answer says by how much)."""
    req = getattr(result, "requirements", None) or {}
    said = f"constraints: {_constraints_text(result.constraints_for(q))}"
    if not scoped:
        said += "; margin asked: none (crossing is enough)"
    if req.get("robustness") is not None:
        said += f"; asked for {robustness_words(req['robustness'])}"
    return said


def _guarantee(result: Any, q: Any) -> str:
    """One line: the method's guarantee in words (the measure named, and what the answers
    were held to), the constraints and what the guarantee did not already name."""
    scope = scope_words(result, q)
    try:  # the method's words: a proof (MACE, CE-OCL 'infeasible') or not
        text = result.certificate(q, numbers=False)
    except Exception:  # a result without diagnostics: the reason alone, and what was asked
        why = str(result.reason.get(q, "")) if hasattr(result, "reason") else ""
        text = f"no counterfactual{': ' + why if why else ''}{scope}"
    why = str(result.reason.get(q, "")) if int(result.found.get(q, 0)) == 0 else ""
    if why and why not in text and not why.startswith(_SAID):
        text += f" ({why})"
    return f"  {text}; {_terms(result, q, bool(scope))}"


def _table(result: Any, labels: Mapping[Any, str] | None = None) -> str:
    lines = [repr(result), ""]
    if int(result.found.sum()) > 0:
        lines.append(f"Smaller means {result.measure_words()}.")
    for q in result.queries.index:
        target = result.target[q]
        name = labels.get(target, labels.get(str(target), target)) if labels else target
        now = _probability(result.query_confidence.get(q))
        lines.append(
            f"query {q} (status {result.status[q]}; wanted: {class_label(target, labels)}; "
            f"P({name}) now {now}):"
        )
        lines.append(_guarantee(result, q))
        if int(result.found.get(q, 0)) > 0:
            lines += _answers(result, q, str(name))
    return "\n".join(lines)


def csv_frame(result: Any) -> pd.DataFrame:
    """The answers (``result.to_frame()``), one row each, and one row per query without an
    answer (its status and ``_reason``, no rank, empty feature cells), in the queries'
    order: every query explained is in the CSV, as in the table and the JSON."""
    flat = result.to_frame().reset_index()
    query, rank = flat.columns[0], flat.columns[1]
    flat[rank] = flat[rank].astype(object)
    if "_status" not in flat.columns:
        flat["_status"] = pd.Series(dtype=object)
    reasons = result.reason
    flat["_reason"] = [str(reasons.get(q, "")) for q in flat[query]]
    missing = [
        {query: q, rank: None, "_status": result.status[q], "_reason": str(reasons.get(q, ""))}
        for q in result.queries.index
        if int(result.found.get(q, 0)) == 0
    ]
    if missing:
        for col in flat.columns:  # whole numbers stay whole beside the empty cells
            if pd.api.types.is_integer_dtype(flat[col]) or pd.api.types.is_bool_dtype(flat[col]):
                flat[col] = flat[col].astype(object)
        extra = pd.DataFrame(missing, columns=flat.columns)
        flat = extra if flat.empty else pd.concat([flat, extra], ignore_index=True)
    order = {q: i for i, q in enumerate(result.queries.index)}
    return flat.iloc[np.argsort([order[q] for q in flat[query]], kind="stable")]


def emit(result: Any, fmt: str, out: str | None, labels: Mapping[Any, str] | None = None) -> None:
    """Print ``result`` (or write it to ``out``) as a table, CSV or JSON (``labels``: class
    names shown in the table)."""
    if fmt == "json":
        text = result.to_json()
    elif fmt == "csv":
        text = csv_frame(result).to_csv(index=False)
    else:
        text = _table(result, labels)
    if out:
        try:
            Path(out).write_text(text)
        except OSError as exc:
            raise ValidationError(
                f"--out {out!r} cannot be written: {exc.strerror or exc}."
            ) from None
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()
