"""Recourse audits of a whole population (``cf.audit``, ``cf.AuditResult``).

A reviewer's questions about a deployed classifier -- what share of the
people it rejects can do anything about it, is anyone provably stuck, and
what does recourse cost each group -- answered by explaining every rejected
row with one method under one set of constraints and aggregating the
answers with their guarantees.  See :func:`audit` and :class:`AuditResult`.
The next question -- which few changes, the same for everyone, would help most of the
rejected people, and do they serve every group equally -- is :func:`global_recourse`
(:class:`GlobalRecourse`).
"""

from __future__ import annotations

from ._actions import Action, Atom
from ._global._result import GlobalRecourse
from ._global._run import global_recourse
from ._result import AuditResult
from ._run import audit
from ._text import GLOSSARY

__all__ = [
    "GLOSSARY",
    "Action",
    "Atom",
    "AuditResult",
    "GlobalRecourse",
    "audit",
    "global_recourse",
]
