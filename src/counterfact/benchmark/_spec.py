"""Benchmark specifications (YAML/JSON or dict) and their validation."""

from __future__ import annotations

import difflib
import inspect
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .. import datasets, methods
from ..constraints import Constraints
from ..constraints._costs import MEASURES
from ..constraints._requirements import OWN_MEASURE
from ..data._loading import read_structured
from ..exceptions import CounterfactError, ValidationError
from ..models._fit import KINDS, check_params

__all__ = ["DatasetSpec", "MethodSpec", "ModelSpec", "Spec", "load_spec"]

#: ``queries: all`` -- every eligible test row (stored as ``None`` in :class:`Spec`)
ALL = "all"


@dataclass(frozen=True)
class DatasetSpec:
    """A dataset: registry name, loader options, optional row cap and constraints.

    ``split`` names a predefined split in the dataset's ``metadata["splits"]``
    (its rows marked ``"train"`` / ``"test"``); ``None`` is a random split of
    ``test_size``.  ``actionability`` overrides the schema's actionability: a
    mapping feature -> kind, where the key ``"*"`` sets every feature first
    (``{"*": "free", "age": "immutable"}``), or one kind for all features.
    ``queries`` caps the spec-wide query count for this dataset; ``models``
    restricts the dataset to these model ids (a paper that pairs each dataset
    with its own model).
    """

    name: str
    options: dict[str, Any] = field(default_factory=dict)
    max_rows: int | None = None
    constraints: dict[str, Any] | None = None
    label: str = ""
    split: str | None = None
    actionability: dict[str, str] | None = None
    queries: int | None = None
    models: tuple[str, ...] | None = None

    @property
    def id(self) -> str:
        return self.label or self.name


@dataclass(frozen=True)
class ModelSpec:
    """A model kind for ``cf.models.fit`` and its parameters."""

    kind: str
    params: dict[str, Any] = field(default_factory=dict)
    label: str = ""

    @property
    def id(self) -> str:
        return self.label or self.kind


@dataclass(frozen=True)
class MethodSpec:
    """A registered method, its parameters and the label it appears under."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)
    label: str = ""
    models: tuple[str, ...] | None = None  # restrict to these model ids
    explain: dict[str, Any] = field(default_factory=dict)  # extra explain() keywords
    # at most this many of each cell's queries (a seeded subset of the ones the
    # other methods explain): an expensive peer measured on a stated sample
    queries: int | None = None

    @property
    def id(self) -> str:
        return self.label or self.name


@dataclass(frozen=True)
class Spec:
    """A whole benchmark: every dataset x model x method x seed (x fold) is one cell.

    ``queries`` is the number of queries per dataset (``None``: every eligible
    test row, written ``queries: all``).  ``folds`` (k >= 2) replaces the single
    train/test split by a stratified k-fold cross-validation per seed: fold i's
    rows are the test set of cell fold i.  ``chunk_size`` explains a cell's
    queries in chunks of that many rows, each saved as it finishes, so that an
    interrupted run resumes inside a long cell instead of starting it again.
    ``costs`` is the measure every method minimises and ranks by (``None``: the default
    measure of effort; ``"own"``: each method's own objective, as the papers' tables use);
    whatever it is, every answer's effort is also recorded, so that the tables compare
    the methods on one scale.
    ``full`` holds the validated ``full:`` section (the paper's size);
    ``protocol`` is ``"full"`` once it has been applied (``load_spec(...,
    full=True)``), else ``"default"``.
    """

    name: str
    datasets: tuple[DatasetSpec, ...]
    models: tuple[ModelSpec, ...]
    methods: tuple[MethodSpec, ...]
    queries: int | None = 10
    n_counterfactuals: int = 1
    seeds: tuple[int, ...] = (0,)
    time_limit: float | None = 60.0
    test_size: float = 0.2
    # "negative" (predicted as the first class), "unfavourable" (not predicted as the
    # dataset's metadata["favourable_class"], else the last class), "any", or a label
    query_class: Any = "negative"
    constraints: dict[str, Any] | None = None
    description: str = ""
    feedback: dict[str, Any] | None = (
        None  # per-query UFCE-style feedback: {"level": 0.5, "two_sided": False}
    )
    reference: str = ""  # where the protocol comes from (paper, table)
    folds: int | None = None
    chunk_size: int | None = None
    full: dict[str, Any] | None = None
    protocol: str = "default"
    #: the measure every method minimises and ranks by: ``None`` (the default measure of
    #: effort), a named measure, or ``"own"`` (each method's own objective: the papers')
    costs: str | None = None


_TOP_KEYS = {
    "name",
    "datasets",
    "models",
    "methods",
    "queries",
    "n_counterfactuals",
    "seeds",
    "time_limit",
    "test_size",
    "query_class",
    "constraints",
    "description",
    "feedback",
    "reference",
    "folds",
    "chunk_size",
    "full",
    "costs",
}
#: what a ``full:`` section may override
_FULL_KEYS = {"queries", "seeds", "folds", "time_limit", "chunk_size", "datasets"}
_FULL_DATASET_KEYS = {"queries", "max_rows"}
_QUERY_CLASSES = ("negative", "unfavourable", "any")
_ACTIONABILITY = ("free", "immutable", "increasing", "decreasing")


def _as_list(v: Any) -> list[Any]:
    return list(v) if isinstance(v, (list, tuple)) else [v]


def _entry(obj: Any, key: str, what: str) -> dict[str, Any]:
    if isinstance(obj, str):
        return {key: obj}
    if isinstance(obj, Mapping):
        if key not in obj:
            raise ValidationError(
                f"Benchmark spec: a {what} entry needs '{key}'. Got {dict(obj)!r}."
            )
        return dict(obj)
    raise ValidationError(
        f"Benchmark spec: a {what} entry must be a name or a mapping. Got {obj!r}."
    )


def _check_keys(d: Mapping[str, Any], allowed: set[str], what: str) -> None:
    unknown = sorted(map(str, set(d) - allowed))
    if unknown:
        close = [m for u in unknown for m in difflib.get_close_matches(u, sorted(allowed), n=1)]
        hint = f" Did you mean {close}?" if close else ""
        raise ValidationError(
            f"Benchmark spec: unknown {what} keys {unknown}.{hint} Allowed: {sorted(allowed)}."
        )


def _mapping(v: Any, what: str) -> dict[str, Any]:
    if v is None:
        return {}
    if not isinstance(v, Mapping):
        raise ValidationError(f"Benchmark spec: {what} must be a mapping name: value. Got {v!r}.")
    return dict(v)


def _actionability(v: Any, ds: str) -> dict[str, str] | None:
    if v is None:
        return None
    if isinstance(v, str):
        v = {"*": v}
    if not isinstance(v, Mapping):
        raise ValidationError(
            f"Benchmark spec: dataset {ds!r} actionability must be a kind or a mapping "
            f"feature -> kind. Got {v!r}."
        )
    bad = {k: a for k, a in v.items() if a not in _ACTIONABILITY}
    if bad:
        raise ValidationError(
            f"Benchmark spec: dataset {ds!r} actionability {bad} not in {list(_ACTIONABILITY)}."
        )
    return {str(k): str(a) for k, a in v.items()}


def _feedback(v: Any) -> dict[str, Any] | None:
    if v is None:
        return None
    if isinstance(v, (int, float, str)) and not isinstance(v, bool):
        v = {"level": v}
    if not isinstance(v, Mapping) or "level" not in v:
        raise ValidationError(
            "Benchmark spec: feedback must be a level (e.g. 0.5 or 'medium') or a mapping "
            f"with 'level'. Got {v!r}."
        )
    _check_keys(v, {"level", "two_sided"}, "feedback")
    return {"level": v["level"], "two_sided": bool(v.get("two_sided", False))}


def _positive_int(v: Any, what: str) -> int:
    try:
        n = int(v)
    except (TypeError, ValueError):
        raise ValidationError(
            f"Benchmark spec: {what} must be an integer >= 1. Got {v!r}."
        ) from None
    if n < 1:
        raise ValidationError(f"Benchmark spec: {what} must be >= 1. Got {n}.")
    return n


def _int(v: Any, what: str) -> int:
    if isinstance(v, bool):
        raise ValidationError(f"Benchmark spec: {what} must be integers. Got {v!r}.")
    try:
        return int(v)
    except (TypeError, ValueError):
        raise ValidationError(f"Benchmark spec: {what} must be integers. Got {v!r}.") from None


def _float(v: Any, what: str) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        raise ValidationError(f"Benchmark spec: {what} must be a number. Got {v!r}.") from None


def load_spec(
    spec: str | Path | Mapping[str, Any] | Spec, *, queries: int | None = None, full: bool = False
) -> Spec:
    """Read and validate a spec from a path (YAML or JSON), a mapping, or a Spec.

    Parameters
    ----------
    spec : path, mapping or Spec
        The specification.
    queries : int, optional
        Cap the number of queries per dataset (the spec's ``queries`` and every
        dataset's own ``queries``) for a quicker run of the same protocol.
    full : bool
        Apply the spec's ``full:`` section (the protocol at the paper's size:
        its ``queries``, ``seeds``, ``folds``, ``time_limit``, ``chunk_size``
        and per-dataset ``queries`` / ``max_rows`` replace the default ones).
        A spec without a ``full:`` section raises ``ValidationError``.  The
        ``queries`` cap, if given, applies after it.

    Returns
    -------
    Spec
        The validated specification (``protocol`` is ``"full"`` when the full
        section was applied).
    """
    if isinstance(spec, Spec):
        if full and spec.protocol != "full":
            spec = _apply_full(spec)
        return spec if queries is None else _capped(spec, queries)
    result = _spec_from_mapping(_as_mapping(spec))
    _check_names(result)
    return (
        load_spec(result, queries=queries, full=full) if (queries is not None or full) else result
    )


def _spec_from_mapping(d: Mapping[str, Any]) -> Spec:
    """The Spec a mapping describes, each entry checked and defaults filled in."""
    _check_keys(d, _TOP_KEYS, "top-level")
    for req in ("datasets", "models", "methods"):
        if not d.get(req):
            raise ValidationError(f"Benchmark spec needs a non-empty '{req}' list.")
    ds_specs = [_dataset_spec(e) for e in _as_list(d["datasets"])]
    model_specs = [_model_spec(e) for e in _as_list(d["models"])]
    method_specs = [_method_spec(e) for e in _as_list(d["methods"])]
    _check_ids(ds_specs, model_specs, method_specs)
    qc = d.get("query_class", "negative")
    if isinstance(qc, str) and qc.lower() in ("unfavourable",):
        qc = "unfavourable"
    return Spec(
        name=str(d.get("name", "benchmark")),
        datasets=tuple(ds_specs),
        models=tuple(model_specs),
        methods=tuple(method_specs),
        queries=_queries(d.get("queries", 10), "queries"),
        n_counterfactuals=_positive_int(d.get("n_counterfactuals", 1), "n_counterfactuals"),
        seeds=tuple(_int(s, "seeds") for s in _as_list(d.get("seeds", [0]))),
        time_limit=None if d.get("time_limit") is None else _float(d["time_limit"], "time_limit"),
        test_size=_float(d.get("test_size", 0.2), "test_size"),
        query_class=qc,
        constraints=d.get("constraints"),
        description=str(d.get("description", "")),
        feedback=_feedback(d.get("feedback")),
        reference=str(d.get("reference", "")),
        folds=_folds(d.get("folds")),
        chunk_size=None
        if d.get("chunk_size") is None
        else _positive_int(d["chunk_size"], "chunk_size"),
        full=_full_section(d.get("full"), ds_specs),
        costs=_costs(d.get("costs")),
    )


def _capped(spec: Spec, queries: Any) -> Spec:
    """``spec`` with at most ``queries`` queries per dataset (the spec's and every dataset's
    own)."""
    cap = _positive_int(queries, "queries")
    return replace(
        spec,
        queries=cap if spec.queries is None else min(spec.queries, cap),
        datasets=tuple(replace(d, queries=min(d.queries or cap, cap)) for d in spec.datasets),
    )


def _as_mapping(spec: Any) -> dict[str, Any]:
    """The spec's top-level mapping: read from a file (named after it unless it says), or copied."""
    if isinstance(spec, (str, Path)):
        path = Path(spec)
        if not path.exists():
            raise ValidationError(f"Benchmark spec file {path} does not exist.")
        d = _read(path)
        d.setdefault("name", path.stem)
        return d
    if isinstance(spec, Mapping):
        return dict(spec)
    raise ValidationError(
        f"A benchmark spec is a path (YAML/JSON), a mapping or a Spec. Got {type(spec).__name__}."
    )


def _dataset_spec(entry: Any) -> DatasetSpec:
    """A ``datasets:`` entry: a name, or a mapping with ``name``."""
    e = _entry(entry, "name", "dataset")
    _check_keys(
        e,
        {
            "name",
            "options",
            "max_rows",
            "constraints",
            "label",
            "split",
            "actionability",
            "queries",
            "models",
        },
        "dataset",
    )
    return DatasetSpec(
        e["name"],
        _mapping(e.get("options"), f"dataset {e['name']!r} options"),
        e.get("max_rows"),
        e.get("constraints"),
        e.get("label", ""),
        split=e.get("split"),
        actionability=_actionability(e.get("actionability"), e["name"]),
        queries=None
        if e.get("queries") is None
        else _positive_int(e["queries"], f"dataset {e['name']!r} queries"),
        models=tuple(_as_list(e["models"])) if e.get("models") else None,
    )


def _model_spec(entry: Any) -> ModelSpec:
    """A ``models:`` entry: a kind, or a mapping with ``kind``."""
    e = _entry(entry, "kind", "model")
    _check_keys(e, {"kind", "params", "label"}, "model")
    return ModelSpec(
        e["kind"], _mapping(e.get("params"), f"model {e['kind']!r} params"), e.get("label", "")
    )


def _method_spec(entry: Any) -> MethodSpec:
    """A ``methods:`` entry: a name, or a mapping with ``name``."""
    e = _entry(entry, "name", "method")
    _check_keys(e, {"name", "params", "label", "models", "explain", "queries"}, "method")
    return MethodSpec(
        e["name"],
        _mapping(e.get("params"), f"method {e['name']!r} params"),
        e.get("label", ""),
        tuple(_as_list(e["models"])) if e.get("models") else None,
        _mapping(e.get("explain"), f"method {e['name']!r} explain"),
        None
        if e.get("queries") is None
        else _positive_int(e["queries"], f"method {e.get('label') or e['name']!r} queries"),
    )


def _check_ids(
    ds_specs: list[DatasetSpec], model_specs: list[ModelSpec], method_specs: list[MethodSpec]
) -> None:
    """Method and dataset ids are unique; the model ids they name exist."""
    ids = [m.id for m in method_specs]
    if len(set(ids)) != len(ids):
        raise ValidationError(
            f"Benchmark spec: method labels must be unique; got {ids}. Add 'label:'."
        )
    model_ids = {m.id for m in model_specs}
    restricted: list[DatasetSpec | MethodSpec] = [*ds_specs, *method_specs]
    for x in restricted:
        missing = sorted(set(x.models or ()) - model_ids)
        if missing:
            raise ValidationError(
                f"Benchmark spec: {x.id!r} names unknown model ids {missing}. Model ids: "
                f"{sorted(model_ids)}."
            )
    ds_ids = [x.id for x in ds_specs]
    if len(set(ds_ids)) != len(ds_ids):
        raise ValidationError(
            f"Benchmark spec: dataset labels must be unique; got {ds_ids}. Add 'label:'."
        )


def _queries(v: Any, what: str) -> int | None:
    """A query count, or ``None`` for ``"all"`` (every eligible test row)."""
    if isinstance(v, str) and v.strip().lower() == ALL:
        return None
    if isinstance(v, bool):
        raise ValidationError(
            f"Benchmark spec: {what} must be an integer >= 1 or 'all'. Got {v!r}."
        )
    return _positive_int(v, f"{what} (an integer >= 1 or 'all')")


def _costs(v: Any) -> str | None:
    """The spec's ``costs:``: a named measure or ``own`` (None: the default measure)."""
    if v is None:
        return None
    choices = [*MEASURES, OWN_MEASURE]
    if v not in choices:
        raise ValidationError(
            f"Benchmark spec: costs must be one of {choices} (default effort: 1 per changed "
            f"feature plus each move in MADs; {OWN_MEASURE!r}: each method's own objective, "
            f"as in its paper). Got {v!r}."
        )
    return str(v)


def _folds(v: Any) -> int | None:
    if v is None:
        return None
    n = _positive_int(v, "folds") if not isinstance(v, bool) else 0
    if n < 2:
        raise ValidationError(
            "Benchmark spec: folds must be an integer >= 2 (k-fold cross-validation) or "
            f"null. Got {v!r}."
        )
    return n


def _full_section(v: Any, ds_specs: list[DatasetSpec]) -> dict[str, Any] | None:
    """The validated ``full:`` section: only the keys it sets, in their final types."""
    if v is None:
        return None
    if not isinstance(v, Mapping) or not v:
        raise ValidationError(
            "Benchmark spec: 'full' must be a non-empty mapping of the sizes that the full "
            f"protocol overrides (keys {sorted(_FULL_KEYS)}). Got {v!r}."
        )
    _check_keys(v, _FULL_KEYS, "full")
    out: dict[str, Any] = {}
    if "queries" in v:
        out["queries"] = _queries(v["queries"], "full.queries")
    if "seeds" in v:
        seeds = _as_list(v["seeds"])
        if not seeds:
            raise ValidationError("Benchmark spec: full.seeds must name at least one seed.")
        out["seeds"] = tuple(_int(s, "full.seeds") for s in seeds)
    if "folds" in v:
        out["folds"] = _folds(v["folds"])
    if "time_limit" in v:
        out["time_limit"] = (
            None if v["time_limit"] is None else _float(v["time_limit"], "full.time_limit")
        )
    if "chunk_size" in v:
        out["chunk_size"] = (
            None if v["chunk_size"] is None else _positive_int(v["chunk_size"], "full.chunk_size")
        )
    if "datasets" in v:
        per = v["datasets"]
        if not isinstance(per, Mapping):
            raise ValidationError(
                f"Benchmark spec: full.datasets must map a dataset id to {{queries, "
                f"max_rows}}. Got {per!r}."
            )
        ids = {d.id for d in ds_specs}
        unknown = sorted(map(str, set(per) - ids))
        if unknown:
            raise ValidationError(
                f"Benchmark spec: full.datasets names unknown dataset ids {unknown}. Dataset "
                f"ids: {sorted(ids)}."
            )
        out["datasets"] = {}
        for ds_id, e in per.items():
            if not isinstance(e, Mapping):
                raise ValidationError(
                    f"Benchmark spec: full.datasets[{ds_id!r}] must be a mapping with "
                    f"queries and/or max_rows. Got {e!r}."
                )
            _check_keys(e, _FULL_DATASET_KEYS, f"full.datasets[{ds_id!r}]")
            out["datasets"][str(ds_id)] = {
                k: (None if e[k] is None else _positive_int(e[k], f"full.datasets[{ds_id!r}].{k}"))
                for k in e
            }
    return out


def _apply_full(spec: Spec) -> Spec:
    """``spec`` with its ``full:`` section applied."""
    if not spec.full:
        raise ValidationError(
            f"Benchmark spec {spec.name!r} has no 'full:' section, so it has no full-size "
            "protocol; run it without --full, or add a 'full:' mapping (queries, seeds, "
            "folds, time_limit, chunk_size, datasets)."
        )
    f = spec.full
    per = f.get("datasets", {})
    ds_specs = tuple(replace(d, **per[d.id]) if d.id in per else d for d in spec.datasets)
    top = {k: f[k] for k in ("queries", "seeds", "folds", "time_limit", "chunk_size") if k in f}
    out = replace(spec, datasets=ds_specs, protocol="full", **top)
    _check_ranges(out)
    return out


def _read(path: Path) -> dict[str, Any]:
    """The top-level mapping of a YAML or JSON spec file, or a clear error."""
    d = read_structured(
        path,
        "Benchmark spec",
        " Check the indentation and that every 'key: value' pair has a space after the colon.",
    )
    if d is None:
        raise ValidationError(
            f"Benchmark spec {str(path)!r} is empty; it needs datasets, models and methods."
        )
    if not isinstance(d, Mapping):
        raise ValidationError(
            f"Benchmark spec {str(path)!r} must be a mapping at the top level (keys such as "
            f"datasets, models, methods). Got a {type(d).__name__}."
        )
    return dict(d)


#: explain() keywords the runner sets itself (a method's ``explain:`` entry may not)
_RUNNER_EXPLAIN = {"X", "n_counterfactuals", "constraints", "n_jobs"}


def _check_names(spec: Spec) -> None:
    """Every dataset, option, model kind, method and parameter exists, with a valid
    value (a method's as its ``fit`` checks them, a scikit-learn model's by its own
    validation); constraints are well formed; numbers are in range.  Runs before
    anything is loaded or fitted."""
    for ds in spec.datasets:
        try:
            info = datasets._resolve(ds.name)
            info.resolve_options(ds.options)
        except ValidationError as exc:
            raise ValidationError(f"Benchmark spec: dataset {ds.id!r}: {exc}") from None
    for mo in spec.models:
        if mo.kind not in KINDS:
            raise ValidationError(
                f"Benchmark spec: unknown model kind {mo.kind!r}. Known kinds: {list(KINDS)}."
            )
        try:
            check_params(mo.kind, mo.params)
        except ValidationError as exc:
            raise ValidationError(f"Benchmark spec: {exc}") from None
    known = methods.names(available=False, peers=True)
    for me in spec.methods:
        _check_method(me, known)
    for where, c in [
        ("constraints", spec.constraints),
        *[(f"dataset {d.id!r} constraints", d.constraints) for d in spec.datasets],
    ]:
        if c is not None:
            _check_constraints(where, c)
    _check_ranges(spec)
    if spec.full and "time_limit" in spec.full:
        _check_ranges(replace(spec, time_limit=spec.full["time_limit"]))


def _check_method(me: MethodSpec, known: list[str]) -> None:
    """The method exists and takes the spec's parameters and explain keys (when installed)."""
    if me.name not in known:
        raise ValidationError(
            f"Benchmark spec: unknown method {me.name!r}. Known methods: {known}."
        )
    try:
        cls: Any = methods.get_class(me.name)
    except (ImportError, CounterfactError):  # not installed here: the run skips the cell
        return
    names = cls._param_names()
    unknown = sorted(set(me.params) - set(names))
    if unknown:
        raise ValidationError(
            f"Benchmark spec: method {me.id!r} has no parameter(s) {unknown}. Its "
            f"parameters: {names}."
        )
    try:
        cls(**me.params)._validate_params()  # the values, as fit checks them
    except ValidationError as exc:
        raise ValidationError(f"Benchmark spec: method {me.id!r}: {exc}") from None
    allowed = set(inspect.signature(cls.explain).parameters) - {"self"} - _RUNNER_EXPLAIN
    bad = sorted(set(me.explain) - allowed)
    if bad:
        raise ValidationError(
            f"Benchmark spec: method {me.id!r} explain keys {bad} are not allowed. "
            f"Allowed: {sorted(allowed)}."
        )


def _check_constraints(where: str, c: Any) -> None:
    """``c`` is a mapping that :meth:`Constraints.from_dict` accepts."""
    if not isinstance(c, Mapping):
        raise ValidationError(
            f"Benchmark spec: {where} must be a mapping of cf.Constraints keys. Got {c!r}."
        )
    try:
        Constraints.from_dict(c)
    except CounterfactError as exc:
        raise ValidationError(f"Benchmark spec: {where}: {exc}") from None
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise ValidationError(
            f"Benchmark spec: {where} is malformed ({type(exc).__name__}: {exc})."
        ) from None


def _check_ranges(spec: Spec) -> None:
    """Numbers in range and sizes that fit together (also after ``full:`` is applied)."""
    if spec.time_limit is not None and not (math.isfinite(spec.time_limit) and spec.time_limit > 0):
        raise ValidationError(
            "Benchmark spec: time_limit must be a positive number of seconds or null. Got "
            f"{spec.time_limit}."
        )
    if not 0 < spec.test_size < 1:
        raise ValidationError(
            f"Benchmark spec: test_size must be between 0 and 1. Got {spec.test_size}."
        )
    if spec.folds is not None:
        fixed = [d.id for d in spec.datasets if d.split is not None]
        if fixed:
            raise ValidationError(
                "Benchmark spec: folds (cross-validation) cannot be used with datasets that "
                f"have a predefined split {fixed}."
            )
