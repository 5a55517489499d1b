"""SMT: the Z3 encoder of the compiled model's IR, and its SMT-LIB text helper.

Private modules, everything re-exported here:

* :mod:`._encoder` -- the IR as Z3 formulas, chosen from two tables keyed on
  the IR estimator node: :data:`ENCODERS` (the target region,
  :func:`encode_model`) and :data:`OUTPUT_ENCODERS` (the outputs as terms,
  :func:`encode_outputs`); :func:`forest_in_box`, :func:`is_forest`,
  :func:`rational`, :func:`z_box`;
* :mod:`._relations` -- relations between features as formulas
  (:func:`encode_relations`);
* :mod:`._text` -- tree ensembles and linear regions as SMT-LIB text built once
  per model (:class:`ForestText`) and parsed per query;
* :mod:`._oracle`, :mod:`._costs` -- MACE's Z3 oracle (:class:`Z3Oracle`) and
  the call's costs as Z3 terms; :mod:`._backend` its registered backend
  (:class:`Z3Solver`).

Z3 is imported only when a formula is built.
"""

from ._backend import Z3Solver
from ._encoder import (
    ENCODERS,
    OUTPUT_ENCODERS,
    encode_model,
    encode_outputs,
    forest_in_box,
    is_forest,
    rational,
    z_box,
)
from ._oracle import Z3Oracle
from ._relations import encode_relations
from ._text import ForestText

__all__ = [
    "ENCODERS",
    "OUTPUT_ENCODERS",
    "ForestText",
    "Z3Oracle",
    "Z3Solver",
    "encode_model",
    "encode_outputs",
    "encode_relations",
    "forest_in_box",
    "is_forest",
    "rational",
    "z_box",
]
