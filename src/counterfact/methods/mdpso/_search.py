"""The mixed-discrete particle swarm (Chowdhury et al. 2013, as used in
Shekhar et al. 2023, eq. 1-7) as a plain ask/tell loop over arrays.

:class:`Swarm` owns the state of one query's swarm.  ``ask()`` returns the
projected positions to evaluate (numpy, shape ``(n_particles, d)``);
``tell(valid, hinge)`` takes the model's verdict for each of them (valid: the
model predicts the target; hinge: how far the prediction is from the target
region), scores the particles with eq. (3), updates the personal and global
bests and moves the swarm (eq. 1-2).  Many swarms can thus share one model
call per iteration.  :func:`run` drives one swarm with a scoring function.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._arrays import Arrays, NumpyArrays
from ._options import SwarmOptions
from ._problem import Problem

__all__ = ["Swarm", "SwarmResult", "run"]


@dataclass
class SwarmResult:
    """Final state of a swarm (numpy arrays)."""

    X: np.ndarray
    cost: np.ndarray
    valid: np.ndarray
    pbest_X: np.ndarray
    pbest_cost: np.ndarray
    pbest_valid: np.ndarray
    n_iter: int
    history: list[float]
    archive_X: np.ndarray
    archive_cost: np.ndarray


class Swarm:
    """One query's swarm.

    Parameters
    ----------
    problem : Problem
        Box, coordinates and discrete structure of the query.
    params : SwarmOptions
        The swarm's settings (``n_restarts`` is the caller's).
    rng : numpy.random.Generator
        The query's generator; every random number comes from it.
    arrays : Arrays
        numpy (default) or torch.
    n_best : int
        The stopping rule watches the mean of the ``n_best`` lowest
        personal-best costs (the k counterfactuals asked for), not only the
        single best.
    """

    def __init__(
        self,
        problem: Problem,
        params: SwarmOptions,
        rng: np.random.Generator,
        arrays: Arrays | None = None,
        n_best: int = 1,
    ) -> None:
        self.p = problem
        self.params = params
        self.n_best = n_best
        self.rng = rng
        self.be = arrays or NumpyArrays()
        be = self.be
        self.z = be.asarray(problem.z)
        self.lo = be.asarray(problem.lo)
        self.hi = be.asarray(problem.hi)
        self.width = self.hi - self.lo
        self._ordered = be.asindex(problem.ordered_cols)
        self._ordered_feat = be.asindex(problem.ordered_feat)
        self._real = be.asindex(problem.real_cols)
        self._ints = be.asindex(problem.int_cols)
        self._ioff = be.asarray(problem.int_off)
        self._iscale = be.asarray(problem.int_scale)
        self._grids = [(c, be.asarray(g)) for c, g in problem.grids]
        self._forced = be.asbool(problem.forced)
        if problem.int_cols.size:
            ilo = problem.int_off + problem.int_scale * problem.lo[problem.int_cols]
            ihi = problem.int_off + problem.int_scale * problem.hi[problem.int_cols]
            self._ilo, self._ihi = be.asarray(np.rint(ilo)), be.asarray(np.rint(ihi))
        self.n_iter = 0
        #: per-particle proximity in [0, 1] replacing Gower's (the call's costs), or None
        self.proximity: Any = None
        self.history: list[float] = []
        self._archive: list[tuple[np.ndarray, np.ndarray]] = []
        self._stall = 0
        self._ref = math.inf
        self._ref_found = False
        self.done = False
        self.X = self._init()
        self.V = be.zeros(tuple(self.X.shape))
        self.cost: Any = None
        self.valid: Any = None
        self.pbest_X: Any = None
        self.pbest_cost: Any = None
        self.pbest_valid: Any = None

    # ------------------------------------------------------------ helpers
    def _u(self, *shape: int) -> Any:
        return self.be.asarray(self.rng.random(shape))

    def _init(self) -> Any:
        """Particles inside the epsilon box (Algorithm 1, line 6): particle ``i``
        moves each active feature with probability ``q_i`` (stratified over
        (0, 1)), so the swarm starts with every level of sparsity."""
        n, d, F = self.params.n_particles, self.p.d, self.p.n_active
        q = (np.arange(n) + self.rng.random(n)) / n
        move = (self.rng.random((n, F)) < q[:, None]) | self.p.forced[None, :]
        U = self.p.lo + self.rng.random((n, d)) * (self.p.hi - self.p.lo)
        X = np.where(move[:, self.p.feat_of_col], U, self.p.z)
        return self.project(self.be.asarray(X), 0.0)

    def magnitudes(self, X: Any) -> Any:
        """Per active feature, the Gower change ``|x - z|`` (indicator for categories),
        shape (n, F)."""
        be = self.be
        mag = be.zeros((X.shape[0], self.p.n_active))
        if self.p.ordered_cols.size:
            mag[:, self._ordered_feat] = be.abs(X[:, self._ordered] - self.z[self._ordered])
        for s, _e, qpos, k in self.p.groups:
            mag[:, k] = 1.0 - X[:, s + qpos] if qpos >= 0 else 1.0
        return mag

    def project(self, X: Any, p_discrete: float) -> Any:
        """Map positions to the nearest feasible vertex: clip to the box, round
        integers, snap grids, one-hot groups to their nearest corner, snap
        near-query reals onto the query, and cap the number of changes."""
        be, pr = self.be, self.p
        X = be.clip(X, self.lo, self.hi)
        n = X.shape[0]
        if pr.int_cols.size:
            raw = self._ioff + self._iscale * X[:, self._ints]
            r = be.rint(raw)
            if p_discrete > 0:
                fl = be.floor(raw)
                other = be.where(r == fl, fl + 1.0, fl)
                flip = (raw != r) & (self._u(n, pr.int_cols.size) < p_discrete)
                r = be.where(flip, other, r)
            r = be.clip(r, self._ilo, self._ihi)
            X[:, self._ints] = (r - self._ioff) / self._iscale
        for c, g in self._grids:
            x = X[:, c]
            if g.shape[0] == 1:
                X[:, c] = g[0] + 0.0 * x
                continue
            i = be.clip(be.searchsorted(g, x), 1, g.shape[0] - 1)
            left, right = g[i - 1], g[i]
            near_left = (x - left) <= (right - x)
            pick = be.where(near_left, left, right)
            if p_discrete > 0:
                flip = (x != left) & (x != right) & (self._u(n) < p_discrete)
                pick = be.where(flip, be.where(near_left, right, left), pick)
            X[:, c] = pick
        for s, e, _qpos, _k in pr.groups:
            B = X[:, s:e]
            top = be.argmax(B, axis=1)
            if p_discrete > 0 and e - s > 1:
                corner = (be.amax(B, 1) == 1.0) & (B.sum(1) == 1.0)
                masked = be.where(be.one_hot(top, e - s) > 0, -1.0, B)
                second = be.argmax(masked, axis=1)
                flip = ~corner & (self._u(n) < p_discrete)
                top = be.where(flip, second, top)
            X[:, s:e] = be.one_hot(top, e - s)
        if pr.real_cols.size and self.params.snap > 0:
            zr = self.z[self._real]
            close = be.abs(X[:, self._real] - zr) <= self.params.snap * self.width[self._real]
            X[:, self._real] = be.where(close, zr + 0.0 * X[:, self._real], X[:, self._real])
        if pr.max_changes is not None:
            X = self._cap_changes(X, pr.max_changes)
        return X

    def _cap_changes(self, X: Any, m: int) -> Any:
        """Revert the smallest changes of particles that change more than ``m`` features."""
        be, pr = self.be, self.p
        mag = self.magnitudes(X)
        moved = mag > 0
        over = moved.sum(1) > m
        if not bool(over.any()):
            return X
        big = be.where(self._forced[None, :] & moved, math.inf, mag)
        order = be.argsort(big, axis=1, descending=True)
        rank = be.argsort(order, axis=1)
        revert = (rank >= m) & moved & over[:, None]
        if pr.ordered_cols.size:
            rv = revert[:, self._ordered_feat]
            X[:, self._ordered] = be.where(
                rv, self.z[self._ordered] + 0.0 * X[:, self._ordered], X[:, self._ordered]
            )
        for s, e, qpos, k in pr.groups:
            if qpos >= 0:
                X[:, s:e] = be.where(revert[:, k : k + 1], self.z[s:e] + 0.0 * X[:, s:e], X[:, s:e])
        return X

    def objective(self, X: Any, valid: Any, hinge: Any) -> Any:
        """Eq. (3): validity hinge l1 + Gower proximity l2 (eq. 5-6) + l0 sparsity l3
        (eq. 7, as a fraction of the p features).  With ``objective="feasibility"``
        any invalid particle costs more than any valid one, and invalid
        particles compare by their hinge only; ``"sum"`` is eq. (3) as written."""
        w1, w2, w3 = self.params.weights
        mag = self.magnitudes(X)
        p = float(self.p.n_features)
        if self.proximity is not None:  # the call's costs, scaled to [0, 1] (._costs)
            l2 = self.be.asarray(self.proximity(self.be.to_numpy(X)))
        else:
            l2 = mag.sum(1) / p
        l3 = (mag > 0).sum(1) / p
        if self.params.objective == "sum":
            return w1 * hinge + w2 * l2 + w3 * l3
        # Deb's rule: invalid particles are ranked by the hinge alone, after every valid one
        return self.be.where(valid, w2 * l2 + w3 * l3, w1 * hinge + (w2 + w3 + 1.0))

    def _diversity(self) -> float:
        """Spread of the best ``diversity_fraction`` of the swarm in [0, 1]: the
        mean over coordinates of (range of the subset) / (box width), a
        categorical group counting 1 when the subset disagrees."""
        be, pr = self.be, self.p
        n = self.X.shape[0]
        nb = max(2, math.ceil(self.params.diversity_fraction * n))
        best = be.argsort(self.cost)[:nb]
        S = self.X[best]
        parts: list[Any] = []
        if pr.ordered_cols.size:
            w = self.width[self._ordered]
            span = be.amax(S[:, self._ordered], 0) - be.amin(S[:, self._ordered], 0)
            ok = w > 0
            if bool(ok.any()):
                parts.append(float((span[ok] / w[ok]).mean()))
        for s, e, _q, _k in pr.groups:
            B = S[:, s:e]
            parts.append(float(bool((B != B[0:1]).any())))
        return float(np.mean(parts)) if parts else 0.0

    # ------------------------------------------------------------ ask/tell
    def ask(self) -> np.ndarray:
        """Positions to evaluate now (projected; numpy)."""
        return self.be.to_numpy(self.X)

    def tell(self, valid: np.ndarray, hinge: np.ndarray) -> None:
        """The model's verdict on the last ``ask``; scores, updates bests and moves."""
        be, prm = self.be, self.params
        v = be.asbool(valid)
        self.valid = v
        self.cost = self.objective(self.X, v, be.asarray(hinge))
        if self.pbest_X is None:
            self.pbest_X, self.pbest_cost, self.pbest_valid = be.copy(self.X), self.cost, v
        else:
            better = self.cost < self.pbest_cost
            self.pbest_X = be.where(better[:, None], self.X, self.pbest_X)
            self.pbest_cost = be.where(better, self.cost, self.pbest_cost)
            self.pbest_valid = be.where(better, v, self.pbest_valid)
        if bool(v.any()):
            self._archive.append((be.to_numpy(self.X[v]), be.to_numpy(self.cost[v])))
        self.n_iter += 1
        costs = self.be.to_numpy(self.pbest_cost)
        best = float(costs.min())
        k = max(1, min(int(self.n_best), costs.shape[0]))
        top = float(np.partition(costs, k - 1)[:k].mean()) if k > 1 else best
        found = bool(self.pbest_valid.any())
        # before the first valid particle, progress is measured on the hinge alone
        _w1, w2, w3 = prm.weights
        score = top if found or prm.objective != "feasibility" else top - (w2 + w3 + 1.0)
        if found != self._ref_found or score < self._ref - prm.tol * max(abs(score), 1e-3):
            self._ref, self._ref_found, self._stall = score, found, 0
        else:
            self._stall += 1
        self.history.append(best)
        if self.n_iter >= prm.max_iter or self._stall >= prm.patience:
            self.done = True
            return
        self._move()

    def _move(self) -> None:
        """Eq. (1)-(2) with Chowdhury et al.'s adaptive diversity coefficient."""
        be, prm = self.be, self.params
        n, d = self.X.shape[0], self.p.d
        g = int(be.argsort(self.pbest_cost)[0])
        nb = max(2, math.ceil(prm.diversity_fraction * n))
        best = be.argsort(self.cost)[:nb]
        centre = self.X[best].mean(0)
        # gamma = exp(-D^2 / (2 sigma^2)) with sigma = 1 / sqrt(2 ln(1/lambda)): lambda**(D^2)
        gamma = prm.diversity_fraction ** (self._diversity() ** 2)
        c3, p_d = prm.diversity * gamma, prm.discrete_diversity * gamma
        r = self._u(3, n, d)
        V = (
            prm.inertia * self.V
            + prm.cognitive * r[0] * (self.pbest_X - self.X)
            + prm.social * r[1] * (self.pbest_X[g] - self.X)
            + c3 * r[2] * (self.X - centre)
        )
        V = be.clip(V, -self.width, self.width)
        Xn = self.X + V
        Xc = be.clip(Xn, self.lo, self.hi)
        V = be.where(Xc != Xn, 0.0 * V, V)
        Xp = self.project(be.copy(Xc), p_d)
        # a coordinate that lands on the query's value stops there
        V = be.where((Xp == self.z) & (Xc != self.z), 0.0 * V, V)
        self.X, self.V = Xp, V

    def result(self) -> SwarmResult:
        """Final state as numpy arrays."""
        t = self.be.to_numpy
        d = self.p.d
        aX = np.vstack([a for a, _ in self._archive]) if self._archive else np.zeros((0, d))
        ac = np.concatenate([c for _, c in self._archive]) if self._archive else np.zeros(0)
        return SwarmResult(
            t(self.X),
            t(self.cost),
            t(self.valid).astype(bool),
            t(self.pbest_X),
            t(self.pbest_cost),
            t(self.pbest_valid).astype(bool),
            self.n_iter,
            list(self.history),
            aX,
            ac,
        )


def run(
    problem: Problem,
    score: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    params: SwarmOptions,
    rng: np.random.Generator,
    arrays: Arrays | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> SwarmResult:
    """Run one swarm to the end: ``score(X) -> (valid, hinge)`` is called once per iteration."""
    sw = Swarm(problem, params, rng, arrays)
    while not sw.done:
        valid, hinge = score(sw.ask())
        sw.tell(valid, hinge)
        if should_stop is not None and should_stop():
            break
    return sw.result()
