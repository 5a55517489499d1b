"""The constraint language every method honours, its resolution into per-query
bounds, and the one checker.

* :class:`Constraints` and :class:`Causal` (:mod:`._language`): what a user may
  state about a query: immutable features, monotone directions, ranges, allowed
  values, features to vary, a cap on changes, causal relations.
* :class:`ResolvedConstraints`, :class:`QueryBounds`, :class:`FeatureBounds`
  (:mod:`._bounds`): the constraints merged with a schema's actionability and
  narrowed to one query's box; :func:`satisfied_many` checks many rows at once.
* :func:`violations` (:mod:`._violations`): every violated constraint of one
  query's counterfactuals, one row each.
"""

from ._bounds import FeatureBounds, QueryBounds, ResolvedConstraints, changed, satisfied_many
from ._language import CONSTRAINT_KINDS, Causal, Constraints, violations

__all__ = [
    "CONSTRAINT_KINDS",
    "Causal",
    "Constraints",
    "FeatureBounds",
    "QueryBounds",
    "ResolvedConstraints",
    "changed",
    "satisfied_many",
    "violations",
]
