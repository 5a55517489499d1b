"""The diversity rule: when one counterfactual of a query is *different* from another.

Every method's set of answers follows it (the pipeline's selection keeps only
answers that differ from every earlier one), and the exact methods search with
the same steps (:func:`solver_steps`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...schema import Schema
from ._snap import resolution
from ._values import TOL, floats

__all__ = [
    "DEFAULT_DIVERSITY_FRACTION",
    "changed_mask",
    "different",
    "diversity_steps",
    "keep_different",
    "solver_steps",
]

#: default share of a feature's MAD that two counterfactuals must differ by
DEFAULT_DIVERSITY_FRACTION = 0.1

def diversity_steps(schema: Schema, mad: np.ndarray | None, fraction: float = DEFAULT_DIVERSITY_FRACTION) -> np.ndarray:
    """Per feature, by how much two counterfactuals must differ to count as different.

    Numeric features: the larger of the feature's resolution and ``fraction``
    times its MAD (:func:`counterfact.data.mad` of the training data).
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


def different(
    schema: Schema, a: pd.Series, b: pd.Series, x: pd.Series, steps: np.ndarray
) -> bool:
    """The diversity rule: whether counterfactual ``a`` is *different* from ``b``
    (both of query ``x``).

    They are different when they change a different set of features, or when
    at least one feature differs by more than its step
    (:func:`diversity_steps`; any different value for a discrete feature).
    ``income -> 34412`` and ``income -> 34413`` are not different (one unit,
    the resolution); ``income -> 34412`` and ``duration -> 12`` are.
    """
    frame = pd.DataFrame([a, b], columns=schema.names)
    ch = changed_mask(schema, frame, x)
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
    kept: list[int] = []
    skipped = 0
    if len(rows) == 0:
        return kept, 0
    ch = changed_mask(schema, rows, x)
    num = [j for j, f in enumerate(schema) if f.is_numeric]
    cat = [j for j, f in enumerate(schema) if not f.is_numeric]
    V = floats(rows.iloc[:, num]) if num else np.zeros((len(rows), 0))
    C = rows.iloc[:, cat].astype(object).to_numpy() if cat else np.zeros((len(rows), 0), dtype=object)
    st = steps[num] * (1 + 1e-9) + 1e-12
    for r in range(len(rows)):
        if len(kept) >= k:
            break
        ok = True
        for p in kept:
            if (ch[r] != ch[p]).any():
                continue
            if (np.abs(V[r] - V[p]) > st).any():
                continue
            if (C[r] != C[p]).any():
                continue
            ok = False
            break
        if ok:
            kept.append(r)
        else:
            skipped += 1
    return kept, skipped


def solver_steps(schema: Schema, steps: np.ndarray) -> np.ndarray:
    """The diversity steps for a solver that searches before snapping: each
    numeric feature's step plus one resolution unit (its answers are snapped to
    the grid afterwards, which may move a value by up to one unit); 0 for
    discrete features (any change counts)."""
    grid = np.array([resolution(f) or 0.0 for f in schema], dtype=float)
    return np.asarray(steps, dtype=float) + grid
