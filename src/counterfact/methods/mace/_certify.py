"""MACE's certificate: the fields of what a search proved, and the sentence worded from them.

:func:`certificate_record` reads one query's diagnostics (the bounds
``delta_min``/``delta_max``, the returned answer's own value
``answer_value``, the tolerance ``rel_gap``/``abs_floor``, the MILP solver's slack, the
margin tolerance, the grid, the costs' unit) and returns a
:class:`~counterfact.result.Certificate` whose sentence says only what the
fields support: "no answer is more than 1 % closer", "on the grid of
credit_amount (resolution 1)", "none reaches P >= 0.54999 (0.55 less the
tolerance)"; where a further answer's search proved that no other option is
left (``alternatives_exhausted``), it says so.  The page shows the sentence; the
numbers are in the fields.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from ...result import Certificate
from ...result._certificate import coverage_words, threshold_words
from ...result._text import certificate_text, diagnostic_number
from ...solvers._options import OPTIONS_PROVEN, options_proven

__all__ = ["certificate_record", "grid_text", "percent"]

#: a relative gap below this is the optimum itself (up to float rounding)
_EXACT = 1e-9
#: grid features named in a sentence before "and N more"
_NAMED = 3


def percent(x: float) -> str:
    """``0.01 -> "1 %"``, ``0.0042 -> "0.42 %"``."""
    return f"{100 * x:.2g} %"


def _grid(d: Mapping[str, Any]) -> tuple[tuple[str, float], ...]:
    raw = d.get("grid")
    if not isinstance(raw, str) or not raw:
        return ()
    try:
        pairs = json.loads(raw)
        return tuple((str(n), float(s)) for n, s in pairs)
    except (ValueError, TypeError):
        return ()


def grid_text(grid: tuple[tuple[str, float], ...]) -> str:
    """``" on the grid of credit_amount (resolution 1)"`` ("" without a grid)."""
    if not grid:
        return ""
    named = [f"{n} (resolution {s:g})" for n, s in grid[:_NAMED]]
    more = len(grid) - _NAMED
    tail = f" and {more} more" if more > 0 else ""
    return " on the grid of " + ", ".join(named) + tail


def _measure(d: Mapping[str, Any]) -> tuple[str, str, float]:
    """(measure, unit, factor from solver units to the measure's unit)."""
    unit = d.get("cost_unit")
    if isinstance(unit, str):
        return "cost", unit, diagnostic_number(d, "cost_unit_scale") or 1.0
    return "range-normalised distance", "", 1.0


def certificate_record(
    name: str, status: str, diagnostics: Mapping[str, Any] | None
) -> Certificate:
    """The :class:`Certificate` of one query (module docstring)."""
    d = dict(diagnostics or {})
    measure, unit, scale = _measure(d)
    lo, hi = _bounds(d)
    fields: dict[str, Any] = {
        "measure": measure,
        "unit": unit,
        "value": None if hi is None else hi * scale,
        "lower_bound": None if lo is None else lo * scale,
        "rel_gap": diagnostic_number(d, "rel_gap"),
        "abs_floor": _scaled(diagnostic_number(d, "abs_floor"), scale),
        "solver_slack": _scaled(diagnostic_number(d, "solver_slack"), scale),
        "answer_margin": diagnostic_number(d, "margin"),
        "margin_tolerance": diagnostic_number(d, "margin_tolerance"),
        "margin_scale": str(d.get("margin_scale") or ""),
        "threshold": diagnostic_number(d, "target_probability"),
        "grid": _grid(d) if status in ("optimal", "infeasible") else (),
    }
    if status != "infeasible" and hi is None:
        fields["lower_bound"] = None
    sentence = _sentence(name, status, d, fields)
    if status in ("optimal", "feasible") and options_proven(d):
        sentence += OPTIONS_PROVEN
    return Certificate(status=status, sentence=sentence, **fields)


def _bounds(d: Mapping[str, Any]) -> tuple[float | None, float | None]:
    """(proven lower bound, the answer's value) in solver units: the value is the
    returned answer's own (``answer_value``, after rounding and sparsification) when
    the pipeline measured it, else the search's ``delta_max``; a bound above it
    (which no proof can give: the answer itself is valid) is clamped to it."""
    lo, hi = diagnostic_number(d, "delta_min"), diagnostic_number(d, "delta_max")
    own = diagnostic_number(d, "answer_value")
    if own is not None and math.isfinite(own):
        hi = own
    if lo is not None and hi is not None and math.isfinite(hi):
        lo = min(lo, hi)
    return lo, hi


def _scaled(x: float | None, scale: float) -> float | None:
    return None if x is None else x * scale


def _sentence(name: str, status: str, d: Mapping[str, Any], f: Mapping[str, Any]) -> str:
    if status == "optimal":
        return f"{name}: " + _optimal(f)
    if status == "feasible":
        return f"{name}: " + _feasible(f)
    if status == "infeasible":
        return f"{name}: " + _infeasible(d, f)
    return certificate_text(name, status, d, proves_infeasibility=True)


def _gap(f: Mapping[str, Any]) -> float | None:
    lo, hi = f.get("lower_bound"), f.get("value")
    if lo is None or hi is None:
        return None
    return 0.0 if hi <= 0 else max(0.0, (hi - lo) / hi)


def _optimal(f: Mapping[str, Any]) -> str:
    gap, tol = _gap(f), f.get("rel_gap")
    where = grid_text(f["grid"])
    if gap is not None and gap <= _EXACT:
        text = f"proven nearest: no answer is closer{where}"
    elif gap is not None:
        within = f" within {percent(tol)}" if tol is not None else ""
        text = f"proven nearest{within}: no answer is more than {percent(gap)} closer{where}"
    else:
        text = f"proven nearest{where}"
    return text + _costs(f) + _covered(f)


def _covered(f: Mapping[str, Any]) -> str:
    """Which answers the proof covers when it leaves out those nearest the threshold (a
    MILP solver's tolerance; :func:`coverage_words`)."""
    return coverage_words(
        f.get("margin_tolerance"), f.get("margin_scale") or "", f.get("threshold")
    )


def _feasible(f: Mapping[str, Any]) -> str:
    gap, tol = _gap(f), f.get("rel_gap")
    text = "valid (checked with the model); not proven nearest"
    if tol is not None:
        text += f" within {percent(tol)}"
    if gap is not None and math.isfinite(gap) and gap < 1.0:
        text += f": an answer may be up to {percent(gap)} closer"
    else:
        text += " (the search stopped before closing the bound)"
    return text + _covered(f)


def _costs(f: Mapping[str, Any]) -> str:
    """``"; no answer costs less than 7.96 months (this one 7.97 months)"`` for costs."""
    if f["measure"] != "cost" or f.get("lower_bound") is None or f.get("value") is None:
        return ""
    u = f" {f['unit']}" if f["unit"] else ""
    return f"; no answer costs less than {f['lower_bound']:.4g}{u} (this one {f['value']:.4g}{u})"


def _infeasible(d: Mapping[str, Any], f: Mapping[str, Any]) -> str:
    where = grid_text(f["grid"])
    text = f"proven: no counterfactual exists under these constraints{where}"
    reach = diagnostic_number(d, "proof_probability")
    floor = diagnostic_number(d, "target_probability")
    tol = f.get("margin_tolerance")
    if reach is not None and floor is not None:
        side = "less" if reach <= floor else "plus"
        return text + f": none reaches P >= {reach:.6g} ({floor:g} {side} the tolerance)"
    scale = f" on the {f['margin_scale']}" if f.get("margin_scale") else ""
    past = threshold_words(f.get("threshold"))
    if tol is not None and tol < 0:
        return text + f" (none passes {past} by more than {-tol:g}{scale})"
    if tol is not None:
        return text + f" (none comes within {tol:g}{scale} of {past})"
    return text
