"""The single constraint checker: violations() of one query's counterfactuals."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from .._utils._values import _py
from ..exceptions import ConstraintError
from ..schema import Feature, Schema
from ._bounds import ResolvedConstraints, changed

_VIOLATION_COLUMNS = ["row", "feature", "kind", "detail"]


Row = tuple[Any, str, str, str]


def check_violations(
    query: pd.Series | pd.DataFrame,
    counterfactuals: pd.DataFrame,
    schema: Schema,
    constraints: Any,
    resolved: ResolvedConstraints,
) -> pd.DataFrame:
    """The body of :func:`counterfact.constraints.violations`: ``constraints`` (a
    :class:`~counterfact.constraints.Constraints`) and ``resolved``, the same
    constraints resolved against ``schema``."""
    if isinstance(query, pd.DataFrame):
        if len(query) != 1:
            raise ConstraintError(
                "violations() checks the counterfactuals of one query; pass one row."
            )
        query = query.iloc[0]
    if len(counterfactuals) == 0:
        return pd.DataFrame(columns=_VIOLATION_COLUMNS)
    labels = list(counterfactuals.index)
    n_changed = np.zeros(len(counterfactuals), dtype=int)
    rows: list[Row] = []
    for f in schema:
        col = counterfactuals[f.name].tolist()
        rows += _feature_rows(f, query, col, labels, constraints, resolved, n_changed)
    if resolved.timeline is not None:  # a feature only time moves is no change one makes
        n_changed -= resolved.timeline.bind(schema, query).moved(counterfactuals)
    if resolved.max_changes is not None:
        for i, k in enumerate(n_changed):
            if k > resolved.max_changes:
                rows.append(
                    (labels[i], "*", "max_changes", f"{k} changes > {resolved.max_changes}")
                )
    rows += _causal_rows(query, counterfactuals, schema, resolved, labels)
    for rel in resolved.relations:
        held = rel.holds(query, counterfactuals, schema)
        names = ",".join(rel.changed_names() or rel.names)
        for k in np.flatnonzero(~held).tolist():
            rows.append((labels[k], names, "relations", f"'{rel.text}' does not hold"))
    rows += _timeline_rows(query, counterfactuals, schema, resolved, labels)
    return pd.DataFrame(rows, columns=_VIOLATION_COLUMNS)


def _timeline_rows(
    query: pd.Series,
    counterfactuals: pd.DataFrame,
    schema: Schema,
    resolved: ResolvedConstraints,
    labels: list[Any],
) -> list[Row]:
    """Each row whose time-driven features agree on no elapsed month within the horizon."""
    if resolved.timeline is None:
        return []
    qt = resolved.timeline.bind(schema, query)
    names = ",".join(schema.names[j] for j, _r in qt.indexed())
    detail = f"no elapsed time within {qt.horizon} months gives these values"
    late = np.flatnonzero(qt.months(counterfactuals) < 0)
    return [(labels[k], names, "timeline", detail) for k in late.tolist()]


def _feature_rows(
    f: Feature,
    query: pd.Series,
    col: list[Any],
    labels: list[Any],
    constraints: Any,
    resolved: ResolvedConstraints,
    n_changed: np.ndarray,
) -> list[Row]:
    """The violations of one feature, row by row; counts each change in ``n_changed``."""
    q = _py(query[f.name])
    rows: list[Row] = []
    for i, v in enumerate(col):
        v = _py(v)
        try:
            ch = changed(f, q, v)
        except (TypeError, ValueError):
            rows.append((labels[i], f.name, "domain", f"value {v!r} is not {f.kind}"))
            continue
        if ch:  # unchanged: only user ranges / allowed values can be violated
            n_changed[i] += 1
            rows += [(labels[i], *r) for r in _change_rows(f, q, v, constraints, resolved)]
        rows += [(labels[i], *r) for r in _value_rows(f, v, resolved)]
    return rows


def _change_rows(
    f: Feature, q: Any, v: Any, constraints: Any, resolved: ResolvedConstraints
) -> list[tuple[str, str, str]]:
    """What a change of ``f`` from ``q`` to ``v`` violates: its domain, its mutability,
    its direction."""
    out = []
    if not f.contains(v):
        if not (
            f.is_numeric
            and _between(v, q, f)
            and not (f.kind == "integer" and abs(float(v) - round(float(v))) > 1e-9)
        ):
            out.append((f.name, "domain", f"{v!r} is outside the domain of '{f.name}'"))
    d = resolved.direction.get(f.name, 0)
    if f.name in resolved.immutable:
        out.append((f.name, _fixed_by(f, constraints), f"{q!r} -> {v!r}"))
    elif d != 0 and (f.is_numeric or (f.kind == "ordinal" and f.contains(v))):
        delta = (float(v) - float(q)) if f.is_numeric else (f.rank(v) - f.rank(q))
        if d > 0 and delta < 0:
            out.append((f.name, "increasing", f"{q!r} -> {v!r}"))
        elif d < 0 and delta > 0:
            out.append((f.name, "decreasing", f"{q!r} -> {v!r}"))
    return out


def _fixed_by(f: Feature, constraints: Any) -> str:
    """The kind that keeps ``f`` fixed: ``features_to_vary`` when only leaving it out
    of that list does, else ``immutable``."""
    ftv = constraints.features_to_vary
    if (
        ftv is not None
        and f.name not in set(ftv)
        and f.actionability != "immutable"
        and f.name not in set(constraints.immutable)
    ):
        return "features_to_vary"
    return "immutable"


def _value_rows(f: Feature, v: Any, resolved: ResolvedConstraints) -> list[tuple[str, str, str]]:
    """What the value ``v`` of ``f`` violates, changed or not: the user's range and
    allowed values."""
    out = []
    if f.name in resolved.ranges:
        lo, hi = resolved.ranges[f.name]
        try:
            fv = float(v)
        except (TypeError, ValueError):
            fv = math.nan
        if not (lo - 1e-9 <= fv <= hi + 1e-9):
            out.append((f.name, "ranges", f"{v!r} not in [{lo}, {hi}]"))
    if f.name in resolved.allowed_values:
        allowed = resolved.allowed_values[f.name]
        ok = any(not changed(f, a, v) for a in allowed) if f.is_numeric else v in allowed
        if not ok:
            out.append((f.name, "allowed_values", f"{v!r} not in {list(allowed)}"))
    return out


def _causal_rows(
    query: pd.Series,
    counterfactuals: pd.DataFrame,
    schema: Schema,
    resolved: ResolvedConstraints,
    labels: list[Any],
) -> list[Row]:
    """Each causal relation whose residual exceeds its tolerance, row by row."""
    rows: list[Row] = []
    for c in resolved.causal:
        try:
            res = c.residual(query, counterfactuals)
        except Exception as exc:  # a user function failing is a violation, not a crash
            res = np.full(len(counterfactuals), np.nan)
            detail = f"could not evaluate: {exc}"
        else:
            detail = ""
        scale = schema[c.child].range
        for i, r in enumerate(res):
            if not (abs(r) <= c.tol * scale):
                rows.append((labels[i], c.child, "causal", detail or f"residual {r:.4g}"))
    return rows


def _between(v: Any, q: Any, f: Feature) -> bool:
    """A numeric value between the domain and a query outside it (allowed: hull)."""
    fv, fq = float(v), float(q)
    lo, hi = min(float(f.lower), fq), max(float(f.upper), fq)  # type: ignore[arg-type]
    return lo - 1e-9 <= fv <= hi + 1e-9
