"""Reports of benchmark results: summary tables, glossary, plots, tests, recourse cards."""

from ._build import build
from ._glossary import GLOSSARY, KEY_METRICS

__all__ = ["GLOSSARY", "KEY_METRICS", "build"]
