"""The JSON format of :class:`~counterfact.result.CounterfactualResult`: writing it
(``to_json``) and reading it back (``from_json``), where every damaged document
raises a :class:`~counterfact.exceptions.ValidationError` naming what is wrong.

A document (format version 4) carries the schema of its rows, what vouched
for the result when it was written (``"integrity"``, see
:class:`~counterfact.result.Integrity`) and a SHA-256 of its content
(``"sha256"``: of the document without that key, serialised with sorted keys
and no spaces).  Reading it checks the structure, every row against the
schema (features present, dtypes, categories, the domain of changed values),
the counterfactuals' index against the queries and their statuses, the
constraints against the schema, and then the hash: a bit flipped anywhere, or
an edit, is reported instead of loaded.

A document that declares an older format but carries a key that format never
had (a newer document whose version was lowered to skip the hash) is refused,
naming the key.  Documents of formats 1 and 2 (no hash) still load, with
every check but the hash, and are marked unverified.

With a model, every claim the model can test is re-checked
(:mod:`counterfact.result._recheck`): the answers, the margin, the other
models given as ``robust_to``, and the regions.  An edited document loads only
that way (``verify=False``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._utils._values import _py
from ..constraints import Constraints
from ..constraints._costs import BoundCosts
from ..exceptions import ValidationError
from ..models._select import check_label
from ..schema import Schema
from ._certificate import Certificate
from ._integrity import Integrity
from ._recheck import recheck
from ._region import Region
from ._status import STATUSES, SUCCESS

__all__ = [
    "FORMAT_KEYS",
    "FORMAT_VERSION",
    "HASH_KEY",
    "check_format_keys",
    "constraints_json",
    "content_hash",
    "dump",
    "index_key",
    "jsonable",
    "load",
    "read_document",
    "unsaved_constraints",
]

FORMAT_VERSION = 4
#: the key of the content hash
HASH_KEY = "sha256"
_KEYS_1 = frozenset(
    (
        "format",
        "version",
        "method",
        "params",
        "schema",
        "constraints",
        "query_constraints",
        "n_counterfactuals",
        "queries",
        "counterfactuals",
        "status",
        "runtime",
        "target",
        "confidence",
        "query_confidence",
        "diagnostics",
    )
)
_KEYS_2 = _KEYS_1 | {"certificates"}
#: per older format, every top-level key a document of it can have (the current format's
#: keys are covered by its hash)
FORMAT_KEYS: dict[int, frozenset[str]] = {
    1: _KEYS_1,
    2: _KEYS_2,
    3: _KEYS_2 | {"requirements", "regions", "costs", "constraints_note", HASH_KEY},
}


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
    """The JSON form of ``c``: every constraint that can be saved (a causal relation
    that is not linear cannot; :func:`unsaved_constraints` names what was left out)."""
    if c is None:
        return None
    return jsonable(_savable(c).to_dict())


def _savable(c: Constraints) -> Constraints:
    """``c`` without the causal relations that cannot be serialised (the others,
    the feature relations and every other kind kept)."""
    if not unsaved_constraints(c):
        return c
    return replace(c, causal=tuple(r for r in c.causal if r.kind == "linear"))


def unsaved_constraints(c: Constraints | None) -> list[str]:
    """Each constraint of ``c`` that the JSON form leaves out, in words (a causal
    relation given as a function, which only linear relations can replace)."""
    if c is None:
        return []
    return [
        f"causal relation for {r.child!r} ({r.kind}, not serialisable)"
        for r in c.causal
        if r.kind != "linear"
    ]


def _constraints_note(result: Any) -> str | None:
    """What the document says about constraints it could not save (None: all saved)."""
    dropped = unsaved_constraints(result.constraints)
    for q, c in (result.query_constraints or {}).items():
        dropped += [f"query {q!r}: {d}" for d in unsaved_constraints(c)]
    if not dropped:
        return None
    return "Not saved (the answers were checked under them): " + "; ".join(dict.fromkeys(dropped))


def dump(result: Any) -> str:
    """The JSON document of a :class:`~counterfact.result.CounterfactualResult` (its
    ``to_json``)."""

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
        # what a reader reads: each method sentence with what the answers were held to
        "certificates_in_full": [result.certificate(q) for q in result.queries.index],
        "certificate_records": _records_json(result),
        "requirements": jsonable(result.requirements),
        "regions": [
            [jsonable(q), int(r), region.to_dict()] for (q, r), region in result.regions.items()
        ],
        "costs": _costs_json(result),
        "integrity": result.integrity.to_dict(),
        "diagnostics": {
            "columns": list(map(str, result.diagnostics.columns)),
            "rows": rows(result.diagnostics.reindex(result.queries.index)),
        },
    }
    note = _constraints_note(result)
    if note is not None:  # what could not be saved, said in the document
        payload["constraints_note"] = note
    payload[HASH_KEY] = content_hash(payload)
    return json.dumps(payload)


def content_hash(payload: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of a document without its hash: sorted keys, no spaces, ASCII."""
    body = {k: v for k, v in payload.items() if k != HASH_KEY}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def check_format_keys(
    d: Mapping[str, Any], version: int, keys: Mapping[int, frozenset[str]], what: str
) -> None:
    """Refuse a document that declares format ``version`` but carries a top-level key that
    format never had (``keys``: per older format, its keys; the current format is not
    listed, its hash covers every key); ``what`` names the kind ("Result")."""
    allowed = keys.get(version)
    if allowed is None:
        return
    extra = sorted(set(d) - allowed)
    if not extra:
        return
    came = "; ".join(f"{k!r}: {_since(k, keys)}" for k in extra)
    raise ValidationError(
        f"{what} document: it declares format version {version}, but carries keys that "
        f"format {version} never had ({came}): a newer document whose version was lowered, "
        "which would skip its content hash. Use the file as written "
        "(or write it again with to_json)."
    )


def _since(key: str, keys: Mapping[int, frozenset[str]]) -> str:
    """The format that brought ``key``, in words."""
    since = [v for v in sorted(keys) if key in keys[v]]
    return f"since format {since[0]}" if since else f"since format {max(keys) + 1} or later"


def hash_matches(d: Mapping[str, Any]) -> bool:
    """Whether ``d`` carries a content hash that matches its content."""
    return isinstance(d.get(HASH_KEY), str) and content_hash(d) == d[HASH_KEY]


def read_document(
    text: str,
    fmt: str,
    version: int,
    what: str,
    *,
    keys: Mapping[int, frozenset[str]] | None = None,
) -> dict[str, Any]:
    """The JSON object of a tagged document (an audit's, a global recourse's): ``text``
    parsed, its ``format`` tag ``fmt`` and a ``version`` this code reads (at most
    ``version``); ``what`` names the kind in the errors ("audit"); ``keys``: per older
    format, the top-level keys it can have (:func:`check_format_keys`)."""
    kind = what.split(" ", 1)[-1]
    try:
        d = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ValidationError(f"Not {what} document: invalid JSON ({exc}).") from None
    if not isinstance(d, dict) or d.get("format") != fmt:
        raise ValidationError(f"Not a counterfact {kind} document (missing format tag).")
    declared = d.get("version")
    if isinstance(declared, bool) or not isinstance(declared, int) or declared < 1:
        raise ValidationError(
            f"{kind.capitalize()} document: 'version' must be an integer >= 1. Got {declared!r}."
        )
    if declared > version:
        raise ValidationError(
            f"{kind.capitalize()} format version {declared} is newer than this counterfact "
            f"understands ({version}); upgrade counterfact."
        )
    check_format_keys(d, declared, keys or {}, kind.capitalize())
    return d


def _looks_like_path(text: str) -> bool:
    """A short one-line string that names a file (or ends like one), not a JSON document."""
    t = text.strip()
    if not t or len(t) > 4096 or "\n" in t or t[0] in '{["':
        return False
    if t.lower().endswith(".json"):
        return True
    try:
        return Path(t).is_file()
    except (OSError, ValueError):
        return False


def load(
    cls: Any,
    text: str | bytes,
    *,
    verify: bool = True,
    model: Any = None,
    robust_to: Any = None,
) -> Any:
    """Parse and check a result document (see ``CounterfactualResult.from_json``)."""
    _check_load_arguments(verify, model, robust_to)
    d = _parse(text)
    version = _check_header(d)
    try:
        result = _from_payload(cls, d)
    except ValidationError as exc:
        raise ValidationError(f"Result document: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError) as exc:
        raise ValidationError(
            f"Result document is damaged: {type(exc).__name__}: {exc}. Write it again with to_json."
        ) from None
    integrity = _written_integrity(d, version, verify)
    if model is None:
        return type(result)(**{**result.parts(), "integrity": integrity})
    protected = "sha256" in integrity.verified_by
    parts, notes = recheck(result, model, robust_to, protected=protected)
    checked = replace(
        integrity,
        verified_by=(*integrity.verified_by, "model"),
        notes=(*integrity.notes, *notes),
    )
    return type(result)(**{**parts, "integrity": checked})


def _check_load_arguments(verify: Any, model: Any, robust_to: Any) -> None:
    if not isinstance(verify, bool):
        raise ValidationError(f"from_json: verify must be True or False. Got {verify!r}.")
    if not verify and model is None:
        raise ValidationError(
            "from_json(verify=False) loads a document whose content hash does not match (an "
            "edited file) only with the model to re-check it: pass model=<the fitted model>, "
            "and every counterfactual, margin and region is re-verified."
        )
    if robust_to is not None and (
        model is None or isinstance(robust_to, (str, bytes)) or not hasattr(robust_to, "__len__")
    ):
        raise ValidationError(
            "from_json: robust_to is the list of the other models the answers were asked to "
            "hold for, and needs model=<the explained model>. Got "
            f"{type(robust_to).__name__}" + ("" if model is not None else " without a model") + "."
        )


def _written_integrity(d: Mapping[str, Any], version: int, verify: bool) -> Integrity:
    """What vouches for the document as read: its hash (refused when it does not match,
    unless ``verify`` is False) and what the writer said vouched for the result."""
    if version < 3:  # no hash in these formats: nothing vouches for the content
        return Integrity((), version)
    if not hash_matches(d):
        if verify:
            _hash_error()
        return Integrity((), version)
    if version < 4:  # written before results said what vouched for them
        return Integrity(("sha256",), version)
    return Integrity.from_dict(d["integrity"], version)


def _parse(text: Any) -> dict[str, Any]:
    """The document's JSON object."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValidationError(
                f"Cannot read the result document: it is not UTF-8 text ({exc})."
            ) from None
    if not isinstance(text, str):
        raise ValidationError(
            "from_json needs the JSON text (a str, as written by to_json). Got "
            f"{type(text).__name__}; "
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
            "Not a counterfact result document: expected a JSON object, got a JSON "
            f"{_json_type(d)}."
        )
    return d


def _check_header(d: dict[str, Any]) -> int:
    """The format tag, the version and the type of every top-level part; returns the version."""
    if d.get("format") != "counterfact.result":
        raise ValidationError(
            "Not a counterfact result document: the 'format' tag is "
            + (
                "missing"
                if "format" not in d
                else f"{d['format']!r}, expected 'counterfact.result'"
            )
            + "."
        )
    version = d.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise ValidationError(f"Result document: 'version' must be an integer. Got {version!r}.")
    if version > FORMAT_VERSION or version < 1:
        raise ValidationError(
            f"Result format version {version} is not one this counterfact understands "
            f"(1..{FORMAT_VERSION}); "
            + ("upgrade counterfact." if version > FORMAT_VERSION else "the file is damaged.")
        )
    _need(d, "schema", dict)
    for key in ("queries", "counterfactuals", "diagnostics"):
        _need(d, key, dict)
    for key in ("status", "runtime", "target", "confidence", "query_confidence"):
        _need(d, key, list)
    _need(d, "method", str)
    _need(d, "params", dict)
    _need(d, "n_counterfactuals", int)
    if version >= 3:
        _need(d, HASH_KEY, str)
    if version >= 4:
        _need(d, "integrity", dict)
    check_format_keys(d, version, FORMAT_KEYS, "Result")
    for part, keys in (
        ("queries", ("index", "rows")),
        ("counterfactuals", ("index", "rows")),
        ("diagnostics", ("columns", "rows")),
    ):
        for k in keys:
            _need(d[part], k, list, where=f"'{part}'")
    return version


def _hash_error() -> None:
    raise ValidationError(
        "Result document: its content does not match its sha256, so it was damaged or edited "
        "after to_json wrote it. Write it again with to_json; to load an edited file on "
        "purpose, use CounterfactualResult.from_json(text, verify=False, model=<the fitted "
        "model>), which re-checks every counterfactual, margin and region with the model."
    )


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
        raise ValidationError(
            "'counterfactuals' rows, index and 'confidence' have different lengths."
        )
    bad = sorted({repr(s) for s in d["status"] if s not in STATUSES})
    if bad:
        raise ValidationError(f"unknown statuses {bad}; expected {list(STATUSES)}.")
    if not d["method"].strip():
        raise ValidationError("'method' is empty; it names the method that wrote the result.")
    if d["n_counterfactuals"] < 1:
        raise ValidationError(f"'n_counterfactuals' must be >= 1. Got {d['n_counterfactuals']}.")
    qidx = _query_index(d["queries"]["index"])
    queries = _rows(
        schema, d["queries"]["rows"], "queries", [f"query {q!r}" for q in qidx]
    ).set_axis(qidx)
    cidx = _cf_index(d, qidx)
    labels = [f"counterfactual (query {q!r}, rank {r})" for q, r in cidx]
    cfs = _rows(schema, d["counterfactuals"]["rows"], "counterfactuals", labels)
    cfs.index = cidx
    _check_domain(schema, queries, cfs, labels)
    diag = pd.DataFrame(d["diagnostics"]["rows"], columns=d["diagnostics"]["columns"])
    diag.index = qidx
    return cls(
        queries=queries,
        counterfactuals=cfs,
        status=pd.Series(d["status"], index=qidx, dtype=object),
        runtime=_numbers(d["runtime"], qidx, "runtime", low=0.0),
        diagnostics=diag,
        schema=schema,
        target=_targets(schema, d["target"], qidx),
        method=d["method"],
        params=d["params"],
        constraints=_constraints(d.get("constraints"), schema, "'constraints'"),
        query_constraints=_query_constraints(
            d.get("query_constraints"), schema, qidx, _invalid(d["status"], qidx)
        ),
        n_counterfactuals=d["n_counterfactuals"],
        confidence=_numbers(d["confidence"], cidx, "confidence", low=0.0, high=1.0),
        query_confidence=_numbers(
            d["query_confidence"], qidx, "query_confidence", low=0.0, high=1.0
        ),
        certificates=_certificates(d, qidx),
        certificate_records=_records(d, qidx),
        requirements=_requirements(d),
        regions=_regions(d, schema, queries, cfs),
        costs=_costs(d, schema),
    )


def _costs_json(result: Any) -> dict[str, Any] | None:
    """The call's costs, their unit and each counterfactual's cost (None without costs)."""
    if result.costs is None:
        return None
    c = result.cost()
    return {
        "model": result.costs.to_dict(),
        "unit": result.costs.unit,
        "unit_scale": result.costs.costs.unit_scale,
        "values": jsonable(list(c.reindex(result.counterfactuals.index))) if len(c) else [],
    }


def _costs(d: Mapping[str, Any], schema: Schema) -> BoundCosts | None:
    c = d.get("costs")
    if c is None:
        return None
    if not isinstance(c, Mapping) or not isinstance(c.get("model"), Mapping):
        raise ValidationError("'costs' must be an object with the costs' 'model'.")
    return BoundCosts.from_dict(c["model"], schema)


def _requirements(d: Mapping[str, Any]) -> dict[str, Any]:
    req = d.get("requirements") or {}
    if not isinstance(req, Mapping):
        raise ValidationError("'requirements' must be an object.")
    p = req.get("min_probability")
    if p is not None and (isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p < 1):
        raise ValidationError(
            f"'requirements.min_probability' must be a number in (0, 1) or null. Got {p!r}."
        )
    n = req.get("robust_to", 0)
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValidationError(f"'requirements.robust_to' must be a count of models. Got {n!r}.")
    r = req.get("robustness")
    if r is not None and (isinstance(r, bool) or not isinstance(r, (int, float)) or not 0 < r < 1):
        raise ValidationError(
            f"'requirements.robustness' must be a number in (0, 1) or null. Got {r!r}."
        )
    v = req.get("min_vote_share")
    if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v <= 1):
        raise ValidationError(
            f"'requirements.min_vote_share' must be a number in (0, 1] or null. Got {v!r}."
        )
    optional = {"robustness": r, "min_vote_share": v}
    return {
        "min_probability": p,
        "robust_to": n,
        **{k: x for k, x in optional.items() if x is not None},
    }


def _regions(
    d: Mapping[str, Any], schema: Schema, queries: pd.DataFrame, cfs: pd.DataFrame
) -> dict[tuple[Any, int], Region]:
    """The regions, each around a counterfactual of the document, on the schema's features,
    holding the query's other values and containing its counterfactual."""
    out = {}
    for item in d.get("regions") or []:
        if not isinstance(item, list) or len(item) != 3 or not isinstance(item[2], Mapping):
            raise ValidationError("a 'regions' entry must be [query, rank, region].")
        key = (index_key(item[0]), item[1])
        where = f"the region of (query {key[0]!r}, rank {key[1]!r})"
        if key not in cfs.index:
            raise ValidationError(f"{where} names no counterfactual of the document.")
        try:
            region = Region.from_dict(item[2])
        except (KeyError, TypeError, ValueError) as exc:
            raise ValidationError(f"{where} is malformed ({type(exc).__name__}: {exc}).") from None
        unknown = sorted(set(region.bounds) - set(schema.names))
        if unknown:
            raise ValidationError(f"{where} names features {unknown} that are not in the schema.")
        wrong = region.mismatch(schema, queries.loc[key[0]], cfs.loc[key])
        if wrong:
            raise ValidationError(f"{where} cannot stand around its counterfactual: {wrong}.")
        out[(key[0], int(key[1]))] = region
    return out


def _query_index(ids: list[Any]) -> pd.Index:
    qidx = pd.Index([index_key(q) for q in ids])
    if qidx.has_duplicates:
        raise ValidationError(
            f"the query ids repeat: {sorted(map(repr, set(qidx[qidx.duplicated()])))[:5]}."
        )
    return qidx


def _cf_index(d: Mapping[str, Any], qidx: pd.Index) -> pd.MultiIndex:
    """The (query, rank) index of the counterfactuals: known queries with a success
    status, integer ranks, no (query, rank) pair twice."""
    status = dict(zip(qidx, d["status"], strict=True))
    tuples = []
    for t in d["counterfactuals"]["index"]:
        if not isinstance(t, list) or len(t) != 2:
            raise ValidationError(f"a counterfactual index entry must be [query, rank]. Got {t!r}.")
        q, rank = index_key(t[0]), t[1]
        if isinstance(rank, bool) or not isinstance(rank, int) or rank < 0:
            raise ValidationError(
                f"counterfactual (query {q!r}, rank {rank!r}): the rank must be an integer >= 0."
            )
        if q not in status:
            raise ValidationError(
                f"counterfactual (query {q!r}, rank {rank}) belongs to no query of the document."
            )
        if status[q] not in SUCCESS:
            raise ValidationError(
                f"counterfactual (query {q!r}, rank {rank}): the query's status is {status[q]!r}, "
                "which has no "
                "counterfactuals."
            )
        tuples.append((q, rank))
    if len(set(tuples)) != len(tuples):
        raise ValidationError("the counterfactuals' (query, rank) pairs repeat.")
    return (
        pd.MultiIndex.from_tuples(tuples, names=["query", "rank"])
        if tuples
        else pd.MultiIndex.from_tuples([], names=["query", "rank"])
    )


def _rows(schema: Schema, rows: list[Any], part: str, labels: list[str]) -> pd.DataFrame:
    """JSON rows checked against the schema: objects with exactly its features, values of their
    feature's kind (integral integers, known categories, finite numbers); the schema's dtypes."""
    names = schema.names
    for row, label in zip(rows, labels, strict=True):
        if not isinstance(row, dict):
            raise ValidationError(
                f"{label} must be an object of feature: value. Got a JSON {_json_type(row)}."
            )
        missing = [n for n in names if n not in row]
        if missing:
            raise ValidationError(f"{label} lacks the features {missing}.")
        extra = [k for k in row if k not in schema]
        if extra:
            raise ValidationError(
                f"{label} has features {extra} that are not in the schema {names}."
            )
        for f in schema:
            v = row[f.name]
            if f.is_numeric and (isinstance(v, bool) or not isinstance(v, (int, float))):
                raise ValidationError(
                    f"{label}: '{f.name}' is {f.kind}, so its value must be a number. Got {v!r}."
                )
            if f.kind == "integer" and isinstance(v, float) and not v.is_integer():
                raise ValidationError(f"{label}: '{f.name}' is integer but holds {v!r}.")
    frame = pd.DataFrame(rows, columns=names)
    if not len(frame):
        return schema.coerce(frame)
    try:
        return schema.validate_frame(frame, what=f"'{part}'").set_axis(pd.RangeIndex(len(frame)))
    except ValidationError as exc:
        raise ValidationError(str(exc).replace("at row ", "at position ")) from None


def _check_domain(
    schema: Schema, queries: pd.DataFrame, cfs: pd.DataFrame, labels: list[str]
) -> None:
    """A counterfactual's changed numeric values lie in their feature's domain, or
    between it and its query's value when the query lies outside (the constraint
    language's hull); a feature only time moves may pass its upper bound (a person of
    75 is 76 a year later)."""
    if not len(cfs):
        return
    own = queries.reindex(cfs.index.get_level_values(0))
    for f in schema:
        if not f.is_numeric:
            continue
        v = cfs[f.name].to_numpy(dtype=float)
        q = own[f.name].to_numpy(dtype=float)
        same = np.abs(v - q) <= 1e-9 * np.maximum(1.0, np.abs(q))
        lo = np.minimum(float(f.lower), q)  # type: ignore[arg-type]
        hi = np.maximum(float(f.upper), q)  # type: ignore[arg-type]
        if f.actionability == "time" and not f.top_coded:  # a top-coded one stops at upper
            hi = np.full_like(hi, np.inf)
        inside = (v >= lo - 1e-9) & (v <= hi + 1e-9)
        bad = np.flatnonzero(~(same | inside))
        if bad.size:
            k = int(bad[0])
            raise ValidationError(
                f"{labels[k]}: '{f.name}' = {_py(cfs[f.name].iloc[k])!r} lies outside the "
                "feature's domain "
                f"[{f.lower}, {f.upper}], so it is not a counterfactual the library could have "
                "written."
            )


def _numbers(
    values: list[Any], index: pd.Index, key: str, *, low: float, high: float = np.inf
) -> pd.Series:
    """Per-entry numbers in [low, high], or null (NaN)."""
    for k, v in enumerate(values):
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not low <= v <= high:
            want = f"in [{low:g}, {high:g}]" if np.isfinite(high) else f">= {low:g}"
            raise ValidationError(f"'{key}'[{k}] must be a number {want} or null. Got {v!r}.")
    return pd.Series([np.nan if v is None else float(v) for v in values], index=index, dtype=float)


def _targets(schema: Schema, values: list[Any], qidx: pd.Index) -> pd.Series:
    """The desired class per query: one of the schema's classes (when it lists them)."""
    if schema.classes is not None:
        classes = list(schema.classes)
        for k, t in enumerate(values):
            if not any(type(t) is type(c) and t == c for c in classes) and t not in classes:
                raise ValidationError(f"'target'[{k}] = {t!r} is not one of the classes {classes}.")
            check_label(np.asarray(classes, dtype=object), t, what=f"'target'[{k}]")
    return pd.Series(values, index=qidx)


def _constraints(
    spec: Any, schema: Schema, where: str, *, resolve: bool = True
) -> Constraints | None:
    """Constraints from the document, checked against the schema (unknown features,
    contradictions; not with ``resolve=False``, for a query the result itself records as
    ``invalid`` because its constraints contradict); ``{}`` (no constraint) stays an
    empty Constraints."""
    if spec is None:
        return None
    try:
        c = Constraints.from_dict(spec)
        if resolve:
            c.resolve(schema)
    except ValidationError as exc:
        raise ValidationError(f"{where}: {exc}") from None
    return c


def _invalid(status: Any, qidx: pd.Index) -> set[Any]:
    """The queries the document records as ``invalid`` (their constraints contradict)."""
    values = list(status) if isinstance(status, list) else []
    return {q for q, st in zip(qidx, values, strict=False) if st == "invalid"}


def _query_constraints(
    qc: Any, schema: Schema, qidx: pd.Index, invalid: set[Any]
) -> dict[Any, Constraints] | None:
    if qc is None:
        return None
    if not isinstance(qc, list):
        raise ValidationError(
            "'query_constraints' must be an array of [query, constraints]. Got a JSON "
            f"{_json_type(qc)}."
        )
    out: dict[Any, Constraints] = {}
    for item in qc:
        if not isinstance(item, list) or len(item) != 2:
            raise ValidationError(
                f"a 'query_constraints' entry must be [query, constraints]. Got {item!r}."
            )
        q = index_key(item[0])
        if q not in qidx:
            raise ValidationError(
                f"'query_constraints' names the query {q!r}, which is not in the document."
            )
        where = f"'query_constraints' of query {q!r}"
        out[q] = _constraints(item[1], schema, where, resolve=q not in invalid) or Constraints()
    return out


def _records_json(result: Any) -> list[Any]:
    """Per query, its certificate's fields (:class:`Certificate`) as an object, or null."""
    recs = result.certificate_records.reindex(result.queries.index)
    return [r.to_dict() if isinstance(r, Certificate) else None for r in recs]


def _records(d: Mapping[str, Any], qidx: pd.Index) -> pd.Series | None:
    """The per-query certificate fields (format 4; None for older documents)."""
    recs = d.get("certificate_records")
    if recs is None:
        return None
    if not isinstance(recs, list) or len(recs) != len(qidx):
        raise ValidationError(
            f"'certificate_records' must be an array of {len(qidx)} objects or nulls (one per "
            "query)."
        )
    out = [
        None if r is None else Certificate.from_dict(r, f"certificate_records[{i}]")
        for i, r in enumerate(recs)
    ]
    return pd.Series(out, index=qidx, dtype=object)


def _certificates(d: Mapping[str, Any], qidx: pd.Index) -> pd.Series | None:
    """The per-query guarantee texts (format version 2; None for version 1 documents)."""
    texts = d.get("certificates")
    if texts is None:
        return None
    if (
        not isinstance(texts, list)
        or len(texts) != len(qidx)
        or not all(t is None or isinstance(t, str) for t in texts)
    ):
        raise ValidationError(
            f"'certificates' must be an array of {len(qidx)} strings (one per query)."
        )
    return pd.Series(texts, index=qidx, dtype=object)


def _json_type(v: Any) -> str:
    names = {
        list: "array",
        str: "string",
        int: "number",
        float: "number",
        bool: "boolean",
        type(None): "null",
    }
    return names.get(type(v), type(v).__name__)


def _need(d: Mapping[str, Any], key: str, typ: type, *, where: str = "") -> None:
    """Raise a ValidationError unless ``d[key]`` exists and is a ``typ``."""
    loc = f" in {where}" if where else ""
    if key not in d:
        raise ValidationError(f"Result document: the key '{key}'{loc} is missing.")
    v = d[key]
    if not isinstance(v, typ) or (typ is int and isinstance(v, bool)):
        want = {dict: "an object", list: "an array", str: "a string", int: "an integer"}.get(
            typ, typ.__name__
        )
        raise ValidationError(
            f"Result document: '{key}'{loc} must be {want}. Got a {_json_type(v)}."
        )
