"""What vouches for a result's content: :class:`Integrity`.

A result computed by ``explain`` was checked with the real model before it was
returned.  A result read from a file is only as good as what checked the file:

* ``"explain"``: computed (and checked with the model) by the library in this process;
* ``"sha256"``: read from a file whose content matched the SHA-256 that ``to_json``
  wrote, from a result that was itself verified (it detects damage and edits made
  without recomputing the hash; it is not a signature);
* ``"model"``: every answer re-checked with the model (and the margin, the other
  models and the regions) when the file was read.

A result that none of these vouch for (a file of a format without a hash, loaded
without a model) is *unverified*: its answers, probabilities and certificates
are what the file says, and ``describe()`` says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..exceptions import ValidationError

__all__ = ["CHECKS", "Integrity"]

#: what may vouch for a result's content
CHECKS = ("explain", "sha256", "model")


@dataclass(frozen=True)
class Integrity:
    """What vouches for a result's content (see the module docstring).

    Attributes
    ----------
    verified_by : tuple of str
        Each of ``"explain"``, ``"sha256"``, ``"model"`` that vouches for it; empty:
        unverified.
    format_version : int or None
        The format of the file it was read from (None: not read from a file).
    notes : tuple of str
        What was not re-checked, or was dropped, when it was read.
    """

    verified_by: tuple[str, ...] = ("explain",)
    format_version: int | None = None
    notes: tuple[str, ...] = ()

    @property
    def verified(self) -> bool:
        """Whether anything vouches for the content."""
        return bool(self.verified_by)

    def describe(self, what: str = "result") -> str:
        """One sentence: what vouches for the content (of a ``what``), and each note."""
        source = what + (
            f" read from a format-{self.format_version} file"
            if self.format_version is not None
            else " computed"
        )
        if self.verified:
            words = {
                "explain": "checked with the model when computed",
                "sha256": "unchanged since it was written (its SHA-256 matches)",
                "model": "re-checked with the model when read",
            }
            head = (
                source[0].upper()
                + source[1:]
                + ": "
                + "; ".join(words[v] for v in self.verified_by)
                + "."
            )
        else:
            head = (
                f"Unverified: {source} that nothing checked (its answers, probabilities "
                "and certificates are what the file says); read it with "
                "from_json(text, model=<the fitted model>) to re-check them."
            )
        return " ".join([head, *self.notes])

    def to_dict(self) -> dict[str, Any]:
        """The JSON form written with the result: whether anything vouched for it, and the
        notes (the format version is the file's own)."""
        return {"verified": self.verified, "notes": list(self.notes)}

    @classmethod
    def from_dict(cls, d: Any, format_version: int) -> Integrity:
        """The integrity of a result read from a file whose content hash matched: vouched
        for by the hash when the writer's result was verified, else unverified (with its
        notes); ValidationError when malformed."""
        if (
            not isinstance(d, Mapping)
            or set(d) != {"verified", "notes"}
            or not isinstance(d["verified"], bool)
            or not isinstance(d["notes"], list)
            or not all(isinstance(n, str) for n in d["notes"])
        ):
            raise ValidationError(
                "'integrity' must be an object {'verified': true or false, 'notes': [text, "
                f"...]}}. Got {d!r}."
            )
        return cls(("sha256",) if d["verified"] else (), format_version, tuple(d["notes"]))

    @classmethod
    def join(cls, parts: Iterable[Integrity]) -> Integrity:
        """The integrity of results joined into one: what vouches for every part, and
        every part's notes."""
        items = list(parts)
        if not items:
            return cls()
        common = [v for v in items[0].verified_by if all(v in p.verified_by for p in items)]
        versions = {p.format_version for p in items}
        notes = dict.fromkeys(n for p in items for n in p.notes)
        return cls(tuple(common), versions.pop() if len(versions) == 1 else None, tuple(notes))
