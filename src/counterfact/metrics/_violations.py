"""Constraint violations and runtime."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..constraints import Constraints, violations
from ..constraints._kinds import CONSTRAINT_KINDS
from ..exceptions import ValidationError
from ..schema import Schema
from ._common import as_frame, as_row, is_result, need_schema, query_frames

__all__ = ["VIOLATION_KINDS", "time_per_counterfactual", "time_stats", "violation_counts"]

#: every kind :func:`counterfact.constraints.violations` reports
VIOLATION_KINDS: tuple[str, ...] = ("domain", *CONSTRAINT_KINDS)


def violation_counts(
    query: Any,
    counterfactuals: pd.DataFrame | None = None,
    schema: Schema | None = None,
    constraints: Constraints | None = None,
) -> dict[str, int] | pd.DataFrame:
    """Number of violated constraints of each kind among a query's counterfactuals.

    One count per row of :func:`counterfact.constraints.violations` (the single
    checker every method's verification uses): the schema's domain and
    actionability, then the constraints' immutable, increasing, decreasing,
    ranges, allowed_values, features_to_vary, max_changes, causal and relations
    kinds.
    Returns ``{kind: count, ..., "total": count}`` with every kind present
    (0 when none); for a result, a DataFrame with one row per query and one
    column per kind plus ``total`` (each query's own constraints are used).  Lower is
    better -- a method's verified output should have none.
    """
    if is_result(query):
        res = query
        rows = []
        for q, x, cf in query_frames(res):
            rows.append(_counts(x, cf, res.schema, res.constraints_for(q)))
        cols = [*VIOLATION_KINDS, "total"]
        return pd.DataFrame(rows, index=res.queries.index, columns=cols).astype(int)
    schema = need_schema(schema, "violation_counts")
    return _counts(as_row(query), as_frame(counterfactuals, schema), schema, constraints)


def _counts(
    x: pd.Series, cf: pd.DataFrame, schema: Schema, constraints: Constraints | None
) -> dict[str, int]:
    out = dict.fromkeys(VIOLATION_KINDS, 0)
    if len(cf):
        v = violations(x, cf.loc[:, schema.names].reset_index(drop=True), schema, constraints)
        for kind, n in v["kind"].value_counts().items():
            out[str(kind)] = out.get(str(kind), 0) + int(n)
    out["total"] = sum(out[k] for k in VIOLATION_KINDS)
    return out


# ---------------------------------------------------------------------- time
def _runtime_found(result_or_runtime: Any, found: Any) -> tuple[np.ndarray, np.ndarray]:
    if is_result(result_or_runtime):
        res = result_or_runtime
        counts = (
            res.counterfactuals.groupby(level=0).size()
            if len(res.counterfactuals)
            else pd.Series(dtype=int)
        )
        found_arr = counts.reindex(res.queries.index, fill_value=0).to_numpy(dtype=float)
        return res.runtime.reindex(res.queries.index).to_numpy(dtype=float), found_arr
    if found is None:
        raise ValidationError(
            "Pass a CounterfactualResult, or runtimes (seconds per query) and found (counts "
            "per query)."
        )
    rt, fd = np.asarray(result_or_runtime, dtype=float), np.asarray(found, dtype=float)
    if rt.shape != fd.shape:
        raise ValidationError(
            f"runtime and found must have one value per query each. Got {rt.shape} and {fd.shape}."
        )
    return rt, fd


def time_per_counterfactual(result_or_runtime: Any, found: Any = None) -> pd.Series | np.ndarray:
    """Seconds per counterfactual of each query: ``runtime / found`` (NaN where nothing was
    found) -- UFCE's time per CE (Sec. 3.3, Table 5).  A result gives a Series per query."""
    rt, fd = _runtime_found(result_or_runtime, found)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(fd > 0, rt / np.where(fd > 0, fd, 1.0), np.nan)
    if is_result(result_or_runtime):
        return pd.Series(out, index=result_or_runtime.queries.index, name="time_per_counterfactual")
    return out


def time_stats(result_or_runtime: Any, found: Any = None) -> dict[str, float]:
    """Runtime summary: mean and median seconds per query (MACE App. C.1, MD-PSO, L2C's
    total inference time / number of queries) and per counterfactual (UFCE Table 5):
    ``mean_per_counterfactual = sum(runtime) / sum(found)``, the median over
    queries that found any of ``runtime / found``; plus the totals."""
    rt, fd = _runtime_found(result_or_runtime, found)
    per_cf = rt[fd > 0] / fd[fd > 0]
    total, n = float(np.nansum(rt)), float(fd.sum())
    return {
        "mean_per_query": float(np.nanmean(rt)) if rt.size else float("nan"),
        "median_per_query": float(np.nanmedian(rt)) if rt.size else float("nan"),
        "mean_per_counterfactual": total / n if n > 0 else float("nan"),
        "median_per_counterfactual": float(np.median(per_cf)) if per_cf.size else float("nan"),
        "total": total,
        "queries": float(rt.size),
        "counterfactuals": n,
    }
