"""One result type for every method (:class:`CounterfactualResult`), the query
statuses as named constants (:data:`STATUSES`, :data:`SUCCESS`), what vouches for it
(:class:`Integrity`, :class:`Certificate`), the regions of its answers (:class:`Region`,
read with the slack :data:`SLACK`)
and its text for people (:func:`changes`)."""

from ._certificate import Certificate
from ._integrity import Integrity
from ._region import SLACK, Region
from ._result import CounterfactualResult
from ._status import STATUSES, SUCCESS
from ._text import changes

__all__ = [
    "SLACK",
    "STATUSES",
    "SUCCESS",
    "Certificate",
    "CounterfactualResult",
    "Integrity",
    "Region",
    "changes",
]
