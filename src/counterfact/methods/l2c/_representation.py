"""L2C's representation: every feature as a categorical variable, one-hot.

Numeric features are discretised into up to ``n_bins`` quantile bins holding
at least ``min_count`` training rows each (L2C, Appendix A.3, pandas
``qcut``-like); binary, categorical and ordinal features keep their levels.
A row becomes the level index of each feature (``levels``, shape ``(n, N)``)
and the concatenated one-hot vector ``z`` of length ``D = sum_i c_i`` (Sec. 3.1).

Decoding a level back to a raw value (Sec. 3.3, "one-hot decoding") goes
through a *table*: one value per (row, column of ``z``).  For a numeric
feature the value of a bin is its representative (the mid-point as the paper,
or the median of the training rows in the bin) clipped into the part of the
bin that the row's bounds allow; the row's *own* bin decodes to the row's own
value (unchanged features stay exactly as they were, a departure from the
paper, whose decoder moves every numeric feature to a mid-point).  Ordinal
levels decode to their rank, categorical levels to 1 (the one-hot entry
itself).  The same table drives the differentiable mirror of the black box,
so what the model sees during training is what a user gets at inference.

All operations are vectorised over rows: 20,000 candidates decode in a few
milliseconds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ...data._dataset import quantile_bins
from ...schema import Schema

__all__ = ["Representation", "bin_edges"]


def bin_edges(v: np.ndarray, n_bins: int, min_count: int) -> np.ndarray:
    """Edges of a numeric feature's bins: quantile bins
    (:func:`~counterfact.data._dataset.quantile_bins`), except that a smallest value
    holding so many rows that the quantiles collapse gets a bin of its own, the other
    values their quantile bins.

    Adult's capital gain is 0 in 92 % of the rows: its quantiles are all 0, and
    quantile bins alone give it a single bin, so that it could never change.
    Here it gets ``{0}`` and up to ``n_bins - 1`` quantile bins of the positive
    values, each still holding at least ``min_count`` rows.
    """
    edges = quantile_bins(v, n_bins, min_count=min_count)
    if n_bins < 2 or edges.size - 1 >= n_bins or v.size == 0:
        return edges
    low = float(v.min())
    rest = v[v != low]
    if (v.size - rest.size) < min_count or rest.size < min_count:
        return edges
    inner = quantile_bins(rest, n_bins - 1, min_count=min_count)
    if inner.size - 1 + 1 <= edges.size - 1:
        return edges
    return np.concatenate([[low], inner])


@dataclass(frozen=True)
class _Levels:
    """The levels of one feature."""

    name: str
    kind: str
    start: int
    size: int
    # numeric features: bin edges, each bin's admissible value interval and representative
    edges: np.ndarray | None = None
    lo: np.ndarray | None = None
    hi: np.ndarray | None = None
    rep: np.ndarray | None = None
    # discrete features
    categories: tuple[Any, ...] | None = None

    @property
    def numeric(self) -> bool:
        return self.kind in ("real", "integer")


class Representation:
    """Quantile-discretised one-hot representation of a schema (see module docstring).

    Parameters
    ----------
    schema : Schema
    features : sequence of _Levels
        Built by :meth:`from_data` or :meth:`from_dict`.
    representative : {"midpoint", "median"}
        How a numeric bin decodes (kept for the record).
    """

    def __init__(self, schema: Schema, features: Sequence[_Levels], representative: str) -> None:
        self.schema = schema
        self.features: tuple[_Levels, ...] = tuple(features)
        self.representative = representative
        self.n_features = len(self.features)
        self.starts = np.array([f.start for f in self.features], dtype=np.int64)
        self.sizes = np.array([f.size for f in self.features], dtype=np.int64)
        self.n_columns = int(self.sizes.sum())
        #: feature index of each column of z
        self.column_feature = np.repeat(np.arange(self.n_features), self.sizes)
        #: level index (within its feature) of each column of z
        self.column_level = np.arange(self.n_columns) - self.starts[self.column_feature]
        self.is_numeric = np.array([f.numeric for f in self.features], dtype=bool)
        self.is_integer = np.array([f.kind == "integer" for f in self.features], dtype=bool)
        self.is_ordinal = np.array([f.kind == "ordinal" for f in self.features], dtype=bool)
        # normalising range of each feature, for distances (MACE-style normalisation)
        self.ranges = schema.ranges()
        self._base_table = np.ones(self.n_columns)
        for f in self.features:
            if f.kind == "ordinal":
                self._base_table[f.start : f.start + f.size] = np.arange(f.size)

    # ---------------------------------------------------------------- build
    @classmethod
    def from_data(
        cls,
        schema: Schema,
        X: pd.DataFrame,
        *,
        n_bins: int = 4,
        min_count: int = 1,
        representative: str = "midpoint",
    ) -> Representation:
        """Discretise the numeric features of ``X`` (training rows)."""
        feats: list[_Levels] = []
        start = 0
        for f in schema:
            if not f.is_numeric:
                cats = tuple(f.categories)  # type: ignore[arg-type]
                feats.append(_Levels(f.name, f.kind, start, len(cats), categories=cats))
                start += len(cats)
                continue
            v = pd.to_numeric(X[f.name]).to_numpy(dtype=float)
            edges = bin_edges(v, n_bins, min_count)
            if edges[0] == edges[-1]:  # a constant feature: one level
                edges = np.array([edges[0], edges[0]])
            k = edges.size - 1
            # bins are [e_k, e_{k+1}), the last one closed, as counted by quantile_bins
            lo = edges[:-1].astype(float).copy()
            hi = edges[1:].astype(float).copy()
            if f.kind == "integer":
                lo = np.ceil(lo)
                hi[:-1] = np.ceil(hi[:-1]) - 1.0
                hi[-1] = np.floor(hi[-1])
            else:
                hi[:-1] = np.nextafter(hi[:-1], -np.inf)
            lo[0] = min(lo[0], float(f.lower))  # type: ignore[arg-type]
            hi[-1] = max(hi[-1], float(f.upper))  # type: ignore[arg-type]
            if representative == "median":
                own = np.clip(np.searchsorted(edges[1:-1], v, side="right"), 0, k - 1)
                rep = np.array(
                    [
                        np.median(v[own == j])
                        if (own == j).any()
                        else 0.5 * (edges[j] + edges[j + 1])
                        for j in range(k)
                    ]
                )
            else:
                rep = 0.5 * (edges[:-1] + edges[1:])
            if k > 1 and not ((v > edges[0]) & (v < edges[1])).any():
                rep[0] = edges[0]  # a bin of one value (see bin_edges) decodes to it
            if f.kind == "integer":
                rep = np.rint(rep)
            rep = np.clip(rep, lo, np.maximum(lo, hi))
            feats.append(_Levels(f.name, f.kind, start, k, edges=edges, lo=lo, hi=hi, rep=rep))
            start += k
        return cls(schema, feats, representative)

    # ------------------------------------------------------------- encoding
    def levels(self, X: pd.DataFrame) -> np.ndarray:
        """Level index of every feature, shape ``(n, N)``."""
        out = np.zeros((len(X), self.n_features), dtype=np.int64)
        for i, f in enumerate(self.features):
            col = X[f.name]
            if f.numeric:
                v = pd.to_numeric(col).to_numpy(dtype=float)
                bins = np.searchsorted(f.edges[1:-1], v, side="right")  # type: ignore[index]
                out[:, i] = np.clip(bins, 0, f.size - 1)
            else:
                lookup = {c: j for j, c in enumerate(f.categories)}  # type: ignore[arg-type]
                vals = col.tolist()
                codes = np.fromiter(
                    (lookup.get(v, -1) for v in vals), dtype=np.int64, count=len(vals)
                )
                if (codes < 0).any():
                    bad = vals[int(np.flatnonzero(codes < 0)[0])]
                    raise ValueError(
                        f"Feature '{f.name}': value {bad!r} is not one of its categories."
                    )
                out[:, i] = codes
        return out

    def values(self, X: pd.DataFrame, levels: np.ndarray | None = None) -> np.ndarray:
        """Raw numeric values (ranks for ordinal features, 0 for categorical ones), ``(n, N)``;
        ``levels`` (from :meth:`levels`) saves recomputing the ordinal ranks."""
        out = np.zeros((len(X), self.n_features))
        for i, f in enumerate(self.features):
            if f.numeric:
                out[:, i] = pd.to_numeric(X[f.name]).to_numpy(dtype=float)
        if self.is_ordinal.any():
            lv = self.levels(X) if levels is None else levels
            out[:, self.is_ordinal] = lv[:, self.is_ordinal]
        return out

    def onehot(self, levels: np.ndarray) -> np.ndarray:
        """The one-hot vector ``z`` of each row of levels, ``(n, D)`` float32."""
        z = np.zeros((levels.shape[0], self.n_columns), dtype=np.float32)
        z[np.arange(levels.shape[0])[:, None], self.starts[None, :] + levels] = 1.0
        return z

    # -------------------------------------------------------- tables / masks
    def tables(
        self,
        levels: np.ndarray,
        values: np.ndarray,
        lower: np.ndarray,
        upper: np.ndarray,
        allowed: np.ndarray,
        numeric_values: Mapping[tuple[int, int], Sequence[float]] | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Decoding table and admissible-level mask for rows under bounds.

        Parameters
        ----------
        levels, values : (n, N) arrays
            Each row's own levels and raw values.
        lower, upper : (n, N) arrays
            Admissible interval of each numeric feature (ignored elsewhere).
        allowed : (n, D) bool array
            Admissible levels of discrete features (ignored for numeric ones).
        numeric_values : mapping (row, feature) -> values, optional
            Finite sets of admissible numeric values (``allowed_values`` on a numeric feature).

        Returns
        -------
        table : (n, D) float array
            The raw value each level decodes to (see module docstring).
        mask : (n, D) bool array
            Admissible levels; the row's own level is admissible when its own value is.
        """
        n = levels.shape[0]
        table = np.broadcast_to(self._base_table, (n, self.n_columns)).copy()
        mask = allowed.copy()
        for i, f in enumerate(self.features):
            if f.numeric:
                cols = slice(f.start, f.start + f.size)
                table[:, cols], mask[:, cols] = self._numeric_levels(
                    i, levels[:, i], values[:, i], lower[:, i], upper[:, i]
                )
        for (r, i), vals in (numeric_values or {}).items():
            self._restrict_to_values(table, mask, r, i, vals, levels, values, lower, upper)
        return table, mask

    def _numeric_levels(
        self, i: int, own: np.ndarray, x: np.ndarray, lower: np.ndarray, upper: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Numeric feature ``i``'s decoding table and mask ``(n, size)``: each bin's
        representative clipped into the admissible interval ``[lower, upper]``
        (a bin outside it inadmissible); the row's own bin decodes to the row's own
        value ``x`` when that value is admissible."""
        f = self.features[i]
        lo = np.maximum(f.lo[None, :], lower[:, None])  # type: ignore[index]
        hi = np.minimum(f.hi[None, :], upper[:, None])  # type: ignore[index]
        ok = lo <= hi
        val = np.clip(f.rep[None, :], lo, np.maximum(lo, hi))  # type: ignore[index]
        own_ok = (x >= lower - 1e-12) & (x <= upper + 1e-12)
        rows = np.flatnonzero(own_ok)
        val[rows, own[rows]] = x[rows]
        ok[rows, own[rows]] = True
        return val, ok

    def _restrict_to_values(
        self,
        table: np.ndarray,
        mask: np.ndarray,
        r: int,
        i: int,
        vals: Sequence[float],
        levels: np.ndarray,
        values: np.ndarray,
        lower: np.ndarray,
        upper: np.ndarray,
    ) -> None:
        """Row ``r``'s numeric feature ``i`` may take only the values ``vals``: each
        bin decodes to the allowed value nearest its representative inside the bin
        and the row's bounds (none: the bin is inadmissible); the row's own bin keeps
        the row's own value when that value is allowed.  Edits ``table`` and
        ``mask`` in place."""
        f = self.features[i]
        allowed_v = np.sort(np.asarray(vals, dtype=float))
        for j in range(f.size):
            c = f.start + j
            own = levels[r, i] == j
            if own and any(abs(a - values[r, i]) <= 1e-9 * max(1.0, abs(a)) for a in allowed_v):
                table[r, c], mask[r, c] = values[r, i], True
                continue
            lo = max(f.lo[j], lower[r, i])  # type: ignore[index]
            hi = min(f.hi[j], upper[r, i])  # type: ignore[index]
            inside = allowed_v[(allowed_v >= lo) & (allowed_v <= hi)]
            if inside.size == 0:
                mask[r, c] = False
                continue
            nearest = np.argmin(np.abs(inside - f.rep[j]))  # type: ignore[index]
            table[r, c] = inside[nearest]
            mask[r, c] = True

    def schema_bounds(
        self, levels: np.ndarray, values: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Bounds from the schema alone (domain and actionability), as used in training.

        Returns ``(lower, upper, allowed, mutable)``: numeric intervals (the hull
        of the domain and the row's value, cut by the direction), admissible
        discrete levels and the mutable-feature mask ``(n, N)``.
        """
        n = levels.shape[0]
        lower = np.zeros((n, self.n_features))
        upper = np.zeros((n, self.n_features))
        allowed = np.ones((n, self.n_columns), dtype=bool)
        mutable = np.ones((n, self.n_features), dtype=bool)
        for i, (f, feat) in enumerate(zip(self.features, self.schema, strict=True)):
            act = feat.actionability
            x = values[:, i]
            if f.numeric:
                lower[:, i] = np.minimum(float(feat.lower), x)  # type: ignore[arg-type]
                upper[:, i] = np.maximum(float(feat.upper), x)  # type: ignore[arg-type]
                if act == "increasing":
                    lower[:, i] = x
                elif act == "decreasing":
                    upper[:, i] = x
                if f.kind == "integer":
                    lower[:, i] = np.ceil(lower[:, i] - 1e-9)
                    upper[:, i] = np.floor(upper[:, i] + 1e-9)
            cols = slice(f.start, f.start + f.size)
            lvl = np.arange(f.size)[None, :]
            own = levels[:, i : i + 1]
            if act == "immutable":
                mutable[:, i] = False
                allowed[:, cols] = lvl == own
                lower[:, i] = upper[:, i] = x
            elif f.kind == "ordinal" and act == "increasing":
                allowed[:, cols] = lvl >= own
            elif f.kind == "ordinal" and act == "decreasing":
                allowed[:, cols] = lvl <= own
        return lower, upper, allowed, mutable

    def query_bounds(
        self, bounds: Sequence[Any], levels: np.ndarray
    ) -> tuple[
        np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[tuple[int, int], Sequence[float]]
    ]:
        """Bounds of queries (a list of :class:`~counterfact.constraints._bounds.QueryBounds`).

        Returns ``(lower, upper, allowed, mutable, numeric_values)`` as for
        :meth:`tables` plus the mutable mask.
        """
        n = len(bounds)
        lower = np.zeros((n, self.n_features))
        upper = np.zeros((n, self.n_features))
        allowed = np.ones((n, self.n_columns), dtype=bool)
        mutable = np.ones((n, self.n_features), dtype=bool)
        numeric_values: dict[tuple[int, int], Sequence[float]] = {}
        for r, qb in enumerate(bounds):
            for i, (f, b) in enumerate(zip(self.features, qb.features, strict=True)):
                if b.fixed:
                    mutable[r, i] = False
                if f.numeric:
                    lower[r, i] = float(b.lower)
                    upper[r, i] = float(b.upper)
                    if b.values is not None:
                        numeric_values[(r, i)] = tuple(float(v) for v in b.values)
                    continue
                vals = set(b.values or ())
                cats = f.categories or ()
                allowed[r, f.start : f.start + f.size] = [c in vals for c in cats]
                if b.fixed:
                    allowed[r, f.start : f.start + f.size] = np.arange(f.size) == levels[r, i]
        return lower, upper, allowed, mutable, numeric_values

    # -------------------------------------------------------------- decoding
    def decode_values(self, levels: np.ndarray, owner: np.ndarray, table: np.ndarray) -> np.ndarray:
        """Decoded numeric values ``(m, N)`` of candidate levels; ``owner`` maps each
        candidate to its row of ``table``."""
        cols = self.starts[None, :] + levels
        return table[owner[:, None], cols]

    def decode(self, levels: np.ndarray, owner: np.ndarray, table: np.ndarray) -> pd.DataFrame:
        """Raw rows (schema columns and dtypes) of candidate levels."""
        vals = self.decode_values(levels, owner, table)
        data: dict[str, Any] = {}
        for i, f in enumerate(self.features):
            if f.kind == "integer":
                data[f.name] = np.rint(vals[:, i]).astype(np.int64)
            elif f.kind == "real":
                data[f.name] = vals[:, i].astype(float)
            else:
                cats = np.empty(f.size, dtype=object)
                cats[:] = list(f.categories)  # type: ignore[arg-type]
                data[f.name] = pd.Series(cats[levels[:, i]], dtype=object, copy=False)
        # object columns stay object (not inferred as strings), as Schema.coerce makes them;
        # one consolidated block per dtype keeps row slicing cheap
        return pd.DataFrame(data, columns=self.schema.names)

    def distances(
        self,
        cand: np.ndarray,
        cand_levels: np.ndarray,
        query: np.ndarray,
        query_levels: np.ndarray,
        norm: str,
    ) -> np.ndarray:
        """MACE-normalised distance of candidates to their queries (rows aligned).

        Numeric features ``|dx| / range``, ordinal ``|d rank| / (levels - 1)``,
        categorical ``[changed]``; combined by ``norm`` (l0, l1, l2, linf).
        """
        diff = np.where(
            self.is_numeric | self.is_ordinal,
            np.abs(cand - query) / self.ranges,
            (cand_levels != query_levels).astype(float),
        )
        tol = 1e-9
        if norm == "l0":
            return (diff > tol).sum(axis=1).astype(float)
        if norm == "linf":
            return diff.max(axis=1)
        if norm == "l2":
            return np.sqrt((diff**2).sum(axis=1))
        return diff.sum(axis=1)

    # --------------------------------------------------------------- (de)ser
    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly description (bins and representatives)."""
        feats = []
        for f in self.features:
            d: dict[str, Any] = {"name": f.name, "kind": f.kind, "start": f.start, "size": f.size}
            if f.numeric:
                d.update(
                    edges=_floats(f.edges), lo=_floats(f.lo), hi=_floats(f.hi), rep=_floats(f.rep)
                )
            else:
                d["categories"] = list(f.categories)  # type: ignore[arg-type]
            feats.append(d)
        return {"representative": self.representative, "features": feats}

    @classmethod
    def from_dict(cls, schema: Schema, d: Mapping[str, Any]) -> Representation:
        """Inverse of :meth:`to_dict`."""
        feats = []
        for f in d["features"]:
            if "edges" in f:
                feats.append(
                    _Levels(
                        f["name"],
                        f["kind"],
                        int(f["start"]),
                        int(f["size"]),
                        edges=np.asarray(f["edges"], dtype=float),
                        lo=np.asarray(f["lo"], dtype=float),
                        hi=np.asarray(f["hi"], dtype=float),
                        rep=np.asarray(f["rep"], dtype=float),
                    )
                )
            else:
                feats.append(
                    _Levels(
                        f["name"],
                        f["kind"],
                        int(f["start"]),
                        int(f["size"]),
                        categories=tuple(f["categories"]),
                    )
                )
        return cls(schema, feats, str(d["representative"]))

    def describe(self) -> pd.DataFrame:
        """One row per numeric bin: feature, interval, representative value."""
        rows = []
        for f in self.features:
            if not f.numeric:
                continue
            edges, values = np.asarray(f.edges), np.asarray(f.rep)
            for j in range(f.size):
                rows.append(
                    {
                        "feature": f.name,
                        "bin": j,
                        "low": float(edges[j]),
                        "high": float(edges[j + 1]),
                        "value": float(values[j]),
                    }
                )
        return pd.DataFrame(rows)


def _floats(a: np.ndarray | None) -> list[float]:
    out = []
    for v in np.asarray(a, dtype=float).tolist():
        if not math.isfinite(v):  # pragma: no cover - edges are finite
            raise ValueError("non-finite bin edge")
        out.append(float(v))
    return out
