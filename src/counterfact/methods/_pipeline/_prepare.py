"""Preparation: from the user's rows to the queries a method searches.

The rows are checked against the schema, every row's constraints are checked
and resolved before any search starts, the call's requirements are checked
against the fitted method, the target class of each row is fixed, and each
query gets its own random stream, seeded from ``random_state`` and the row's
own values (never from its position in ``X``).
"""

from __future__ import annotations

import hashlib
import inspect
import warnings
from dataclasses import fields
from typing import Any

import numpy as np
import pandas as pd

from ..._utils._deadline import CancelToken
from ..._utils._values import _py
from ...constraints import Constraints, Costs, Requirements
from ...constraints._bounds import QueryBounds, ResolvedConstraints
from ...constraints._costs import BoundCosts
from ...constraints._requirements import OWN_MEASURE
from ...constraints._timeline import time_free_costs
from ...exceptions import ConstraintError, UnsupportedConstraintError, ValidationError
from ...models._select import check_label
from ._diversity import ALTERNATIVES
from ._judge import make_judge
from ._protocol import PipelineMethod
from ._query import Query

__all__ = [
    "check_call",
    "check_n_counterfactuals",
    "per_row_series",
    "prepare",
    "query_frame",
    "warn_out_of_domain",
]


def resolve_rows(
    method: PipelineMethod, frame: pd.DataFrame, constraints: Any, errors: str | None
) -> tuple[bool, str, list[ResolvedConstraints | ConstraintError], ResolvedConstraints, Any]:
    """Check and resolve the constraints of every row before any search (``method``
    provides the schema and the constraint kinds it supports).

    Returns ``(per_row, errors, row_resolved, resolved, given)``: whether one
    Constraints per row was given, the effective ``errors`` mode, each row's
    resolved constraints (or, for a per-row entry that contradicts the schema
    under ``errors="coerce"``, its :class:`ConstraintError`), the first entry
    resolved, and what the user passed (kept in the result).
    """
    per_row = isinstance(constraints, (list, tuple))
    if errors is None:
        errors = "coerce" if per_row else "raise"
    if errors not in ("coerce", "raise"):
        raise ValidationError(f"errors must be 'coerce' or 'raise'. Got {errors!r}.")
    if per_row and len(constraints) != len(frame):
        raise ValidationError(
            f"constraints has {len(constraints)} entries for {len(frame)} rows of X; pass one "
            "Constraints per row, or a single Constraints for every row."
        )
    items: list[Any] = [
        Constraints() if c is None else c for c in (constraints if per_row else [constraints])
    ]
    # each distinct object checked and resolved once; a per-row one that
    # contradicts the schema is kept as its error when coercing
    resolved_by_id: dict[int, ResolvedConstraints | ConstraintError] = {}
    for k, c in enumerate(items):
        if not isinstance(c, Constraints):
            where = f"constraints[{k}]" if per_row else "constraints"
            raise ValidationError(f"{where} must be a cf.Constraints. Got {type(c).__name__}.")
        if id(c) not in resolved_by_id:
            unsupported = sorted(c.kinds() - set(method.supported_constraints))
            if unsupported:
                raise UnsupportedConstraintError(
                    f"{type(method).__name__} cannot honour constraints of kind {unsupported}. It "
                    "supports "
                    f"{sorted(method.supported_constraints)}; use a method that honours them "
                    "(`counterfact methods` lists what each honours) or drop them."
                )
            try:
                resolved_by_id[id(c)] = c.resolve(method.schema_)
            except ConstraintError as exc:
                if not per_row or errors == "raise":
                    raise
                resolved_by_id[id(c)] = exc
    row_resolved = [resolved_by_id[id(items[k if per_row else 0])] for k in range(len(frame))]
    first = resolved_by_id[id(items[0])] if items else None
    resolved = (
        first if isinstance(first, ResolvedConstraints) else Constraints().resolve(method.schema_)
    )
    return per_row, errors, row_resolved, resolved, items if per_row else items[0]


def row_seeds(random_state: int | None, frame: pd.DataFrame) -> list[np.random.SeedSequence]:
    """One seed per row from ``(random_state, the row's values)``: a query gets the same
    random stream alone, in any batch, chunk or worker, at any position.  With
    ``random_state=None`` one draw of fresh entropy per call, shared by the rows."""
    if random_state is None:
        base = int(np.random.SeedSequence().entropy)  # type: ignore[arg-type]
    else:
        base = int(random_state)
    return [
        np.random.SeedSequence([base, *_content_words(row)])
        for row in frame.itertuples(index=False, name=None)
    ]


def _content_words(values: tuple[Any, ...]) -> list[int]:
    """Four 32-bit words of a hash of a row's values (numbers by their exact float,
    others by text)."""
    parts = []
    for v in values:
        v = _py(v)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            parts.append(float(v).hex())
        else:
            parts.append(f"{type(v).__name__}:{v}")
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()
    return [int.from_bytes(digest[k : k + 4], "little") for k in range(0, 16, 4)]


def prepare(
    method: PipelineMethod,
    X: Any,
    n_counterfactuals: Any,
    constraints: Any,
    target: Any,
    *,
    requirements: Requirements | None = None,
    errors: str | None = None,
    cancel: CancelToken | None = None,
    alternatives: Any = "distinct",
) -> tuple[list[Query], Any]:
    """The queries of ``X`` for ``method`` and what the user passed as constraints.

    Each query's random stream is seeded from ``random_state`` and the row's own
    values (:func:`row_seeds`), never from its position.  The queries have no
    time budget yet (the budget phase gives them one).
    """
    check_call(n_counterfactuals, alternatives)
    req = check_requirements(requirements)
    frame = query_frame(method, X)
    per_row, errors, row_resolved, _resolved, given = resolve_rows(
        method, frame, constraints, errors
    )
    _warn_idle_timelines(row_resolved, method.schema_)
    common = {
        "n_counterfactuals": int(n_counterfactuals),
        "cancel": cancel,
        "judge": make_judge(method.model_, method.data_, req),
        "alternatives": alternatives,
    }
    costs = _RowCosts(bind_costs(method, req.costs), method.schema_)
    preds, proba = method.model_.predict_with_proba(frame)
    targets = targets_of(method.model_, preds, target, frame.index)
    seeds = row_seeds(method.random_state, frame)
    free = _Free(method.schema_)
    tasks = []
    for i, (qid, x) in enumerate(frame.iterrows()):
        rc, bounds, why = _row_bounds(row_resolved[i], x, per_row, errors, free)
        row_costs = costs(row_resolved[i])
        if row_costs is not None and why is None:
            bounds = row_costs.restrict(bounds)
        index = method.model_.class_index(targets[i])
        tasks.append(
            Query(
                id=qid,
                x=x,
                target=targets[i],
                target_index=index,
                bounds=bounds,
                constraints=rc,
                rng=np.random.default_rng(seeds[i]),
                predicted=preds[i],
                query_confidence=float(proba[i, index]),
                invalid=why,
                costs=row_costs,
                **common,
            )
        )
    return tasks, given


def _warn_idle_timelines(row_resolved: list[Any], schema: Any) -> None:
    """Warn, once per call, when a timeline is given on data that nothing moves with
    time: waiting then helps no answer, and the answers are today's."""
    timelines = {id(t): t for r in row_resolved if (t := getattr(r, "timeline", None))}
    idle = [t for t in timelines.values() if not t.rules(schema)]
    if idle:
        warnings.warn(
            f"The timeline's horizon of {idle[0].horizon} months helps no answer: no feature "
            "of this data changes with time (such as age or years in a job) and none has a "
            "rate of change, so the answers are today's. Mark such features "
            "actionability='time' in the schema, or give the timeline rates.",
            UserWarning,
            stacklevel=5,  # the caller of the method's explain
        )


def warn_out_of_domain(method: PipelineMethod, X: Any, *, stacklevel: int) -> None:
    """Warn, once per call, when the rows ``X`` hold numeric values outside their
    features' domains (the training data's range, or the one the schema states): the
    model's decision there is an extrapolation.  Such values are accepted (they are real
    people).  Rows the schema cannot read, and an unfitted method, are left to their own
    checks, which name them."""
    schema = getattr(method, "schema_", None)
    if schema is None:
        return
    try:
        frame = schema.validate_frame(X, what="X")
    except (ValidationError, KeyError, TypeError, ValueError):
        return
    examples, n = [], 0
    for f in (f for f in schema.features if f.is_numeric):
        v = frame[f.name].to_numpy(dtype=float)
        out = np.flatnonzero((v < float(f.lower)) | (v > float(f.upper)))
        n += out.size
        examples += [
            f"row {_py(frame.index[k])!r} has {f.name} {number_words(frame[f.name].iloc[k])} "
            f"(range {number_words(f.lower)} to {number_words(f.upper)})"
            for k in out[: 3 - len(examples)]
        ]
    if n:
        more = f", and {n - len(examples)} more" if n > len(examples) else ""
        where = "their features' ranges" if n > 1 else "its feature's range"
        warnings.warn(
            f"The rows to explain hold {n} value{'s' * (n > 1)} outside {where}: "
            f"{'; '.join(examples)}{more}. The model was not trained there, so its decisions "
            "for such rows, and the answers built on them, extrapolate. Check such rows for a "
            "typing or unit error.",
            UserWarning,
            stacklevel=stacklevel + 1,
        )


def number_words(v: Any) -> str:
    """A number as written: a whole one without a decimal point, others in full."""
    x = float(v)
    return str(int(x)) if x.is_integer() and abs(x) < 2**53 else repr(x)


class _RowCosts:
    """Each row's bound measure of effort: the call's, with the features the row's
    timeline advances made free (their change is the waiting), one copy per distinct
    constraints, so that one Constraints per row prices time as a shared one does."""

    def __init__(self, costs: BoundCosts | None, schema: Any) -> None:
        self.costs, self.schema = costs, schema
        self._made: dict[int, BoundCosts | None] = {}

    def __call__(self, resolved: Any) -> BoundCosts | None:
        key = id(resolved)
        if key not in self._made:
            self._made[key] = time_free_costs(self.costs, resolved, self.schema)
        return self._made[key]


def query_frame(method: PipelineMethod, X: Any) -> pd.DataFrame:
    """``X`` checked against the schema, with unique query ids."""
    frame = method.schema_.validate_frame(X, what="X")
    if frame.index.has_duplicates:
        raise ValidationError(
            "X has duplicate index labels; query ids must be unique (reset_index())."
        )
    return frame


def check_requirements(requirements: Any) -> Requirements:
    """The call's :class:`~counterfact.Requirements` (none: the plain decision)."""
    if requirements is None:
        return Requirements()
    if not isinstance(requirements, Requirements):
        names = ", ".join(f.name for f in fields(Requirements))
        example = (
            "cf.Requirements(**that_dict)"
            if isinstance(requirements, dict)
            else "cf.Requirements(min_probability=0.6), for example"
        )
        raise ValidationError(
            f"requirements must be a cf.Requirements ({names}). Got "
            f"{type(requirements).__name__}; pass requirements={example}."
        )
    return requirements


def check_n_counterfactuals(n_counterfactuals: Any) -> int:
    """``n_counterfactuals`` as an int, refused unless it is a whole number >= 1."""
    if (
        isinstance(n_counterfactuals, bool)
        or not isinstance(n_counterfactuals, (int, np.integer))
        or n_counterfactuals < 1
    ):
        raise ValidationError(f"n_counterfactuals must be an int >= 1. Got {n_counterfactuals!r}.")
    return int(n_counterfactuals)


def check_call(n_counterfactuals: Any, alternatives: Any) -> None:
    """``n_counterfactuals`` is an int >= 1 and ``alternatives`` one of :data:`ALTERNATIVES`."""
    check_n_counterfactuals(n_counterfactuals)
    if not isinstance(alternatives, str) or alternatives not in ALTERNATIVES:
        raise ValidationError(
            f"alternatives must be one of {list(ALTERNATIVES)}: 'distinct' (answers that differ "
            "by a meaningful step, nearest first) or 'method' (the method's own answers and "
            f"order). Got {alternatives!r}."
        )


def bind_costs(method: PipelineMethod, costs: Any) -> BoundCosts | None:
    """The call's :class:`~counterfact.constraints.Costs` bound to the method's schema
    and training rows (a copy: the user's object is not changed), after checking that
    the method can honour costs (``tags.costs``).

    Not given: the default measure of effort (``Costs()``), for every method that can
    take costs into its search; a method that cannot keeps its own objective.
    ``"own"``: no costs, each method's own objective (the papers' measures)."""
    if costs == OWN_MEASURE:
        return None
    if costs is None:
        if method.tags.costs is None:
            return None
        _warn_own_objective(
            method, "the default measure of effort (1 per changed feature plus each move in MADs)"
        )
        return method.effort_
    if not isinstance(costs, (Costs, BoundCosts)):
        raise ValidationError(
            "costs must be a cf.Costs (per-feature weights, transitions, percentile shift). Got "
            f"{type(costs).__name__}."
        )
    how = method.tags.costs
    if how is None:
        raise UnsupportedConstraintError(
            f"{type(method).__name__} cannot take costs into its search. `counterfact methods` "
            "lists the methods that can (exactly, or in their ranking); or drop the costs."
        )
    _warn_own_objective(method, "the call's costs")
    if isinstance(costs, BoundCosts):
        if costs.schema.names != method.schema_.names:
            raise ValidationError("costs were bound to another schema; pass the cf.Costs itself.")
        return costs
    return costs.bind(method.schema_, method.data_.X)


def _warn_own_objective(method: PipelineMethod, measure: str) -> None:
    """Warn when a parameter of the method's own objective (``tags.own_objective``) is off
    its default in a call that minimises a measure of effort (``measure``, in words),
    where it does nothing."""
    if not method.tags.own_objective:
        return
    try:
        defaults = inspect.signature(type(method)).parameters
    except (TypeError, ValueError):  # a class whose signature cannot be read: nothing to say
        return
    params = method.get_params(deep=False)
    off = [
        f"{name}={params[name]!r}"
        for name in method.tags.own_objective
        if name in params and name in defaults
        if _differs(params[name], defaults[name].default)
    ]
    if off:
        warnings.warn(
            f"{type(method).__name__}({', '.join(off)}) shapes only the method's own objective; "
            f"this call minimises {measure}, so {'it has' if len(off) == 1 else 'they have'} "
            "no effect. Pass requirements=cf.Requirements(costs='own') to search under the "
            "method's own objective, or leave the parameter at its default.",
            UserWarning,
            stacklevel=4,
        )


def _differs(value: Any, default: Any) -> bool:
    """Whether a parameter's value is not its default (a tuple and a list of the same
    numbers are the same; so are 0.1 and ``np.float64(0.1)``)."""
    if isinstance(value, (list, tuple)) and isinstance(default, (list, tuple)):
        return list(value) != list(default)
    try:
        return bool(value != default)
    except (TypeError, ValueError):  # values that do not compare (arrays): not the default
        return True


class _Free:
    """The constraints of a row that is never searched (no constraints at all), resolved once."""

    def __init__(self, schema: Any) -> None:
        self.schema = schema
        self._resolved: ResolvedConstraints | None = None

    def __call__(self, x: pd.Series, why: str) -> tuple[ResolvedConstraints, QueryBounds, str]:
        if self._resolved is None:
            self._resolved = Constraints().resolve(self.schema)
        return self._resolved, self._resolved.for_query(x), why


def _row_bounds(
    rc: ResolvedConstraints | ConstraintError, x: pd.Series, per_row: bool, errors: str, free: _Free
) -> tuple[ResolvedConstraints, QueryBounds, str | None]:
    """A row's resolved constraints and bounds, or (with free bounds) why it cannot be explained."""
    if isinstance(rc, ConstraintError):
        return free(x, f"the row's constraints contradict themselves: {_lower_first(str(rc))}")
    try:
        bounds = rc.for_query(x)
    except ConstraintError as exc:
        if errors == "raise":
            raise
        return free(x, f"the row's constraints contradict themselves: {_lower_first(str(exc))}")
    if per_row and errors == "coerce" and bounds.infeasible:
        empty = [b.feature.name for b in bounds.features if b.empty]
        return free(x, f"the row's constraints leave {empty} no allowed value")
    return rc, bounds, None


def targets_of(model: Any, preds: np.ndarray, target: Any, index: pd.Index) -> list[Any]:
    """The desired class of each row of ``index``: ``target`` (one label, or one per
    row: a list in the rows' order, or a Series matched to the rows by its index), or for
    binary models the class each row is not predicted as."""
    n = len(index)
    if isinstance(target, pd.Series):
        target = per_row_series(target, index, "target")
    classes = model.classes_
    if target is None:
        if len(classes) != 2:
            raise ValidationError(
                f"The model has {len(classes)} classes {classes.tolist()}; pass target= the "
                "desired class."
            )
        return [classes[1] if p == classes[0] else classes[0] for p in preds]
    if isinstance(target, (list, tuple, np.ndarray, pd.Series)):
        if len(target) != n:
            raise ValidationError(f"target has {len(target)} entries for {n} queries.")
        targets = list(target)
    else:
        targets = [target] * n
    for t in targets:
        check_label(classes, t)
    # each target as the model's own class (2, not the 2.0 typed; True, not 1)
    return [_py(classes[model.class_index(t)]) for t in targets]


def per_row_series(values: pd.Series, index: pd.Index, what: str) -> list[Any]:
    """A Series of one value per row, matched to the rows by label (in ``index``'s order);
    a Series that does not label every row exactly once is refused."""
    if values.index.equals(index):
        return list(values)
    if (
        values.index.has_duplicates
        or len(values) != len(index)
        or not index.isin(values.index).all()
    ):
        missing = [q for q in index if q not in values.index][:3]
        extra = [q for q in values.index if q not in index][:3]
        twice = list(dict.fromkeys(values.index[values.index.duplicated()]))[:3]
        said = "; ".join(
            f"{words}: {labels}"
            for words, labels in (
                ("rows of X not in it", missing),
                ("labels not in X", extra),
                ("labels given twice", twice),
            )
            if labels
        )
        raise ValidationError(
            f"{what} is a Series of {len(values)} values whose index does not label each of "
            f"the {len(index)} rows of X once ({said}); index it like X, or pass a list in "
            "X's order."
        )
    return list(values.reindex(index))


def _lower_first(text: str) -> str:
    """A sentence continued after a colon: its first letter in lower case, unless the
    first word is an acronym (``"Feature 'x' ..."`` -> ``"feature 'x' ..."``)."""
    head = text.split(" ", 1)[0]
    return text if not text or (len(head) > 1 and head.isupper()) else text[0].lower() + text[1:]
