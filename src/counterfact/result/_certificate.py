"""A query's certificate as fields: what was proven, under which measure, up to which tolerance.

:class:`Certificate` is what ``result.certificate_record(query)`` returns and
what a result's JSON carries per query (``"certificate_records"``), so that a
claim can be checked without reading the sentence:

* ``measure``/``unit``: what the answer's value and the bound are measured in
  (the call's measure of effort -- by default 1 per changed feature plus each move
  in MADs -- or the user's costs in their unit; under ``costs="own"`` the method's
  own objective, such as the range-normalised distance of eq. (3)); the result's
  ``certificate(query, numbers=False)`` says it in words;
* ``value``: the answer's value under that measure; ``lower_bound``: the proven
  bound (no answer lies below it);
* ``rel_gap``/``abs_floor``: the stated tolerance of ``optimal`` -- the answer is
  within ``max(rel_gap * value, abs_floor)`` of the bound (:meth:`Certificate.within_tolerance`);
* ``solver_slack``: what the bound already allows for the solver's numerical
  tolerances (a MILP solver accepts rows violated by up to 1e-6): the solver's own
  bound less this much is the stated ``lower_bound``;
* ``answer_margin``: the strict margin the search demands above the threshold the
  answers were held to (the decision threshold, or ``min_probability``; negative: how
  far below ``min_probability`` a forest's search reached, so that points exactly at
  it count);
* ``margin_tolerance`` (on ``margin_scale``): how far below the decision threshold
  (or ``min_probability``) the proofs reach -- they hold for every point whose
  score reaches the threshold minus this much (negative: they cover only the
  points that pass the threshold by more than its magnitude);
* ``threshold``: the probability of the target those margins are measured from
  (``min_probability``); None: the model's own decision threshold;
* ``grid``: ``(feature, resolution)`` pairs when the proof holds over those
  features' grids (a value between two grid values is not covered);
* ``status``: the status the fields support; ``sentence``: the method's certificate in
  words (``result.certificate(query)`` adds what the answers were held to and, under
  ``Requirements(robustness=p)``, the held-out copies' count).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..exceptions import ValidationError

__all__ = ["Certificate", "coverage_words", "threshold_words"]

#: the numeric fields (None or a finite number >= 0; the margin tolerance may be negative)
_NUMBERS = (
    "value",
    "lower_bound",
    "rel_gap",
    "abs_floor",
    "solver_slack",
    "answer_margin",
    "margin_tolerance",
    "threshold",
)
#: float rounding allowed when a stated tolerance is compared with a gap
_ROUNDING = 1e-12
_TEXTS = ("status", "sentence", "measure", "unit", "margin_scale")


@dataclass(frozen=True)
class Certificate:
    """The fields behind one query's certificate (module docstring).

    Attributes
    ----------
    status : str
        The status these fields support (``optimal``, ``feasible``, ``infeasible``...).
    sentence : str
        The method's certificate in words (``result.certificate(query)`` is this, then
        what the answers were held to).
    measure : str
        What ``value`` and ``lower_bound`` measure ("" when the method proves none).
    unit : str
        The measure's unit ("" when the measure has none, as the default).
    value : float or None
        The answer's value under the measure.
    lower_bound : float or None
        Proven: no answer has a smaller value.
    rel_gap : float or None
        The stated relative tolerance of ``optimal``.
    abs_floor : float or None
        The absolute tolerance of ``optimal`` (far below one step of the data, and
        at least what the solver's tolerances make unprovable).
    solver_slack : float or None
        Already subtracted from ``lower_bound``: what the solver's numerical
        tolerances could have added to its own bound (None: an exact solver).
    answer_margin : float or None
        The strict margin the search demands above the threshold the answers were held
        to (the decision threshold, or ``min_probability``; on ``margin_scale``; negative:
        the search reached that far below ``min_probability``, every answer checked).
    margin_tolerance : float or None
        How far below the decision threshold (or ``min_probability``) the proofs
        reach (negative: they cover only the points that pass the threshold by more
        than its magnitude, e.g. the answers' margin for a MILP's proof).
    margin_scale : str
        The score the margin tolerance is on ("logit", "probability", "output").
    threshold : float or None
        The probability of the target the margins are measured from
        (``min_probability``); None: the model's own decision threshold.
    grid : tuple of (str, float)
        The features whose grids (resolution) the proof is over; empty: none.
    """

    status: str
    sentence: str
    measure: str = ""
    unit: str = ""
    value: float | None = None
    lower_bound: float | None = None
    rel_gap: float | None = None
    abs_floor: float | None = None
    solver_slack: float | None = None
    answer_margin: float | None = None
    margin_tolerance: float | None = None
    margin_scale: str = ""
    threshold: float | None = None
    grid: tuple[tuple[str, float], ...] = ()

    @property
    def proven_gap(self) -> float | None:
        """``(value - lower_bound) / value``: how much closer an answer might be, as a
        fraction of this one's value (0: the optimum itself); None without both."""
        if self.value is None or self.lower_bound is None:
            return None
        if self.value <= 0:
            return 0.0
        return max(0.0, (self.value - self.lower_bound) / self.value)

    def within_tolerance(self) -> bool:
        """Whether ``value - lower_bound <= max(rel_gap * value, abs_floor)`` (up to
        float rounding, 1e-12 relative): what ``optimal`` states (True without both a
        value and a bound: nothing to close)."""
        if self.value is None or self.lower_bound is None:
            return True
        allowed = max((self.rel_gap or 0.0) * self.value, self.abs_floor or 0.0)
        rounding = _ROUNDING * max(1.0, abs(self.value))
        return self.value - self.lower_bound <= allowed + rounding

    @property
    def threshold_words(self) -> str:
        """What the margins are measured from, in words (:func:`threshold_words`)."""
        return threshold_words(self.threshold)

    @property
    def on_grid(self) -> bool:
        """Whether the proof is over features' grids (see :attr:`grid`)."""
        return bool(self.grid)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of the certificate (:meth:`from_dict` reads it)."""
        out: dict[str, Any] = {k: getattr(self, k) for k in (*_TEXTS, *_NUMBERS)}
        out["grid"] = [[name, step] for name, step in self.grid]
        return out

    @classmethod
    def from_dict(cls, d: Any, where: str = "certificate") -> Certificate:
        """The certificate of a JSON object (:meth:`to_dict`); a ValidationError names
        the first field that is missing or wrong."""
        if not isinstance(d, Mapping):
            raise ValidationError(f"{where} must be an object. Got {type(d).__name__}.")
        texts = {k: _text(d, k, where) for k in _TEXTS}
        numbers = {k: _number(d, k, where) for k in _NUMBERS}
        lo, value = numbers["lower_bound"], numbers["value"]
        if lo is not None and value is not None and lo - value > _ROUNDING * max(1.0, value):
            raise ValidationError(
                f"{where}: 'lower_bound' {lo:g} is above 'value' {value:g}, the answer's own "
                "value: a bound below every answer cannot exceed one of them, so the record "
                "contradicts itself."
            )
        return cls(**texts, **numbers, grid=_grid(d.get("grid", []), where))


def threshold_words(threshold: float | None) -> str:
    """``"the decision threshold"``, or ``"the required probability 0.6"`` for a
    ``min_probability`` of 0.6: what a certificate's margins are measured from."""
    if threshold is None:
        return "the decision threshold"
    return f"the required probability {threshold:g}"


def coverage_words(tolerance: float | None, scale: str, threshold: float | None) -> str:
    """The answers a proof covers when a solver's margin leaves out those nearest the
    threshold (``tolerance`` < 0): ``" (among answers past the decision threshold by more
    than 0.0001 on the logit)"``; nothing when it covers every answer."""
    if tolerance is None or tolerance >= 0:
        return ""
    on = f" on the {scale}" if scale else ""
    return f" (among answers past {threshold_words(threshold)} by more than {-tolerance:g}{on})"


def _text(d: Mapping[str, Any], key: str, where: str) -> str:
    v = d.get(key, "")
    if not isinstance(v, str):
        raise ValidationError(f"{where}: '{key}' must be a string. Got {v!r}.")
    return v


def _number(d: Mapping[str, Any], key: str, where: str) -> float | None:
    v = d.get(key)
    if v is None:
        return None
    ok = isinstance(v, (int, float)) and not isinstance(v, bool)
    signed = key in ("margin_tolerance", "answer_margin")
    if not ok or not math.isfinite(float(v)) or (float(v) < 0 and not signed):
        raise ValidationError(f"{where}: '{key}' must be a finite number >= 0 or null. Got {v!r}.")
    return float(v)


def _grid(v: Any, where: str) -> tuple[tuple[str, float], ...]:
    bad = ValidationError(
        f"{where}: 'grid' must be an array of [feature, resolution] pairs with a positive "
        f"resolution. Got {v!r}."
    )
    if not isinstance(v, list):
        raise bad
    out = []
    for pair in v:
        if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)):
            raise bad
        step = pair[1]
        if isinstance(step, bool) or not isinstance(step, (int, float)):
            raise bad
        if not (math.isfinite(float(step)) and float(step) > 0):
            raise bad
        out.append((pair[0], float(step)))
    return tuple(out)
