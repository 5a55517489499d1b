"""Features and schemas: the single source of truth about a dataset's columns.

Every method reads the schema instead of guessing feature types.  A feature has

* a **kind**: ``real`` | ``integer`` | ``binary`` | ``categorical`` | ``ordinal``;
* a **domain**: numeric bounds (``lower``/``upper``) for real and integer features,
  the categories for binary, categorical and ordinal features (in order for
  ordinal ones);
* an **actionability**: ``free`` | ``immutable`` | ``increasing`` | ``decreasing``;
* a **resolution** for numeric features: the step of its grid (:mod:`._resolution`;
  :func:`infer_resolution` reads it off the data).
"""

from ._feature import Feature
from ._resolution import infer_resolution
from ._schema import Schema

__all__ = ["Feature", "Schema", "infer_resolution"]
