"""The constraint language every method honours, its resolution into per-query
bounds, and the one checker.

* :class:`Constraints` and :class:`Causal` (:mod:`._language`): what a user may
  state about a query: immutable features, monotone directions, ranges, allowed
  values, features to vary, a cap on changes, causal relations, relations
  between features (:class:`Relation`, parsed by :mod:`._relations`, checked
  and bound to a query by :mod:`._relations_bound`).
* :mod:`._bounds` (internal): the constraints merged with a schema's
  actionability and narrowed to one query's box, the bounds a method reads as
  ``query.bounds``.
* :class:`Costs` (:mod:`._costs`): per-feature costs of a change in the user's
  units (weights, transitions, percentile shift); infinite costs forbid moves,
  as constraints.
* :class:`Timeline` (:mod:`._timeline`): recourse over time: elapsed months, the
  features time moves, the cost of waiting.
* :class:`Requirements` (:mod:`._requirements`): what every answer must also satisfy
  (a margin, other models, certified regions) and how it is priced (costs).
* :class:`ConstraintKind` (:mod:`._kinds`): each kind declared once (its keyword,
  JSON form, HTTP field, command-line flag);
  :func:`constraint_kinds` and :func:`register_constraint_kind` read and extend
  the registry.
* :func:`violations` (:mod:`._violations`): every violated constraint of one
  query's counterfactuals, one row each.
"""

from ._costs import Costs
from ._kinds import ConstraintKind, constraint_kinds, register_constraint_kind
from ._language import Causal, Constraints, violations
from ._relations import Relation
from ._requirements import Requirements
from ._timeline import Timeline
from ._votes import vote_share_for

__all__ = [
    "Causal",
    "ConstraintKind",
    "Constraints",
    "Costs",
    "Relation",
    "Requirements",
    "Timeline",
    "constraint_kinds",
    "register_constraint_kind",
    "violations",
    "vote_share_for",
]
