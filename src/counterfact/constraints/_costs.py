"""Costs in the user's units: :class:`Costs` and its form bound to a schema, :class:`BoundCosts`.

A counterfactual's cost is a sum over features (a *separable* cost)::

    cost(x') = sum_j c_j(x'_j)

* numeric feature (real, integer)::

      c_j = up_j * max(0, x' - x) + down_j * max(0, x - x') + p_j * |P_j(x') - P_j(x)|

  ``up``/``down``: the cost of one unit of change upward / downward
  (``weights``; one number sets both).  ``P_j``: the *percentile* of a value
  (Ustun, Spangher & Liu, "Actionable Recourse in Linear Classification",
  FAT* 2019): the training data's empirical CDF at up to ``n_knots`` of its
  observed values (its percentiles), rescaled to run from 0 at the lowest
  observed value to 1 at the highest (the rows at the lowest value are no
  move), linearly interpolated between them and flat outside, so ``c_j`` is
  piecewise linear in ``x'``; ``p_j`` (``percentile``) is the cost of moving
  from the lowest observed value to the highest.
* ordinal feature: the same with ranks (one level is one unit; ``P_j`` is the
  share of training rows at or below a level), or an explicit transition cost.
* binary or categorical feature: ``weight`` per change, or an explicit
  transition cost ``transitions[feature][(from, to)]``.

Rules for what is not given, stated once:

* a feature named nowhere costs its **move** on the population's scale
  (``scale="mad"``, the default: ``|x' - x| / MAD``, the median absolute
  deviation of the training data as in Wachter et al. and DiCE; ordinal
  features in ranks; see :func:`counterfact.schema._spread.mad` for the
  fallback where MAD is 0; ``scale="range"``: ``|x' - x| / range``, ordinal
  ``|rank' - rank| / (levels - 1)``), times ``moves``; a category change
  moves one unit (times ``moves``);
* every change of a feature named nowhere is also **counted**: ``per_change``
  (1 by default) is added once for any new value.  Together these make the
  default **measure of effort**: the number of changed features plus the
  MAD-scaled move (numeric and ordinal features' ``|Δ| / MAD``, one per
  category change).  An answer that is at least as good on both counts and
  better on one is therefore always cheaper, so a proven-cheapest answer is
  never beaten on both;
* a feature named in ``weights``, ``transitions`` or ``percentile`` costs what
  they say and is not counted unless ``per_change`` names it (or is one
  number, which counts every feature);
* a transition that ``transitions`` leaves out costs what the feature's
  weight (and percentile) give -- a feature with transitions but no weight
  takes the default move weight above, without the charge per change unless
  ``per_change`` names it -- or is forbidden with ``missing="forbid"``;
* an infinite cost forbids the move: ``inf`` as a transition's cost removes
  that category from the query's allowed values, ``up=inf`` (``down=inf``)
  makes the feature unable to rise (fall).  These become constraints that
  every method honours, never a large number.

Named measures (:data:`MEASURES`, :meth:`Costs.preset`): ``"effort"`` (the
default above), ``"fewest-changes"`` (``moves=0.01``: the count decides, a
move of one MAD weighs a hundredth of a change), ``"smallest-moves"``
(``per_change=0``: MAD-scaled moves alone) and ``"range-l1"`` (``scale="range",
per_change=0``: the range-normalised l1 distance, MACE's eq. (3) l1 without its
``1 / J`` factor).

``unit`` names what one unit of cost means to people and ``unit_scale`` how
many of that unit one unit of cost is (``unit="months of saving",
unit_scale=1``: the weights are already in months); results then say "cost
about 3 months of saving".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from .._utils._values import _py
from ..exceptions import ValidationError
from ..schema import Feature, Schema
from ..schema._spread import mad
from ._bounds import FeatureBounds, QueryBounds
from ._cost_curves import FeatureCost

__all__ = ["MEASURES", "BoundCosts", "Costs", "FeatureCost"]

MISSING_RULES = ("weight", "forbid")
#: the population scales a move of a feature named nowhere is measured on
SCALES = ("mad", "range")


def _cost_number(value: Any, what: str, *, allow_inf: bool = True) -> float:
    """A non-negative cost (``inf`` allowed: a forbidden move), or a ValidationError
    naming ``what``."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValidationError(
            f"{what} must be a number >= 0. Got {value!r} ({type(value).__name__})."
        )
    v = float(value)
    if math.isnan(v) or v < 0 or (not allow_inf and math.isinf(v)):
        kind = "a finite number >= 0" if not allow_inf else "a number >= 0 (inf forbids the move)"
        raise ValidationError(
            f"{what} must be {kind}. Got {value!r}; costs cannot be negative or NaN."
        )
    return v


def _weight(name: str, value: Any) -> tuple[float, float]:
    """``(up, down)`` of one entry of ``weights``."""
    if isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise ValidationError(
                f"Costs.weights[{name!r}] must be one number or a pair (up, down). Got {value!r}."
            )
        return (
            _cost_number(value[0], f"Costs.weights[{name!r}] (up)"),
            _cost_number(value[1], f"Costs.weights[{name!r}] (down)"),
        )
    w = _cost_number(value, f"Costs.weights[{name!r}]")
    return w, w


def _transition_table(name: str, value: Any) -> dict[tuple[Any, Any], float]:
    """``{(from, to): cost}`` from a mapping or a matrix (DataFrame: rows from,
    columns to; NaN: not given)."""
    out: dict[tuple[Any, Any], float] = {}
    if isinstance(value, pd.DataFrame):
        for a in value.index:
            for b in value.columns:
                c = value.loc[a, b]
                if isinstance(c, float) and math.isnan(c):
                    continue
                out[(_py(a), _py(b))] = _cost_number(
                    c, f"Costs.transitions[{name!r}][{a!r}, {b!r}]"
                )
        return out
    if not isinstance(value, Mapping):
        raise ValidationError(
            f"Costs.transitions[{name!r}] must be a mapping {{(from, to): cost}} or a DataFrame "
            f"(rows: from, columns: to). Got {type(value).__name__}."
        )
    for k, c in value.items():
        if not isinstance(k, tuple) or len(k) != 2:
            raise ValidationError(
                f"Costs.transitions[{name!r}] keys must be pairs (from, to). Got {k!r}."
            )
        out[(_py(k[0]), _py(k[1]))] = _cost_number(c, f"Costs.transitions[{name!r}][{k!r}]")
    return out


class Costs:
    """Per-feature costs of a change, in the user's units (see the module docstring).

    Parameters
    ----------
    weights : mapping str -> float or (float, float), optional
        Cost of one unit of change of a numeric feature (one level of an
        ordinal one); a pair ``(up, down)`` sets each direction.  For a binary
        or categorical feature: the cost of any change.  ``inf`` forbids the
        move (``(inf, 2.0)``: the feature may only go down).
    transitions : mapping str -> mapping or DataFrame, optional
        Per binary, categorical or ordinal feature, ``{(from, to): cost}`` or a
        matrix (rows: from, columns: to; NaN: not given).  ``inf`` forbids the
        transition.
    percentile : mapping str -> float, or iterable of str, optional
        Percentile shift: ``p * |P(x') - P(x)|``, with ``P`` the training
        data's empirical CDF (a name alone: ``p = 1``).
    per_change : float or mapping str -> float, optional
        A fixed charge for any change of a feature, added to its move.  One
        number charges every feature; a mapping the features it names.  Not
        given: 1 for every feature named nowhere else, 0 for the features
        ``weights``, ``transitions`` or ``percentile`` name.
    scale : {"mad", "range"}
        The unit of a move of a feature named nowhere: its median absolute
        deviation in the training data (``"mad"``) or its range (``"range"``).
    moves : float
        A multiplier of the moves of features named nowhere (``0.01``: a move of
        one MAD weighs a hundredth of a change).
    missing : {"weight", "forbid"}
        What a transition left out of ``transitions`` costs: the feature's
        weight (``"weight"``), or it is forbidden (``"forbid"``).
    unit : str, optional
        What one unit of cost means (``"months of saving"``); needs ``unit_scale``.
    unit_scale : float, optional
        How many ``unit`` one unit of cost is (1 when the weights are in ``unit``).
    n_knots : int
        At most this many knots of each percentile curve (its percentiles).

    Examples
    --------
    >>> costs = Costs(weights={"loan_amount": (1.0, 1 / 300)}, percentile={"income": 24},
    ...               transitions={"savings": {("<100", ">=1000"): float("inf")}},
    ...               unit="months of saving", unit_scale=1.0)
    """

    def __init__(
        self,
        weights: Mapping[str, Any] | None = None,
        *,
        transitions: Mapping[str, Any] | None = None,
        percentile: Mapping[str, Any] | Iterable[str] | None = None,
        per_change: float | Mapping[str, Any] | None = None,
        scale: str = "mad",
        moves: float = 1.0,
        missing: str = "weight",
        unit: str | None = None,
        unit_scale: float | None = None,
        n_knots: int = 101,
    ) -> None:
        self.weights = {str(k): _weight(str(k), v) for k, v in _mapping(weights, "weights").items()}
        self.transitions = {
            str(k): _transition_table(str(k), v)
            for k, v in _mapping(transitions, "transitions").items()
        }
        self.percentile = _percentile(percentile)
        self.per_change = _per_change(per_change)
        if scale not in SCALES:
            raise ValidationError(f"Costs.scale must be one of {list(SCALES)}. Got {scale!r}.")
        self.scale = scale
        self.moves = _cost_number(moves, "Costs.moves", allow_inf=False)
        if missing not in MISSING_RULES:
            raise ValidationError(
                f"Costs.missing must be one of {list(MISSING_RULES)}. Got {missing!r}."
            )
        self.missing = missing
        self.unit, self.unit_scale = _unit(unit, unit_scale)
        if isinstance(n_knots, bool) or not isinstance(n_knots, (int, np.integer)) or n_knots < 2:
            raise ValidationError(f"Costs.n_knots must be an int >= 2. Got {n_knots!r}.")
        self.n_knots = int(n_knots)

    def __repr__(self) -> str:
        parts = []
        for k in ("weights", "transitions", "percentile"):
            if getattr(self, k):
                parts.append(f"{k}={getattr(self, k)!r}")
        if self.per_change is not None:
            parts.append(f"per_change={self.per_change!r}")
        if self.scale != "mad" or self.moves != 1.0:
            parts.append(f"scale={self.scale!r}, moves={self.moves!r}")
        if self.unit is not None:
            parts.append(f"unit={self.unit!r}, unit_scale={self.unit_scale!r}")
        return f"Costs({', '.join(parts)})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Costs) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(repr(self))

    @property
    def named(self) -> set[str]:
        """Every feature this object names."""
        return set(self.weights) | set(self.transitions) | set(self.percentile)

    def charge(self, name: str) -> float:
        """The fixed charge for any change of feature ``name`` (see ``per_change``)."""
        pc = self.per_change
        if isinstance(pc, float):
            return pc
        if isinstance(pc, dict) and name in pc:
            return float(pc[name])
        return 0.0 if name in self.named else 1.0

    @classmethod
    def preset(cls, name: str) -> Costs:
        """The named measure ``name`` (:data:`MEASURES`)."""
        if name not in MEASURES:
            raise ValidationError(
                f"Unknown measure {name!r}. Named measures: {sorted(MEASURES)}; or build a "
                "cf.Costs in your own units."
            )
        return cls(**MEASURES[name][0])

    @property
    def preset_name(self) -> str | None:
        """The name of the measure these costs are (:data:`MEASURES`), or None."""
        for name, (kwargs, _) in MEASURES.items():
            if self == Costs(**kwargs):
                return name
        return None

    def words(self) -> str:
        """What "smaller" means under these costs, in words."""
        name = self.preset_name
        if name is not None:
            return MEASURES[name][1]
        unit = ""
        if self.unit:
            scale = float(self.unit_scale or 1.0)
            each = "" if scale == 1.0 else f"; the weights count in units of {scale:g} {self.unit}"
            unit = f" ({self.unit}{each})"
        return f"your costs{unit}: " + ", ".join(_named_words(self))

    # ------------------------------------------------------------ binding
    def bind(self, schema: Schema, X: pd.DataFrame | None = None) -> BoundCosts:
        """These costs checked against ``schema``, with each percentile curve learnt
        from the training rows ``X`` (needed only when ``percentile`` names features)."""
        _check_names(self, schema)
        spread = self._spread(schema, X)
        knots: dict[str, tuple[tuple[float, ...], tuple[float, ...]]] = {}
        for name in self.percentile:
            if X is None or name not in X.columns:
                raise ValidationError(
                    f"Costs.percentile names {name!r}: its percentiles come from the training "
                    "data; "
                    "pass the training rows (X) with that column."
                )
            knots[name] = percentile_knots(schema[name], X[name], self.n_knots)
        return BoundCosts(self, schema, knots, spread)

    def _spread(self, schema: Schema, X: pd.DataFrame | None) -> tuple[float, ...]:
        """The unit of each feature's move: its MAD in ``X`` or its range."""
        if self.scale == "range":
            return tuple(float(v) for v in schema.ranges())
        if X is None or any(name not in X.columns for name in schema.names):
            raise ValidationError(
                "Costs(scale='mad') measures moves in MADs of the training data: pass the "
                "training rows (X) with every feature, or use scale='range'."
            )
        return tuple(float(v) for v in mad(X, schema))

    # --------------------------------------------------------- serialising
    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form (``inf`` as the text ``"inf"``)."""
        return {
            "weights": {k: [_num(u), _num(d)] for k, (u, d) in self.weights.items()},
            "transitions": {
                k: [[_py(a), _py(b), _num(c)] for (a, b), c in t.items()]
                for k, t in self.transitions.items()
            },
            "percentile": dict(self.percentile),
            "per_change": self.per_change,
            "scale": self.scale,
            "moves": self.moves,
            "missing": self.missing,
            "unit": self.unit,
            "unit_scale": self.unit_scale,
            "n_knots": self.n_knots,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Costs:
        """Inverse of :meth:`to_dict`."""
        try:
            return cls(
                weights={
                    k: tuple(_unnum(v) for v in w) for k, w in dict(d.get("weights") or {}).items()
                },
                transitions={
                    k: {(a, b): _unnum(c) for a, b, c in t}
                    for k, t in dict(d.get("transitions") or {}).items()
                },
                percentile=dict(d.get("percentile") or {}),
                per_change=d.get("per_change"),
                scale=d.get("scale", "mad"),
                moves=float(d.get("moves", 1.0)),
                missing=d.get("missing", "weight"),
                unit=d.get("unit"),
                unit_scale=d.get("unit_scale"),
                n_knots=int(d.get("n_knots", 101)),
            )
        except (TypeError, ValueError, AttributeError) as exc:
            if isinstance(exc, ValidationError):
                raise
            raise ValidationError(f"Not a Costs document: {exc}.") from None


#: the named measures: name -> (Costs keywords, what "smaller" means in words)
MEASURES: dict[str, tuple[dict[str, Any], str]] = {
    "effort": (
        {},
        "fewer changes or smaller moves: 1 per changed feature plus each move in MADs "
        "(median absolute deviations of the population; a category change moves 1)",
    ),
    "fewest-changes": (
        {"moves": 0.01},
        "fewer changes first: 1 per changed feature plus a hundredth per MAD moved",
    ),
    "smallest-moves": (
        {"per_change": 0.0},
        "smaller moves: each move in MADs (median absolute deviations of the population; "
        "a category change moves 1)",
    ),
    "range-l1": (
        {"per_change": 0.0, "scale": "range"},
        "smaller moves: each move as a share of the feature's range (a category change counts 1)",
    ),
}


def _named_words(costs: Costs) -> list[str]:
    """Each named feature's cost, then the per-change charges ``per_change`` sets for
    features named nowhere else, then everything else's, in words."""
    unit = "MADs" if costs.scale == "mad" else "shares of its range"
    named = [
        (k, f"{k} per unit {u:g} up, {d:g} down" if u != d else f"{k} {u:g} per unit moved")
        for k, (u, d) in costs.weights.items()
    ]
    named += [(k, f"{k} by transition") for k in costs.transitions]
    named += [(k, f"{k} by percentile") for k in costs.percentile]
    parts = [_with_charge(costs, k, words) for k, words in named]
    own = costs.per_change if isinstance(costs.per_change, dict) else {}
    parts += [
        f"{k}: {own[k]:g} per change plus {costs.moves:g} per move in {unit}"
        for k in own
        if k not in costs.named
    ]
    charge = costs.charge("\0")  # a feature named nowhere
    rest = f"others: {charge:g} per change plus {costs.moves:g} per move in {unit}"
    return [*parts, rest]


def _with_charge(costs: Costs, name: str, words: str) -> str:
    """``words`` (what feature ``name`` costs) with its per-change charge, if any."""
    charge = costs.charge(name)
    return f"{words} plus {charge:g} per change" if charge else words


def _per_change(value: Any) -> float | dict[str, float] | None:
    if value is None:
        return None
    if isinstance(value, Mapping):
        return {
            str(k): _cost_number(v, f"Costs.per_change[{k!r}]", allow_inf=False)
            for k, v in value.items()
        }
    return _cost_number(value, "Costs.per_change", allow_inf=False)


def _mapping(value: Any, what: str) -> dict[Any, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValidationError(
            f"Costs.{what} must be a mapping {{feature: ...}}. Got {type(value).__name__}."
        )
    return dict(value)


def _percentile(value: Any) -> dict[str, float]:
    if value is None:
        return {}
    if isinstance(value, str):
        value = [value]
    if isinstance(value, Mapping):
        return {
            str(k): _cost_number(v, f"Costs.percentile[{k!r}]", allow_inf=False)
            for k, v in value.items()
        }
    try:
        return {str(k): 1.0 for k in value}
    except TypeError:
        raise ValidationError(
            f"Costs.percentile must be a mapping {{feature: weight}} or a list of features. Got "
            f"{type(value).__name__}."
        ) from None


def _unit(unit: Any, scale: Any) -> tuple[str | None, float | None]:
    if unit is None:
        if scale is not None:
            raise ValidationError(
                f"Costs.unit_scale={scale!r} is given without a unit. Name the unit too "
                "(unit='months of saving'), or drop unit_scale."
            )
        return None, None
    if not isinstance(unit, str) or not unit.strip():
        raise ValidationError(
            f"Costs.unit must be a non-empty text such as 'months of saving'. Got {unit!r}."
        )
    if scale is None:
        raise ValidationError(
            f"Costs(unit={unit!r}) needs unit_scale: how many {unit} one unit of cost is "
            f"(unit_scale=1 when the weights are already in {unit})."
        )
    s = _cost_number(scale, "Costs.unit_scale", allow_inf=False)
    if s <= 0:
        raise ValidationError(f"Costs.unit_scale must be > 0. Got {scale!r}.")
    return unit.strip(), s


def _num(v: float) -> Any:
    return "inf" if math.isinf(v) else float(v)


def _unnum(v: Any) -> float:
    return math.inf if v == "inf" else float(v)


def _check_names(costs: Costs, schema: Schema) -> None:
    """Every feature and category the costs name exists and fits its kind."""
    known = schema.names
    per_change = costs.per_change if isinstance(costs.per_change, dict) else {}
    for what, named in (
        ("weights", costs.weights),
        ("transitions", costs.transitions),
        ("percentile", costs.percentile),
        ("per_change", per_change),
    ):
        unknown = sorted(set(named) - set(known))
        if unknown:
            raise ValidationError(
                f"Costs.{what} names unknown features {unknown}. Known features: {known}."
            )
    for name, (up, down) in costs.weights.items():
        f = schema[name]
        if f.is_categorical and up != down:
            raise ValidationError(
                f"Costs.weights[{name!r}] = ({up}, {down}) gives two directions, but '{name}' is "
                f"{f.kind} "
                "(unordered). Give one weight per change, or costs per transition in "
                "Costs.transitions."
            )
    for name, table in costs.transitions.items():
        f = schema[name]
        if f.is_numeric:
            raise ValidationError(
                f"Costs.transitions[{name!r}]: '{name}' is {f.kind}; transitions are for binary, "
                "categorical "
                "and ordinal features. Use Costs.weights (per unit) or Costs.percentile for a "
                "numeric feature."
            )
        cats = list(f.categories or ())
        for a, b in table:
            bad = [c for c in (a, b) if c not in cats]
            if bad:
                raise ValidationError(
                    f"Costs.transitions[{name!r}] names {bad[0]!r}, which is not a category of "
                    f"'{name}'. "
                    f"Its categories: {cats}."
                )
            if a == b and table[(a, b)] != 0:
                raise ValidationError(
                    f"Costs.transitions[{name!r}][({a!r}, {b!r})] = {table[(a, b)]}: keeping a "
                    "value costs "
                    "nothing. Remove the entry."
                )
    for name in costs.percentile:
        if schema[name].is_categorical:
            raise ValidationError(
                f"Costs.percentile names '{name}', which is {schema[name].kind} (unordered): a "
                "percentile "
                "needs an order. Use Costs.weights or Costs.transitions for it."
            )


def percentile_knots(
    feature: Feature, column: pd.Series, n_knots: int
) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The percentile curve of one feature: knots ``(values, P)`` with ``P`` the share
    of training rows at or below each value (ordinal: by rank), rescaled to run from 0 at
    the lowest observed value to 1 at the highest, at every distinct
    observed value or, when there are more than ``n_knots``, at the observed values
    nearest its ``n_knots`` percentiles."""
    if feature.kind == "ordinal":
        v = np.array([feature.rank(c) for c in column.tolist()], dtype=float)
    else:
        v = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
    v = np.sort(v[np.isfinite(v)])
    if v.size == 0:
        raise ValidationError(
            f"Costs.percentile['{feature.name}']: the training data has no values of it."
        )
    u = np.unique(v)
    if feature.kind == "ordinal":
        u = np.arange(len(feature.categories or ()), dtype=float)
    elif u.size > n_knots:
        u = np.unique(np.quantile(v, np.linspace(0.0, 1.0, n_knots), method="inverted_cdf"))
    # the share of rows at or below each knot, from the lowest observed value (0) to the
    # highest (1), so that the weight is the cost of that whole move (in whole counts)
    at_or_below = np.searchsorted(v, u, side="right")
    lowest = int(np.searchsorted(v, v[0], side="right"))
    above = max(v.size - lowest, 1)
    p = np.clip(at_or_below - lowest, 0, None) / above
    return tuple(float(a) for a in u), tuple(float(a) for a in p)


class BoundCosts:
    """:class:`Costs` checked against a schema, with its percentile curves learnt.

    Made by :meth:`Costs.bind`; the explain pipeline binds the user's Costs to
    the method's training data and gives every query its per-feature costs
    (:meth:`for_query`).  ``knots``: per feature of ``costs.percentile``, its
    percentile curve ``(values, P)``.
    """

    def __init__(
        self,
        costs: Costs,
        schema: Schema,
        knots: Mapping[str, tuple[tuple[float, ...], tuple[float, ...]]],
        spread: tuple[float, ...],
    ) -> None:
        _check_names(costs, schema)
        self.costs = costs
        self.schema = schema
        self.spread = tuple(float(v) for v in spread)
        if len(self.spread) != len(schema) or not all(v > 0 for v in self.spread):
            raise ValidationError(
                f"BoundCosts needs one positive spread per feature ({len(schema)}); got "
                f"{list(self.spread)}. Bind the Costs to training data."
            )
        self.knots = {
            k: (tuple(map(float, v[0])), tuple(map(float, v[1]))) for k, v in knots.items()
        }
        missing = sorted(set(costs.percentile) - set(self.knots))
        if missing:
            raise ValidationError(
                f"BoundCosts lacks the percentile curves of {missing}; bind the Costs to training "
                "data."
            )
        self.up = np.zeros(len(schema))
        self.down = np.zeros(len(schema))
        self.pct = np.zeros(len(schema))
        self.change = np.zeros(len(schema))
        self.tables: dict[int, np.ndarray] = {}
        for j, f in enumerate(schema):
            self._feature(j, f)

    # ----------------------------------------------------------- building
    def _feature(self, j: int, f: Feature) -> None:
        c = self.costs
        named = f.name in c.named
        if f.name in c.weights:
            self.up[j], self.down[j] = c.weights[f.name]
        elif not named or f.name in c.transitions:  # a move on the population's scale
            self.up[j] = self.down[j] = c.moves * (1.0 if f.is_categorical else 1 / self.spread[j])
        self.pct[j] = c.percentile.get(f.name, 0.0)
        self.change[j] = c.charge(f.name)
        if f.is_numeric:
            return
        n = len(f.categories or ())
        if f.is_categorical:
            T = np.where(np.eye(n, dtype=bool), 0.0, self.up[j])
        else:
            r = np.arange(n, dtype=float)
            step = r[None, :] - r[:, None]
            with np.errstate(invalid="ignore"):
                T = np.where(step > 0, self.up[j] * step, 0.0) + np.where(
                    step < 0, self.down[j] * -step, 0.0
                )
            if self.pct[j] > 0:
                P = np.asarray(self.knots[f.name][1])
                T = T + self.pct[j] * np.abs(P[None, :] - P[:, None])
            T[np.eye(n, dtype=bool)] = 0.0
        if f.name in c.transitions:
            if c.missing == "forbid":
                T = np.where(np.eye(n, dtype=bool), 0.0, np.inf)
            for (a, b), cost in c.transitions[f.name].items():
                T[f.rank(a), f.rank(b)] = cost
        T = np.where(np.eye(n, dtype=bool), 0.0, T + self.change[j])
        T.flags.writeable = False
        self.tables[j] = T

    # ------------------------------------------------------------ queries
    def for_query(self, x: pd.Series) -> tuple[FeatureCost, ...]:
        """One :class:`FeatureCost` per feature (schema order) around the raw row ``x``."""
        out = []
        for j, f in enumerate(self.schema):
            v = _py(x[f.name])
            if not f.is_numeric:
                qi = f.rank(v)
                out.append(
                    FeatureCost(
                        f.name,
                        "table",
                        float(qi),
                        table=tuple(float(c) for c in self.tables[j][qi]),
                    )
                )
                continue
            out.append(self._curve(j, f, float(v)))
        return tuple(out)

    def _curve(self, j: int, f: Feature, q: float) -> FeatureCost:
        up, down, w = float(self.up[j]), float(self.down[j]), float(self.pct[j])
        no_up, no_down = math.isinf(up), math.isinf(down)
        xs = [q]
        if w > 0:
            xs = sorted(set(self.knots[f.name][0]) | {q})
            xs = [a for a in xs if not ((no_up and a > q) or (no_down and a < q))]
        u, p = self.knots.get(f.name, ((q,), (0.0,)))
        pq = float(np.interp(q, u, p))
        cs = []
        for a in xs:
            c = up * (a - q) if a > q else down * (q - a) if a < q else 0.0
            if w > 0:
                c += w * abs(float(np.interp(a, u, p)) - pq)
            cs.append(c)
        return FeatureCost(
            f.name,
            "curve",
            q,
            tuple(xs),
            tuple(cs),
            left=0.0 if no_down else down,
            right=0.0 if no_up else up,
            no_down=no_down,
            no_up=no_up,
            change=float(self.change[j]),
        )

    def restrict(self, bounds: QueryBounds) -> QueryBounds:
        """``bounds`` without the moves these costs forbid (infinite weights and
        transitions): the constraints every method then honours."""
        feats = list(bounds.features)
        for j, (f, b) in enumerate(zip(self.schema, bounds.features, strict=True)):
            if f.is_numeric:
                q = float(b.value)
                lo, hi = b.lower, b.upper
                if math.isinf(self.down[j]):
                    lo = q if lo is None else max(float(lo), q)
                if math.isinf(self.up[j]):
                    hi = q if hi is None else min(float(hi), q)
                vals = b.values
                if vals is not None:
                    vals = tuple(v for v in vals if lo <= float(v) <= hi)  # type: ignore[operator]
                feats[j] = FeatureBounds(b.feature, b.value, lo, hi, vals)
                continue
            row = self.tables[j][f.rank(b.value)]
            allowed = b.values if b.values is not None else tuple(f.categories or ())
            feats[j] = FeatureBounds(
                b.feature,
                b.value,
                values=tuple(c for c in allowed if math.isfinite(row[f.rank(c)])),
            )
        return replace(bounds, features=tuple(feats))

    @property
    def forbids(self) -> bool:
        """Whether some move is forbidden (an infinite weight or transition)."""
        return bool(np.isinf(self.up).any() or np.isinf(self.down).any()) or any(
            np.isinf(T).any() for T in self.tables.values()
        )

    # ----------------------------------------------------------- evaluating
    def code(self, rows: pd.DataFrame) -> np.ndarray:
        """Raw rows as solver units (values; category indices; ranks), one column per feature."""
        out = np.empty((len(rows), len(self.schema)))
        for j, f in enumerate(self.schema):
            col = rows[f.name]
            if f.is_numeric:
                out[:, j] = pd.to_numeric(col).to_numpy(dtype=float)
            else:
                idx = pd.Index(list(f.categories or ()), dtype=object).get_indexer(
                    pd.Index(col.map(_py), dtype=object)
                )
                out[:, j] = np.where(idx < 0, np.nan, idx)
        return out

    def matrix(self, M: np.ndarray, q: np.ndarray, per_feature: bool = False) -> np.ndarray:
        """Costs of coded rows ``M`` (see :meth:`code`) for the coded query ``q``."""
        M = np.atleast_2d(np.asarray(M, dtype=float))
        q = np.asarray(q, dtype=float).reshape(-1)
        out = np.zeros(M.shape)
        for j, f in enumerate(self.schema):
            if f.is_numeric:
                out[:, j] = self._curve(j, f, float(q[j]))(M[:, j])
            else:
                T = self.tables[j]
                idx = np.nan_to_num(M[:, j], nan=-1).astype(int)
                ok = (idx >= 0) & (idx < T.shape[1])
                out[:, j] = np.where(ok, T[int(q[j]), np.clip(idx, 0, T.shape[1] - 1)], np.inf)
        return out if per_feature else out.sum(axis=1)

    def evaluate(
        self, query: pd.Series, rows: pd.DataFrame, per_feature: bool = False
    ) -> np.ndarray:
        """The cost of each raw row of ``rows`` for the raw query row ``query``
        (``per_feature``: one column per feature, schema order)."""
        if isinstance(rows, pd.Series):
            rows = rows.to_frame().T
        return self.matrix(
            self.code(rows), self.code(query.to_frame().T)[0], per_feature=per_feature
        )

    # -------------------------------------------------------------- words
    @property
    def unit(self) -> str | None:
        """The unit people read costs in (None: plain cost)."""
        return self.costs.unit

    def amount(self, cost: float) -> float:
        """A cost in the user's unit (``cost * unit_scale``)."""
        return float(cost) * float(self.costs.unit_scale or 1.0)

    def describe(self, cost: float) -> str:
        """``"about 3 months of saving"`` (with a unit) or ``"0.412"`` (without one)."""
        if self.unit is None:
            return f"{float(cost):.4g}"
        amount = about(self.amount(cost))
        return f"about {amount} {singular(self.unit) if amount == '1' else self.unit}"

    # --------------------------------------------------------- serialising
    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form: the costs and the learnt percentile curves."""
        return {
            "costs": self.costs.to_dict(),
            "knots": {k: [list(a), list(b)] for k, (a, b) in self.knots.items()},
            "spread": list(self.spread),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], schema: Schema) -> BoundCosts:
        """Inverse of :meth:`to_dict` (against the result's schema)."""
        try:
            knots = {k: (tuple(v[0]), tuple(v[1])) for k, v in dict(d.get("knots") or {}).items()}
            if "spread" not in d:  # written before the measure of effort: range-l1 rules
                old = {"per_change": 0.0, "scale": "range", **dict(d["costs"])}
                return cls(Costs.from_dict(old), schema, knots, tuple(schema.ranges()))
            return cls(Costs.from_dict(d["costs"]), schema, knots, tuple(d["spread"]))
        except (KeyError, TypeError, IndexError) as exc:
            raise ValidationError(f"Not a costs document: missing or malformed {exc}.") from None


def singular(unit: str) -> str:
    """A unit's first word without its plural ``s``, for an amount said as 1: ``"months of
    saving" -> "month of saving"``, ``"hours" -> "hour"``; a word ending in ``ss`` or
    shorter than three letters, and any unit not ending a first word in ``s``, unchanged
    (``"USD"``, ``"DM"``). Decision: a unit is the user's own English words, and an
    English unit names its plural with a final ``s`` often enough that "about 1 months"
    is the commoner fault."""
    first, sep, rest = unit.partition(" ")
    if len(first) < 3 or not first.endswith("s") or first.endswith("ss"):
        return unit
    return first[:-1] + sep + rest


def about(value: float) -> str:
    """A cost rounded for people: two significant digits, whole numbers from 10 up
    (``2.96 -> "3"``, ``0.123 -> "0.12"``, ``1534.2 -> "1,534"``)."""
    v = float(value)
    if not math.isfinite(v):
        return str(v)
    if abs(v) >= 10:
        return f"{round(v):,}"
    text = f"{v:.2g}"
    return text
