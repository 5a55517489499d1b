"""One result type for every method (:class:`CounterfactualResult`), the query
statuses as named constants, its JSON format and its text for people."""

from ._json import FORMAT_VERSION
from ._region import Region
from ._result import CounterfactualResult
from ._status import DEFAULT_REASONS, STATUSES, SUCCESS
from ._text import Change, certificate_text, changes, describe_changes

__all__ = [
    "DEFAULT_REASONS",
    "FORMAT_VERSION",
    "STATUSES",
    "SUCCESS",
    "Change",
    "CounterfactualResult",
    "Region",
    "certificate_text",
    "changes",
    "describe_changes",
]
