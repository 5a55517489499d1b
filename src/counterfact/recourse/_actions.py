"""Actions of global recourse: change rules a person can read, applied to each person's
own row, snapped to the features' grids and verified with the real model.

An :class:`Action` is one to a few :class:`Atom` s on distinct features:

* ``set``: a discrete feature takes a category ("set savings to 500 <= ... < 1000 DM");
* ``shift``: a numeric feature moves by a delta ("reduce duration_months by 12");
* ``at_least`` / ``at_most``: a numeric feature (or an ordinal one, by rank) is raised
  to at least / lowered to at most a value; a person already there keeps their value
  ("raise capital_gain to at least 7,000").

:class:`ActionSpace` codes rows as one float matrix (numeric values, ordinal ranks,
category indices: the coding of :class:`counterfact.metrics._distances.DistanceEncoder`), so
that an action applies to thousands of rows in a few numpy operations.
:func:`verify` applies every action to every person and checks each result against
*that person's* bounds (:func:`counterfact.constraints._bounds.satisfied_many`) and with the
real model's ``predict``, block by block, one batched prediction per block.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._utils._values import _py
from ..constraints._bounds import QueryBounds, satisfied_many
from ..exceptions import ValidationError
from ..metrics._distances import DistanceEncoder, norm_weights
from ..schema import Schema
from ..schema._format import format_value
from ..schema._resolution import snap_array

__all__ = ["OPS", "Action", "ActionSpace", "Atom", "Cost", "Coverage", "verify"]

#: the kinds of change an atom makes
OPS = ("set", "shift", "at_least", "at_most")
#: (action, person) pairs checked per block: one batched prediction each
BLOCK_ROWS = 200_000
_NUM_TOL = 1e-7


@dataclass(frozen=True)
class Atom:
    """One feature's change: ``op`` (one of :data:`OPS`) with ``value`` (a category,
    a delta or a threshold, in the feature's raw values)."""

    feature: str
    op: str
    value: Any

    def describe(self, schema: Schema) -> str:
        """The change in words: ``"reduce duration_months by 12"``."""
        f = schema[self.feature]
        if self.op == "set":
            return f"set {f.name} to {format_value(f, self.value, unit=True)}"
        if self.op == "shift":
            verb = "increase" if float(self.value) > 0 else "reduce"
            return f"{verb} {f.name} by {format_value(f, abs(float(self.value)), unit=True)}"
        if self.op == "at_least":
            return f"raise {f.name} to at least {format_value(f, self.value, unit=True)}"
        return f"lower {f.name} to at most {format_value(f, self.value, unit=True)}"


@dataclass(frozen=True)
class Action:
    """A change rule on one or a few features (atoms in schema order)."""

    atoms: tuple[Atom, ...]

    @property
    def features(self) -> tuple[str, ...]:
        """The features the action may change."""
        return tuple(a.feature for a in self.atoms)

    def describe(self, schema: Schema) -> str:
        """``"reduce duration_months by 12 and set savings to ..."``."""
        return " and ".join(a.describe(schema) for a in self.atoms)

    def to_dict(self) -> list[dict[str, Any]]:
        """JSON-friendly form: one ``{"feature", "op", "value"}`` per atom."""
        return [{"feature": a.feature, "op": a.op, "value": _py(a.value)} for a in self.atoms]

    @classmethod
    def from_dict(cls, atoms: Sequence[Mapping[str, Any]]) -> Action:
        """Inverse of :meth:`to_dict`."""
        return cls(tuple(Atom(str(a["feature"]), str(a["op"]), a["value"]) for a in atoms))


@dataclass(frozen=True)
class Cost:
    """The cost of moving a person from ``M`` to ``V`` (rows coded by :class:`ActionSpace`).

    ``kind``: ``"l1"`` (the range-normalised l1 distance, optionally weighted per feature),
    ``"n_changed"`` (changed features), ``"effort"`` (the measure of effort: 1 per changed
    feature plus each range-normalised move times ``weights``, which turn it into MAD-units)
    or ``"norm"`` (the range-normalised ``norm``).
    """

    kind: str
    weights: np.ndarray
    norm: Any = "l1"

    def __call__(self, space: ActionSpace, V: np.ndarray, M: np.ndarray) -> np.ndarray:
        delta, ch = space.deltas(V, M)
        if self.kind == "n_changed":
            return ch.sum(axis=1).astype(float)
        if self.kind == "effort":
            return ch.sum(axis=1) + (delta * self.weights).sum(axis=1)
        J = float(max(delta.shape[1], 1))
        if self.kind == "l1":
            return (delta * self.weights).sum(axis=1) / J
        w = norm_weights(self.norm)
        if w is None:  # l2
            return np.sqrt((delta * delta).sum(axis=1) / J)
        a, b, g = w
        out = (a / J) * ch.sum(axis=1) + (b / J) * delta.sum(axis=1)
        return out + (g * delta.max(axis=1) if delta.shape[1] else 0.0)


class ActionSpace:
    """A schema's features as the columns of one float matrix, and what applying an
    action needs: each feature's domain (numeric bounds, ranks 0..levels-1), grid step
    (``Feature.resolution``; integers 1) and categories."""

    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self.encoder = DistanceEncoder(schema)
        self.numeric = np.array([f.is_numeric for f in schema], dtype=bool)
        self.ordinal = np.array([f.kind == "ordinal" for f in schema], dtype=bool)
        self.categorical = np.array([f.is_categorical for f in schema], dtype=bool)
        self.lower = np.array(
            [float(f.lower) if f.is_numeric else 0.0 for f in schema]  # type: ignore[arg-type]
        )
        self.upper = np.array(
            [float(f.upper) if f.is_numeric else len(f.categories or ()) - 1.0 for f in schema]
        )  # type: ignore[arg-type]
        self.step = np.array([_step(f) for f in schema])
        self.categories = [
            None if f.is_numeric else np.array(list(f.categories or ()), dtype=object)
            for f in schema
        ]
        self.scale = np.where(self.categorical, 1.0, 1.0 / schema.ranges())

    def encode(self, frame: pd.DataFrame) -> np.ndarray:
        """Raw rows -> the float matrix (values, ranks, category indices)."""
        return self.encoder.transform(frame)

    def decode(self, V: np.ndarray, index: Any = None) -> pd.DataFrame:
        """The float matrix -> raw rows in the schema's dtypes."""
        cols: dict[str, Any] = {}
        for j, f in enumerate(self.schema):
            cats = self.categories[j]
            cols[f.name] = V[:, j] if cats is None else cats[np.round(V[:, j]).astype(int)]
        return self.schema.coerce(pd.DataFrame(cols, index=index))

    def code(self, feature: str, value: Any) -> float:
        """A raw value of ``feature`` in the matrix's coding."""
        j = self.schema.index(feature)
        f = self.schema.features[j]
        return float(value) if f.is_numeric else float(f.rank(value))

    def deltas(self, V: np.ndarray, M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """MACE's per-feature ``delta_j`` between rows ``V`` and ``M``, and the changed mask."""
        D = np.abs(V - M)
        thr = np.where(
            self.numeric, _NUM_TOL * np.maximum(1.0, np.maximum(np.abs(V), np.abs(M))), 0.5
        )
        ch = D > thr
        return np.where(self.categorical, ch, D * self.scale * ch), ch

    def apply(self, action: Action, M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``action`` on every row of ``M``: the rows reached (on the grids) and which
        rows it applies to (a shift that leaves the feature's domain does not)."""
        V = M.copy()
        inside = np.ones(len(M), dtype=bool)
        for atom in action.atoms:
            j = self.schema.index(atom.feature)
            x = M[:, j]
            if atom.op == "set":
                V[:, j] = self.code(atom.feature, atom.value)
            elif atom.op == "shift":
                v = x + float(atom.value)
                tol = 1e-9 * max(1.0, abs(self.upper[j]), abs(self.lower[j]))
                inside &= (v >= self.lower[j] - tol) & (v <= self.upper[j] + tol)
                V[:, j] = v
            elif atom.op == "at_least":
                V[:, j] = np.maximum(x, self.code(atom.feature, atom.value))
            else:
                V[:, j] = np.minimum(x, self.code(atom.feature, atom.value))
            if self.numeric[j] and np.isfinite(self.step[j]):
                moved = np.abs(V[:, j] - x) > _NUM_TOL * np.maximum(1.0, np.abs(x))
                if moved.any():  # a change never shrinks when snapped (Schema.snap(away=True))
                    lo, hi = self.lower[j], self.upper[j]
                    V[moved, j] = snap_array(
                        V[moved, j], self.step[j], lo, hi, toward=x[moved], away=True
                    )
        return V, inside

    def check(self, action: Action) -> None:
        """Raise :class:`ValidationError` when ``action`` does not fit the schema."""
        for a in action.atoms:
            if a.feature not in self.schema:
                raise ValidationError(
                    f"Action {a!r} names feature {a.feature!r}, which is not in the schema."
                )
            f = self.schema[a.feature]
            ok = {"set": not f.is_numeric, "shift": f.is_numeric}.get(a.op, f.is_ordered)
            if a.op not in OPS or not ok:
                raise ValidationError(
                    f"Action op {a.op!r} does not apply to the {f.kind} feature {f.name!r}."
                )
        if len(set(action.features)) != len(action.atoms):
            raise ValidationError(f"Action {action!r} changes a feature twice.")


def _step(f: Any) -> float:
    """A numeric feature's grid step (integers 1; NaN: no grid)."""
    if not f.is_numeric:
        return float("nan")
    res = f.resolution if f.resolution is not None else (1.0 if f.kind == "integer" else None)
    return float(res) if res is not None and np.isfinite(res) and res > 0 else float("nan")


@dataclass
class Coverage:
    """Every (action, person) pair verified: ``works[a, p]`` and the cost (NaN where it does
    not)."""

    works: np.ndarray
    cost: np.ndarray
    n_predicted: int


def verify(
    space: ActionSpace,
    actions: Sequence[Action],
    M: np.ndarray,
    bounds: Sequence[QueryBounds | None],
    model: Any,
    target: Any,
    cost: Cost,
    block_rows: int = BLOCK_ROWS,
) -> Coverage:
    """Apply every action to every person (rows of ``M``), check each result against the
    person's own ``bounds`` (None: their constraints contradict themselves, nothing
    applies) and with the model's ``predict``; blocks of people, one batched prediction
    per block of at most ``block_rows`` pairs."""
    A, P = len(actions), len(M)
    works = np.zeros((A, P), dtype=bool)
    costs = np.full((A, P), np.nan)
    n_pred = 0
    if A == 0 or P == 0:
        return Coverage(works, costs, 0)
    size = max(1, block_rows // A)
    for s in range(0, P, size):
        people = np.arange(s, min(P, s + size))
        w, c, k = _verify_block(
            space, actions, M[people], [bounds[int(p)] for p in people], model, target, cost
        )
        works[:, people], costs[:, people] = w, c
        n_pred += k
    return Coverage(works, costs, n_pred)


def _verify_block(
    space: ActionSpace,
    actions: Sequence[Action],
    M: np.ndarray,
    bounds: list[QueryBounds | None],
    model: Any,
    target: Any,
    cost: Cost,
) -> tuple[np.ndarray, np.ndarray, int]:
    A, P = len(actions), len(M)
    reached = [space.apply(a, M) for a in actions]
    V = np.concatenate([v for v, _ in reached])
    inside = np.concatenate([i for _, i in reached])
    owner = np.tile(np.arange(P), A)
    base = np.tile(M, (A, 1))
    _, ch = space.deltas(V, base)
    valid = np.array([b is not None for b in bounds], dtype=bool)
    todo = np.flatnonzero(inside & ch.any(axis=1) & valid[owner])
    ok = np.zeros(A * P, dtype=bool)
    if todo.size:
        keep = np.flatnonzero(valid)
        local = np.full(P, -1)
        local[keep] = np.arange(keep.size)
        rows = space.decode(V[todo])
        owners = [bounds[p] for p in keep]
        sat = satisfied_many(owners, rows, local[owner[todo]])  # type: ignore[misc]
        todo, rows = todo[sat], rows[sat]
        if todo.size:
            pred = np.asarray(model.predict(rows))
            ok[todo] = pred == target
    c = np.full(A * P, np.nan)
    if ok.any():
        c[ok] = cost(space, V[ok], base[ok])
    return ok.reshape(A, P), c.reshape(A, P), int(todo.size)
