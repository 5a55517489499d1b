"""Testing utilities: the conformance suite every registered method runs."""

from ._conformance import Setting, check_method, conformance_checks, make_setting

__all__ = ["Setting", "check_method", "conformance_checks", "make_setting"]
