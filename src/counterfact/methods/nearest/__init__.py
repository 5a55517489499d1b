"""The minimum-observable baseline: the nearest observed row the model accepts."""

from ._method import NearestObservable

__all__ = ["NearestObservable"]
