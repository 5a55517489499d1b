"""What a method's answers mean, in words a person reads on the page, and the class names.

The words follow from what the method's class declares (``tags.proves_optimality``,
``tags.proves_infeasibility``), never from its name: a method that proves its
answers smallest gets "proven smallest", any other "found by search"; both name the
measure of effort ("no answer with fewer changes or smaller moves").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._utils._values import _py
from ..exceptions import ValidationError
from ..methods import MethodTags

__all__ = ["resolve_class_names", "status_meanings"]


def status_meanings(
    tags: MethodTags, lesser: str = "fewer changes or smaller moves"
) -> dict[str, str]:
    """Per status, what an answer of a method with these ``tags`` means, in plain words;
    ``lesser`` says what a smaller answer has under the measure of effort (the page's)."""
    name = tags.display_name
    if tags.proves_optimality:
        nearest = (
            f"Proven smallest: {name} proved that no answer with {lesser} reaches the outcome "
            "under your constraints (to within a small stated tolerance, such as 1 %)."
        )
        found = (
            f"Found by search and checked with the model, but not proven smallest: {name} ran "
            f"out of time before it could prove that no answer with {lesser} exists."
        )
    else:
        nearest = (
            f"Found by search and checked with the model; {name} does not prove that no answer "
            f"with {lesser} exists (its 'optimal' is the best among what it examined)."
        )
        found = (
            f"Found by search and checked with the model; an answer with {lesser} may exist "
            f"({name} does not prove it)."
        )
    if tags.proves_infeasibility:
        none = f"Proven: {name} showed that no change within your constraints reaches the outcome."
    else:
        none = (
            f"{name} found no answer. Unless the reason says your constraints alone allow no "
            "value, this does not prove that none exists. Try loosening your constraints."
        )
    return {
        "optimal": nearest,
        "feasible": found,
        "infeasible": none,
        "timeout": "Time ran out before an answer was found; try a longer time limit or fewer "
        "constraints.",
        "failed": f"{name} found no answer; this does not prove that none exists.",
        "invalid": "Your constraints contradict this case; change them and ask again.",
    }


def resolve_class_names(
    classes: Sequence[Any],
    given: Mapping[Any, Any] | Sequence[Any] | str | None,
    default: Mapping[Any, Any] | None = None,
) -> dict[str, str]:
    """Readable class names, keyed by ``str(class)``.

    Parameters
    ----------
    classes : sequence
        The model's classes, in its order (``model.classes_``).
    given : mapping, sequence, str or None
        The names to use: one per class in the model's order (``["bad", "good"]``
        or ``"bad,good"``), or ``{class: name}`` (``"0=bad,1=good"``, every class
        named).  None: ``default``, else each class as it is written.
    default : mapping, optional
        Names known from the data (a dataset's ``target_labels``).
    """
    keys = [str(_py(c)) for c in classes]
    if given is None:
        labels = dict(default or {})
        return {str(_py(c)): str(labels.get(_py(c), _py(c))) for c in classes}
    if isinstance(given, str):
        items = [p.strip() for p in given.split(",")]
        pairs = [p.split("=", 1) for p in items]
        given = {a.strip(): b for a, b in pairs} if all(len(x) == 2 for x in pairs) else items
    if isinstance(given, Mapping):
        names = {str(_py(k)).strip(): str(v).strip() for k, v in given.items()}
        unknown = sorted(set(names) - set(keys))
        missing = [k for k in keys if k not in names]
        if unknown or missing:
            raise ValidationError(
                f"class names {dict(given)} do not match the model's classes {keys}"
                + (f": unknown classes {unknown}" if unknown else "")
                + (f": no name for {missing}" if missing else "")
                + f". Name every class, e.g. {','.join(f'{k}=name' for k in keys)}."
            )
    else:
        seq = [str(v).strip() for v in given]
        if len(seq) != len(keys):
            raise ValidationError(
                f"{len(seq)} class names {seq} for the model's {len(keys)} classes {keys}; give "
                "one name per class, "
                "in that order."
            )
        names = dict(zip(keys, seq, strict=True))
    empty = [k for k in keys if not names[k]]
    if empty:
        raise ValidationError(f"The class names of {empty} are empty; give every class a name.")
    if len(set(names.values())) != len(keys):
        raise ValidationError(f"Class names must be distinct. Got {[names[k] for k in keys]}.")
    return {k: names[k] for k in keys}
