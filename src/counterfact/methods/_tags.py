"""What a method declares about itself: :class:`MethodTags` (like scikit-learn's tags).

Every fact that the rest of the library needs about a method lives on its class,
as ``tags``, not in tables keyed by the method's name elsewhere: the audit, the
server and its page, the command line, the README's table and the conformance
suite read the class.  Registering a class (:func:`counterfact.methods.register`)
is all a new method needs for them to pick it up.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..constraints._kinds import CONSTRAINT_KINDS

__all__ = ["MethodTags"]

#: constraint kinds a method honours unless it says otherwise: none (each kind it honours is
#: named in its tags, so a new kind is honoured by no method until one declares it)
DEFAULT_CONSTRAINTS: frozenset[str] = frozenset()

#: the kinds the built-in search methods honour (all but causal relations), written out:
#: a kind added to the registry joins no method's tags until someone adds it here or there
SEARCH_KINDS: frozenset[str] = frozenset(
    {
        "immutable",
        "increasing",
        "decreasing",
        "ranges",
        "allowed_values",
        "features_to_vary",
        "max_changes",
        "relations",
    }
)


def _frozen(params: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(params))


@dataclass(frozen=True)
class MethodTags:
    """The capabilities and facts of a counterfactual method, declared on its class.

    Attributes
    ----------
    display_name : str
        How people see the method's name (``"CE-OCL"``).
    summary : str
        What it does, in a few words (the README's table, ``counterfact methods``,
        the page's method list).
    paper : str
        The reference it implements (short form).
    proves_optimality : bool
        Status ``optimal`` is a proof: no valid counterfactual is nearer (exact methods).
    proves_infeasibility : bool
        Status ``infeasible`` is a proof that no counterfactual exists under the
        constraints (a solver's refutation), not merely "none found".
    constraints : frozenset of str
        Constraint kinds the method honours natively, each named (none by
        default); others raise :class:`~counterfact.exceptions.UnsupportedConstraintError`.
    batch : bool
        The method explains a batch of queries in one call (``_explain_batch``:
        amortized or vectorised), rather than one query at a time (``_explain_one``).
    sparsify : bool
        By default every change the model does not need is reverted after the
        search (a method with a ``sparsify`` parameter lets the user choose).
    peer : bool
        An adapter to another library, kept for comparisons; listed only when
        asked for (``names(peers=True)``) and when ``requires`` is importable.
    requires : tuple of str
        Import names a peer adapter needs.
    extra : str or None
        The ``pip install "counterfact[extra]"`` it cannot run without (None: the
        core install runs it; an extra may still widen it, such as ``[mace]``'s
        CP-SAT oracle).
    fast_params : mapping
        Parameters that make it fast and seeded on a few hundred rows (tests, demos).
    order : int
        Position in listings (the first available is the server's default method).
    measure : {"distance", "objective"} or None
        The method's own measure of an answer, if it has one: ``"distance"`` (MACE's
        eq. 3 distance under the method's ``norm``) or ``"objective"`` (the
        ``objective`` diagnostic of each query).
    costs : {"exact", "search"} or None
        How the method honours ``Requirements(costs=cf.Costs(...))``: ``"exact"``
        (its solver minimises the cost, so ``optimal`` and its lower bound are
        proofs under it), ``"search"`` (its ranking or fitness uses the cost),
        or None (it cannot: such a call raises
        :class:`~counterfact.exceptions.UnsupportedConstraintError`).
    own_objective : tuple of str
        Parameters that shape only the method's own objective (``costs="own"``), such
        as MACE's ``norm``: under a measure of effort they do nothing, and a call that
        leaves them off their defaults says so in a warning.
    """

    display_name: str
    summary: str
    paper: str = ""
    proves_optimality: bool = False
    proves_infeasibility: bool = False
    constraints: frozenset[str] = DEFAULT_CONSTRAINTS
    batch: bool = False
    sparsify: bool = False
    peer: bool = False
    requires: tuple[str, ...] = ()
    extra: str | None = None
    fast_params: Mapping[str, Any] = field(default_factory=dict)
    order: int = 100
    measure: str | None = None
    costs: str | None = None
    own_objective: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        unknown = set(self.constraints) - set(CONSTRAINT_KINDS)
        if unknown:
            raise ValueError(
                f"MethodTags.constraints names unknown kinds {sorted(unknown)}; known: "
                f"{list(CONSTRAINT_KINDS)}."
            )
        if self.measure not in (None, "distance", "objective"):
            raise ValueError(
                f"MethodTags.measure must be None, 'distance' or 'objective'. Got {self.measure!r}."
            )
        if self.costs not in (None, "exact", "search"):
            raise ValueError(
                f"MethodTags.costs must be None, 'exact' or 'search'. Got {self.costs!r}."
            )
        object.__setattr__(self, "constraints", frozenset(self.constraints))
        object.__setattr__(self, "fast_params", _frozen(self.fast_params))

    @property
    def exact(self) -> bool:
        """Whether the method proves something (optimality or infeasibility)."""
        return self.proves_optimality or self.proves_infeasibility
