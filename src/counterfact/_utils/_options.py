"""A method's settings grouped in one options object (a frozen dataclass).

A method whose optimiser has many settings (L2C's training, MD-PSO's swarm)
takes them as one constructor parameter: an instance of a subclass of
:class:`OptionGroup`, or a plain dict of its fields (what a configuration file
or ``--param name={...}`` on the command line gives).  The options object
checks its fields when it is built, with the same messages as a method's
parameters; the method turns a dict into the options object at ``fit``
(:meth:`OptionGroup.coerce`), so that a misspelt field is an error there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any, ClassVar, TypeVar

from ..exceptions import ValidationError
from ._validation import TypeSpec, validate_params

__all__ = ["OptionGroup"]

G = TypeVar("G", bound="OptionGroup")


class OptionGroup:
    """Base of a frozen dataclass of settings; subclasses declare ``_constraints``.

    ``_constraints`` maps a field name to its accepted specs (as a method's
    ``_parameter_constraints``); :meth:`__post_init__` checks every field.
    """

    #: ``{field: [spec, ...]}``; see :mod:`counterfact._utils._validation`
    _constraints: ClassVar[dict[str, list[Any]]] = {}

    def __post_init__(self) -> None:
        validate_params(type(self).__name__, self.to_dict(), self._constraints)

    @classmethod
    def field_names(cls) -> list[str]:
        """The names of the settings, in declaration order."""
        return [f.name for f in fields(cls)]  # type: ignore[arg-type]

    def to_dict(self) -> dict[str, Any]:
        """The settings as a plain dict (for saving, or JSON)."""
        return {name: getattr(self, name) for name in self.field_names()}

    @classmethod
    def spec(cls) -> TypeSpec:
        """The parameter spec of a method parameter holding these options."""
        return TypeSpec((cls, Mapping), f"a {cls.__name__} or a dict of its fields")

    @classmethod
    def coerce(cls: type[G], value: Any, owner: str, param: str) -> G:
        """``value`` as an instance: itself, or built from a dict of its fields.

        Raises :class:`~counterfact.exceptions.ValidationError` naming the
        method (``owner``), its parameter and the unknown or invalid field.
        """
        if isinstance(value, cls):
            return value
        if not isinstance(value, Mapping):
            raise ValidationError(
                f"The '{param}' parameter of {owner} must be a {cls.__name__} or a dict "
                f"of its fields. Got {value!r}."
            )
        names = cls.field_names()
        unknown = sorted(str(k) for k in set(value) - set(names))
        if unknown:
            raise ValidationError(
                f"The '{param}' parameter of {owner} has unknown fields {unknown}. "
                f"{cls.__name__} has the fields {names}."
            )
        return cls(**value)
