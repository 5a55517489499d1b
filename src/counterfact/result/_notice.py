"""Reasons for an adverse-action notice, from a counterfactual.

A lender owes a rejected applicant the principal reasons for the decision (in
the US, Regulation B: in practice up to four, specific, not generic), and in the
EU the person may ask how a change in their data would have changed the result.
A counterfactual -- especially a proven-minimal one -- is exactly that
evidence: each feature it changes is a reason, with the applicant's current
value and the value that would have been needed.

:func:`reasons` orders the changed features by how much of the gap to the
target each closes on its own (the model's probability of the target with only
that feature changed, against the applicant's own), keeps at most four, and
words each; :func:`notice` renders them as a text (or HTML) a lender can adapt,
stating how the answer was established (proven: no answer with fewer changes or
smaller moves, or found by search), what "smaller" counts, and any margin or
robustness the explanation asked for.
"""

from __future__ import annotations

import html
from typing import Any

import numpy as np
import pandas as pd

from .._utils._values import _py
from ..exceptions import ValidationError
from ..schema._format import format_value
from ._robustness import held_words
from ._text import changes, timed_changes
from ._time import _timeline, wait_words

__all__ = ["notice", "reasons"]

#: the most reasons a notice lists (Regulation B's commentary: no more than four)
MAX_REASONS = 4


def reasons(result: Any, query: Any, rank: int = 0, max_reasons: int = MAX_REASONS) -> pd.DataFrame:
    """The principal reasons behind ``query``'s decision, from its counterfactual ``rank``.

    Columns: ``feature``, ``current``, ``needed`` (raw values; ``needed`` is the
    counterfactual's value, or the region's bound when a region was computed),
    ``closes`` (the model's probability of the target with only this feature
    changed, minus the applicant's own: how much of the gap it closes alone),
    ``sentence``.  Ordered by ``closes``, largest first; at most ``max_reasons``.
    """
    if query not in result.queries.index:
        raise ValidationError(f"Unknown query {query!r}.")
    cfs = result.for_query(query)
    if rank not in cfs.index:
        raise ValidationError(
            f"Query {query!r} has no counterfactual of rank {rank!r} (status "
            f"{result.status.get(query)}): "
            "there is no change to give as a reason."
        )
    if isinstance(max_reasons, bool) or not isinstance(max_reasons, int) or max_reasons < 1:
        raise ValidationError(f"max_reasons must be an int >= 1. Got {max_reasons!r}.")
    x, cf = result.queries.loc[query], cfs.loc[rank]
    changes = result.changes(query, rank)
    closes = _closing(result, query, x, cf, [c.feature for c in changes])
    region = result.regions.get((query, int(rank)))
    rows = []
    for c, gain in zip(changes, closes, strict=True):
        f = result.schema[c.feature]
        rows.append(
            {
                "feature": c.feature,
                "current": c.before,
                "needed": c.after,
                "closes": gain,
                "sentence": _sentence(
                    f, c.before, c.after, None if region is None else region.bounds.get(c.feature)
                ),
            }
        )
    out = pd.DataFrame(rows, columns=["feature", "current", "needed", "closes", "sentence"])
    out = out.sort_values("closes", ascending=False, kind="stable").head(max_reasons)
    return out.reset_index(drop=True)


def _closing(
    result: Any, query: Any, x: pd.Series, cf: pd.Series, features: list[str]
) -> list[float]:
    """Per changed feature, P(target) with only that feature changed, minus the query's own."""
    model = result.model
    if model is None or not features:
        return [float("nan")] * len(features)
    target = result.target.get(query)
    rows = pd.DataFrame([x] * len(features)).reset_index(drop=True)
    for k, name in enumerate(features):
        rows.loc[k, name] = cf[name]
    rows = result.schema.coerce(rows)
    col = model.class_index(target)
    base = float(model.predict_proba(result.schema.coerce(x.to_frame().T))[0, col])
    return [float(p) - base for p in np.asarray(model.predict_proba(rows))[:, col]]


def _sentence(feature: Any, before: Any, after: Any, bound: Any) -> str:
    name = feature.name
    now = format_value(feature, before, unit=True)
    if not feature.is_numeric:
        if isinstance(bound, frozenset) and len(bound) > 1:
            options = ", ".join(
                str(v)
                for v in (feature.categories or sorted(bound))
                if v in bound and v != _py(before)
            )
            return f"{name} is {now}; {options} would have been needed"
        return f"{name} is {now}; {format_value(feature, after, unit=True)} would have been needed"
    up = float(after) > float(before)
    if bound is not None and not isinstance(bound, frozenset):
        limit = bound[0] if up else bound[1]
        bound = "at least" if up else "at most"
        return (
            f"{name} is {now}; {bound} {format_value(feature, limit, unit=True)} "
            "would have been needed"
        )
    way = "higher" if up else "lower"
    return (
        f"{name} is {now}; {format_value(feature, after, unit=True)} ({way}) would have been needed"
    )


def _when(result: Any, query: Any, rank: int) -> str | None:
    """For an answer that takes time under a timeline: ``"When: in 8 months, if ..."``."""
    timeline = _timeline(result, query)
    if timeline is None:
        return None
    x, cf = result.queries.loc[query], result.counterfactuals.loc[(query, rank)]
    months = timeline.elapsed(result.schema, x, cf)
    if not months:
        return None
    moved = timeline.moved_by_time(result.schema)
    return f"When: {timed_changes(changes(result.schema, x, cf), moved, months)}."


def _together(every: pd.DataFrame, shown: int, target: Any) -> str:
    """What the changes listed do together; when the answer makes more changes than the
    notice lists, the others named and that only all of them give the decision."""
    if shown >= len(every):
        together = "these changes together" if shown > 1 else "this change"
        return f"With {together}, the model's decision would have been '{target}'."
    rest = [str(f) for f in every["feature"].iloc[shown:]]
    others = (
        f"a change of {rest[0]}"
        if len(rest) == 1
        else f"changes of {', '.join(rest[:-1])} and {rest[-1]}"
    )
    listed = "this one" if shown == 1 else f"these {shown}"
    return (
        f"The answer makes {len(every)} changes: {listed} and {others}; only with all "
        f"{len(every)} together would the model's decision have been '{target}'."
    )


def notice(
    result: Any,
    query: Any,
    rank: int = 0,
    *,
    max_reasons: int = MAX_REASONS,
    as_html: bool = False,
    target_label: str | None = None,
) -> str:
    """A plain-language statement of the principal reasons for ``query``'s decision,
    to adapt into an adverse-action notice; it says how the answer was established,
    naming what "smaller" means in words (never the certificate's raw numbers).
    ``target_label`` names the target class in the text (default: its raw label)."""
    every = reasons(result, query, rank, max_reasons=len(result.schema.names))
    if isinstance(max_reasons, bool) or not isinstance(max_reasons, int) or max_reasons < 1:
        raise ValidationError(f"max_reasons must be an int >= 1. Got {max_reasons!r}.")
    table = every.head(max_reasons)
    target = result.target.get(query) if target_label is None else target_label
    lines = [f"Principal reasons the application was not assigned to '{target}':"]
    lines += [f"{k + 1}. {s}." for k, s in enumerate(table["sentence"])]
    lines.append(_together(every, len(table), target))
    if len(every) > 1 and every["closes"].isna().all():
        lines.append(
            "The reasons are listed in the order of the data's features, not by how much "
            "each closes the gap: the result was read without its model (pass model= to "
            "from_json to rank them)."
        )
    when = _when(result, query, rank)
    if when:
        lines.append(when)
    lines.append(f"How this was established: {result.certificate(query, numbers=False)}.")
    lines.append(f"Smaller means {result.measure_words()}{wait_words(result, [query])}.")
    req = getattr(result, "requirements", {}) or {}
    if req.get("robustness") is not None:
        lines.append(f"This answer {held_words(result.robustness().loc[(query, int(rank))])}.")
    if req.get("robust_to"):
        lines.append(f"It also holds for {req['robust_to']} retrained versions of the model.")
    region = result.regions.get((query, int(rank)))
    if region is not None and not region.is_point():  # a point adds nothing to the answer
        lines.append(f"Any values with {region.describe(result.schema)} would also have sufficed.")
    if not as_html:
        return "\n".join(lines)
    head, *items = lines
    reasons_html = "".join(f"<li>{html.escape(s)}</li>" for s in table["sentence"])
    rest = "".join(f"<p>{html.escape(t)}</p>" for t in items[len(table) :])
    return f'<div class="notice"><p>{html.escape(head)}</p><ol>{reasons_html}</ol>{rest}</div>'
