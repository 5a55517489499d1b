"""Turning the command line's text options into values, with one clear error each."""

from __future__ import annotations

import argparse
import difflib
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

from .. import methods
from .._utils._deps import install_hint, is_available
from .._utils._validation import check_writable
from ..constraints import Constraints
from ..constraints._timeline import MAX_HORIZON
from ..data._loading import _existing_file, read_structured
from ..exceptions import CounterfactError, MissingDependencyError, ValidationError

__all__ = [
    "check_method",
    "check_writable",
    "constraints_from_args",
    "joined",
    "method_params",
    "parse_rows",
    "parse_value",
    "read_constraints_file",
    "settle",
    "split_list",
    "units",
]


def parse_value(text: str) -> Any:
    """A YAML scalar (``3``, ``0.5``, ``true``, ``good``) from its text."""
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def split_list(text: str | list[str] | None) -> list[str]:
    """``"a, b,c"`` -> ``["a", "b", "c"]``; a repeated option's values (a list) are read
    as one list, in order, without repeats."""
    if isinstance(text, list):
        text = ",".join(text)
    return list(dict.fromkeys(t.strip() for t in text.split(",") if t.strip())) if text else []


def joined(value: str | list[str] | None) -> str | None:
    """A repeated option's values as one comma-separated text (``None`` when not given)."""
    return ",".join(value) if isinstance(value, list) else value


def class_names(text: str | list[str] | None) -> dict[Any, str]:
    """``--class-names 0=rejected,1=approved`` -> ``{0: "rejected", 1: "approved"}``."""
    text = joined(text)
    out: dict[Any, str] = {}
    for item in split_list(text):
        key, sep, name = item.partition("=")
        if not sep or not key.strip() or not name.strip():
            raise ValidationError(
                f"--class-names {text!r}: {item!r} is not CLASS=NAME; write e.g. --class-names "
                "0=rejected,1=approved."
            )
        out[parse_value(key.strip())] = name.strip()
    return out


def units(text: str | list[str] | None) -> dict[str, str]:
    """``--units income=USD,loan_term=months`` -> ``{"income": "USD", "loan_term": "months"}``."""
    text = joined(text)
    out: dict[str, str] = {}
    for item in split_list(text):
        name, sep, unit = item.partition("=")
        if not sep or not name.strip() or not unit.strip():
            raise ValidationError(
                f"--units {text!r}: {item!r} is not FEATURE=UNIT; write e.g. --units "
                "income=USD,loan_term=months."
            )
        out[name.strip()] = unit.strip()
    return out


def _int(text: str, option: str, whole: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise ValidationError(
            f"{option} {whole!r}: {text.strip()!r} is not a row number; use positions such as "
            "'0:5', '3,7,9' or ':' for all rows."
        ) from None


def parse_rows(text: str, n: int, *, what: str) -> list[int]:
    """Row positions from ``"0:5"``, ``"3,7,9"``, ``"10:"`` or ``":"`` (all rows).

    Parameters
    ----------
    text : str
        The option's value.
    n : int
        How many rows there are.
    what : str
        What the positions index (for the error message), e.g. "the test split".
    """
    rows: list[int] = []
    if not text.strip():
        raise ValidationError(
            "--rows is empty; use positions such as '0:5', '3,7,9' or ':' for all rows."
        )
    for part in text.split(","):
        part = part.strip()
        if ":" in part:
            a, _, b = part.partition(":")
            start = _int(a, "--rows", text) if a.strip() else 0
            stop = _int(b, "--rows", text) if b.strip() else n
            if start < 0 or stop < 0:
                raise ValidationError(
                    f"--rows {text!r}: positions start at 0 (negative positions are not supported)."
                )
            rows.extend(range(start, stop))
        elif part:
            rows.append(_int(part, "--rows", text))
    bad = [r for r in rows if not 0 <= r < n]
    if bad:
        shown = bad if len(bad) <= 5 else [*bad[:5], "..."]
        raise ValidationError(
            f"--rows {text!r} selects rows {shown} outside 0..{n - 1} of {what} ({n} rows)."
        )
    if not rows:
        raise ValidationError(f"--rows {text!r} selects no row of {what} ({n} rows).")
    return list(dict.fromkeys(rows))


def _float(text: str, item: str) -> float | None:
    if not text.strip():
        return None
    try:
        value = float(text)
    except ValueError:
        raise ValidationError(
            f"--range {item!r}: {text.strip()!r} is not a number; expected FEATURE=LOW:HIGH with "
            "numbers (either side may be empty)."
        ) from None
    if math.isnan(value):
        raise ValidationError(
            f"--range {item!r}: NaN is not a bound; leave the side empty for no bound."
        )
    if math.isinf(value):
        raise ValidationError(
            f"--range {item!r}: {text.strip()!r} is not a finite number (beyond float64's range, "
            "about 1.8e308); leave the side empty for no bound."
        )
    return value


def read_constraints_file(path_text: str) -> Any:
    path = Path(path_text).expanduser()
    if not path.is_file():
        what = "is a folder" if path.is_dir() else "does not exist"
        raise ValidationError(
            f"--constraints {str(path)!r} {what}; pass a YAML or JSON file with keys as "
            "cf.Constraints."
        )
    d = read_structured(path, "--constraints")
    if d is None:
        d = {}
    if not isinstance(d, dict):
        raise ValidationError(
            f"--constraints {str(path)!r} must hold a mapping (keys: immutable, increasing, "
            "decreasing, ranges, allowed_values, features_to_vary, max_changes, causal, "
            f"relations). Got a {type(d).__name__}."
        )
    try:
        return Constraints.from_dict(d)
    except CounterfactError as exc:
        raise ValidationError(f"--constraints {str(path)!r}: {exc}") from None
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise ValidationError(
            f"--constraints {str(path)!r} has a malformed entry ({type(exc).__name__}: {exc}); see "
            "cf.Constraints for the form of each key (ranges: {feature: [low, high]}, causal: "
            "[{child, parents, coef}])."
        ) from None


def _range_items(items: list[str] | None) -> list[Constraints]:
    """One Constraints per ``--range FEATURE=LOW:HIGH``."""
    out = []
    for item in items or []:
        name, eq, spec = item.partition("=")
        lo, colon, hi = spec.partition(":")
        if not name.strip() or not eq or not colon:
            raise ValidationError(
                f"--range {item!r}: expected FEATURE=LOW:HIGH (either side may be empty)."
            )
        out.append(Constraints(ranges={name.strip(): (_float(lo, item), _float(hi, item))}))
    return out


def _allowed_items(items: list[str] | None) -> list[Constraints]:
    """One Constraints per ``--allowed FEATURE=V1,V2``."""
    out = []
    for item in items or []:
        name, eq, vals = item.partition("=")
        if not name.strip() or not eq or not vals.strip():
            raise ValidationError(
                f"--allowed {item!r}: expected FEATURE=v1,v2,... (the values the feature may take)."
            )
        values = [parse_value(v.strip()) for v in vals.split(",") if v.strip()]
        out.append(Constraints(allowed_values={name.strip(): values}))
    return out


def _merged(base: Constraints, more: Constraints) -> Constraints:
    """``base`` and ``more`` at once, as a --constraints file and the flags combine (ranges
    intersect, allowed values too); an empty intersection is refused in the flags' words."""
    try:
        merged = base.merge(more)
    except CounterfactError as exc:
        raise ValidationError(
            f"--range/--allowed/--constraints leave no value: {exc} Bounds given more than once "
            "intersect; widen or drop one."
        ) from None
    for name, values in merged.allowed_values.items():
        if not values and base.allowed_values.get(name) and more.allowed_values.get(name):
            raise ValidationError(
                f"--allowed/--constraints leave no value for {name!r}: the values given for it "
                "more than once have none in common; drop or widen one."
            )
    return merged


def constraints_from_args(args: argparse.Namespace) -> Any:
    """The :class:`~counterfact.Constraints` of ``--constraints`` merged with the flags; a flag
    given more than once adds to the others (features are listed together, ranges and allowed
    values intersect), as the flags combine with a --constraints file."""
    base = read_constraints_file(args.constraints) if args.constraints else Constraints()
    parts = _range_items(args.range) + _allowed_items(args.allowed)
    if args.max_changes is not None and args.max_changes < 1:
        raise ValidationError(f"--max-changes must be at least 1. Got {args.max_changes}.")
    horizon = getattr(args, "horizon", None)
    if horizon is not None and not 0 <= horizon <= MAX_HORIZON:
        raise ValidationError(
            f"--horizon must be a whole number of months from 0 to {MAX_HORIZON} (the months an "
            f"answer may take). Got {horizon}."
        )
    if horizon is not None and base.timeline is not None:
        # the file's timeline is the user's: the flag sets its horizon and nothing else
        base = replace(base, timeline=base.timeline.with_horizon(horizon))
        horizon = None
    flags = Constraints(
        immutable=split_list(args.immutable),
        increasing=split_list(args.increasing),
        decreasing=split_list(args.decreasing),
        features_to_vary=split_list(args.vary) or None,
        max_changes=args.max_changes,
        timeline=horizon,
    )
    merged = _merged(base, flags)
    for part in parts:
        merged = _merged(merged, part)
    return merged


def method_params(args: argparse.Namespace, cls: type) -> dict[str, Any]:
    """The method's parameters from ``--param``, ``--solver``, ``--seed``, ``--time-limit``
    and ``-v``.

    Unknown parameter names are an error listing the method's parameters.
    """
    names = list(cls._param_names())  # type: ignore[attr-defined]
    params = _param_items(args, names)
    solver = getattr(args, "solver", None)
    if solver is not None:
        if "solver" not in names:
            raise ValidationError(
                f"--solver {solver!r}: method {args.method!r} has no choice of solver; "
                f"the methods that have one: {_methods_with_solver()}."
            )
        params.setdefault("solver", solver)
    if args.seed is not None and "random_state" in names:
        params.setdefault("random_state", args.seed)
    if args.time_limit is not None and "time_limit" in names:
        if not math.isfinite(args.time_limit) or args.time_limit <= 0:
            raise ValidationError(
                "--time-limit must be a positive, finite number of seconds (leave it out for the "
                f"method's default). Got {args.time_limit}."
            )
        params.setdefault("time_limit", args.time_limit)
    if getattr(args, "verbose", 0) and "verbose" in names:
        params.setdefault("verbose", 1)
    return params


def _param_items(args: argparse.Namespace, names: list[str]) -> dict[str, Any]:
    """``--param NAME=VALUE`` items, each naming one of the method's parameters ``names``."""
    params: dict[str, Any] = {}
    for item in args.param or []:
        k, sep, v = item.partition("=")
        k = k.strip()
        if not sep or not k:
            raise ValidationError(
                f"--param {item!r}: expected NAME=VALUE, e.g. --param time_limit=10."
            )
        if k not in names:
            close = difflib.get_close_matches(k, names, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ValidationError(
                f"--param {item!r}: method {args.method!r} has no parameter {k!r}.{hint} Its "
                f"parameters: {names}."
            )
        params[k] = parse_value(v)
    return params


def _methods_with_solver() -> list[str]:
    return [n for n in methods.names(peers=True) if "solver" in methods.get_class(n)._param_names()]


#: the options that also set a method parameter: (option, its dest, the parameter)
_PARAM_OPTIONS = (
    ("--time-limit", "time_limit", "time_limit"),
    ("--solver", "solver", "solver"),
    ("--seed", "seed", "random_state"),
)

#: what an option left out means (their argparse default is None, so that a value the user
#: typed is told from the default)
DEFAULTS = {"seed": 0, "test_size": 0.2}


def settle(args: argparse.Namespace) -> None:
    """Refuse options that contradict each other, then give the ones left out their default.

    An option the user typed is never overruled silently by another: both are named in one
    error. Options left out are ``None`` until here (their help says their default)."""
    given = _raw_params(args)
    for option, dest, param in _PARAM_OPTIONS:
        value = getattr(args, dest, None)
        if value is None or param not in given:
            continue
        if parse_value(str(value)) != given[param] and str(value) != str(given[param]):
            raise ValidationError(
                f"{option} {value} and --param {param}={given[param]} disagree; give the "
                f"{param} once."
            )
    model_file = getattr(args, "model_file", None)
    if model_file:  # a missing file is said before the pickle's warning or any work
        _existing_file(model_file, "--model-file")
    if model_file and getattr(args, "model", None) is not None:
        raise ValidationError(
            f"--model {args.model} and --model-file {model_file!r} both choose the model: "
            "--model-file is already fitted; drop one."
        )
    if getattr(args, "test_size", None) is not None and (args.data or args.queries):
        used = f"--data {args.data!r}" if args.data else f"--queries {args.queries!r}"
        raise ValidationError(
            f"--test-size {args.test_size:g} and {used}: --test-size holds out test rows of a "
            f"--dataset, and with {used.split()[0]} no rows are held out; drop --test-size."
        )
    for dest, value in DEFAULTS.items():
        if getattr(args, dest, value) is None:
            setattr(args, dest, value)
    if getattr(args, "model", "") is None:
        args.model = args.model_default


def settle_method(args: argparse.Namespace) -> tuple[dict[str, Any], Any]:
    """:func:`settle` the options, choose the method (the default when none is given,
    refused when its packages are missing) and read its ``--param`` values and the
    constraints: ``(params, constraints)``, before any work."""
    settle(args)
    args.method = args.method or methods.default_method()
    check_method(args.method)
    return method_params(args, methods.get_class(args.method)), constraints_from_args(args)


def _raw_params(args: argparse.Namespace) -> dict[str, Any]:
    """``--param NAME=VALUE`` items as given (checked later by :func:`method_params`)."""
    out: dict[str, Any] = {}
    for item in getattr(args, "param", None) or []:
        k, sep, v = item.partition("=")
        if sep and k.strip():
            out[k.strip()] = parse_value(v)
    return out


def check_method(name: str) -> None:
    """Refuse a --method whose packages are not installed (a peer such as dice), before
    any work, with the command that installs them."""
    if name in methods.names(peers=True):
        return
    needs = [m for m in methods.get_class(name).tags.requires if not is_available(m)]
    if needs:
        raise MissingDependencyError(
            f"--method {name} needs the package {needs[0]!r}, which is not installed. Install "
            f"it with: {install_hint(needs[0])}."
        )
    raise ValidationError(
        f"--method {name} is not part of this install; choose one of {methods.names(peers=True)}."
    )
