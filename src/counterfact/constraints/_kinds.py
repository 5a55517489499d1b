"""The constraint kinds, each declared once: :class:`ConstraintKind` and its registry.

A kind is one keyword of :class:`~counterfact.Constraints` (``immutable``,
``max_changes``, ``relations``, ...).  Its declaration says everything the rest
of the library needs to know about it:

* ``name``: the keyword of ``Constraints`` and the key of the JSON/YAML form;
* ``help``: what it says, in one sentence (the command line's help, the HTTP
  API's description);
* ``shape``: the form of its value (``"names"``, ``"names_or_all"``,
  ``"ranges"``, ``"values"``, ``"count"``, ``"causal"``, ``"relations"``,
  ``"timeline"``), from
  which its JSON form and the HTTP API's field type follow;
* ``empty``: the value that means "no such constraint";
* ``cli``: its command-line flag (:class:`CliForm`), or ``None`` when it is
  given in a constraints file only.

Everything else is derived from the registry: :data:`CONSTRAINT_KINDS`,
:meth:`Constraints.kinds`, ``Constraints.to_dict``/``from_dict``, the server's
request model and the command line's flags (:func:`cli_arguments`).  Methods
declare each kind they honour in their tags, none by default: a kind added here
is refused by every method (``UnsupportedConstraintError``) until one declares it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..exceptions import ConstraintError
from ._inputs import _causal_from_dict, _mapping, _sequence
from ._timeline import Timeline

__all__ = [
    "CONSTRAINT_KINDS",
    "CliForm",
    "ConstraintKind",
    "cli_arguments",
    "constraint_kind",
    "constraint_kinds",
    "register_constraint_kind",
]

#: the forms a kind's value may take (each has a JSON form and an HTTP field type)
SHAPES = ("names", "names_or_all", "ranges", "values", "count", "causal", "relations", "timeline")


@dataclass(frozen=True)
class CliForm:
    """A kind's command-line flag: ``--flag METAVAR`` (``repeat``: may be given again)."""

    flag: str
    metavar: str
    help: str
    repeat: bool = False
    integer: bool = False

    @property
    def dest(self) -> str:
        """The attribute of the parsed arguments that holds it."""
        return self.flag.lstrip("-").replace("-", "_")

    def argparse_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of ``ArgumentParser.add_argument(self.flag, **...)``."""
        out: dict[str, Any] = {"metavar": self.metavar, "help": self.help, "dest": self.dest}
        if self.repeat:
            out["action"] = "append"
        if self.integer:
            out["type"] = int
        return out


@dataclass(frozen=True)
class ConstraintKind:
    """One kind of constraint (see the module docstring for each field)."""

    name: str
    help: str
    shape: str
    empty: Any = ()
    cli: CliForm | None = None

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ConstraintError(f"A constraint kind's name must be an identifier: {self.name!r}.")
        if self.shape not in SHAPES:
            raise ConstraintError(
                f"Constraint kind {self.name!r}: shape {self.shape!r} is not one of {SHAPES}."
            )

    def value(self, constraints: Any) -> Any:
        """Its value in ``constraints`` (``empty`` when that object has no such field)."""
        return getattr(constraints, self.name, self.empty)

    def used(self, constraints: Any) -> bool:
        """Whether ``constraints`` states this kind."""
        return self.value(constraints) != self.empty

    def to_json(self, value: Any, *, strict: bool = True) -> Any:
        """The JSON form of a value (``strict=False``: leave out what cannot be written)."""
        if self.shape in ("ranges", "values"):
            return {k: list(v) for k, v in value.items()}
        if self.shape == "count":
            return value
        if self.shape == "causal":
            return _causal_json(value, strict)
        if self.shape == "timeline":
            return value.to_dict()
        return [str(v) for v in value]

    def from_json(self, value: Any) -> Any:
        """The value for ``Constraints(name=...)`` from its JSON form (checked there)."""
        if self.shape == "ranges":
            return _mapping(value, self.name)
        if self.shape == "causal":
            return [_causal_from_dict(c, k) for k, c in enumerate(_sequence(value, self.name))]
        if self.shape == "relations":
            return _sequence(value, self.name)
        if self.shape == "timeline":
            return Timeline.from_dict(value)
        return value


def _causal_json(value: Sequence[Any], strict: bool) -> list[dict[str, Any]]:
    out = []
    for c in value:
        if c.kind != "linear":
            if strict:
                raise ConstraintError("Only linear causal relations can be serialised.")
            continue
        coef = dict(c.coef or {})
        out.append(
            {"child": c.child, "parents": list(c.parents), "coef": coef, "intercept": c.intercept}
        )
    return out


def _names_flag(flag: str, help: str) -> CliForm:
    return CliForm(flag, "F1,F2", help)


_BUILT_IN = (
    ConstraintKind(
        "immutable",
        "Features that must not change.",
        "names",
        cli=_names_flag("--immutable", "features that must not change"),
    ),
    ConstraintKind(
        "increasing",
        "Features that may only go up (ordinal features by rank).",
        "names",
        cli=_names_flag("--increasing", "features that may only increase"),
    ),
    ConstraintKind(
        "decreasing",
        "Features that may only go down (ordinal features by rank).",
        "names",
        cli=_names_flag("--decreasing", "features that may only decrease"),
    ),
    ConstraintKind(
        "ranges",
        "Numeric feature -> [low, high] on its new value (either may be null).",
        "ranges",
        empty={},
        cli=CliForm(
            "--range",
            "FEATURE=LOW:HIGH",
            "bounds of a feature; either side may be empty (repeatable)",
            repeat=True,
        ),
    ),
    ConstraintKind(
        "allowed_values",
        "Feature -> the values its new value may take.",
        "values",
        empty={},
        cli=CliForm(
            "--allowed", "FEATURE=V1,V2", "the values a feature may take (repeatable)", repeat=True
        ),
    ),
    ConstraintKind(
        "features_to_vary",
        "The only features that may change (all others are fixed).",
        "names_or_all",
        empty=None,
        cli=_names_flag("--vary", "the only features that may change"),
    ),
    ConstraintKind(
        "max_changes",
        "At most this many features may change.",
        "count",
        empty=None,
        cli=CliForm("--max-changes", "K", "change at most K features", integer=True),
    ),
    ConstraintKind("causal", "Linear causal relations (CE-OCL eq. 7).", "causal"),
    ConstraintKind(
        "relations",
        "Relations between features, e.g. 'credit_amount <= 600 * duration_months' or "
        "'if housing != housing@ then residence_since == 1' (name@: the row's own value).",
        "relations",
    ),
    ConstraintKind(
        "timeline",
        "Recourse over time: a horizon in months, the features time moves or lets change at "
        "a bounded rate, and the cost of waiting (cf.Timeline; a number is a horizon).",
        "timeline",
        empty=None,
        cli=CliForm(
            "--horizon",
            "N",
            "allow answers that take up to N months (a timeline; on a bundled --dataset its "
            "default one: its rates and cost of waiting)",
            integer=True,
        ),
    ),
)

_REGISTRY: dict[str, ConstraintKind] = {k.name: k for k in _BUILT_IN}


def register_constraint_kind(kind: ConstraintKind) -> ConstraintKind:
    """Add a kind to the registry (its name must be new); returns it.

    No method honours it until one names it in ``MethodTags(constraints=...)``.
    """
    if not isinstance(kind, ConstraintKind):
        raise ConstraintError(f"Register a ConstraintKind. Got {type(kind).__name__}.")
    if kind.name in _REGISTRY:
        raise ConstraintError(f"The constraint kind {kind.name!r} is already registered.")
    _REGISTRY[kind.name] = kind
    return kind


def constraint_kinds() -> tuple[ConstraintKind, ...]:
    """Every registered kind, in the order of registration."""
    return tuple(_REGISTRY.values())


def constraint_kind(name: str) -> ConstraintKind:
    """The kind called ``name``; ConstraintError naming the known ones otherwise."""
    if name not in _REGISTRY:
        raise ConstraintError(
            f"Unknown constraint kind {name!r}. Known kinds: {sorted(_REGISTRY)}."
        )
    return _REGISTRY[name]


def cli_arguments() -> list[tuple[ConstraintKind, CliForm]]:
    """Each kind with a command-line flag, and that flag; add them with
    ``parser.add_argument(form.flag, **form.argparse_kwargs())``."""
    return [(k, k.cli) for k in _REGISTRY.values() if k.cli is not None]


class _KindNames(Sequence[str]):
    """The registered kinds' names, read from the registry each time (a tuple-like view)."""

    def __getitem__(self, index: Any) -> Any:
        return tuple(_REGISTRY)[index]

    def __len__(self) -> int:
        return len(_REGISTRY)

    def __iter__(self) -> Iterator[str]:
        return iter(tuple(_REGISTRY))

    def __contains__(self, name: object) -> bool:
        return name in _REGISTRY

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(tuple(_REGISTRY))


#: The names of every constraint kind (a live view of the registry); methods declare
#: which of them they honour.
CONSTRAINT_KINDS: Sequence[str] = _KindNames()
