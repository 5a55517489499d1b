"""The JSON answer of an explanation: per row, status, reason, counterfactuals (each with its
cost in the page's one measure of effort) and certificate (as the method words it, and for a
lay reader)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from .._utils._values import _py
from ..methods import ALREADY_TARGET
from ..result import changes
from ..result._notice import notice
from ..result._robustness import SETTING, robustness_words, setting_words
from ..result._text import describe_changes, measure_words, timed_changes
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
    meanings: Mapping[str, str] | None = None,
    measure: Any = None,
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
    meanings : mapping, optional
        Per status, what an answer of the method means in plain words.
    measure : BoundCosts, optional
        The measure of effort of every answer's ``cost``, one scale for every method.
    """
    preds, proba = model.predict_with_proba(job.frame)
    rows_out = []
    for i, q in enumerate(result.queries.index):
        target = _py(result.target[q])
        label = class_labels.get(str(target), str(target))
        before = {
            "decision": decision(preds[i], proba[i]),
            "probability_before": float(proba[i, model.class_index(target)]),
        }
        rows_out.append(_row(result, q, i, job, schema, label, before, meanings))
    _add_costs(result, rows_out, measure)
    return {**_asked(job, measure), "elapsed_s": elapsed, "results": rows_out}


def _asked(job: ExplainJob, measure: Any) -> dict[str, Any]:
    """What the request asked for, as the answer repeats it."""
    return {
        "method": job.method,
        "n_counterfactuals": job.n_counterfactuals,
        "time_limit": job.time_limit,
        "constraints": None if job.constraints is None else jsonable(job.constraints.to_dict()),
        "min_probability": job.min_probability,
        "min_vote_share": job.min_vote_share,
        "robust_to": len(job.robust_to),
        "robustness": job.robustness,
        "robustness_words": robustness_words(job.robustness),
        "regions": job.regions,
        "measure": None if measure is None else str(measure_words(measure.costs)),
    }


def _add_costs(result: Any, rows: list[dict[str, Any]], measure: Any) -> None:
    """Each counterfactual's ``cost`` in ``measure`` (one scale for every method) and its
    words, written into the rendered ``rows``; None without a measure."""
    has = measure is not None and len(result.counterfactuals) > 0
    costs = result.cost(costs=measure) if has else pd.Series(dtype=float)
    for q, row in zip(result.queries.index, rows, strict=True):
        for cf in row["counterfactuals"]:
            value = costs.get((q, cf["rank"]))
            cf["cost"] = None if value is None else jsonable(float(value))
            cf["cost_text"] = None if value is None else measure.describe(float(value))


def _row(
    result: Any,
    q: Any,
    i: int,
    job: ExplainJob,
    schema: Schema,
    label: str,
    before: Mapping[str, Any],
    meanings: Mapping[str, str] | None,
) -> dict[str, Any]:
    """The answer for query ``q``, row ``i`` of the request: its status and why, its target
    (``label``: the target's readable name), the decision ``before`` the change, the
    counterfactuals, the certificate, what the status means, the runtime and the
    diagnostics."""
    status = str(result.status[q])
    diag = _diagnostics(result, q)
    return {
        "row": i,
        "status": status,
        "reason": _reason(result, q, diag),
        "target": jsonable(_py(result.target[q])),
        "target_label": label,
        **before,
        "counterfactuals": _counterfactuals(result, q, job.frame.iloc[i], schema, job, label),
        "certificate": result.certificate(q),
        "plain_certificate": result.certificate(q, numbers=False),
        "meaning": _meaning(result, q, status, diag, meanings),
        "runtime_s": jsonable(float(result.runtime[q])),
        "diagnostics": diag,
    }


#: what a row the model already gives the target means (status ``failed``)
ALREADY_MEANING = "Nothing needs to change: the model already gives this row the outcome asked for."


def _meaning(
    result: Any, q: Any, status: str, diag: Mapping[str, Any], meanings: Mapping[str, str] | None
) -> str | None:
    """What query ``q``'s status means for a person: the method's words for it, said of
    the row's own case. A row already given the target needs nothing (not "found no
    answer"); under ``Requirements(robustness=p)`` a proof of the smallest answer holds
    among the answers of the setting the row kept, not among every answer within the
    person's constraints (a cheaper one that holds less often may exist; said for any
    method, since a search's "optimal" is the best among the answers it examined)."""
    if status == "failed" and diag.get("reason") == ALREADY_TARGET:
        return ALREADY_MEANING
    said = (meanings or {}).get(status)
    kept = setting_words(result, q)
    if said is None or status != "optimal" or diag.get(SETTING) in (None, "plain"):
        return said
    return (
        f"{said} This speaks of the answers {kept.removeprefix(', ')}; a cheaper answer "
        "that holds for fewer retrained models may exist."
    )


def _diagnostics(result: Any, q: Any) -> dict[str, Any]:
    """The method's diagnostics of query ``q`` that have a value."""
    if q not in result.diagnostics.index:
        return {}
    values = jsonable(result.diagnostics.loc[q].to_dict())
    return {k: v for k, v in values.items() if v is not None}


def _reason(result: Any, q: Any, diag: Mapping[str, Any]) -> str | None:
    """Why query ``q`` got its status: the diagnostics' reason, else the result's (None: no
    reason)."""
    reason = diag.get("reason") or None
    reasons = getattr(result, "reason", None)
    if reason is None and isinstance(reasons, pd.Series) and q in reasons.index:
        reason = jsonable(reasons[q]) or None
    return None if reason is None else str(reason)


def _counterfactuals(
    result: Any, q: Any, x: pd.Series, schema: Schema, job: ExplainJob, label: str
) -> list[dict[str, Any]]:
    """The counterfactuals of query ``q`` (row ``x``): raw row, changes, their description,
    P(target) after; with the job's ``regions`` its certified region, with its ``reasons``
    the reasons for a notice."""
    cfs = []
    for rank, cfrow in result.for_query(q).iterrows():
        ch = changes(schema, x, cfrow)
        conf = result.confidence.get((q, rank), float("nan"))
        cfs.append(
            {
                "rank": int(rank),
                "row": {n: jsonable(cfrow[n]) for n in schema.names},
                "changes": [
                    {
                        "feature": c.feature,
                        "before": jsonable(c.before),
                        "after": jsonable(c.after),
                        "before_text": c.before_text,
                        "after_text": c.after_text,
                        "unit": c.unit,
                    }
                    for c in ch
                ],
                "description": describe_changes(ch),
                **_when(result, q, x, cfrow, ch),
                "probability_after": jsonable(float(conf)),
                "region": _region(result.regions.get((q, int(rank))), schema),
                "robustness": _robustness(result, q, int(rank)) if job.robustness else None,
                **(
                    _reasons(result, q, int(rank), label)
                    if job.reasons
                    else {"reasons": None, "notice": None}
                ),
            }
        )
    return cfs


def _when(result: Any, q: Any, x: pd.Series, row: pd.Series, ch: list[Any]) -> dict[str, Any]:
    """Under query ``q``'s timeline: the months answer ``row`` takes and the answer said
    with them ("in 8 months, if ...", "now: ..."); both None without a timeline."""
    c = result.constraints_for(q)
    timeline = None if c is None else c.timeline
    if timeline is None:
        return {"months": None, "when": None}
    months = timeline.elapsed(result.schema, x, row)
    text = timed_changes(ch, timeline.moved_by_time(result.schema), months)
    return {"months": months, "when": text if months else f"now: {text}"}


def _robustness(result: Any, q: Any, rank: int) -> dict[str, Any]:
    """An answer's estimated share of retrained models that still accept it, with its 95 %
    Clopper-Pearson interval, the copies it was estimated on and its shortfall."""
    row = result.robustness().loc[(q, rank)]
    return {
        k: jsonable(row[k])
        for k in (
            "estimate",
            "low",
            "high",
            "accepted",
            "copies",
            "shortfall",
            "reached",
            "setting",
        )
    }


def _region(region: Any, schema: Schema) -> dict[str, Any] | None:
    """A certified region as JSON: per changed feature ``[low, high]`` or ``{"values": [...]}``,
    whether it is proven, how, and in words (the unchanged features stay as they are)."""
    if region is None:
        return None
    d = region.to_dict()
    return jsonable(
        {
            "bounds": d["bounds"],
            "domain": d["domain"],
            "certified": d["certified"],
            "how": d["how"],
            "n_checked": d["n_checked"],
            "text": region.describe(schema),
        }
    )


def _reasons(result: Any, q: Any, rank: int, label: str) -> dict[str, Any]:
    """The reasons for a notice from counterfactual ``rank`` of ``q``, and the notice's text."""
    table = result.reasons(q, rank)
    schema = result.schema
    return {
        "reasons": [
            {
                "feature": str(r["feature"]),
                "current": _value(schema[r["feature"]], r["current"]),
                "needed": _value(schema[r["feature"]], r["needed"]),
                "closes": jsonable(float(r["closes"])),
                "sentence": str(r["sentence"]),
            }
            for r in table.to_dict("records")
        ],
        "notice": notice(result, q, rank, target_label=label),
    }


def _value(feature: Any, v: Any) -> Any:
    """A raw value as JSON, an integer feature's as a whole number."""
    v = jsonable(v)
    return int(v) if feature.kind == "integer" and isinstance(v, float) and v.is_integer() else v
