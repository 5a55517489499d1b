"""The JSON answer of an explanation: per row, status, reason, counterfactuals and certificate."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from .._utils._values import _py
from ..result import changes, describe_changes
from ..schema import Schema
from ._request import ExplainJob

__all__ = ["jsonable", "render"]


def jsonable(v: Any) -> Any:
    """Plain JSON data (NaN/inf -> None, numpy -> Python, tuples -> lists)."""
    v = _py(v)
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, (str, int, bool)) or v is None:
        return v
    if isinstance(v, Mapping):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, np.ndarray, pd.Index)):
        return [jsonable(x) for x in v]
    return str(v)


def render(
    result: Any,
    job: ExplainJob,
    elapsed: float,
    *,
    schema: Schema,
    model: Any,
    class_labels: Mapping[str, str],
    decision: Callable[[Any, np.ndarray], dict[str, Any]],
) -> dict[str, Any]:
    """The JSON answer for a :class:`~counterfact.CounterfactualResult`.

    Parameters
    ----------
    result : CounterfactualResult
        The explanation of ``job.frame``.
    job : ExplainJob
        The request that was explained.
    elapsed : float
        Seconds the explanation took.
    schema : Schema
        The features of the rows.
    model : ModelAdapter
        The model, for the probabilities before the change.
    class_labels : mapping of str to str
        Readable names of the classes.
    decision : callable
        ``decision(prediction, probabilities)``: the model's decision for one row, as JSON data.
    """
    frame = job.frame
    preds, proba = model.predict_with_proba(frame)
    rows_out = []
    for i, q in enumerate(result.queries.index):
        status = str(result.status[q])
        diag = _diagnostics(result, q)
        target = _py(result.target[q])
        rows_out.append(
            {
                "row": i,
                "status": status,
                "reason": _reason(result, q, diag),
                "target": jsonable(target),
                "target_label": class_labels.get(str(target), str(target)),
                "decision": decision(preds[i], proba[i]),
                "probability_before": float(proba[i, model.class_index(target)]),
                "counterfactuals": _counterfactuals(result, q, frame.iloc[i], schema),
                "certificate": result.certificate(q),
                "runtime_s": jsonable(float(result.runtime[q])),
                "diagnostics": diag,
            }
        )
    return {
        "method": job.method,
        "n_counterfactuals": job.n_counterfactuals,
        "time_limit": job.time_limit,
        "constraints": None if job.constraints is None else jsonable(job.constraints.to_dict()),
        "elapsed_s": elapsed,
        "results": rows_out,
    }


def _diagnostics(result: Any, q: Any) -> dict[str, Any]:
    """The method's diagnostics of query ``q`` that have a value."""
    if q not in result.diagnostics.index:
        return {}
    return {k: v for k, v in jsonable(result.diagnostics.loc[q].to_dict()).items() if v is not None}


def _reason(result: Any, q: Any, diag: Mapping[str, Any]) -> str | None:
    """Why query ``q`` got its status: the diagnostics' reason, else the result's (None: no reason)."""
    reason = diag.get("reason") or None
    reasons = getattr(result, "reason", None)
    if reason is None and isinstance(reasons, pd.Series) and q in reasons.index:
        reason = jsonable(reasons[q]) or None
    return None if reason is None else str(reason)


def _counterfactuals(result: Any, q: Any, x: pd.Series, schema: Schema) -> list[dict[str, Any]]:
    """The counterfactuals of query ``q`` (row ``x``): raw row, changes, their description, P(target) after."""
    cfs = []
    for rank, cfrow in result.for_query(q).iterrows():
        ch = changes(schema, x, cfrow)
        conf = result.confidence.get((q, rank), float("nan"))
        cfs.append(
            {
                "rank": int(rank),
                "row": {n: jsonable(cfrow[n]) for n in schema.names},
                "changes": [
                    {"feature": c.feature, "before": jsonable(c.before), "after": jsonable(c.after),
                     "before_text": c.before_text, "after_text": c.after_text}
                    for c in ch
                ],
                "description": describe_changes(ch),
                "probability_after": jsonable(float(conf)),
            }
        )
    return cfs
