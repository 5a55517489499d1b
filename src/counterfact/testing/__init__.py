"""Testing utilities: the conformance suite every registered method runs, and
fast parameters for every registered method."""

from ._conformance import Setting, check_method, conformance_checks, make_setting
from ._fast import FAST_PARAMS, fast_method

__all__ = [
    "FAST_PARAMS",
    "Setting",
    "check_method",
    "conformance_checks",
    "fast_method",
    "make_setting",
]
