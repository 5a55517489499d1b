"""Population analyses: recourse audits and global recourse.

A reviewer's questions about a deployed classifier, answered for a whole population
rather than one person:

* :func:`audit` (:class:`AuditResult`) -- what share of the people the model rejects can
  do something about it, is anyone provably stuck, and what does recourse cost each
  group?  Every rejected row is explained with one method, under one set of constraints
  and requirements, and each answer is *recourse* (a counterfactual verified with the
  real model), *proven none* (an exact method's proof that no counterfactual exists) or
  *unknown* (a time limit, a failure, or a heuristic that found none, which proves
  nothing).  The rates, costs and burdens are aggregated overall and per group, with
  intervals.
* :func:`global_recourse` (:class:`GlobalRecourse`) -- which few changes, the same for
  everyone (:class:`Action`, one change per feature, such as "reduce
  duration_months by 12"), would help most of the rejected people, and do they serve
  every group equally?  The actions are built from the per-person counterfactuals,
  each applied to every rejected person's own row and checked against that person's
  constraints and with the real model; the chosen set covers the most people, then
  costs them the least.

Both take the same grouped settings: :class:`Statistics` (how the figures are estimated)
and :class:`Batch` (how the rows are explained: in chunks, in parallel, resumably);
global recourse also takes an :class:`ActionSearch`.  ``cf.audit``, ``cf.AuditResult``,
``cf.global_recourse`` and ``cf.GlobalRecourse`` are also at the package's top level.
"""

from __future__ import annotations

from ._actions import Action
from ._global._result import GlobalRecourse
from ._global._run import global_recourse
from ._result import AuditResult
from ._run import audit
from ._settings import ActionSearch, Batch, Statistics

__all__ = [
    "Action",
    "ActionSearch",
    "AuditResult",
    "Batch",
    "GlobalRecourse",
    "Statistics",
    "audit",
    "global_recourse",
]
