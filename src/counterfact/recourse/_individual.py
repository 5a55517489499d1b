"""Each rejected person's own side of global recourse: their per-person answers (explained
through the audit's batch layer, or taken from an audit already run, checked to be of the
same rows, rules and target), the cost of their own counterfactual, and their resolved bounds."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..constraints import Constraints
from ..constraints._bounds import QueryBounds
from ..exceptions import ConstraintError, ValidationError
from ..result import CounterfactualResult
from ..result._json import constraints_json
from ._actions import ActionSpace, Cost
from ._batch import Run, explain_rows
from ._result import AuditResult
from ._rows import outcome

__all__ = ["Individual", "bounds", "individual", "individual_costs", "key"]


@dataclass
class Individual:
    """Per-person answers of the rejected rows: status, outcome, counterfactual rows."""

    status: pd.Series
    outcome: pd.Series
    cfs: dict[Any, pd.DataFrame]
    source: str


def key(c: Constraints | None) -> str:
    """Constraints as text (None and no constraints read the same)."""
    return json.dumps(constraints_json(c or Constraints()), sort_keys=True, default=str)


def bounds(
    schema: Any, Xr: pd.DataFrame, per_row: list[Constraints | None]
) -> tuple[list[QueryBounds | None], dict[Any, str]]:
    """Each rejected person's own bounds (None, with the reason, when their constraints
    contradict themselves at their row); a shared Constraints that contradicts itself raises."""
    resolved: dict[str, Any] = {}
    out: list[QueryBounds | None] = []
    reasons: dict[Any, str] = {}
    shared = len({key(c) for c in per_row}) <= 1
    for (qid, x), c in zip(Xr.iterrows(), per_row, strict=True):
        k = key(c)
        try:
            if k not in resolved:
                resolved[k] = (c or Constraints()).resolve(schema)
            b = resolved[k].for_query(x)
            if b.infeasible:
                raise ConstraintError("some feature has no allowed value at this row")
            out.append(b)
        except ConstraintError as exc:
            if shared and k not in resolved:
                raise
            out.append(None)
            reasons[qid] = f"their constraints contradict themselves: {exc}"
    return out, reasons


def individual(
    run: Run, Xr: pd.DataFrame, per_row: list[Constraints | None], given: Any, constraints: Any
) -> Individual:
    """The per-person answers: from ``given`` (an audit or a result), else explained
    (grouped by identical constraints, each group through explain_in_chunks)."""
    if given is not None:
        return _given(run, Xr, given, constraints)
    status: dict[Any, str] = {}
    cfs: dict[Any, pd.DataFrame] = {}
    groups: dict[str, list[int]] = {}
    for i, c in enumerate(per_row):
        groups.setdefault(key(c), []).append(i)
    for n, rows in enumerate(groups.values()):
        c = per_row[rows[0]]
        out = run.folder("explained" if len(groups) == 1 else f"explained-{n}")
        res, failed = explain_rows(run, Xr.iloc[rows], c, out)
        if res is not None:
            _collect(res, status, cfs)
        status.update({q: "failed" for q in failed})
    ids = Xr.index
    st = pd.Series([status.get(q, "failed") for q in ids], index=ids, dtype=object)
    proves = type(run.method).tags.proves_infeasibility
    return Individual(st, st.map(lambda v: outcome(v, proves)), cfs, "explained")


def _collect(
    res: CounterfactualResult, status: dict[Any, str], cfs: dict[Any, pd.DataFrame]
) -> None:
    status.update(res.status.to_dict())
    cf = res.counterfactuals
    if len(cf):
        for q, rows in cf.groupby(level=0, sort=False):
            cfs[q] = rows.droplevel(0)


def _given(run: Run, Xr: pd.DataFrame, given: Any, constraints: Any) -> Individual:
    """Per-person answers from an audit or a result, checked against these rows and rules."""
    audit = given if isinstance(given, AuditResult) else None
    res = given.result if audit is not None else given
    if audit is not None and res is None:
        raise ValidationError(
            "The 'individual' audit has no counterfactuals (an audit read back from JSON keeps "
            "only its per-row table); pass the AuditResult that cf.audit returned."
        )
    if not isinstance(res, CounterfactualResult):
        raise ValidationError(
            f"The 'individual' parameter must be an AuditResult or a CounterfactualResult. "
            f"Got {type(given).__name__}."
        )
    theirs = audit.meta.get("constraints") if audit is not None else res.constraints
    if isinstance(theirs, dict):
        theirs = Constraints.from_dict(theirs)
    if theirs is not None and theirs.timeline is not None:
        raise ValidationError(
            "The 'individual' answers were computed under a timeline, and global recourse "
            "takes none (its actions are changes applied today): audit the same rows without "
            "the timeline and pass that, or leave individual unset."
        )
    shared = constraints is None or isinstance(constraints, Constraints)
    if res.query_constraints is not None or not shared or key(theirs) != key(constraints):
        raise ValidationError(
            "The 'individual' answers were computed under other constraints than these; pass "
            "the same constraints (one Constraints for everyone), or leave individual unset."
        )
    known = set(audit.per_row.index) if audit is not None else set(res.queries.index)
    missing = [q for q in Xr.index if q not in known]
    if missing:
        raise ValidationError(
            f"The 'individual' answers do not cover {len(missing)} rejected rows of X "
            f"(e.g. {missing[:5]}); pass the audit of the same rows."
        )
    common = [q for q in Xr.index if q in res.queries.index]
    schema = run.method.schema_
    mine, theirs_rows = (
        schema.coerce(Xr.loc[common]),
        schema.coerce(res.queries.loc[common, schema.names]),
    )
    if not mine.astype(object).equals(theirs_rows.astype(object)):
        raise ValidationError(
            "The 'individual' answers were computed for other values of these rows; pass the "
            "audit of the same rows."
        )
    targets = set(map(str, res.target.reindex(common).dropna().unique())) if len(common) else set()
    if targets - {str(run.target)}:
        raise ValidationError(
            f"The 'individual' answers target {sorted(targets)}, not {run.target!r}."
        )
    status: dict[Any, str] = {}
    cfs: dict[Any, pd.DataFrame] = {}
    _collect(res, status, cfs)
    st = pd.Series([status.get(q, "failed") for q in Xr.index], index=Xr.index, dtype=object)
    proves = type(run.method).tags.proves_infeasibility
    return Individual(
        st, st.map(lambda v: outcome(v, proves)), {q: cfs[q] for q in Xr.index if q in cfs}, "given"
    )


def individual_costs(
    space: ActionSpace, Xr: pd.DataFrame, ind: Individual, spec: Cost
) -> np.ndarray:
    """Each rejected person's cost to their own (first) counterfactual (NaN without one)."""
    out = np.full(len(Xr), np.nan)
    have = [i for i, q in enumerate(Xr.index) if q in ind.cfs and len(ind.cfs[q])]
    if have:
        M = space.encode(Xr.iloc[have])
        C = space.encode(pd.concat([ind.cfs[Xr.index[i]].iloc[[0]] for i in have]))
        out[have] = spec(space, C, M)
    return out
