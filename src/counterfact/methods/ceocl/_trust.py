"""CE-OCL's trust region (data-manifold closeness), Maragno et al. 2022, eq. (3) and Appendix A.

The counterfactual must lie in the convex hull of training points of the
desired class that the model also predicts as that class, optionally
enlarged by a slack ``s`` with ``||s||_p <= epsilon`` (``p`` = 1 or inf, in
normalised units):

``sum_i lambda_i xbar_i = x + s,  sum_i lambda_i = 1,  lambda >= 0``.

The space is the compiler's raw vector ``z`` (numeric values, one-hot
indicators, ordinal ranks), each coordinate divided by its scale (the
feature's observed range; 1 for indicators) so that ``epsilon`` is unit-free.
With ``epsilon = 0`` the hull also makes one-hot groups coherent (Appendix A).

*Clustered variant* (Appendix A, after Maragno et al. 2021): k-means splits
the points into ``n_clusters`` groups; a binary ``u_k`` picks one cluster and
``sum_{i in C_k} lambda_i = u_k``, ``sum_k u_k = 1``, so the region is the
union of the (enlarged) per-cluster hulls.

*Size knob* (our addition, the paper does not discuss it): the number of
``lambda`` variables grows with the data, so at most ``max_points`` points are
kept -- a seeded uniform subsample (``sampling="random"``) or the training
point nearest to each of ``max_points`` k-means centroids
(``sampling="kmeans"``).  Either way the kept hull is a subset of the full one,
so every counterfactual still lies in the paper's region; but a proof about the
kept hull (no point in it, none nearer in it) is no proof about the full one, so
:class:`~counterfact.methods.CEOCL` words such a result as a search of the
subset (:attr:`HullData.subsampled`).

*Scope* (our decision, the paper is silent): with ``scope="mutable"`` (the
method's default) the hull constrains only the coordinates the query may
change; coordinates fixed for this query (immutable features, a range of one
value) are dropped from the hull rows.  Those coordinates are identical for
every candidate, so keeping them tests the *query* -- whether someone with
exactly its immutable attributes is among the hull points -- not the
counterfactual: on Adult a query whose sex / race / native-country
combination is missing from the (sub-sampled) desired class has no
counterfactual at all under the full hull.  ``scope="all"`` is the paper's
literal region over every feature (fixed one-hot coordinates then discard
the hull points that disagree with the query, and no point left means
``infeasible``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...solvers._milp import Model, Var, quicksum

__all__ = ["HullData", "encode_hull", "prepare_hull"]


@dataclass
class HullData:
    """Hull points of one class in ``z`` space (rows), with cluster labels."""

    points: np.ndarray
    labels: np.ndarray
    n_clusters: int
    n_source: int
    #: distinct points before the cap (``max_points``); more than ``len(points)``: subsampled
    n_unique: int = 0

    @property
    def subsampled(self) -> bool:
        """Whether the cap left points out, so that the hull is a subset of the paper's
        region: an answer in it lies in that region, but a proof about it (none exists,
        none is nearer) is a proof about the subset only."""
        return len(self.points) < self.n_unique


def prepare_hull(
    Z: np.ndarray,
    scales: np.ndarray,
    *,
    clusters: int,
    max_points: int | None,
    sampling: str,
    seed: int,
) -> HullData:
    """Deduplicate, cluster (``clusters > 1``) and cap the points of one class."""
    n_source = len(Z)
    Z = np.unique(np.asarray(Z, dtype=float), axis=0) if len(Z) else np.zeros((0, len(scales)))
    S = Z / scales
    labels = np.zeros(len(Z), dtype=int)
    k = 1
    if clusters > 1 and len(Z) > clusters:
        from sklearn.cluster import KMeans

        km = KMeans(n_clusters=clusters, n_init=4, random_state=seed).fit(S)
        labels = km.labels_.astype(int)
        k = clusters
    n_unique = len(Z)
    if max_points is not None and len(Z) > max_points:
        keep = _subsample(S, labels, k, max_points, sampling, seed)
        Z, labels = Z[keep], labels[keep]
    return HullData(Z, labels, k, n_source, n_unique)


def _subsample(
    S: np.ndarray, labels: np.ndarray, k: int, max_points: int, sampling: str, seed: int
) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = []
    for c in range(k):
        idx = np.flatnonzero(labels == c)
        quota = max(1, round(max_points * len(idx) / len(labels)))
        if len(idx) <= quota:
            out.append(idx)
        elif sampling == "kmeans":
            from sklearn.cluster import MiniBatchKMeans

            km = MiniBatchKMeans(
                n_clusters=quota, n_init=1, random_state=seed, batch_size=2048
            ).fit(S[idx])
            d = (
                ((S[idx][:, None, :] - km.cluster_centers_[None, :, :]) ** 2).sum(axis=2)
                if len(idx) * quota < 4e6
                else None
            )
            if d is None:
                from sklearn.metrics import pairwise_distances_argmin

                near = pairwise_distances_argmin(km.cluster_centers_, S[idx])
            else:
                near = np.argmin(d, axis=0)
            out.append(idx[np.unique(near)])
        else:
            out.append(np.sort(rng.choice(idx, size=quota, replace=False)))
    return np.sort(np.concatenate(out))


def encode_hull(
    m: Model,
    z: list[Var],
    hull: HullData,
    scales: np.ndarray,
    *,
    epsilon: float,
    norm: str,
    skip: np.ndarray | None = None,
) -> dict[str, Any]:
    """Add the (epsilon-enlarged, possibly clustered) hull rows; returns diagnostics.

    ``skip``: boolean mask over ``z`` of coordinates left out of the hull
    (``scope="mutable"``: the query's fixed features).
    """
    import scipy.sparse as sp

    skip = np.zeros(len(z), dtype=bool) if skip is None else np.asarray(skip, dtype=bool)
    P, labels = hull.points, hull.labels
    if epsilon <= 0:
        P, labels = _admissible(m, z, P, labels, skip)
    N = len(P)
    if N == 0:
        m.add_le(quicksum([]) + 1.0, 0.0)  # no admissible hull point: infeasible
        return {"hull_points": 0}
    lam = m.add_vars(N, 0.0, 1.0, name="lam")
    _convex_weights(m, lam, labels, hull.n_clusters)
    rows_a = _hull_rows(m, z, P, skip, epsilon)
    inv = 1.0 / scales[rows_a]
    R = len(rows_a)
    Plam = sp.csr_matrix(P[:, rows_a].T * inv[:, None])
    Zpart = sp.csr_matrix((-inv, (np.arange(R), np.arange(R))), shape=(R, R))
    cols: list[Var] = [*lam, *(z[j] for j in rows_a)]
    blocks = [Plam, Zpart]
    if epsilon > 0:
        if norm == "linf":
            s = m.add_vars(R, -epsilon, epsilon, name="s")
            blocks.append(sp.identity(R, format="csr") * -1.0)
            cols += s
        else:
            sp_ = m.add_vars(R, 0.0, epsilon, name="sp")
            sn = m.add_vars(R, 0.0, epsilon, name="sn")
            blocks += [sp.identity(R, format="csr") * -1.0, sp.identity(R, format="csr")]
            cols += sp_ + sn
            m.add_le(quicksum(sp_) + quicksum(sn), float(epsilon))
    m.add_rows(cols, sp.hstack(blocks, format="csr"), 0.0, 0.0)
    return {"hull_points": int(N), "hull_clusters": int(hull.n_clusters), "hull_dims": int(R)}


def _admissible(
    m: Model, z: list[Var], P: np.ndarray, labels: np.ndarray, skip: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The exact hull's points that can take weight: those that agree with every
    one-hot indicator or 0/1 value the query fixes."""
    keep = np.ones(len(P), dtype=bool)
    for j, v in enumerate(z):
        if skip[j]:
            continue
        lo, hi = m.var_bounds(v)
        if lo == hi and np.all((P[:, j] == 0) | (P[:, j] == 1)) and lo in (0.0, 1.0):
            keep &= P[:, j] == lo
    return P[keep], labels[keep]


def _convex_weights(m: Model, lam: list[Var], labels: np.ndarray, n_clusters: int) -> None:
    """The weights sum to one, within one chosen cluster when the hull is clustered."""
    if n_clusters > 1:
        present = np.unique(labels)
        u = {int(c): m.add_binary(name=f"cluster{c}") for c in present}
        m.add_eq(quicksum(u.values()), 1.0)
        for c, uc in u.items():
            m.add_eq(quicksum(lam[i] for i in np.flatnonzero(labels == c)) - uc, 0.0)
    else:
        m.add_eq(quicksum(lam), 1.0)


def _hull_rows(
    m: Model, z: list[Var], P: np.ndarray, skip: np.ndarray, epsilon: float
) -> np.ndarray:
    """The coordinates that get a row ``(P^T lam - z) / scale - s = 0``: all but the
    skipped ones and (exact hull) those fixed to a value every point shares."""
    rows = []
    for j in range(len(z)):
        if skip[j]:
            continue
        lo, hi = m.var_bounds(z[j])
        if lo == hi and np.all(P[:, j] == lo) and epsilon <= 0:
            continue
        rows.append(j)
    return np.asarray(rows, dtype=int)
