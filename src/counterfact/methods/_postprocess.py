"""What the base class does to candidates before it reports them.

Three shared rules, used by every method through
:func:`counterfact.methods._assemble.assemble` (and available to methods that
want to apply them inside their own search):

* **Resolution snapping** (:func:`snap_frame`): every numeric value is put on
  its feature's grid (``Feature.resolution``: integers 1, money to the cent or
  to the unit the data uses), so the value shown is the value verified.
* **The diversity rule** (:func:`diversity_steps`, :func:`different`): when
  is one counterfactual *different* from another of the same query.
* **Sparsification** (:func:`sparsify`): revert every change the model does
  not need.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..constraints import QueryBounds, satisfied_many
from ..schema import Feature, Schema, decimals

__all__ = [
    "DEFAULT_DIVERSITY_FRACTION",
    "changed_mask",
    "different",
    "diversity_steps",
    "snap_frame",
    "snap_matrix",
    "sparsify",
]

#: default share of a feature's MAD that two counterfactuals must differ by
DEFAULT_DIVERSITY_FRACTION = 0.1

_TOL = 1e-7  # the relative tolerance of counterfact.constraints.changed


# ------------------------------------------------------------------ resolution
def resolution(feature: Feature) -> float | None:
    """The grid step of a numeric feature (``Feature.resolution``; integers 1),
    or None when the feature has none (discrete kinds, or unknown)."""
    if not feature.is_numeric:
        return None
    res = getattr(feature, "resolution", None)
    if res is None and feature.kind == "integer":
        res = 1.0
    if res is None or not np.isfinite(res) or res <= 0:
        return None
    return float(res)


def snap_matrix(V: np.ndarray, Q: np.ndarray, res: np.ndarray, lower: np.ndarray, upper: np.ndarray, mode: str) -> np.ndarray:
    """Rows ``V`` (candidates x numeric features) on the grids ``k * res[j]``
    (the grid of :meth:`Schema.snap`).

    ``Q`` holds each row's query values.  ``mode``: ``"nearest"``;
    ``"outward"`` rounds away from the query's value (a change never
    shrinks), ``"inward"`` towards it (a change never grows).  A value equal
    to the query's value stays as it is (the query may lie off the grid).  A
    snapped value that leaves the hull of ``[lower, upper]`` and the query's
    value goes back to the last grid point inside it; a value already outside
    is left for verification to reject.
    """
    V = np.asarray(V, dtype=float)
    Q = np.asarray(Q, dtype=float)
    k = V / res
    near = np.abs(k - np.round(k)) <= 1e-9 * np.maximum(1.0, np.abs(k))
    if mode == "nearest":
        g = np.round(k)
    else:
        up = V > Q
        if mode == "inward":
            up = ~up
        g = np.where(near, np.round(k), np.where(up, np.ceil(k), np.floor(k)))
    lo, hi = np.minimum(lower, Q), np.maximum(upper, Q)
    inside = (V >= lo - 1e-9) & (V <= hi + 1e-9)
    g = np.where(inside & (g * res > hi + 1e-9), np.floor(hi / res + 1e-9), g)
    g = np.where(inside & (g * res < lo - 1e-9), np.ceil(lo / res - 1e-9), g)
    S = g * res
    for d in np.unique(_decimal_vector(res)):
        cols = _decimal_vector(res) == d
        S[:, cols] = np.round(S[:, cols], int(d))
    S = np.where(inside & ((S < lo - 1e-9) | (S > hi + 1e-9)), V, S)  # no grid point inside: keep
    same = np.abs(V - Q) <= _TOL * np.maximum(1.0, np.maximum(np.abs(V), np.abs(Q)))
    return np.where(same | ~np.isfinite(V), V, S)


def _decimal_vector(res: np.ndarray) -> np.ndarray:
    return np.array([decimals(float(r)) for r in np.atleast_1d(res)], dtype=int)


def snap_columns(schema: Schema) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """The numeric features that have a grid: names, resolutions, lower and upper bounds."""
    feats = [f for f in schema if resolution(f) is not None and f.lower is not None and f.upper is not None]
    return (
        [f.name for f in feats],
        np.array([resolution(f) for f in feats], dtype=float),
        np.array([float(f.lower) for f in feats], dtype=float),  # type: ignore[arg-type]
        np.array([float(f.upper) for f in feats], dtype=float),  # type: ignore[arg-type]
    )


def snap_frame(schema: Schema, frame: pd.DataFrame, queries: pd.DataFrame, mode: str) -> tuple[pd.DataFrame, np.ndarray]:
    """Every numeric value of ``frame`` on its feature's grid (:func:`snap_matrix`).

    ``queries`` holds, row for row, the query each candidate belongs to.
    Returns the snapped frame and a mask of the rows whose values moved.

    Unlike :meth:`Schema.snap`, a value equal to the query's stays as it is
    (snapping an off-grid query value would invent a change), the domain is
    the hull of the observed bounds and the query's value (as in
    :meth:`ResolvedConstraints.for_query`), and a value already outside the
    domain is not repaired (verification rejects it).
    """
    cols, res, lower, upper = snap_columns(schema)
    out = frame.copy()
    if not cols or len(frame) == 0:
        return out, np.zeros(len(frame), dtype=bool)
    V = _floats(frame[cols])
    Q = _floats(queries[cols])
    S = snap_matrix(V, Q, res, lower, upper, mode)
    moved = (~(np.abs(S - V) <= 1e-12 * np.maximum(1.0, np.abs(V))) & np.isfinite(V)).any(axis=1)
    out[cols] = S
    return out, moved


# ------------------------------------------------------------------- diversity
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
            out[:, j] = ~(np.abs(v - q) <= _TOL * np.maximum(1.0, np.maximum(np.abs(v), np.abs(q))))
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
    V = _floats(rows.iloc[:, num]) if num else np.zeros((len(rows), 0))
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


# -------------------------------------------------------------- sparsification
def sparsify(
    schema: Schema,
    rows: pd.DataFrame,
    owners: np.ndarray,
    bounds: Sequence[QueryBounds],
    queries: Sequence[pd.Series],
    targets: Sequence[Any],
    predict: Callable[[pd.DataFrame], tuple[np.ndarray, np.ndarray]],
    target_index: Sequence[int] | None = None,
    *,
    deadline: float | None = None,
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, np.ndarray]:
    """Revert every change that the model does not need, greedily, with batched model calls.

    ``rows`` are verified counterfactuals (schema types); ``owners[k]`` the
    index (into ``bounds``, ``queries``, ``targets``) of row ``k``'s query.
    Each round builds, for every row still being sparsified, one variant per
    changed feature with that feature set back to the query's value, checks
    them all (the query's constraints, then one call to ``predict``, the real
    model's ``(decisions, probabilities)``), and for each row takes the valid
    variant that reverts its largest change (in units of the feature's range).
    A row stops when no single revert keeps it valid, so in the returned rows
    no single change can be undone.  ``deadline`` (a ``time.perf_counter()``
    value): no round starts after it; the rows keep the reverts made so far
    (every one verified), and the last array returned marks the rows still
    being sparsified when it stopped.  Returns the rows, the number of
    reverted features per row, for rows that changed the model's probability
    of the target (column ``target_index[owner]``; NaN elsewhere), and that
    mask.
    """
    n = len(rows)
    n_rev = np.zeros(n, dtype=int)
    conf = np.full(n, np.nan)
    cut = np.zeros(n, dtype=bool)
    if n == 0:
        return schema.coerce(rows.reset_index(drop=True)), n_rev, conf, cut
    names = schema.names
    numeric = np.array([f.is_numeric for f in schema], dtype=bool)
    span = schema.ranges()
    out = rows.reset_index(drop=True).loc[:, names].to_numpy(dtype=object).copy()
    qmat = np.empty((len(queries), len(names)), dtype=object)
    for i, x in enumerate(queries):
        qmat[i] = x.loc[names].to_numpy(dtype=object)
    qv = qmat[np.asarray(owners, dtype=int)]
    active = np.arange(n)
    for _ in range(len(names)):
        if active.size == 0:
            break
        if deadline is not None and time.perf_counter() >= deadline:
            cut[active] = True
            break
        cur, qcur = out[active], qv[active]
        ch = _changed_values(cur, qcur, numeric)
        rr, jj = np.nonzero(ch)  # one variant per changed feature of each active row
        if rr.size == 0:
            break
        var = cur[rr].copy()
        var[np.arange(rr.size), jj] = qcur[rr, jj]
        frame = _typed_frame(schema, var, numeric)
        own = owners[active[rr]]
        ok = satisfied_many(bounds, frame, own)
        good = np.zeros(0, dtype=int)
        p_target = np.full(rr.size, np.nan)
        if ok.any():
            pred, proba = predict(frame[ok])
            tgt = np.array([targets[int(o)] for o in own[ok]], dtype=object)
            flips = np.array([p == t for p, t in zip(pred, tgt, strict=True)], dtype=bool)
            good = np.flatnonzero(ok)[flips]
            if target_index is not None:
                cols = np.array([target_index[int(o)] for o in own[ok]], dtype=int)
                p_target[np.flatnonzero(ok)] = np.asarray(proba)[np.arange(int(ok.sum())), cols]
        if good.size == 0:
            break
        # per row, the valid revert of its largest normalised change (discrete: 1)
        size = np.ones(rr.size)
        num = numeric[jj]
        a = np.array([float(v) for v in cur[rr[num], jj[num]]]) if num.any() else np.zeros(0)
        b = np.array([float(v) for v in qcur[rr[num], jj[num]]]) if num.any() else np.zeros(0)
        size[num] = np.abs(a - b) / span[jj[num]]
        best: dict[int, int] = {}
        for g in good.tolist():
            r = int(rr[g])
            if r not in best or size[g] > size[best[r]]:
                best[r] = g
        rows_r = np.array(sorted(best), dtype=int)
        picks = np.array([best[r] for r in rows_r], dtype=int)
        out[active[rows_r]] = var[picks]
        n_rev[active[rows_r]] += 1
        conf[active[rows_r]] = p_target[picks]
        active = active[rows_r]
    return schema.coerce(pd.DataFrame(out, columns=names)), n_rev, conf, cut


def _floats(sub: pd.DataFrame) -> np.ndarray:
    """``sub`` as a float matrix, values that are not numbers as NaN
    (``pandas.to_numeric(errors="coerce")`` per column; one cast when every
    column already has a numeric numpy dtype)."""
    if all(isinstance(dt, np.dtype) and dt.kind in "biuf" for dt in sub.dtypes):
        return np.array(sub.to_numpy(dtype=float), dtype=float)  # a copy, writable
    return sub.apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)


def _typed_frame(schema: Schema, var: np.ndarray, numeric: np.ndarray) -> pd.DataFrame:
    """``schema.coerce(pd.DataFrame(var, columns=schema.names))`` for an object
    matrix ``var``, without building the object frame first: the numeric
    columns are cast in one go when they hold plain numbers."""
    from .._utils._values import _py_array

    block = var[:, numeric]
    kind = pd.api.types.infer_dtype(block.ravel(), skipna=False) if block.size else "floating"
    if kind not in ("integer", "floating", "mixed-integer-float"):
        return schema.coerce(pd.DataFrame(var, columns=schema.names))
    try:
        V = np.asarray(block, dtype=float)
    except (OverflowError, TypeError, ValueError):
        return schema.coerce(pd.DataFrame(var, columns=schema.names))
    index = pd.RangeIndex(len(var))
    cols: dict[str, Any] = {}
    k = 0
    for j, f in enumerate(schema.features):
        if f.kind in ("integer", "real"):
            v = V[:, k]
            k += 1
            cols[f.name] = np.round(v).astype(np.int64) if f.kind == "integer" else v
        else:
            cols[f.name] = pd.Series(_py_array(var[:, j]), index=index, dtype=object)
    return pd.DataFrame(cols, index=index)


def _changed_values(cur: np.ndarray, q: np.ndarray, numeric: np.ndarray) -> np.ndarray:
    """``changed`` element-wise on object arrays (rows x features)."""
    ch = np.zeros(cur.shape, dtype=bool)
    for j in range(cur.shape[1]):
        if numeric[j]:
            v = cur[:, j].astype(float)
            w = q[:, j].astype(float)
            ch[:, j] = ~(np.abs(v - w) <= _TOL * np.maximum(1.0, np.maximum(np.abs(v), np.abs(w))))
        else:
            ch[:, j] = cur[:, j] != q[:, j]
    return ch
