"""A certified recourse region: :class:`Region`, a box of counterfactuals instead of a point.

"Raise income to 41,213" is brittle advice; "income at least 41,200 and duration
at most 24 months -- any such combination works" is what a person can plan
with.  A region keeps the features a counterfactual leaves unchanged at the
query's values and gives each changed feature a range (numeric) or a set of
values (categorical, ordinal); every point of the box reaches the target, with
the margin and in every model the explanation was asked to hold for.

A numeric value belongs to the region when it lies in its range widened by
:data:`SLACK` (relative) on each side, or within :data:`SLACK` of a fixed
value: the round-off of a value written out and read back in.  The proof
behind a certified region covers that widened box, every float64 value of
it, so :meth:`Region.contains` says True only where the proof holds.  A bound
at the edge of what the feature may take (its domain, the user's range, its
direction) is widened only by the constraint checker's tolerance
(:data:`DOMAIN_TOL`), so that every row the region contains is also an answer.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._utils._values import _py
from ..schema import Schema
from ..schema._format import format_value

__all__ = ["SLACK", "Region"]

#: relative slack with which a numeric value at a bound (or at a fixed value) is inside
SLACK = 1e-9
#: how far past the range a changed feature was allowed to take a value may lie and still
#: be inside: the absolute tolerance with which ``cf.violations`` checks domains and ranges
DOMAIN_TOL = 1e-9


@dataclass(frozen=True)
class Region:
    """A box around a counterfactual in which every point reaches the target.

    Attributes
    ----------
    bounds : dict
        Per changed feature: ``(low, high)`` for a numeric one (on its grid), or the
        frozenset of allowed values for a categorical or ordinal one.
    fixed : dict
        The query's values of the other features (they stay as they are).
    certified : bool
        True only when a solver proved, for the compiled models, that no point of
        the box fails (with the margin and every ``robust_to`` model), and the real
        models then accepted every corner and sampled point of it; False when the
        box was only checked on samples (a model the compiler does not support),
        or when the real models rejected a checked point (``how`` says so).
    how : str
        How it was established ("proven by interval bounds and a MILP over the box", ...).
    n_checked : int
        Points inside the box (corners aside) checked with the real models.
    domain : dict
        Per numeric changed feature, the range it was allowed to take (the query's
        constraints within the schema's domain): how :meth:`describe` words a bound.
    corners : int
        Corners of the box checked with the real models (all of them up to
        4,096; a seeded sample of that many beyond).
    check_seconds : float
        Seconds the check with the real models took.
    """

    bounds: Mapping[str, Any]
    fixed: Mapping[str, Any]
    certified: bool
    how: str
    n_checked: int = 0
    domain: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    corners: int = 0
    check_seconds: float = 0.0

    @staticmethod
    def accepts(low: float, high: float) -> tuple[float, float]:
        """The values :meth:`contains` accepts for a numeric range ``[low, high]`` (a
        fixed value: ``low == high``): the range widened by :data:`SLACK`."""
        lo, hi = float(low), float(high)
        return lo - SLACK * max(1.0, abs(lo)), hi + SLACK * max(1.0, abs(hi))

    def contains(self, X: pd.DataFrame | pd.Series) -> np.ndarray:
        """Whether each row of ``X`` lies in the region (changed features in their
        range or set, the others at the query's values; numeric values up to
        :data:`SLACK`, as the proof covers)."""
        frame = X.to_frame().T if isinstance(X, pd.Series) else X
        ok = np.ones(len(frame), dtype=bool)
        for name, b in self.bounds.items():
            col = frame[name]
            if isinstance(b, frozenset):
                ok &= np.array([_py(v) in b for v in col.tolist()], dtype=bool)
            else:
                ok &= _within(col, *self._accepted(name, b))
        for name, value in self.fixed.items():
            col = frame[name]
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                ok &= _within(col, *self.accepts(value, value))
            else:
                ok &= np.array([_py(c) == value for c in col.tolist()], dtype=bool)
        return ok

    def _accepted(self, name: str, b: tuple[float, float]) -> tuple[float, float]:
        """What :meth:`contains` accepts for a changed numeric feature: its range widened
        by :data:`SLACK`, but never past the range it was allowed to take (``domain``)
        by more than the constraint checker's own tolerance (:data:`DOMAIN_TOL`)."""
        lo, hi = self.accepts(b[0], b[1])
        if name in self.domain:
            dlo, dhi = self.domain[name]
            lo, hi = max(lo, float(dlo) - DOMAIN_TOL), min(hi, float(dhi) + DOMAIN_TOL)
        return lo, hi

    def mismatch(self, schema: Schema, query: pd.Series, answer: pd.Series) -> str | None:
        """Why this region cannot stand around ``answer`` for ``query`` (None when it can):
        a feature with no value, an empty or reversed range, a category the feature lacks,
        a held feature off the query's value, or the answer outside the box."""
        missing = [n for n in schema.names if n not in self.bounds and n not in self.fixed]
        if missing:
            return f"it gives no range and no value for {missing}"
        for name, b in self.bounds.items():
            bad = _bad_bound(schema[name], b)
            if bad:
                return f"{name}: {bad}"
        for name, value in self.fixed.items():
            if name not in schema.names or not self._same(value, query[name]):
                held = _py(query[name]) if name in schema.names else "no such feature"
                return f"it holds {name} at {_py(value)!r}, but the query has {held!r}"
        if not bool(self.contains(answer)[0]):
            return "the counterfactual it surrounds lies outside it"
        return None

    def _same(self, held: Any, value: Any) -> bool:
        """Whether a held value is the query's (numbers up to :data:`SLACK`)."""
        if isinstance(held, (int, float)) and not isinstance(held, bool):
            lo, hi = self.accepts(held, held)
            try:
                return lo <= float(value) <= hi
            except (TypeError, ValueError):
                return False
        return bool(_py(value) == held)

    def describe(self, schema: Schema) -> str:
        """The region in words: ``credit_amount at most 2400 and duration_months at most 24``."""
        parts = []
        for name, b in self.bounds.items():
            f = schema[name]
            if isinstance(b, frozenset):
                vals = [v for v in (f.categories or sorted(b)) if v in b]
                parts.append(
                    f"{name} {vals[0]}"
                    if len(vals) == 1
                    else f"{name} one of {', '.join(map(str, vals))}"
                )
                continue
            lo, hi = float(b[0]), float(b[1])
            dlo, dhi = self.domain.get(name, (-math.inf, math.inf))
            if lo <= dlo and hi < dhi:
                parts.append(f"{name} at most {format_value(f, hi, unit=True)}")
            elif hi >= dhi and lo > dlo:
                parts.append(f"{name} at least {format_value(f, lo, unit=True)}")
            elif lo == hi:
                parts.append(f"{name} {format_value(f, lo, unit=True)}")
            else:
                parts.append(
                    f"{name} between {format_value(f, lo, unit=True)} and "
                    f"{format_value(f, hi, unit=True)}"
                )
        text = " and ".join(parts) if parts else "no change"
        return text + self._checked_words()

    def _checked_words(self) -> str:
        """How far the region was checked, when it is not proven: on sampled points, or
        (no sample) only at the counterfactual itself."""
        if self.certified:
            return ""
        if self.n_checked <= 1 and self.is_point():
            return " (only the counterfactual itself, checked with the real model; not proven)"
        return f" (checked on {self.n_checked} samples, not proven)"

    def is_point(self) -> bool:
        """Whether the box holds only its counterfactual (every range a value, every set
        one value)."""
        return all(
            len(b) == 1 if isinstance(b, frozenset) else b[0] == b[1] for b in self.bounds.values()
        )

    def sentence(self, schema: Schema) -> str:
        """The region as an option a person can plan with: ``"any duration months up
        to 33 months with credit amount between 1,292 and 3,773 DM"`` (the features
        it changes, each bound at the edge of what the query's constraints allow left
        out; the features it keeps stay as they are).  Numbers at the feature's
        resolution, thousands grouped, with the feature's unit."""
        parts = [_phrase(schema[name], b, self.domain.get(name)) for name, b in self.bounds.items()]
        if not parts:
            text = "no change"
        elif len(parts) == 1:
            text = f"any {parts[0]}"
        else:
            rest = ", ".join(parts[1:-1])
            text = f"any {parts[0]} with {rest + ' and ' if rest else ''}{parts[-1]}"
        return text + self._checked_words()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (sets as sorted lists)."""

        def out(b: Any) -> Any:
            return (
                {"values": sorted(b, key=str)}
                if isinstance(b, frozenset)
                else [float(b[0]), float(b[1])]
            )

        return {
            "bounds": {k: out(b) for k, b in self.bounds.items()},
            "fixed": {k: _py(v) for k, v in self.fixed.items()},
            "certified": bool(self.certified),
            "how": self.how,
            "n_checked": int(self.n_checked),
            "domain": {k: [float(a), float(b)] for k, (a, b) in self.domain.items()},
            "corners": int(self.corners),
            "check_seconds": float(self.check_seconds),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Region:
        def back(b: Any) -> Any:
            return frozenset(b["values"]) if isinstance(b, Mapping) else (float(b[0]), float(b[1]))

        return cls(
            bounds={k: back(b) for k, b in dict(d["bounds"]).items()},
            fixed=dict(d["fixed"]),
            certified=bool(d["certified"]),
            how=str(d["how"]),
            n_checked=int(d.get("n_checked", 0)),
            domain={k: (float(a), float(b)) for k, (a, b) in dict(d.get("domain", {})).items()},
            corners=int(d.get("corners", 0)),
            check_seconds=float(d.get("check_seconds", 0.0)),
        )


def _bad_bound(feature: Any, bound: Any) -> str | None:
    """What is wrong with one feature's range or set of a region (None when nothing)."""
    if isinstance(bound, frozenset):
        if not bound:
            return "an empty set of values"
        unknown = sorted(map(str, bound - set(feature.categories or bound)))
        return f"values {unknown} the feature does not have" if unknown else None
    low, high = bound
    if not (math.isfinite(low) and math.isfinite(high)):
        return f"a range with an end that is not a finite number ({low}, {high})"
    return f"a reversed range [{low:g}, {high:g}]" if low > high else None


def _within(col: pd.Series, lo: float, hi: float) -> np.ndarray:
    """Whether each value of ``col`` is a number in ``[lo, hi]``."""
    v = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
    return (v >= lo) & (v <= hi)


def _phrase(f: Any, b: Any, domain: tuple[float, float] | None) -> str:
    """One changed feature's part of :meth:`Region.sentence`."""
    name = f.name.replace("_", " ")
    if isinstance(b, frozenset):
        vals = [v for v in (f.categories or sorted(b, key=str)) if v in b]
        shown = ", ".join(f"'{v}'" for v in vals[:-1])
        return f"{name} '{vals[0]}'" if len(vals) == 1 else f"{name} {shown} or '{vals[-1]}'"
    lo, hi = float(b[0]), float(b[1])
    dlo, dhi = domain if domain is not None else (-math.inf, math.inf)
    if lo == hi:
        return f"{name} of {_number(f, lo)}"
    if lo <= dlo and hi < dhi:
        return f"{name} up to {_number(f, hi)}"
    if hi >= dhi and lo > dlo:
        return f"{name} from {_number(f, lo)}"
    return f"{name} between {_number(f, lo, unit=False)} and {_number(f, hi)}"


def _number(f: Any, value: float, *, unit: bool = True) -> str:
    """A value at the feature's resolution with its thousands grouped (``1,292 DM``)."""
    text = format_value(f, value)
    sign, digits = ("-", text[1:]) if text.startswith("-") else ("", text)
    whole, dot, frac = digits.partition(".")
    if whole.isdigit() and len(whole) > 3:
        text = f"{sign}{int(whole):,}{dot}{frac}"
    return f"{text} {f.unit}" if unit and f.unit else text
