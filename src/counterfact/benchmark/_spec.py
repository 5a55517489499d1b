"""Benchmark specifications (YAML/JSON or dict) and their validation."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..exceptions import ValidationError

__all__ = ["DatasetSpec", "MethodSpec", "ModelSpec", "Spec", "load_spec"]


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

    @property
    def id(self) -> str:
        return self.label or self.name


@dataclass(frozen=True)
class Spec:
    """A whole benchmark: every dataset x model x method x seed is one cell."""

    name: str
    datasets: tuple[DatasetSpec, ...]
    models: tuple[ModelSpec, ...]
    methods: tuple[MethodSpec, ...]
    queries: int = 10
    n_counterfactuals: int = 1
    seeds: tuple[int, ...] = (0,)
    time_limit: float | None = 60.0
    test_size: float = 0.2
    # "negative" (predicted as the first class), "unfavourable" (not predicted as the
    # dataset's metadata["favorable_class"], else the last class), "any", or a label
    query_class: Any = "negative"
    constraints: dict[str, Any] | None = None
    description: str = ""
    feedback: dict[str, Any] | None = None  # per-query UFCE-style feedback: {"level": 0.5, "two_sided": False}
    reference: str = ""  # where the protocol comes from (paper, table)


_TOP_KEYS = {
    "name", "datasets", "models", "methods", "queries", "n_counterfactuals", "seeds", "time_limit",
    "test_size", "query_class", "constraints", "description", "feedback", "reference",
}
_QUERY_CLASSES = ("negative", "unfavourable", "any")
_ACTIONABILITY = ("free", "immutable", "increasing", "decreasing")


def _as_list(v: Any) -> list[Any]:
    return list(v) if isinstance(v, (list, tuple)) else [v]


def _entry(obj: Any, key: str, what: str) -> dict[str, Any]:
    if isinstance(obj, str):
        return {key: obj}
    if isinstance(obj, Mapping):
        if key not in obj:
            raise ValidationError(f"Benchmark spec: a {what} entry needs '{key}'. Got {dict(obj)!r}.")
        return dict(obj)
    raise ValidationError(f"Benchmark spec: a {what} entry must be a name or a mapping. Got {obj!r}.")


def _check_keys(d: Mapping[str, Any], allowed: set[str], what: str) -> None:
    unknown = sorted(set(d) - allowed)
    if unknown:
        raise ValidationError(f"Benchmark spec: unknown {what} keys {unknown}. Allowed: {sorted(allowed)}.")


def _actionability(v: Any, ds: str) -> dict[str, str] | None:
    if v is None:
        return None
    if isinstance(v, str):
        v = {"*": v}
    if not isinstance(v, Mapping):
        raise ValidationError(f"Benchmark spec: dataset {ds!r} actionability must be a kind or a mapping feature -> kind. Got {v!r}.")
    bad = {k: a for k, a in v.items() if a not in _ACTIONABILITY}
    if bad:
        raise ValidationError(f"Benchmark spec: dataset {ds!r} actionability {bad} not in {list(_ACTIONABILITY)}.")
    return {str(k): str(a) for k, a in v.items()}


def _feedback(v: Any) -> dict[str, Any] | None:
    if v is None:
        return None
    if isinstance(v, (int, float, str)) and not isinstance(v, bool):
        v = {"level": v}
    if not isinstance(v, Mapping) or "level" not in v:
        raise ValidationError(f"Benchmark spec: feedback must be a level (e.g. 0.5 or 'medium') or a mapping with 'level'. Got {v!r}.")
    _check_keys(v, {"level", "two_sided"}, "feedback")
    return {"level": v["level"], "two_sided": bool(v.get("two_sided", False))}


def _positive_int(v: Any, what: str) -> int:
    try:
        n = int(v)
    except (TypeError, ValueError):
        raise ValidationError(f"Benchmark spec: {what} must be an integer >= 1. Got {v!r}.") from None
    if n < 1:
        raise ValidationError(f"Benchmark spec: {what} must be >= 1. Got {n}.")
    return n


def load_spec(spec: str | Path | Mapping[str, Any] | Spec, *, queries: int | None = None) -> Spec:
    """Read and validate a spec from a path (YAML or JSON), a mapping, or a Spec.

    Parameters
    ----------
    spec : path, mapping or Spec
        The specification.
    queries : int, optional
        Cap the number of queries per dataset (the spec's ``queries`` and every
        dataset's own ``queries``) for a quicker run of the same protocol.
    """
    if isinstance(spec, Spec):
        if queries is None:
            return spec
        from dataclasses import replace

        cap = _positive_int(queries, "queries")
        return replace(
            spec,
            queries=min(spec.queries, cap),
            datasets=tuple(replace(d, queries=min(d.queries or cap, cap)) for d in spec.datasets),
        )
    if isinstance(spec, (str, Path)):
        path = Path(spec)
        if not path.exists():
            raise ValidationError(f"Benchmark spec file {path} does not exist.")
        text = path.read_text()
        if path.suffix.lower() == ".json":
            d = json.loads(text)
        else:
            import yaml

            d = yaml.safe_load(text)
        d.setdefault("name", path.stem)
    else:
        d = dict(spec)
    if not isinstance(d, Mapping):
        raise ValidationError("Benchmark spec must be a mapping at the top level.")
    _check_keys(d, _TOP_KEYS, "top-level")
    for req in ("datasets", "models", "methods"):
        if not d.get(req):
            raise ValidationError(f"Benchmark spec needs a non-empty '{req}' list.")
    datasets = []
    for e in _as_list(d["datasets"]):
        e = _entry(e, "name", "dataset")
        _check_keys(e, {"name", "options", "max_rows", "constraints", "label", "split", "actionability", "queries", "models"}, "dataset")
        datasets.append(
            DatasetSpec(
                e["name"], dict(e.get("options") or {}), e.get("max_rows"), e.get("constraints"), e.get("label", ""),
                split=e.get("split"), actionability=_actionability(e.get("actionability"), e["name"]),
                queries=None if e.get("queries") is None else _positive_int(e["queries"], f"dataset {e['name']!r} queries"),
                models=tuple(_as_list(e["models"])) if e.get("models") else None,
            )
        )
    models = []
    for e in _as_list(d["models"]):
        e = _entry(e, "kind", "model")
        _check_keys(e, {"kind", "params", "label"}, "model")
        models.append(ModelSpec(e["kind"], dict(e.get("params") or {}), e.get("label", "")))
    methods = []
    for e in _as_list(d["methods"]):
        e = _entry(e, "name", "method")
        _check_keys(e, {"name", "params", "label", "models", "explain"}, "method")
        methods.append(
            MethodSpec(e["name"], dict(e.get("params") or {}), e.get("label", ""), tuple(e["models"]) if e.get("models") else None, dict(e.get("explain") or {}))
        )
    ids = [m.id for m in methods]
    if len(set(ids)) != len(ids):
        raise ValidationError(f"Benchmark spec: method labels must be unique; got {ids}. Add 'label:'.")
    model_ids = {m.id for m in models}
    restricted: list[DatasetSpec | MethodSpec] = [*datasets, *methods]
    for x in restricted:
        missing = sorted(set(x.models or ()) - model_ids)
        if missing:
            raise ValidationError(f"Benchmark spec: {x.id!r} names unknown model ids {missing}. Model ids: {sorted(model_ids)}.")
    ds_ids = [x.id for x in datasets]
    if len(set(ds_ids)) != len(ds_ids):
        raise ValidationError(f"Benchmark spec: dataset labels must be unique; got {ds_ids}. Add 'label:'.")
    qc = d.get("query_class", "negative")
    if isinstance(qc, str) and qc.lower() in ("unfavorable",):
        qc = "unfavourable"
    result = Spec(
        name=str(d.get("name", "benchmark")),
        datasets=tuple(datasets),
        models=tuple(models),
        methods=tuple(methods),
        queries=_positive_int(d.get("queries", 10), "queries"),
        n_counterfactuals=_positive_int(d.get("n_counterfactuals", 1), "n_counterfactuals"),
        seeds=tuple(int(s) for s in _as_list(d.get("seeds", [0]))),
        time_limit=None if d.get("time_limit") is None else float(d["time_limit"]),
        test_size=float(d.get("test_size", 0.2)),
        query_class=qc,
        constraints=d.get("constraints"),
        description=str(d.get("description", "")),
        feedback=_feedback(d.get("feedback")),
        reference=str(d.get("reference", "")),
    )
    return load_spec(result, queries=queries) if queries is not None else result
