"""Testing utilities: the conformance checks every method passes
(:func:`check_method`), and fast instances of the registered methods."""

from ._conformance import Setting, check_method, conformance_checks, make_setting
from ._fast import fast_method

__all__ = ["Setting", "check_method", "conformance_checks", "fast_method", "make_setting"]
