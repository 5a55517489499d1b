"""Config-driven benchmark runner.

``cf.benchmark.run("benchmarks/papers/mace.yaml", out="results/")`` runs every
dataset x model x method x seed cell, resumably, and writes a long results
table plus a summary; ``counterfact report results/`` renders it.  The spec is validated before
anything runs (:func:`load_spec`); :func:`failed_cells` lists the cells that
errored (``counterfact benchmark`` exits with status 1 when there is one).
"""

from ._outcome import failed_cells
from ._runner import run
from ._spec import load_spec

__all__ = ["failed_cells", "load_spec", "run"]
