"""What a global recourse read from a file claims, checked: the per-person table agrees
with itself, and with the model (and the people's rows) every claim it can test.

Without a model, the table must be consistent: a person is covered exactly when they
are rejected and some chosen action works for them, ``n_working`` counts those
actions, and the action assigned is one of them.  With the model, the rows each
covered person reaches are predicted as the target; with the people's rows as well
(``data``), that the table holds every person of it, whether each is rejected, and
every cell that says an action works
(the action applied to the person's row stays in the features' domains, changes it,
and the model predicts the target).  A cell that says an action does not work is not
re-derived: the person's own constraints and the cost cap, which decide it too, are
not in the file; nor are the costs (the model cannot price an action), and a file whose
hash does not vouch for it says so in its integrity notes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...data import Dataset
from ...exceptions import ValidationError
from ...models._adapter import ModelAdapter, as_adapter
from .._actions import ActionSpace

__all__ = ["consistency_problems", "model_problems", "refuse"]


def refuse(problems: list[str], what: str) -> None:
    """Raise a ValidationError listing the first problems (nothing when there are none)."""
    if not problems:
        return
    more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
    raise ValidationError(
        f"Global-recourse document: {len(problems)} {what}: {'; '.join(problems[:5])}{more}."
    )


def consistency_problems(per_row: pd.DataFrame, names: list[str]) -> list[str]:
    """Where the per-person table contradicts itself (see the module docstring)."""
    cols = [f"works:{n}" for n in names]
    missing = [c for c in ["rejected", "covered", "action", "n_working", *cols] if c not in per_row]
    if missing:
        return [f"the per-person table lacks the columns {missing}"]
    works = per_row[cols].fillna(False).astype(bool).to_numpy()
    rejected = per_row["rejected"].astype(bool).to_numpy()
    covered = per_row["covered"].astype(bool).to_numpy()
    problems = [
        f"row {q!r}: covered is {bool(c)}, but {int(w.sum())} chosen actions work for them"
        + ("" if r else " and they are not rejected")
        for q, r, c, w in zip(per_row.index, rejected, covered, works, strict=True)
        if bool(c) != bool(r and w.any())
    ]
    problems += [
        f"row {q!r}: not rejected, but {int(w.sum())} chosen actions are said to work for them"
        for q, r, w in zip(per_row.index, rejected, works, strict=True)
        if not r and w.any()
    ]
    n_working = pd.to_numeric(per_row["n_working"], errors="coerce").to_numpy()
    problems += [
        f"row {q!r}: n_working is {n:g}, but {int(w.sum())} chosen actions work for them"
        for q, r, n, w in zip(per_row.index, rejected, n_working, works, strict=True)
        if r and n != w.sum()
    ]
    return problems + _assignment_problems(per_row, names, works, covered)


def _assignment_problems(
    per_row: pd.DataFrame, names: list[str], works: np.ndarray, covered: np.ndarray
) -> list[str]:
    """Covered people assigned an action that works for them; the others none."""
    out = []
    for q, a, w, c in zip(per_row.index, per_row["action"].tolist(), works, covered, strict=True):
        a = "" if a is None or (isinstance(a, float) and np.isnan(a)) else str(a)
        if c and (a not in names or not w[names.index(a)]):
            out.append(f"row {q!r}: assigned the action {a!r}, which does not work for them")
        elif not c and a:
            out.append(f"row {q!r}: not covered, but assigned the action {a!r}")
    return out


def model_problems(g: Any, model: Any, data: Any) -> list[str]:
    """Every claim of ``g`` that ``model`` (and the people's rows ``data``) contradicts."""
    adapter = as_adapter(model, g.schema)
    target = g.meta.get("target")
    problems = _reached_problems(g, adapter, target)
    if data is None:
        return problems
    X = _rows(g, data)
    left_out = _left_out(g, data, adapter, target)
    if left_out:
        return [*problems, left_out]
    rejected = np.asarray(adapter.predict(X)) != target
    said = g.per_row["rejected"].astype(bool).to_numpy()
    problems += [
        f"row {q!r}: said {'' if s else 'not '}rejected, but the model predicts "
        f"{'another class' if r else 'the target'}"
        for q, s, r in zip(g.per_row.index, said, rejected, strict=True)
        if bool(s) != bool(r)
    ]
    return problems + _works_problems(g, adapter, target, X[said])


def _left_out(g: Any, data: Any, adapter: ModelAdapter, target: Any) -> str | None:
    """The people of ``data`` the table leaves out (coverage counts the table's people
    only, so leaving out those no action helps would inflate it), in words; None when
    the table holds every one."""
    X = data.X if isinstance(data, Dataset) else data
    extra = X.index.difference(g.per_row.index)
    if not len(extra):
        return None
    rows = g.schema.validate_frame(X.loc[extra], what="data")
    n_rejected = int((np.asarray(adapter.predict(rows)) != target).sum())
    return (
        f"the per-person table leaves out {len(extra)} people of data (e.g. "
        f"{list(extra[:3])}), {n_rejected} of them rejected by the model: its coverage would "
        "count part of the population"
    )


def _reached_problems(g: Any, adapter: ModelAdapter, target: Any) -> list[str]:
    """Covered people whose reached row the model does not predict as the target."""
    covered = g.per_row.index[g.per_row["covered"].astype(bool).to_numpy()]
    reached = g.counterfactuals.reindex(covered)
    if reached.isna().any(axis=None):
        return ["a covered person has no reached row"]
    if not len(reached):
        return []
    pred = np.asarray(adapter.predict(g.schema.coerce(reached)))
    return [
        f"row {q!r}: the row they reach is predicted {p!r}, not the target {target!r}"
        for q, p in zip(covered, pred, strict=True)
        if p != target
    ]


def _works_problems(g: Any, adapter: ModelAdapter, target: Any, X: pd.DataFrame) -> list[str]:
    """Every cell that says an action works for a rejected person, re-derived."""
    if not len(X) or not g.rules:
        return []
    space = ActionSpace(g.schema)
    M = space.encode(X)
    out = []
    for name, action in zip(g.names, g.rules, strict=True):
        said = g.per_row.loc[X.index, f"works:{name}"].fillna(False).astype(bool).to_numpy()
        if not said.any():
            continue
        V, inside = space.apply(action, M)
        _, changed = space.deltas(V, M)
        reaches = np.asarray(adapter.predict(space.decode(V, index=X.index))) == target
        works = inside & changed.any(axis=1) & reaches
        out += [
            f"row {q!r}: {name} ({action.describe(g.schema)}) is said to work, but "
            + _why_not(bool(i), bool(c.any()))
            for q, s, w, i, c in zip(X.index, said, works, inside, changed, strict=True)
            if s and not w
        ]
    return out


def _why_not(inside: bool, changed: bool) -> str:
    if not inside:
        return "it leaves a feature's domain"
    if not changed:
        return "it changes nothing"
    return "the model does not predict the target"


def _rows(g: Any, data: Any) -> pd.DataFrame:
    """The people's rows (``data``: the population as a DataFrame or a Dataset), every row of
    the per-person table among them."""
    X = data.X if isinstance(data, Dataset) else data
    if not isinstance(X, pd.DataFrame):
        raise ValidationError(
            "GlobalRecourse.from_json: data must be the population the global recourse was "
            f"computed for (a DataFrame or a Dataset). Got {type(data).__name__}."
        )
    missing = g.per_row.index.difference(X.index)
    if len(missing):
        raise ValidationError(
            f"GlobalRecourse.from_json: data lacks {len(missing)} rows of the document "
            f"(e.g. {list(missing[:3])}); pass the population it was computed for."
        )
    rows = X.loc[g.per_row.index]
    return g.schema.validate_frame(rows, what="data")  # type: ignore[no-any-return]
