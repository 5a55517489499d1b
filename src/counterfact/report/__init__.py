"""Reports of benchmark results: tables, plots, critical differences, recourse cards."""

from ._build import build, higher_is_better

__all__ = ["build", "higher_is_better"]
