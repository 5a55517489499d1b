"""The JSON format of :class:`~counterfact.result.CounterfactualResult`: writing it
(``to_json``) and reading it back (``from_json``), where every damaged document
raises a :class:`~counterfact.exceptions.ValidationError` naming what is wrong."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._utils._values import _py
from ..constraints import Constraints
from ..exceptions import ValidationError
from ..schema import Schema
from ._status import STATUSES

__all__ = ["FORMAT_VERSION", "constraints_json", "dump", "index_key", "jsonable", "load"]

FORMAT_VERSION = 2


def jsonable(v: Any) -> Any:
    v = _py(v)
    if isinstance(v, float) and not np.isfinite(v):
        return None
    if isinstance(v, (np.ndarray, list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    return str(v)


def index_key(v: Any) -> Any:
    """A query id read back from JSON (lists were tuples)."""
    return tuple(index_key(x) for x in v) if isinstance(v, list) else v


def constraints_json(c: Constraints | None) -> Any:
    if c is None:
        return None
    try:
        return jsonable(c.to_dict())
    except Exception:  # non-serialisable causal functions: keep the rest
        return jsonable({k: v for k, v in Constraints(
            immutable=c.immutable, increasing=c.increasing, decreasing=c.decreasing, ranges=c.ranges,
            allowed_values=c.allowed_values, features_to_vary=c.features_to_vary, max_changes=c.max_changes,
        ).to_dict().items()})


def dump(result: Any) -> str:
    """The JSON document of a :class:`~counterfact.result.CounterfactualResult` (its ``to_json``)."""
    def rows(df: pd.DataFrame) -> list[dict[str, Any]]:
        return [{k: jsonable(v) for k, v in r.items()} for r in df.to_dict(orient="records")]

    cf = result.counterfactuals
    payload = {
        "format": "counterfact.result",
        "version": FORMAT_VERSION,
        "method": result.method,
        "params": jsonable(result.params),
        "schema": result.schema.to_dict(),
        "constraints": constraints_json(result.constraints),
        "query_constraints": (
            [[jsonable(q), constraints_json(c)] for q, c in result.query_constraints.items()]
            if result.query_constraints is not None
            else None
        ),
        "n_counterfactuals": result.n_counterfactuals,
        "queries": {"index": jsonable(list(result.queries.index)), "rows": rows(result.queries)},
        "counterfactuals": {
            "index": jsonable([list(t) for t in cf.index]) if len(cf) else [],
            "rows": rows(cf),
        },
        "status": jsonable(list(result.status.reindex(result.queries.index))),
        "runtime": jsonable(list(result.runtime.reindex(result.queries.index))),
        "target": jsonable(list(result.target.reindex(result.queries.index))),
        "confidence": jsonable(list(result.confidence.reindex(cf.index))) if len(cf) else [],
        "query_confidence": jsonable(list(result.query_confidence.reindex(result.queries.index))),
        "certificates": jsonable(list(result.certificates.reindex(result.queries.index))),
        "diagnostics": {
            "columns": list(map(str, result.diagnostics.columns)),
            "rows": rows(result.diagnostics.reindex(result.queries.index)),
        },
    }
    return json.dumps(payload)


def _looks_like_path(text: str) -> bool:
    """A short one-line string that names a file (or ends like one), not a JSON document."""
    t = text.strip()
    if not t or len(t) > 4096 or "\n" in t or t[0] in "{[\"":
        return False
    if t.lower().endswith(".json"):
        return True
    try:
        return Path(t).is_file()
    except (OSError, ValueError):
        return False


def load(cls: Any, text: str | bytes) -> Any:
    """Parse and check a result document (see ``CounterfactualResult.from_json``)."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValidationError(f"Cannot read the result document: it is not UTF-8 text ({exc}).") from None
    if not isinstance(text, str):
        raise ValidationError(
            f"from_json needs the JSON text (a str, as written by to_json). Got {type(text).__name__}; "
            "to load a file use CounterfactualResult.from_json(Path(p).read_text())."
        )
    try:
        d = json.loads(text)
    except (ValueError, RecursionError) as exc:
        if _looks_like_path(text):
            raise ValidationError(
                f"from_json takes the JSON text, not a file name ({text.strip()!r}); "
                "use CounterfactualResult.from_json(Path(p).read_text())."
            ) from None
        raise ValidationError(
            f"Cannot read the result document: it is not valid JSON ({exc}). Is the file truncated "
            "or not a file written by CounterfactualResult.to_json?"
        ) from None
    if not isinstance(d, dict):
        raise ValidationError(
            f"Not a counterfact result document: expected a JSON object, got a JSON {_json_type(d)}."
        )
    if d.get("format") != "counterfact.result":
        raise ValidationError(
            "Not a counterfact result document: the 'format' tag is "
            + ("missing" if "format" not in d else f"{d['format']!r}, expected 'counterfact.result'") + "."
        )
    version = d.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise ValidationError(f"Result document: 'version' must be an integer. Got {version!r}.")
    if version > FORMAT_VERSION or version < 1:
        raise ValidationError(
            f"Result format version {version} is not one this counterfact understands "
            f"(1..{FORMAT_VERSION}); " + ("upgrade counterfact." if version > FORMAT_VERSION else "the file is damaged.")
        )
    _need(d, "schema", dict)
    for key in ("queries", "counterfactuals", "diagnostics"):
        _need(d, key, dict)
    for key in ("status", "runtime", "target", "confidence", "query_confidence"):
        _need(d, key, list)
    _need(d, "method", str)
    _need(d, "params", dict)
    _need(d, "n_counterfactuals", int)
    for part, keys in (("queries", ("index", "rows")), ("counterfactuals", ("index", "rows")),
                       ("diagnostics", ("columns", "rows"))):
        for k in keys:
            _need(d[part], k, list, where=f"'{part}'")
    try:
        return _from_payload(cls, d)
    except ValidationError as exc:
        raise ValidationError(f"Result document: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError) as exc:
        raise ValidationError(
            f"Result document is damaged: {type(exc).__name__}: {exc}. Write it again with to_json."
        ) from None


def _from_payload(cls: Any, d: dict[str, Any]) -> Any:
    schema = Schema.from_dict(d["schema"])
    nq = len(d["queries"]["index"])
    for key in ("status", "runtime", "target", "query_confidence"):
        if len(d[key]) != nq:
            raise ValidationError(f"'{key}' has {len(d[key])} entries for {nq} queries.")
    if len(d["queries"]["rows"]) != nq or len(d["diagnostics"]["rows"]) != nq:
        raise ValidationError(f"'queries' and 'diagnostics' must have one row per query ({nq}).")
    ncf = len(d["counterfactuals"]["index"])
    if len(d["counterfactuals"]["rows"]) != ncf or len(d["confidence"]) != ncf:
        raise ValidationError("'counterfactuals' rows, index and 'confidence' have different lengths.")
    bad = sorted({repr(s) for s in d["status"] if s not in STATUSES})
    if bad:
        raise ValidationError(f"unknown statuses {bad}; expected {list(STATUSES)}.")
    qidx = pd.Index(d["queries"]["index"])
    queries = schema.coerce(pd.DataFrame(d["queries"]["rows"], columns=schema.names).set_axis(qidx))
    tuples = []
    for t in d["counterfactuals"]["index"]:
        if not isinstance(t, list) or len(t) != 2:
            raise ValidationError(f"a counterfactual index entry must be [query, rank]. Got {t!r}.")
        tuples.append((index_key(t[0]), t[1]))
    cidx = pd.MultiIndex.from_tuples(tuples, names=["query", "rank"]) if tuples else pd.MultiIndex.from_tuples([], names=["query", "rank"])
    cfs = pd.DataFrame(d["counterfactuals"]["rows"], columns=schema.names)
    cfs = schema.coerce(cfs) if len(cfs) else cfs
    cfs.index = cidx
    diag = pd.DataFrame(d["diagnostics"]["rows"], columns=d["diagnostics"]["columns"])
    diag.index = qidx
    constraints = d.get("constraints")
    qc = d.get("query_constraints")
    return cls(
        queries=queries,
        counterfactuals=cfs,
        status=pd.Series(d["status"], index=qidx, dtype=object),
        runtime=pd.Series(d["runtime"], index=qidx, dtype=float),
        diagnostics=diag,
        schema=schema,
        target=pd.Series(d["target"], index=qidx),
        method=d["method"],
        params=d["params"],
        constraints=Constraints.from_dict(constraints) if constraints else None,
        query_constraints=(
            {index_key(q): Constraints.from_dict(c) if c else Constraints() for q, c in qc}
            if qc is not None
            else None
        ),
        n_counterfactuals=d["n_counterfactuals"],
        confidence=pd.Series(d["confidence"], index=cidx, dtype=float),
        query_confidence=pd.Series(d["query_confidence"], index=qidx, dtype=float),
        certificates=_certificates(d, qidx),
    )


def _certificates(d: Mapping[str, Any], qidx: pd.Index) -> pd.Series | None:
    """The per-query guarantee texts (format version 2; None for version 1 documents)."""
    texts = d.get("certificates")
    if texts is None:
        return None
    if not isinstance(texts, list) or len(texts) != len(qidx) or not all(t is None or isinstance(t, str) for t in texts):
        raise ValidationError(f"'certificates' must be an array of {len(qidx)} strings (one per query).")
    return pd.Series(texts, index=qidx, dtype=object)


def _json_type(v: Any) -> str:
    names = {list: "array", str: "string", int: "number", float: "number", bool: "boolean", type(None): "null"}
    return names.get(type(v), type(v).__name__)


def _need(d: Mapping[str, Any], key: str, typ: type, *, where: str = "") -> None:
    """Raise a ValidationError unless ``d[key]`` exists and is a ``typ``."""
    loc = f" in {where}" if where else ""
    if key not in d:
        raise ValidationError(f"Result document: the key '{key}'{loc} is missing.")
    v = d[key]
    if not isinstance(v, typ) or (typ is int and isinstance(v, bool)):
        want = {dict: "an object", list: "an array", str: "a string", int: "an integer"}.get(typ, typ.__name__)
        raise ValidationError(f"Result document: '{key}'{loc} must be {want}. Got a {_json_type(v)}.")
