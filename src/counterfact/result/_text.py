"""Counterfactuals in words: the changes a counterfactual makes, and each method's guarantee.

The CLI, ``CounterfactualResult.describe()``/``diffs()``/``_repr_html_`` and the
benchmark report all use these functions, so a change reads the same
everywhere:

* numbers are written at their feature's resolution (``credit_amount 1330 ->
  1031``, never ``1031.000061``; ``drinks 0.5 -> 0.57``);
* only features whose value changed are listed, compared by the feature's
  kind (``96`` and ``96.0`` of a numeric feature are the same value);
* a query's guarantee is put in plain words (:func:`certificate_text`, which each
  method class refines with what it proves).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from .._utils._values import _is_missing, _py
from ..schema import Feature, Schema
from ..schema._format import format_value

__all__ = [
    "Change",
    "MeasureWords",
    "certificate_text",
    "changes",
    "describe_changes",
    "diagnostic_number",
    "measure_words",
    "plain_certificate",
]

_NUM_TOL = 1e-9


def _precise(value: Any) -> str:
    """Enough digits to tell two nearby numbers apart (sub-resolution changes)."""
    return f"{float(_py(value)):.10g}"


@dataclass(frozen=True)
class Change:
    """One feature whose value differs between a query and a counterfactual.

    Attributes
    ----------
    feature : str
        Feature name.
    before, after : Any
        Raw values (the query's and the counterfactual's).
    before_text, after_text : str
        The same values formatted by :func:`format_value`.
    """

    feature: str
    before: Any
    after: Any
    before_text: str
    after_text: str
    #: the feature's unit ("" when it has none), written once after the new value
    unit: str = ""
    #: whether the values are categories (quoted in text, so that they read clearly next
    #: to "->": ``other_debtors 'none' -> 'guarantor'``)
    category: bool = False

    def __str__(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        before, after = self.before_text, self.after_text
        if self.category:
            before, after = f"'{before}'", f"'{after}'"
        return f"{self.feature} {before} -> {after}{unit}"


def _differs(feature: Feature, a: Any, b: Any) -> bool:
    a, b = _py(a), _py(b)
    if feature.is_numeric:
        try:
            fa, fb = float(a), float(b)
        except (TypeError, ValueError):
            return str(a) != str(b)
        return abs(fa - fb) > _NUM_TOL * max(1.0, abs(fa), abs(fb))
    return bool(a != b)


def changes(
    schema: Schema, x: pd.Series | Mapping[str, Any], cf: pd.Series | Mapping[str, Any]
) -> list[Change]:
    """The features whose value differs between query ``x`` and counterfactual
    ``cf``, in schema order.

    Numeric values are compared as numbers (``96`` and ``96.0`` are equal;
    differences below 1e-9 relative are noise), categories by value.  When a
    change is smaller than the feature's resolution (both values would print
    the same), both values are printed with more digits, so no rendering ever
    shows ``a -> a``.
    """
    out: list[Change] = []
    for f in schema:
        a, b = _py(x[f.name]), _py(cf[f.name])
        if not _differs(f, a, b):
            continue
        ta, tb = format_value(f, a), format_value(f, b)
        if ta == tb and f.is_numeric:
            ta, tb = _precise(a), _precise(b)
        out.append(Change(f.name, a, b, ta, tb, f.unit, not f.is_numeric))
    return out


def describe_changes(items: Iterable[Change], *, empty: str = "no change") -> str:
    """``"duration_months 24 -> 12; purpose 'car' -> 'radio'"`` (``empty`` when there are
    none)."""
    parts = [str(c) for c in items]
    return "; ".join(parts) if parts else empty


def timed_changes(items: Iterable[Change], moved: Collection[str], months: int | None) -> str:
    """One answer's changes said with its elapsed time (``months``, None without a
    timeline): ``"in 8 months, if savings ... (then age 26 -> 27 years)"``, or ``"no
    change needed: wait 12 months (then ...)"`` when only the features time moves
    (``moved``) change; as :func:`describe_changes` at 0 months or without a timeline."""
    items = list(items)
    if not months:
        return describe_changes(items)
    span = "1 month" if months == 1 else f"{months} months"
    acts = [c for c in items if c.feature not in moved]
    aged = [c for c in items if c.feature in moved]
    then = f" (then {describe_changes(aged)})" if aged else ""
    if not acts:
        return f"no change needed: wait {span}{then}"
    return f"in {span}, if {describe_changes(acts)}{then}"


def diagnostic_number(diagnostics: Mapping[str, Any], key: str) -> float | None:
    """``diagnostics[key]`` as a finite float, or None when missing or not a number."""
    v = diagnostics.get(key)
    try:
        f = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def certificate_text(
    name: str,
    status: str,
    diagnostics: Mapping[str, Any] | None = None,
    *,
    proves_infeasibility: bool = False,
) -> str:
    """The guarantee behind a query's answer, in plain words, from its status alone.

    Each method class words its own guarantee (``CounterfactualMethod.certificate``,
    which adds what only it can prove, such as MACE's bounds) and falls back on
    this text, which holds for any method.

    Parameters
    ----------
    name : str
        The method's name as people see it (``"MACE"``).
    status : str
        The query's status (see :data:`counterfact.result.STATUSES`).
    diagnostics : mapping, optional
        The query's diagnostics (the ``reason`` of a non-success).
    proves_infeasibility : bool
        Whether the method's ``infeasible`` is a proof (a solver's refutation).

    Examples
    --------
    >>> certificate_text("MACE", "infeasible", {}, proves_infeasibility=True)
    'MACE: proven: no counterfactual exists under these constraints'
    >>> certificate_text("UFCE", "feasible", {})
    'UFCE: found by search; valid (checked with the model), not proven nearest'
    """
    d = dict(diagnostics or {})
    reason = d.get("reason")
    reason = None if _is_missing(reason) or reason == "" else str(reason)
    if status == "invalid":
        text = "not explained: " + (reason or "the row's own constraints contradict each other")
    elif status == "infeasible" and proves_infeasibility:
        text = "proven: no counterfactual exists under these constraints"
    elif status == "infeasible":
        text = (
            f"no counterfactual: {reason}"
            if reason
            else "no counterfactual exists under these constraints"
        )
    elif status == "timeout":
        text = "time limit reached before a counterfactual was found (not a proof that none exists)"
    elif (
        status == "failed"
        and reason is not None
        and reason.startswith("query already predicted as")
    ):
        text = "nothing to explain: the model already predicts the target class for this row"
    elif status == "failed":
        text = f"{reason or 'no counterfactual found'} (not a proof that none exists)"
    elif status == "optimal":
        text = "proven optimal"
    else:
        text = "found by search; valid (checked with the model), not proven nearest"
    return f"{name or 'method'}: {text}"


# ------------------------------------------------------------------ the measure
#: per named measure (:data:`counterfact.constraints._costs.MEASURES`), what an answer that
#: is smaller has: "no answer with fewer changes or smaller moves"
_LESSER = {
    "effort": "fewer changes or smaller moves",
    "fewest-changes": "fewer changes",
    "smallest-moves": "smaller moves",
    "range-l1": "smaller moves",
}


@dataclass(frozen=True)
class MeasureWords:
    """What "smaller" meant for a result's answers, in words.

    Attributes
    ----------
    lesser : str
        What a smaller answer has: ``"fewer changes or smaller moves"``, ``"a lower
        cost"`` (the user's costs), ``"a smaller range-normalised distance"`` (a
        method's own objective).
    counting : str
        How the value is counted (``"1 per changed feature plus each move in MADs
        (...)"``; "" when there is nothing more to say).
    """

    lesser: str
    counting: str

    def __str__(self) -> str:
        return f"{self.lesser}, counting {self.counting}" if self.counting else self.lesser


def measure_words(costs: Any, own: str = "") -> MeasureWords:
    """The words of a result's measure: ``costs`` (a :class:`~counterfact.Costs`, or None
    when each method kept its own objective, ``own`` naming it when known)."""
    if costs is None:
        what = f"{own} (the method's own objective)" if own else "value of the method's objective"
        return MeasureWords(f"a smaller {what}", "")
    words = costs.words()
    name = costs.preset_name
    if name is None:
        return MeasureWords("a lower cost", words)
    head, _, detail = words.partition(": ")
    return MeasureWords(_LESSER.get(name, head), detail or words)


def _percent(x: float) -> str:
    return f"{100 * x:.2g} %"


def _margin_words(record: Any) -> str:
    """The answers a proof leaves out, in words, when a solver's tolerance leaves out those
    nearest the decision (``margin_tolerance < 0``); nothing when it covers every answer."""
    tol = getattr(record, "margin_tolerance", None)
    if tol is None or tol >= 0:
        return ""
    threshold = getattr(record, "threshold", None)
    scale = getattr(record, "margin_scale", "") or ""
    on = f" on the {scale}" if scale else ""  # the margin is on the model's score, said so
    if threshold is None:
        return f", among answers the model accepts by a margin of more than {-tol:g}{on}"
    return (
        f", among answers that pass the required probability {threshold:g} by a margin of "
        f"more than {-tol:g}{on}"
    )


def plain_certificate(
    name: str,
    status: str,
    measure: MeasureWords,
    record: Any = None,
    sentence: str = "",
    reason: str | None = None,
) -> str:
    """A query's certificate for a lay reader: what was proven or found, naming the
    measure in words (what a smaller answer has; ``str(measure)`` says how it counts),
    with no raw values or bounds (those stay in the certificate's fields and the
    result's JSON).

    Parameters
    ----------
    name : str
        The method's name as people see it.
    status : str
        The query's status.
    measure : MeasureWords
        What "smaller" meant (:func:`measure_words`).
    record : Certificate, optional
        The certificate's fields (a proven lower bound makes ``optimal`` a proof).
    sentence : str
        The method's own sentence, said instead where a success is neither proven nor a
        plain search (for example the nearest observed row); for a status without an
        answer it tells whether ``infeasible`` is a proof.
    reason : str, optional
        Why a query has no answer.

    Examples
    --------
    >>> m = MeasureWords("fewer changes or smaller moves", "1 per changed feature")
    >>> plain_certificate("UFCE", "feasible", m)
    'UFCE: found by search and checked with the model; not proven: an answer with fewer \
changes or smaller moves may exist'
    """
    bound = None if record is None else getattr(record, "lower_bound", None)
    if status == "optimal" and bound is not None:
        tol = getattr(record, "rel_gap", None)
        within = f" (to within {_percent(tol)})" if tol else ""
        return f"{name}: proven: no answer with {measure.lesser}{within}{_margin_words(record)}"
    if status == "feasible" or (status == "optimal" and not sentence):
        gap = getattr(record, "proven_gap", None) if bound is not None else None
        most = (
            f" (its cost at most {_percent(gap)} lower{_margin_words(record)})"
            if gap is not None and gap < 1
            else ""
        )
        return (
            f"{name}: found by search and checked with the model; not proven: an answer with "
            f"{measure.lesser} may exist{most}"
        )
    if status == "optimal":
        return f"{sentence}; smaller meaning {measure.lesser}"
    proven = sentence.partition(": ")[2].startswith("proven")
    said = certificate_text(name, status, {"reason": reason}, proves_infeasibility=proven)
    # what the method's own sentence adds after the same words (the nearest observed row:
    # which fixed values rule out every row of the target class) is kept
    return sentence if sentence.startswith(said) else said
