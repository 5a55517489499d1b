"""Config-driven benchmark runner and the statistics to compare methods.

``cf.benchmark.run("benchmarks/papers/mace.yaml", out="results/")`` runs every
dataset x model x method x seed cell, resumably, and writes a long results
table plus a summary; ``counterfact report results/`` renders it.  The spec is validated before
anything runs (:func:`load_spec`); :func:`failed_cells` lists the cells that
errored (``counterfact benchmark`` exits with status 1 when there is one).
"""

from ._outcome import failed_cells
from ._runner import collect, run, summarise
from ._spec import DatasetSpec, MethodSpec, ModelSpec, Spec, load_spec
from ._stats import average_ranks, friedman, nemenyi_cd

__all__ = [
    "DatasetSpec",
    "MethodSpec",
    "ModelSpec",
    "Spec",
    "average_ranks",
    "collect",
    "failed_cells",
    "friedman",
    "load_spec",
    "nemenyi_cd",
    "run",
    "summarise",
]
