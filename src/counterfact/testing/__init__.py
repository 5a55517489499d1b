"""Testing utilities for a method's author: the conformance checks every method passes
(:func:`check_method`) and the small fitted setting they run on (:func:`make_setting`)."""

from ._conformance import check_method, make_setting

__all__ = ["check_method", "make_setting"]
