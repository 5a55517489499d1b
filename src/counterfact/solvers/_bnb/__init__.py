"""Branch-and-bound over the boxes a tree ensemble's splits cut (``solver="bnb"``).

* :mod:`._flat` -- the ensembles' trees as arrays, once per model;
* :mod:`._atoms` -- one query's features cut into atoms by the splits (its
  domain: range, integers or grid, allowed values, categories);
* :mod:`._query` -- every split and leaf in those atoms;
* :mod:`._conditions` -- the target region (decision with the margin, a
  probability floor, other models that must agree) as sums over leaves;
* :mod:`._search` -- best-first search by least distance, with per-tree bounds
  on the reachable leaves (Veritas / treecf) and the exact bound of separable
  distances;
* :mod:`._oracle` -- MACE's oracle on it (:class:`BnbOracle`), and
  :mod:`._backend` its registered backend (:class:`BnbSolver`).

Pure numpy; nothing here imports a solver.
"""

from ._atoms import Domain, FeatureAtoms, feature_atoms
from ._backend import BnbSolver
from ._conditions import forest_conditions
from ._flat import MAX_ATOMS, FlatForest, flat_forest
from ._oracle import BnbOracle, bnb_unsupported
from ._query import QueryForest, query_forest
from ._search import Conditions, Outcome, best_first

__all__ = [
    "MAX_ATOMS",
    "BnbOracle",
    "BnbSolver",
    "Conditions",
    "Domain",
    "FeatureAtoms",
    "FlatForest",
    "Outcome",
    "QueryForest",
    "best_first",
    "bnb_unsupported",
    "feature_atoms",
    "flat_forest",
    "forest_conditions",
    "query_forest",
]
