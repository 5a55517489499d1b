"""The constraint language every method honours, its resolution into per-query
bounds, and the one checker.

* :class:`Constraints` and :class:`Causal` (:mod:`._language`): what a user may
  state about a query: immutable features, monotone directions, ranges, allowed
  values, features to vary, a cap on changes, causal relations, relations
  between features (:class:`Relation`, parsed by :mod:`._relations`, checked
  and bound to a query by :mod:`._relations_bound`).
* :class:`ResolvedConstraints`, :class:`QueryBounds`, :class:`FeatureBounds`
  (:mod:`._bounds`): the constraints merged with a schema's actionability and
  narrowed to one query's box; :func:`satisfied_many` checks many rows at once.
* :class:`Costs`, :class:`BoundCosts`, :class:`FeatureCost` (:mod:`._costs`):
  per-feature costs of a change in the user's units (weights, transitions,
  percentile shift); infinite costs forbid moves, as constraints.
* :class:`Requirements` (:mod:`._requirements`): what every answer must also satisfy
  (a margin, other models, certified regions) and how it is priced (costs).
* :class:`ConstraintKind` (:mod:`._kinds`): each kind declared once (its keyword,
  JSON form, HTTP field, command-line flag); :func:`constraint_kinds`,
  :func:`register_constraint_kind` and :func:`cli_arguments` read and extend the
  registry that :data:`CONSTRAINT_KINDS` lists.
* :func:`violations` (:mod:`._violations`): every violated constraint of one
  query's counterfactuals, one row each.
"""

from ._bounds import FeatureBounds, QueryBounds, ResolvedConstraints, changed, satisfied_many
from ._costs import BoundCosts, Costs, FeatureCost
from ._kinds import (
    CONSTRAINT_KINDS,
    CliForm,
    ConstraintKind,
    cli_arguments,
    constraint_kind,
    constraint_kinds,
    register_constraint_kind,
)
from ._language import Causal, Constraints, violations
from ._relations import Relation
from ._relations_bound import (
    BoundCategory,
    BoundConst,
    BoundLinear,
    BoundRelation,
    ResolvedRelation,
    negate,
)
from ._requirements import Requirements

__all__ = [
    "CONSTRAINT_KINDS",
    "BoundCategory",
    "BoundConst",
    "BoundCosts",
    "BoundLinear",
    "BoundRelation",
    "Causal",
    "CliForm",
    "ConstraintKind",
    "Constraints",
    "Costs",
    "FeatureBounds",
    "FeatureCost",
    "QueryBounds",
    "Relation",
    "Requirements",
    "ResolvedConstraints",
    "ResolvedRelation",
    "changed",
    "cli_arguments",
    "constraint_kind",
    "constraint_kinds",
    "negate",
    "register_constraint_kind",
    "satisfied_many",
    "violations",
]
