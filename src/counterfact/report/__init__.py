"""Reports of benchmark results: summary tables, glossary, plots, tests, recourse cards."""

from ._build import build
from ._glossary import GLOSSARY, KEY_METRICS, KeyMetric, higher_is_better

__all__ = ["GLOSSARY", "KEY_METRICS", "KeyMetric", "build", "higher_is_better"]
