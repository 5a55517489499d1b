"""Testing utilities for a method's author: the conformance checks every method passes
(:func:`check_method`), the small fitted setting they run on (:func:`make_setting`), and a
registered method with its fast parameters (:func:`fast_method`)."""

from ._conformance import check_method, make_setting
from ._fast import fast_method

__all__ = ["check_method", "fast_method", "make_setting"]
