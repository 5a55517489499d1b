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
    rows: list[tuple[Any, str, str, str]] = []
    if len(counterfactuals) == 0:
        return pd.DataFrame(columns=_VIOLATION_COLUMNS)
    n_changed = np.zeros(len(counterfactuals), dtype=int)
    ftv = None if constraints.features_to_vary is None else set(constraints.features_to_vary)
    labels = list(counterfactuals.index)
    for f in schema:
        q = _py(query[f.name])
        col = counterfactuals[f.name].tolist()
        d = resolved.direction.get(f.name, 0)
        for i, v in enumerate(col):
            v = _py(v)
            lab = labels[i]
            try:
                ch = changed(f, q, v)
            except (TypeError, ValueError):
                rows.append((lab, f.name, "domain", f"value {v!r} is not {f.kind}"))
                continue
            if not ch:
                # unchanged: only user ranges / allowed values can be violated
                pass
            else:
                n_changed[i] += 1
                if not f.contains(v):
                    if not (
                        f.is_numeric
                        and _between(v, q, f)
                        and not (f.kind == "integer" and abs(float(v) - round(float(v))) > 1e-9)
                    ):
                        rows.append(
                            (lab, f.name, "domain", f"{v!r} is outside the domain of '{f.name}'")
                        )
                if f.name in resolved.immutable:
                    kind = (
                        "features_to_vary"
                        if (
                            ftv is not None
                            and f.name not in ftv
                            and f.actionability != "immutable"
                            and f.name not in set(constraints.immutable)
                        )
                        else "immutable"
                    )  # type: ignore[arg-type]
                    rows.append((lab, f.name, kind, f"{q!r} -> {v!r}"))
                elif d != 0 and (f.is_numeric or (f.kind == "ordinal" and f.contains(v))):
                    delta = (float(v) - float(q)) if f.is_numeric else (f.rank(v) - f.rank(q))
                    if d > 0 and delta < 0:
                        rows.append((lab, f.name, "increasing", f"{q!r} -> {v!r}"))
                    elif d < 0 and delta > 0:
                        rows.append((lab, f.name, "decreasing", f"{q!r} -> {v!r}"))
            if f.name in resolved.ranges:
                lo, hi = resolved.ranges[f.name]
                try:
                    fv = float(v)
                except (TypeError, ValueError):
                    fv = math.nan
                if not (lo - 1e-9 <= fv <= hi + 1e-9):
                    rows.append((lab, f.name, "ranges", f"{v!r} not in [{lo}, {hi}]"))
            if f.name in resolved.allowed_values:
                allowed = resolved.allowed_values[f.name]
                ok = any(not changed(f, a, v) for a in allowed) if f.is_numeric else v in allowed
                if not ok:
                    rows.append((lab, f.name, "allowed_values", f"{v!r} not in {list(allowed)}"))
    if resolved.max_changes is not None:
        for i, k in enumerate(n_changed):
            if k > resolved.max_changes:
                rows.append(
                    (labels[i], "*", "max_changes", f"{k} changes > {resolved.max_changes}")
                )
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
    for rel in resolved.relations:
        held = rel.holds(query, counterfactuals, schema)
        names = ",".join(rel.changed_names() or rel.names)
        for k in np.flatnonzero(~held).tolist():
            rows.append((labels[k], names, "relations", f"'{rel.text}' does not hold"))
    return pd.DataFrame(rows, columns=_VIOLATION_COLUMNS)


def _between(v: Any, q: Any, f: Feature) -> bool:
    """A numeric value between the domain and a query outside it (allowed: hull)."""
    fv, fq = float(v), float(q)
    lo, hi = min(float(f.lower), fq), max(float(f.upper), fq)  # type: ignore[arg-type]
    return lo - 1e-9 <= fv <= hi + 1e-9
