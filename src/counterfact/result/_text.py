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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from .._utils._values import _is_missing, _py
from ..schema import Feature, Schema
from ..schema._format import format_value

__all__ = ["Change", "certificate_text", "changes", "describe_changes", "diagnostic_number"]

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

    def __str__(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        return f"{self.feature} {self.before_text} -> {self.after_text}{unit}"


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
        out.append(Change(f.name, a, b, ta, tb, f.unit))
    return out


def describe_changes(items: Iterable[Change], *, empty: str = "no change") -> str:
    """``"duration_months 24 -> 12; purpose car -> radio"`` (``empty`` when there are none)."""
    parts = [str(c) for c in items]
    return "; ".join(parts) if parts else empty


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
