"""The JSON answer of an explanation: per row, status, reason, counterfactuals and certificate."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._utils._values import _py
from ..result import certificate_text, changes, describe_changes

if TYPE_CHECKING:
    from ._service import ExplainJob, Service

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


def render(service: Service, result: Any, job: ExplainJob, elapsed: float) -> dict[str, Any]:
    """The JSON answer for a :class:`~counterfact.CounterfactualResult`."""
    frame = job.frame
    preds, proba = service.model.predict_with_proba(frame)
    reasons = getattr(result, "reason", None)
    rows_out = []
    for i, q in enumerate(result.queries.index):
        x = frame.iloc[i]
        status = str(result.status[q])
        diag = {}
        if q in result.diagnostics.index:
            diag = {k: v for k, v in jsonable(result.diagnostics.loc[q].to_dict()).items() if v is not None}
        reason = diag.get("reason") or None
        if reason is None and isinstance(reasons, pd.Series) and q in reasons.index:
            reason = jsonable(reasons[q]) or None
        target = _py(result.target[q])
        ti = service.model.class_index(target)
        cfs = []
        for rank, cfrow in result.for_query(q).iterrows():
            ch = changes(service.schema, x, cfrow)
            conf = result.confidence.get((q, rank), float("nan"))
            cfs.append(
                {
                    "rank": int(rank),
                    "row": {n: jsonable(cfrow[n]) for n in service.schema.names},
                    "changes": [
                        {"feature": c.feature, "before": jsonable(c.before), "after": jsonable(c.after),
                         "before_text": c.before_text, "after_text": c.after_text}
                        for c in ch
                    ],
                    "description": describe_changes(ch),
                    "probability_after": jsonable(float(conf)),
                }
            )
        rows_out.append(
            {
                "row": i,
                "status": status,
                "reason": None if reason is None else str(reason),
                "target": jsonable(target),
                "target_label": service.class_labels().get(str(target), str(target)),
                "decision": service.decision(preds[i], proba[i]),
                "probability_before": float(proba[i, ti]),
                "counterfactuals": cfs,
                "certificate": certificate_text(job.method, status, diag),
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
