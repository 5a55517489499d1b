"""Feature kinds and actionabilities, and the Feature class."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

from .._utils._values import _py
from ..exceptions import SchemaError, ValidationError
from ._resolution import snap_array
from ._time import check_time_fields

Kind = Literal["real", "integer", "binary", "categorical", "ordinal"]
Actionability = Literal["free", "immutable", "increasing", "decreasing", "time"]

KINDS: tuple[str, ...] = ("real", "integer", "binary", "categorical", "ordinal")
ACTIONABILITY: tuple[str, ...] = ("free", "immutable", "increasing", "decreasing", "time")
NUMERIC_KINDS = frozenset({"real", "integer"})
DISCRETE_KINDS = frozenset({"binary", "categorical", "ordinal"})


@dataclass(frozen=True)
class Feature:
    """One input feature.

    Parameters
    ----------
    name : str
        Column name in the user's DataFrame.
    kind : {"real", "integer", "binary", "categorical", "ordinal"}
        Data type.  ``binary`` is a categorical feature with exactly two values.
    lower, upper : float, optional
        Numeric domain (inclusive), required for real and integer features.
    categories : tuple, optional
        The values a binary, categorical or ordinal feature takes; for ordinal
        features the order is the order of the levels (lowest first).
    actionability : {"free", "immutable", "increasing", "decreasing", "time"}
        What a counterfactual may do with the feature.  ``increasing`` and
        ``decreasing`` need an order: numeric or ordinal features only.
        ``time``: only the passing of time changes it (age, years at an
        address); it advances by ``per_month`` per month of a
        :class:`~counterfact.Timeline` and is immutable without one.
    description : str, optional
        Human-readable description (used in reports).
    resolution : float, optional
        The step of a numeric feature's grid: counterfactual values are
        multiples of it (grid anchored at 0) and are shown with its decimals.
        Integer features default to 1 (a larger integer step such as 100 is
        allowed).  Real features left at None get it inferred from the data
        by :meth:`Schema.infer` and :class:`~counterfact.Dataset`: the coarsest
        power-of-ten step, between 1e-6 and 1, on whose grid every observed
        value lies (values 1330, 2.5, 0.25 give 0.01).  Discrete features have
        none.
    unit : str, optional
        The unit a person reads the value in (``"months"``, ``"DM"``,
        ``"hours per week"``): shown after the value in notices, reasons,
        regions, the command line and the page.  Numeric features only.
    per_month : float, optional
        For a ``time`` feature: how much it advances per month, in its unit
        (age in years: ``1/12``).  A numeric one is pinned to its value plus
        the elapsed months' advance, rounded down on its grid.
    edges : tuple of float, optional
        For an ordinal ``time`` feature (a band such as "1 to 4 years"): the
        upper edge of each level in the unit ``per_month`` counts in (the last
        may be ``inf``), optionally preceded by the lowest level's lower edge
        (one value more).  The exact tenure inside a band is unknown, so after
        ``t`` months an answer may assume at most the level its *lower* edge
        plus ``per_month * t`` certainly reaches (the lowest level, without a
        lower edge, reaches none), never less than today's.
    top_coded : bool
        For a numeric ``time`` feature: its upper bound is an open-ended top
        level (German Credit's ``residence_since`` 4 reads "4 years or more"),
        so time advances it to at most that bound.  Not top-coded (the
        default), it may pass the largest value seen (age past the oldest).
    """

    name: str
    kind: Kind
    lower: float | None = None
    upper: float | None = None
    categories: tuple[Any, ...] | None = None
    actionability: Actionability = "free"
    description: str = ""
    resolution: float | None = None
    unit: str = ""
    per_month: float | None = None
    edges: tuple[float, ...] | None = None
    top_coded: bool = False

    def __post_init__(self) -> None:
        self._check_labels()
        check_time_fields(self)
        if self.kind in NUMERIC_KINDS:
            self._normalise_numeric()
        else:
            self._normalise_categories()
        if self.actionability in ("increasing", "decreasing") and self.kind in (
            "binary",
            "categorical",
        ):
            raise SchemaError(
                f"Feature '{self.name}' is {self.kind} (unordered); it cannot be "
                f"'{self.actionability}'. Make it ordinal, or use 'free'/'immutable'."
            )

    def _check_labels(self) -> None:
        """The name, kind, unit and actionability are valid."""
        if not isinstance(self.name, str) or not self.name:
            raise SchemaError(f"Feature names must be non-empty strings. Got {self.name!r}.")
        if self.kind not in KINDS:
            raise SchemaError(
                f"Feature '{self.name}': kind must be one of {list(KINDS)}. Got {self.kind!r}."
            )
        if not isinstance(self.unit, str):
            raise SchemaError(
                f"Feature '{self.name}': unit must be a string such as 'months'. Got {self.unit!r}."
            )
        if self.unit and self.kind not in NUMERIC_KINDS:
            raise SchemaError(
                f"Feature '{self.name}' is {self.kind}; only real and integer features take a unit "
                f"(its categories name themselves). Got unit={self.unit!r}."
            )
        if self.actionability not in ACTIONABILITY:
            raise SchemaError(
                f"Feature '{self.name}': actionability must be one of {list(ACTIONABILITY)}. "
                f"Got {self.actionability!r}."
            )

    def _normalise_numeric(self) -> None:
        """Bounds checked and stored as floats (integers: rounded inwards), resolution checked."""
        if self.lower is None or self.upper is None:
            raise SchemaError(
                f"Feature '{self.name}' ({self.kind}) needs numeric bounds lower and upper."
            )
        lo, hi = float(self.lower), float(self.upper)
        if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
            raise SchemaError(
                f"Feature '{self.name}': bounds must be finite with lower <= upper. "
                f"Got lower={self.lower!r}, upper={self.upper!r}."
            )
        if self.kind == "integer":
            lo, hi = float(math.ceil(lo)), float(math.floor(hi))
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)
        if self.categories is not None:
            raise SchemaError(f"Feature '{self.name}' is numeric and takes no categories.")
        object.__setattr__(self, "resolution", self._checked_resolution())

    def _normalise_categories(self) -> None:
        """Categories checked and stored as a tuple of plain Python values; no bounds."""
        if self.resolution is not None:
            raise SchemaError(
                f"Feature '{self.name}' is {self.kind}; only real and integer features "
                f"take a resolution. Got resolution={self.resolution!r}."
            )
        if self.categories is None or len(self.categories) == 0:
            raise SchemaError(f"Feature '{self.name}' ({self.kind}) needs its categories.")
        cats = tuple(_py(c) for c in self.categories)
        if len(set(cats)) != len(cats):
            raise SchemaError(f"Feature '{self.name}': categories must be distinct. Got {cats}.")
        if self.kind == "binary" and len(cats) != 2:
            raise SchemaError(
                f"Feature '{self.name}' is binary and needs exactly 2 categories. Got {cats}."
            )
        object.__setattr__(self, "categories", cats)
        object.__setattr__(self, "lower", None)
        object.__setattr__(self, "upper", None)

    def _checked_resolution(self) -> float | None:
        res = self.resolution
        if res is None:
            return 1.0 if self.kind == "integer" else None
        try:
            r = float(res)
        except (TypeError, ValueError):
            r = math.nan
        if isinstance(res, bool) or not math.isfinite(r) or r <= 0:
            raise SchemaError(
                f"Feature '{self.name}': resolution must be a positive finite number "
                f"(or None to infer it). Got {res!r}."
            )
        if self.kind == "integer" and abs(r - round(r)) > 1e-9:
            raise SchemaError(
                f"Feature '{self.name}' is integer; its resolution must be a whole number "
                f"such as 1 or 100. Got {res!r}; make the feature real for a finer step."
            )
        return r

    # ------------------------------------------------------------------ kinds
    @property
    def is_numeric(self) -> bool:
        """Real or integer."""
        return self.kind in NUMERIC_KINDS

    @property
    def is_categorical(self) -> bool:
        """Binary or categorical (unordered, one-hot in vector space)."""
        return self.kind in ("binary", "categorical")

    @property
    def is_ordered(self) -> bool:
        """Numeric or ordinal (has a direction)."""
        return self.kind != "binary" and self.kind != "categorical"

    @property
    def range(self) -> float:
        """Width of the domain: ``upper - lower`` for numeric features, the number of
        levels minus one for ordinal ones, 1 for categorical ones.  Zero widths
        are returned as 1 so that range-normalised distances stay finite."""
        if self.is_numeric:
            width = float(self.upper) - float(self.lower)  # type: ignore[arg-type]
        elif self.kind == "ordinal":
            width = float(len(self.categories) - 1)  # type: ignore[arg-type]
        else:
            width = 1.0
        return width if width > 0 else 1.0

    def rank(self, value: Any) -> int:
        """Position of a category (ordinal rank)."""
        try:
            return self.categories.index(_py(value))  # type: ignore[union-attr]
        except (ValueError, AttributeError):
            raise ValidationError(
                f"Feature '{self.name}': value {value!r} is not one of its categories "
                f"{list(self.categories or ())}."
            ) from None

    def contains(self, value: Any, *, tol: float = 1e-9) -> bool:
        """Whether ``value`` lies in the feature's domain (integers must be integral)."""
        value = _py(value)
        if self.is_numeric:
            try:
                v = float(value)
            except (TypeError, ValueError):
                return False
            if not math.isfinite(v):
                return False
            if v < float(self.lower) - tol or v > float(self.upper) + tol:  # type: ignore[arg-type]
                return False
            return not (self.kind == "integer" and abs(v - round(v)) > tol)
        return value in self.categories  # type: ignore[operator]

    def snap(self, value: Any, toward: Any = None, *, away: bool = False) -> Any:
        """The grid value of ``value`` at this feature's resolution, inside its domain.

        Numeric features: the nearest multiple of :attr:`resolution` within
        ``[lower, upper]`` (a float for real features, an int for integer
        ones).  With ``toward`` (a reference, typically the query's value), a
        value above the reference is rounded down and one below it up, so the
        change from the reference never grows; ``away=True`` rounds the other
        way, so the change never shrinks (a value that just crossed a decision
        boundary stays across it).  A real feature without a resolution is only
        clipped to its domain.  Discrete features return the value unchanged
        (checked against the categories).
        """
        value = _py(value)
        if not self.is_numeric:
            self.rank(value)  # raises ValidationError when not a category
            return value
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise ValidationError(
                f"Feature '{self.name}': cannot snap non-numeric value {value!r}."
            ) from None
        lo, hi = float(self.lower), float(self.upper)  # type: ignore[arg-type]
        if self.resolution is None:
            return min(max(v, lo), hi)

        ref = None if toward is None else np.array([float(_py(toward))])
        out = float(snap_array(np.array([v]), self.resolution, lo, hi, toward=ref, away=away)[0])
        return round(out) if self.kind == "integer" else out

    def with_(self, **changes: Any) -> Feature:
        """A copy with some fields changed (``feature.with_(actionability="immutable")``).

        Changing the kind drops the resolution unless one is given (it is
        re-inferred or defaulted for the new kind); an actionability other than
        ``"time"`` drops ``per_month``, ``edges`` and ``top_coded`` unless they are given."""
        if "kind" in changes and changes["kind"] != self.kind and "resolution" not in changes:
            changes["resolution"] = None
        if changes.get("actionability", "time") != "time":
            changes.setdefault("per_month", None)
            changes.setdefault("edges", None)
            changes.setdefault("top_coded", False)
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly description."""
        out: dict[str, Any] = {"name": self.name, "kind": self.kind}
        if self.is_numeric:
            out["lower"], out["upper"] = self.lower, self.upper
        else:
            out["categories"] = list(self.categories)  # type: ignore[arg-type]
        out["actionability"] = self.actionability
        if self.resolution is not None:
            out["resolution"] = self.resolution
        if self.description:
            out["description"] = self.description
        if self.unit:
            out["unit"] = self.unit
        if self.per_month is not None:
            out["per_month"] = self.per_month
        if self.edges is not None:
            out["edges"] = [e if math.isfinite(e) else "inf" for e in self.edges]
        if self.top_coded:
            out["top_coded"] = True
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Feature:
        """Inverse of :meth:`to_dict`."""
        d = dict(d)
        if "categories" in d and d["categories"] is not None:
            d["categories"] = tuple(d["categories"])
        if d.get("edges") is not None:
            d["edges"] = tuple(float(e) for e in d["edges"])
        return cls(**d)
