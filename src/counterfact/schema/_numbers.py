"""Numbers where they enter the library: finite, representable, and quoted as the user wrote them.

Every numeric input (a row's value, a range bound, a time limit, a causal
coefficient, a field of an HTTP request) is checked once, where it enters,
with these helpers, so that a value no feature can hold is an error naming
the field and the value, never a silent cast (``1e19`` in an integer column
used to become ``-9223372036854775808``).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from ..exceptions import ValidationError

__all__ = ["MAX_INTEGER", "finite_number", "integer_out_of_range", "show_number"]

#: The largest magnitude of an integer feature's value: models and solvers
#: compute in float64, which holds every whole number exactly up to 2**53
#: (int64 would hold more, but 2**53 + 1 would already be rounded by them).
MAX_INTEGER = 2**53


def show_number(value: Any) -> str:
    """``value`` as the user wrote it, shortened when it is a huge integer
    (``10**400`` -> ``'10000000...0000 (401 digits)'``)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, int):
        return repr(value)
    text = str(value)
    digits = len(text.lstrip("-"))
    if digits <= 40:
        return text
    return f"{text[:9]}...{text[-4:]} ({digits} digits)"


def finite_number(
    value: Any, what: str, *, error: type[ValidationError] = ValidationError, hint: str = ""
) -> float:
    """``value`` as a finite float, or ``error`` naming ``what`` and the value
    (then ``hint``, a sentence saying how to fix it).

    Booleans and text are refused (``True`` is not the number 1 here); so are
    NaN, the infinities and integers beyond float64's range (about 1.8e308).
    """
    if isinstance(value, np.generic):
        value = value.item()
    tail = f" {hint}" if hint else ""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise error(
            f"{what} must be a number. Got {show_number(value)} ({type(value).__name__}).{tail}"
        )
    try:
        out = float(value)
    except OverflowError:
        raise error(
            f"{what} = {show_number(value)} is too large a number (beyond float64's range, "
            f"about 1.8e308).{tail}"
        ) from None
    if not math.isfinite(out):
        raise error(f"{what} must be a finite number. Got {show_number(value)}.{tail}")
    return out


def integer_out_of_range(values: np.ndarray) -> np.ndarray:
    """Positions of ``values`` (floats) an integer feature cannot hold.

    Those beyond ``MAX_INTEGER`` in magnitude.
    """
    with np.errstate(invalid="ignore"):
        return np.flatnonzero(~(np.abs(np.asarray(values, dtype=float)) <= MAX_INTEGER))
