"""Features and schemas: the single source of truth about a dataset's columns.

Every method reads the schema instead of guessing feature types.  A feature has

* a **kind**: ``real`` | ``integer`` | ``binary`` | ``categorical`` | ``ordinal``;
* a **domain**: numeric bounds (``lower``/``upper``) for real and integer features,
  the categories for binary, categorical and ordinal features (in order for
  ordinal ones);
* an **actionability**: ``free`` | ``immutable`` | ``increasing`` | ``decreasing``;
* a **resolution** for numeric features: the step of its grid (:mod:`._resolution`).

Values are written for people by :func:`format_value`.
"""

from ._feature import (
    ACTIONABILITY,
    DISCRETE_KINDS,
    KINDS,
    NUMERIC_KINDS,
    Actionability,
    Feature,
    Kind,
)
from ._format import format_value
from ._resolution import COARSEST, FINEST, decimals, infer_resolution, snap_array
from ._schema import Schema

__all__ = [
    "ACTIONABILITY",
    "COARSEST",
    "DISCRETE_KINDS",
    "FINEST",
    "KINDS",
    "NUMERIC_KINDS",
    "Actionability",
    "Feature",
    "Kind",
    "Schema",
    "decimals",
    "format_value",
    "infer_resolution",
    "snap_array",
]
