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
    """A dataset: registry name, loader options, optional row cap and constraints."""

    name: str
    options: dict[str, Any] = field(default_factory=dict)
    max_rows: int | None = None
    constraints: dict[str, Any] | None = None
    label: str = ""

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
    query_class: Any = "negative"  # "negative" (predicted as the first class), "any", or a label
    constraints: dict[str, Any] | None = None
    description: str = ""


_TOP_KEYS = {
    "name", "datasets", "models", "methods", "queries", "n_counterfactuals", "seeds", "time_limit",
    "test_size", "query_class", "constraints", "description",
}


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


def load_spec(spec: str | Path | Mapping[str, Any] | Spec) -> Spec:
    """Read and validate a spec from a path (YAML or JSON), a mapping, or a Spec."""
    if isinstance(spec, Spec):
        return spec
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
        _check_keys(e, {"name", "options", "max_rows", "constraints", "label"}, "dataset")
        datasets.append(DatasetSpec(e["name"], dict(e.get("options") or {}), e.get("max_rows"), e.get("constraints"), e.get("label", "")))
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
    queries = int(d.get("queries", 10))
    if queries < 1:
        raise ValidationError(f"Benchmark spec: queries must be >= 1. Got {queries}.")
    return Spec(
        name=str(d.get("name", "benchmark")),
        datasets=tuple(datasets),
        models=tuple(models),
        methods=tuple(methods),
        queries=queries,
        n_counterfactuals=int(d.get("n_counterfactuals", 1)),
        seeds=tuple(int(s) for s in _as_list(d.get("seeds", [0]))),
        time_limit=None if d.get("time_limit") is None else float(d["time_limit"]),
        test_size=float(d.get("test_size", 0.2)),
        query_class=d.get("query_class", "negative"),
        constraints=d.get("constraints"),
        description=str(d.get("description", "")),
    )
