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

On top of the steps, the answers of one query are *options, not copies*
(:func:`dominance`, :func:`pick_options`):

* **no answer is dominated by another**: answer B dominates answer A when B
  changes only features A changes (the same or fewer), moves each of them on
  the same side of the query and at most as far (a numeric feature in its
  units, an ordinal one in ranks; a categorical one to the same category),
  reaches the target with a probability at least A's, and costs no more in the
  query's measure.  A dominated answer adds an unnecessary change or move to
  a better one (``#1 = #0 plus loan_amount 3446 -> 3334``) and is dropped,
  whichever the method ranked first (of two answers that dominate each other,
  the same change within round-off, the method's earlier one is kept);
* **two answers that change the same features in the same directions** (the
  same sides of the query, the same categories) are both kept only when the
  measure tells them apart by a meaningful step: moving from one to the other
  costs at least :data:`SAME_CHANGE_SHARE` of the cheaper one's cost
  (``sum_j |c_j(A) - c_j(B)|`` with ``c_j`` the measure's cost of feature
  ``j``; under the default measure of effort, whose cost of an answer is at
  least its number of changes, two answers changing ``k`` features must
  differ by at least ``k / 4`` MADs in total).  ``loan_amount -> 6153`` and
  ``-> 6041`` with the same ``loan_term`` are one option, not two.

The measure is the query's cost measure (``Requirements(costs=...)``, the
measure of effort by default); for a call without one (``costs="own"``, or a
method that takes no costs) the default measure of effort on the method's
training data.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...schema import Schema
from ._snap import resolution
from ._values import TOL, floats

__all__ = [
    "ALTERNATIVES",
    "DEFAULT_DIVERSITY_FRACTION",
    "SAME_CHANGE_SHARE",
    "OptionArrays",
    "changed_mask",
    "different",
    "different_arrays",
    "diversity_steps",
    "dominance",
    "dominated_rows",
    "keep_different",
    "keep_different_arrays",
    "meaningful_mask",
    "pick_options",
    "same_option",
    "signed_moves",
    "solver_steps",
    "substep_mask",
]

#: default share of a feature's MAD that two counterfactuals must differ by
DEFAULT_DIVERSITY_FRACTION = 0.1

#: two answers of one query that change the same features in the same directions are
#: both kept only when moving from one to the other costs at least this share of the
#: cheaper one's cost, in the query's measure
SAME_CHANGE_SHARE = 0.25

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
    numeric = np.array([f.is_numeric for f in schema], dtype=bool)
    return np.where(numeric, np.abs(signed_moves(schema, rows, x)), 0.0)


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
    for r in range(changed.shape[0]):
        if len(kept) >= k:
            break
        if kept and not different_arrays(changed, V, C, num_steps, r, kept).all():
            skipped += 1
            continue
        kept.append(r)
    return kept, skipped


def different_arrays(
    changed: np.ndarray,
    V: np.ndarray,
    C: np.ndarray,
    num_steps: np.ndarray,
    r: int,
    kept: list[int],
) -> np.ndarray:
    """Per row of ``kept``, whether row ``r`` is *different* from it by the steps
    (:func:`different`, on the arrays of :func:`keep_different_arrays`)."""
    K = np.asarray(kept, dtype=int)
    st = np.asarray(num_steps, dtype=float) * (1 + 1e-9) + 1e-12
    differs = (changed[K] != changed[r]).any(axis=1)
    differs |= (np.abs(V[K] - V[r]) > st).any(axis=1)
    differs |= (C[K] != C[r]).any(axis=1)
    return differs


def solver_steps(schema: Schema, steps: np.ndarray) -> np.ndarray:
    """The diversity steps for a solver that searches before snapping: each
    numeric feature's step plus one resolution unit (its answers are snapped to
    the grid afterwards, which may move a value by up to one unit); 0 for
    discrete features (any change counts)."""
    grid = np.array([resolution(f) or 0.0 for f in schema], dtype=float)
    return np.asarray(steps, dtype=float) + grid


# ------------------------------------------------------------ options, not copies
def signed_moves(schema: Schema, rows: pd.DataFrame, x: pd.Series | pd.DataFrame) -> np.ndarray:
    """``row - x`` per feature (rows x features): numeric features in their units,
    ordinal ones in ranks, 0 for binary and categorical ones (compared by value)."""
    out = np.zeros((len(rows), len(schema)), dtype=float)
    per_row = isinstance(x, pd.DataFrame)
    for j, f in enumerate(schema):
        if f.is_numeric:
            v = pd.to_numeric(rows[f.name], errors="coerce").to_numpy(dtype=float)
            q = pd.to_numeric(x[f.name]).to_numpy(dtype=float) if per_row else float(x[f.name])
            out[:, j] = v - q
        elif f.kind == "ordinal":
            v = _ranks(f, rows[f.name])
            q = _ranks(f, x[f.name]) if per_row else float(f.rank(x[f.name]))
            out[:, j] = v - q
    return out


def _ranks(f: object, col: pd.Series) -> np.ndarray:
    cats = pd.Index(list(getattr(f, "categories", None) or ()), dtype=object)
    idx = cats.get_indexer(pd.Index(col.astype(object).tolist(), dtype=object))
    return np.where(idx < 0, np.nan, idx).astype(float)


@dataclass
class OptionArrays:
    """What the options rule compares for the candidate rows of one query, in the
    method's order: the changes (``changed``, rows x features), the signed moves
    (:func:`signed_moves`), the discrete values (``values``, object, the same
    constant on numeric features), the probability of the target (``proba``, NaN
    when unknown) and each feature's cost in the query's measure (``cost``)."""

    changed: np.ndarray
    moves: np.ndarray
    values: np.ndarray
    proba: np.ndarray
    cost: np.ndarray

    @property
    def total(self) -> np.ndarray:
        """Each row's cost."""
        return self.cost.sum(axis=1)


def dominance(o: OptionArrays, block: int = 128) -> np.ndarray:
    """``dom[b, a]``: row ``b`` dominates row ``a`` (see the module docstring): it
    changes a subset of ``a``'s features, each on the same side and at most as far
    (discrete: to the same value), with a probability of the target at least
    ``a``'s (both unknown counts as equal) and a cost at most ``a``'s."""
    n = len(o.changed)
    dom = np.zeros((n, n), dtype=bool)
    total = o.total
    for s in range(0, n, block):
        a = slice(s, min(n, s + block))
        ch_b, ch_a = o.changed[:, None, :], o.changed[None, a, :]
        mb, ma = o.moves[:, None, :], o.moves[None, a, :]
        same_way = (np.sign(mb) == np.sign(ma)) & (np.abs(mb) <= np.abs(ma) * (1 + 1e-9) + 1e-12)
        same_way &= (o.values[:, None, :] == o.values[None, a, :]).astype(bool)
        fits = (~ch_b | (ch_a & same_way)).all(axis=-1)
        pb, pa = o.proba[:, None], o.proba[None, a]
        likely = (pb >= pa - 1e-12) | (np.isnan(pa) & np.isnan(pb))
        cheaper = total[:, None] <= total[None, a] + 1e-9 * np.maximum(1.0, np.abs(total[None, a]))
        dom[:, a] = fits & likely & cheaper
    np.fill_diagonal(dom, False)
    return dom


def dominated_rows(o: OptionArrays) -> np.ndarray:
    """Per row, whether another row dominates it; of two rows that dominate each
    other (the same change within round-off) only the later one."""
    dom = dominance(o)
    earlier = np.triu(np.ones(dom.shape, dtype=bool), 1)  # [b, a]: b comes before a
    return (dom & (earlier | ~dom.T)).any(axis=0)


def same_option(o: OptionArrays, r: int, kept: list[int]) -> np.ndarray:
    """Per kept row, whether row ``r`` is the same option under the measure: the same
    changed features, moved in the same directions (discrete: to the same values),
    and moving from one to the other costs less than :data:`SAME_CHANGE_SHARE` of
    the cheaper one's cost."""
    K = np.asarray(kept, dtype=int)
    ch = o.changed[r]
    same = (o.changed[K] == ch).all(axis=1)
    same &= (np.sign(o.moves[K][:, ch]) == np.sign(o.moves[r, ch])).all(axis=1)
    same &= (o.values[K][:, ch] == o.values[r, ch]).astype(bool).all(axis=1)
    apart = np.abs(o.cost[K] - o.cost[r]).sum(axis=1)
    total = o.total
    return same & (apart < SAME_CHANGE_SHARE * np.minimum(total[K], total[r]))


def pick_options(
    o: OptionArrays,
    k: int,
    differs: Callable[[int, list[int]], np.ndarray] | None = None,
) -> tuple[list[int], int, int]:
    """Positions (in order) of at most ``k`` rows, none dominated by another row
    (:func:`dominated_rows`), each neither the same option under the measure
    (:func:`same_option`) nor -- with ``differs(r, kept)``, per kept row whether
    row ``r`` is different from it by the steps -- a near copy of an earlier kept
    one; how many rows were dominated, and how many skipped as copies."""
    drop = dominated_rows(o)
    kept: list[int] = []
    copies = 0
    for r in range(len(drop)):
        if len(kept) >= k:
            break
        if drop[r]:
            continue
        if kept and (
            same_option(o, r, kept).any() or (differs is not None and not differs(r, kept).all())
        ):
            copies += 1
            continue
        kept.append(r)
    return kept, int(drop.sum()), copies
