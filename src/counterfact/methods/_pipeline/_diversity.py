"""The diversity rule: when one counterfactual of a query is *different* from
another, and which changes are too small to count as changes.

Each numeric feature has a *meaningful step*, the larger of its resolution and
0.1 x its MAD on the training data (:func:`diversity_steps`); for a discrete
feature any other value is a step.  With the default ``alternatives="distinct"``
of ``explain``:

* a move smaller than its feature's step is no change (:func:`substep_mask`):
  the pipeline reverts it when the answer stays valid, and otherwise keeps the
  answer only as the query's first (then it is what the model needs);
* two answers are *different* when their meaningful changes touch another set
  of features, or some feature differs by more than its step
  (:func:`different`, :func:`keep_different`).

Every method's set of answers follows it, and the exact methods search with
the same steps (:func:`solver_steps`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...schema import Schema
from ._snap import resolution
from ._values import TOL, floats

__all__ = [
    "ALTERNATIVES",
    "DEFAULT_DIVERSITY_FRACTION",
    "changed_mask",
    "different",
    "diversity_steps",
    "keep_different",
    "keep_different_arrays",
    "meaningful_mask",
    "solver_steps",
    "substep_mask",
]

#: default share of a feature's MAD that two counterfactuals must differ by
DEFAULT_DIVERSITY_FRACTION = 0.1

#: ``explain(alternatives=...)``: "distinct" (the rule above, answers nearest
#: first) or "method" (the method's own answers in its order: only exact
#: duplicates removed, no step rule, no sub-step reverts; the behaviour before the rule)
ALTERNATIVES: tuple[str, ...] = ("distinct", "method")


def diversity_steps(
    schema: Schema, mad: np.ndarray | None, fraction: float = DEFAULT_DIVERSITY_FRACTION
) -> np.ndarray:
    """Per feature, by how much two counterfactuals must differ to count as different.

    Numeric features: the larger of the feature's resolution and ``fraction``
    times its MAD (:func:`counterfact.data._dataset.mad` of the training data).
    Categorical and ordinal features: 0 (any different value counts).
    """
    out = np.zeros(len(schema), dtype=float)
    for j, f in enumerate(schema):
        if not f.is_numeric:
            continue
        res = resolution(f) or 0.0
        m = 0.0 if mad is None else float(mad[j]) * float(fraction)
        out[j] = max(res, m)
    return out


def changed_mask(schema: Schema, rows: pd.DataFrame, x: pd.Series | pd.DataFrame) -> np.ndarray:
    """Boolean ``(len(rows), n_features)``: which features of each row differ
    from ``x`` (one query, or a frame with each row's own query, row for row)."""
    out = np.zeros((len(rows), len(schema)), dtype=bool)
    per_row = isinstance(x, pd.DataFrame)
    for j, f in enumerate(schema):
        col = rows[f.name]
        if f.is_numeric:
            v = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
            q = pd.to_numeric(x[f.name]).to_numpy(dtype=float) if per_row else float(x[f.name])
            out[:, j] = ~(np.abs(v - q) <= TOL * np.maximum(1.0, np.maximum(np.abs(v), np.abs(q))))
        else:
            a = col.astype(object).to_numpy()
            q = x[f.name].astype(object).to_numpy() if per_row else x[f.name]
            out[:, j] = a != q
    return out


def _moves(schema: Schema, rows: pd.DataFrame, x: pd.Series | pd.DataFrame) -> np.ndarray:
    """``|row - x|`` per numeric feature (0 elsewhere), rows x features."""
    out = np.zeros((len(rows), len(schema)), dtype=float)
    per_row = isinstance(x, pd.DataFrame)
    for j, f in enumerate(schema):
        if f.is_numeric:
            v = pd.to_numeric(rows[f.name], errors="coerce").to_numpy(dtype=float)
            q = pd.to_numeric(x[f.name]).to_numpy(dtype=float) if per_row else float(x[f.name])
            out[:, j] = np.abs(v - q)
    return out


def substep_mask(
    schema: Schema, rows: pd.DataFrame, x: pd.Series | pd.DataFrame, steps: np.ndarray
) -> np.ndarray:
    """Boolean ``(len(rows), n_features)``: the numeric features each row changes
    by less than the feature's step (``income 45600 -> 45603`` when the step is
    2,000): moves too small to be told apart from no change."""
    small = _moves(schema, rows, x) < np.asarray(steps, dtype=float)[None, :] * (1 - 1e-9)
    return changed_mask(schema, rows, x) & small


def meaningful_mask(
    schema: Schema, rows: pd.DataFrame, x: pd.Series | pd.DataFrame, steps: np.ndarray
) -> np.ndarray:
    """Boolean ``(len(rows), n_features)``: the changes of each row that count
    (:func:`changed_mask` without the moves of :func:`substep_mask`)."""
    return changed_mask(schema, rows, x) & ~substep_mask(schema, rows, x, steps)


def different(schema: Schema, a: pd.Series, b: pd.Series, x: pd.Series, steps: np.ndarray) -> bool:
    """The diversity rule: whether counterfactual ``a`` is *different* from ``b``
    (both of query ``x``).

    They are different when their meaningful changes (moves of at least the
    step, :func:`meaningful_mask`) touch a different set of features, or when
    at least one feature differs by more than its step
    (:func:`diversity_steps`; any different value for a discrete feature).
    ``income -> 34412`` and ``income -> 34413`` are not different (one unit,
    the resolution); ``income -> 34412`` and ``duration -> 12`` are; nor are
    ``income -> 34412`` and ``income -> 34412; loan 3600 -> 3599`` (a one-unit
    move is no change).
    """
    frame = pd.DataFrame([a, b], columns=schema.names)
    ch = meaningful_mask(schema, frame, x, steps)
    if (ch[0] != ch[1]).any():
        return True
    for j, f in enumerate(schema):
        va, vb = a[f.name], b[f.name]
        if f.is_numeric:
            if abs(float(va) - float(vb)) > steps[j] * (1 + 1e-9) + 1e-12:
                return True
        elif va != vb:
            return True
    return False


def keep_different(
    schema: Schema, rows: pd.DataFrame, x: pd.Series, steps: np.ndarray, k: int
) -> tuple[list[int], int]:
    """Positions (in order) of at most ``k`` rows of ``rows`` each different
    from every earlier kept one; and how many were skipped as too similar."""
    if len(rows) == 0:
        return [], 0
    ch = meaningful_mask(schema, rows, x, steps)
    num = [j for j, f in enumerate(schema) if f.is_numeric]
    cat = [j for j, f in enumerate(schema) if not f.is_numeric]
    V = floats(rows.iloc[:, num]) if num else np.zeros((len(rows), 0))
    C = (
        rows.iloc[:, cat].astype(object).to_numpy()
        if cat
        else np.zeros((len(rows), 0), dtype=object)
    )
    return keep_different_arrays(ch, V, C, steps[num], k)


def keep_different_arrays(
    changed: np.ndarray, V: np.ndarray, C: np.ndarray, num_steps: np.ndarray, k: int
) -> tuple[list[int], int]:
    """:func:`keep_different` on arrays computed beforehand: each row's meaningful
    changes ``changed`` (rows x features), numeric values ``V`` and discrete
    values ``C`` (object), and the numeric features' steps.  Each row is compared
    with every kept one in one vectorised step."""
    kept: list[int] = []
    skipped = 0
    st = np.asarray(num_steps, dtype=float) * (1 + 1e-9) + 1e-12
    for r in range(changed.shape[0]):
        if len(kept) >= k:
            break
        if kept:
            K = np.asarray(kept)
            differs = (changed[K] != changed[r]).any(axis=1)
            differs |= (np.abs(V[K] - V[r]) > st).any(axis=1)
            differs |= (C[K] != C[r]).any(axis=1)
            if not differs.all():
                skipped += 1
                continue
        kept.append(r)
    return kept, skipped


def solver_steps(schema: Schema, steps: np.ndarray) -> np.ndarray:
    """The diversity steps for a solver that searches before snapping: each
    numeric feature's step plus one resolution unit (its answers are snapped to
    the grid afterwards, which may move a value by up to one unit); 0 for
    discrete features (any change counts)."""
    grid = np.array([resolution(f) or 0.0 for f in schema], dtype=float)
    return np.asarray(steps, dtype=float) + grid
