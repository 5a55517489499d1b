"""The :class:`UFCE` method: the adapter between the pipeline and the search."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..._utils._validation import Interval, Options, TypeSpec
from ..._utils._values import _py
from ...data import Encoder
from ...data._dataset import mad
from .._base import CounterfactualMethod
from .._pipeline import Candidates, Query, pooled_deadline
from .._tags import SEARCH_KINDS, MethodTags
from . import _search
from ._dependency import DependencyModels
from ._fast import FastDecide, one_thread
from ._mi import mutual_information, rank_pairs
from ._space import Space

__all__ = ["UFCE"]

#: a query's reason when no candidate within its search box is valid and plausible
_NONE_IN_BOX = (
    "no valid and plausible candidate within the search box (the constraints' ranges cut to "
    "the neighbours' range)"
)


def _estimator_ok(v: Any) -> bool:
    return hasattr(v, "fit") and hasattr(v, "predict") and hasattr(v, "get_params")


class UFCE(CounterfactualMethod):
    """User-feedback-based counterfactual explanations.

    Suffian, Alonso-Moral & Bogliolo, *Introducing User Feedback-based
    Counterfactual Explanations (UFCE)*, arXiv:2403.00011 (2024), Sections
    3-4, Algorithms 1-5.  Model-agnostic: the model is only called through
    its own ``predict``, once per search round for all candidates of all
    queries in the batch.

    The user's feedback is the ``constraints`` argument of :meth:`explain`:
    ``features_to_vary`` (the features they will change), ``ranges`` (the
    perturbation map ``p``) and immutable/protected features;
    ``counterfact.methods.ufce.feedback_levels`` and ``random_feedback`` build
    the paper's simulated feedback.

    Fit (once): mutual information of every feature pair, ranked (CMI,
    Algorithm 2); a KD-tree per class over the training rows of that class
    (the *desired space*), scaled to [0, 1] and one-hot encoded by
    :class:`~counterfact.data.Encoder`; a Local Outlier Factor
    (``novelty=True``) over the training rows for plausibility; and, for
    UFCE2/3, the dependency models (a regressor per numeric, a classifier per
    discrete feature, each trained on the other features), so that no query
    pays for per-model work.

    Explain (per query): FNN, the desired-class neighbours within ``radius``
    (or the ``n_neighbors`` nearest); INTERVALS, the user's ranges clipped to
    the neighbourhood; then Single_F (one feature moved along its interval;
    a discrete one set to each other allowed category), Double_F (a feature
    of one of the ``n_pairs`` top MI pairs moved and its partner predicted by
    its dependency model) and Triple_F (a third feature predicted from the
    first two).  A candidate is kept only if the model assigns the target
    class and LOF finds it plausible; kept candidates are ranked by eq. 4,
    ``delta = prox_Jac + lam * prox_Euc`` (Algorithm 5), checked against the
    constraints, and the best ``n_counterfactuals`` distinct ones are
    returned (the pipeline then re-checks them with the model).

    Where this implementation departs from the paper, and why:

    * **Batched search.**  Algorithm 3 bisects one value at a time and calls
      the model per point.  Here every round evaluates all features, pairs and
      triples of all queries in one model call (and LOF only on the first
      valid value of each path, then on the rest where that one is an
      outlier): the first round
      places ``n_grid`` points on each direction of each interval, and
      ``n_refine`` rounds place ``n_grid`` points between the last rejected and
      the first accepted value (a k-ary search; its answer is the value
      closest to the query on a ``n_grid ** (n_refine + 1)`` grid, not only
      when validity is monotone).  Numeric features move both down and up
      within the user's range (the paper's feedback only allows rises).
    * **INTERVALS** clips the far side of the user's range to the
      neighbourhood but never the side of the query (the paper may move the
      lower end up to the neighbours' minimum, forcing a larger change).
    * **Dependent values** default to ``dependency="delta"``:
      ``z_j = x_j + h_j(z) - h_j(x)`` (a discrete ``z_j`` changes only when
      the predicted class changes), clipped to the user's bounds (a category
      the user does not allow leaves ``j`` unchanged).  The paper's rule,
      ``dependency="absolute"``, sets ``z_j = h_j(z)`` and rejects the
      candidate when that value lies outside ``p``; it also moves ``j`` by the
      model's residual at the query, so narrow ranges reject almost every
      candidate.
    * **Pairs and triples.**  Both orientations of each pair are tried (the
      perturbed feature first); triples extend the top pairs with every other
      changeable feature.  Two discrete features of a pair flip together, as
      in Algorithm 4 lines 19-22.  Pairs are ranked by MI computed with the
      estimator that matches each feature's type.
    * **Candidates must be valid.**  The paper's released code returns UFCE2/3
      candidates that do not flip the model; here a candidate enters the
      ranking only after the model's own ``predict`` (not a probability
      threshold, which can disagree with it, e.g. for SVMs) gave the target.
    * **Normalisation in eq. 4**: prox_Euc (eq. 6, MAD-weighted, ordinal
      features by rank) enters as ``e / (1 + e)``; prox_Jac (eq. 5) counts the
      binary and categorical features, as :mod:`counterfact.metrics` does.
    * A query outside a user range starts from its projection onto the range
      (the constraints require the counterfactual to lie inside it).
    * Statuses: ``infeasible`` when the user's constraints leave no feature
      free to move, or no desired-class row lies within ``radius``;
      ``failed`` (with a ``reason`` in the diagnostics) when the search finds
      no valid, plausible candidate; ``timeout`` past ``time_limit``.

    Parameters
    ----------
    variant : {1, 2, 3, "all"}
        UFCE1 (single feature), UFCE2 (pairs), UFCE3 (triples) or all three.
    radius : float, optional
        FNN radius in the encoded [0, 1] space (Euclidean).  A query with no
        desired-class training row inside it gets status ``infeasible``.
        ``None`` uses the ``n_neighbors`` nearest desired-class rows.
    n_neighbors : int
        Neighbourhood size when ``radius`` is None.
    n_pairs : int
        How many of the top MI pairs (among the changeable features) Double_F
        and Triple_F use.
    n_grid : int
        Values per direction and round of the k-ary search.
    n_refine : int
        Refinement rounds after the first.
    lam : float
        lambda of eq. 4.
    lof_neighbors : int
        ``n_neighbors`` of the Local Outlier Factor.
    plausibility : {"all", "target"} or None
        Keep only the candidates the Local Outlier Factor calls inliers, with
        LOF fitted on all training rows (``"all"``: the paper's *plausible
        space*, "the original distribution of the data") or on the training
        rows of the target class (``"target"``: its *desired space*); ``None``
        keeps every valid candidate.
    dependency : {"delta", "absolute"}
        How dependent values follow their models (see above).
    regressor, classifier : scikit-learn estimator, optional
        Unfitted templates of the dependency models (default ``Ridge`` and
        ``LogisticRegression``).
    sparsify : bool
        After verification, the pipeline reverts every change the model
        does not need (greedy, each revert checked with the real model;
        ``diagnostics["n_reverted"]``).  ``False`` reports the method's own
        candidates as found (faster when many counterfactuals are asked for).
    random_state : int, optional
        Seeds the mutual-information estimates (the search is deterministic).
    time_limit : float, optional
        Seconds per query, for the whole ``explain`` call (the pipeline
        keeps part of it for verification and sparsification, see
        :meth:`CounterfactualMethod.explain`).  The queries of a batch are
        searched together, so the search's budget is pooled: a batch of ``n``
        queries searches for the sum of their budgets.  The clock is checked
        before every block of candidate rows (blocks hold whole perturbation
        paths and are sized to take about 0.1 s of model time each), and the
        paths are searched in the order
        Single_F, Double_F, Triple_F, refinement; a block never plans to take
        more than half the time left.  When the time runs out,
        each query keeps the valid candidates found so far (``feasible``);
        a query without one gets ``timeout``.  Without a time limit the
        blocks change nothing: every path is searched whatever the batch.
    verbose : int
        Progress output.

    Attributes
    ----------
    mutual_information_ : DataFrame
        Pairwise MI of the features.
    pairs_ : list of (str, str, float)
        Feature pairs by decreasing MI.
    dependency_models_ : dict
        Feature name -> fitted dependency model (every feature after ``fit``
        for UFCE2/3; empty for ``variant=1``).
    n_dependency_fits_ : int
        How many dependency models were trained so far (a model missing
        because ``variant`` was changed after ``fit`` is trained on first use).
    """

    name: ClassVar[str] = "ufce"
    tags: ClassVar[MethodTags] = MethodTags(
        display_name="UFCE",
        summary=(
            "the user's own features and ranges; mutual-information pairs, nearest "
            "neighbours, LOF plausibility"
        ),
        paper="Suffian, Alonso-Moral & Bogliolo, arXiv:2403.00011 (2024)",
        constraints=SEARCH_KINDS | {"timeline"},  # through the checker and the snap phase
        batch=True,
        sparsify=True,
        fast_params={"n_grid": 8, "n_refine": 1, "n_pairs": 3, "random_state": 0},
        order=2,
        costs="search",
    )
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "sparsify": [TypeSpec((bool,), "a bool")],
        "variant": [Options((1, 2, 3, "all"))],
        "radius": [None, Interval(float, 0, None, closed="neither")],
        "n_neighbors": [Interval(int, 1, None)],
        "n_pairs": [Interval(int, 1, None)],
        "n_grid": [Interval(int, 1, None)],
        "n_refine": [Interval(int, 0, None)],
        "lam": [Interval(float, 0, None)],
        "lof_neighbors": [Interval(int, 1, None)],
        "plausibility": [None, Options(("all", "target"))],
        "dependency": [Options(("delta", "absolute"))],
        "regressor": [
            None,
            TypeSpec((object,), "an unfitted scikit-learn regressor", _estimator_ok),
        ],
        "classifier": [
            None,
            TypeSpec((object,), "an unfitted scikit-learn classifier", _estimator_ok),
        ],
    }

    def __init__(
        self,
        *,
        variant: int | str = "all",
        radius: float | None = None,
        n_neighbors: int = 50,
        n_pairs: int = 10,
        n_grid: int = 32,
        n_refine: int = 1,
        lam: float = 1.0,
        lof_neighbors: int = 20,
        plausibility: str | None = "all",
        dependency: str = "delta",
        regressor: Any = None,
        classifier: Any = None,
        sparsify: bool = True,
        random_state: int | None = None,
        time_limit: float | None = None,
        verbose: int = 0,
    ) -> None:
        self.variant = variant
        self.radius = radius
        self.n_neighbors = n_neighbors
        self.n_pairs = n_pairs
        self.n_grid = n_grid
        self.n_refine = n_refine
        self.lam = lam
        self.lof_neighbors = lof_neighbors
        self.plausibility = plausibility
        self.dependency = dependency
        self.regressor = regressor
        self.classifier = classifier
        self.random_state = random_state
        self.time_limit = time_limit
        self.verbose = verbose
        self.sparsify = sparsify

    # ------------------------------------------------------------------ fit
    def _fit(self) -> None:
        from sklearn.neighbors import KDTree, LocalOutlierFactor

        schema = self.schema_
        self._space = Space(schema, Encoder(schema, scaling="minmax"))
        sp = self._space
        X = self.data_.X
        R = sp.to_codes(X)
        V = sp.encode(R)
        self._R, self._V = R, V
        seed = int(np.random.default_rng(self.random_state).integers(0, 2**31 - 1))
        self.mutual_information_ = mutual_information(R, schema, random_state=seed)
        self.pairs_ = rank_pairs(self.mutual_information_)
        # the pairs searched: a feature only time moves (age) is never one of a pair, the
        # change a user makes with its dependent partner; under a timeline it moves alone
        # (the snap phase puts every candidate on the timeline), and pairs with it would
        # crowd the user's pairs out of the top ``n_pairs``
        timed = {f.name for f in schema if f.actionability == "time"}
        self._pairs = [
            (schema.index(a), schema.index(b))
            for a, b, _ in self.pairs_
            if a not in timed and b not in timed
        ]
        labels = self.data_.y.to_numpy()
        self._class_pos = {c: k for k, c in enumerate(self.model_.classes_.tolist())}
        self._desired: dict[Any, tuple[Any, np.ndarray]] = {}
        for c in self.model_.classes_.tolist():
            rows = np.flatnonzero(labels == c)
            if rows.size:
                self._desired[c] = (KDTree(V[rows]), rows)
        self._lof: dict[Any, Any] = {}
        if self.plausibility is not None:
            groups = (
                {None: np.arange(len(V))}
                if self.plausibility == "all"
                else {c: rows for c, (_, rows) in self._desired.items()}
            )
            for c, rows in groups.items():
                if rows.size >= 2:
                    k = max(1, min(self.lof_neighbors, rows.size - 1))
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", UserWarning)  # duplicated training rows
                        self._lof[c] = LocalOutlierFactor(n_neighbors=k, novelty=True).fit(V[rows])
        self._mad = mad(X, schema)
        # the model's decisions on code rows without the per-call DataFrame and
        # ColumnTransformer, when that shortcut is exact (see ._fast)
        self._fast = FastDecide.build(self.model_, schema, sp, X, self._class_pos)
        self._deps = DependencyModels(sp, R, self.regressor, self.classifier)
        if self._variants() & {2, 3}:
            # per-model work belongs to fit: any feature can be a dependent (Triple_F
            # chains every changeable feature), so the first query does not pay for it
            self._deps.ensure(range(sp.d))

    @property
    def dependency_models_(self) -> dict[str, Any]:
        """Feature name -> fitted dependency model (trained in ``fit`` for UFCE2/3)."""
        self._check_fitted()
        return {self.schema_.names[j]: m for j, m in self._deps.models.items()}

    @property
    def n_dependency_fits_(self) -> int:
        """Number of dependency models trained so far (each feature at most once)."""
        self._check_fitted()
        return self._deps.n_fits

    # ------------------------------------------------------- model access
    def _decide(self, Z: np.ndarray) -> np.ndarray:
        """Index (in ``classes_``) of the class the model assigns to each code row: one
        call of the model's own ``predict`` (or of its exact shortcut, :class:`._fast.FastDecide`),
        so that screening and verification agree."""
        fast = getattr(self, "_fast", None)
        if fast is not None:
            return fast(Z)  # type: ignore[no-any-return]
        labels = self.model_.predict(self._space.to_frame(Z))
        return np.array([self._class_pos.get(v, -1) for v in labels.tolist()], dtype=int)

    def _decider(self, queries: list[Query]) -> Any:
        """The decision the search screens with: the model's own, or, when the call asks
        for a margin or other models (``min_probability``, ``robust_to``), the class a
        row reaches in all of them with the margin (-1 when it reaches none)."""
        judge = queries[0].judge if queries else None
        if judge is None or not judge.demanding:
            return self._decide

        def decide(Z: np.ndarray) -> np.ndarray:
            idx = self._decide(Z)
            frame = self._space.to_frame(Z)
            labels = self.model_.classes_[np.maximum(idx, 0)]
            ok, _ = judge(frame, labels.tolist(), np.maximum(idx, 0).tolist())
            return np.where(ok & (idx >= 0), idx, -1)

        return decide

    def _own_test(self, rows: pd.DataFrame, target_index: Sequence[int]) -> np.ndarray | None:
        """LOF plausibility of answers (the paper's eq. 4 keeps only plausible ones),
        applied again wherever the pipeline changes or checks an answer after the search."""
        if self.plausibility is None:
            return None
        if not len(rows):
            return np.zeros(0, dtype=bool)
        return self._plausible(self._space.to_codes(rows), np.asarray(target_index, dtype=int))

    def _plausible(self, Z: np.ndarray, target_index: np.ndarray) -> np.ndarray:
        """LOF inliers among code rows (one LOF call per reference set)."""
        if self.plausibility is None:
            return np.ones(len(Z), dtype=bool)
        V = self._space.encode(Z)
        if self.plausibility == "all":
            det = self._lof.get(None)
            if det is None:
                return np.ones(len(Z), dtype=bool)
            with one_thread():
                return np.asarray(det.predict(V) == 1)
        out = np.zeros(len(Z), dtype=bool)
        classes = self.model_.classes_.tolist()
        for t in np.unique(target_index):
            m = target_index == t
            det = self._lof.get(classes[int(t)])
            if det is None:
                out[m] = True
                continue
            with one_thread():
                out[m] = det.predict(V[m]) == 1
        return out

    def _variants(self) -> set[int]:
        return {1, 2, 3} if self.variant == "all" else {int(self.variant)}

    # -------------------------------------------------------------- explain
    def _before_search(self, queries: list[Query], parallel: bool) -> None:
        """Train the dependency models the queries need before workers are forked,
        so that they are trained once (serially they are trained on first use)."""
        if parallel and self._variants() & {2, 3}:
            mutable = {self.schema_.index(n) for t in queries for n in t.bounds.mutable}
            need = {j for a, b in self._pairs if a in mutable and b in mutable for j in (a, b)}
            if 3 in self._variants():
                need |= mutable
            self._deps.ensure(sorted(need))

    def _problem(self, q: Query) -> tuple[_search.Problem | None, dict[str, Any]]:
        """The query's search problem (its start point and box), or None with the
        diagnostics that say why there is none."""
        sp = self._space
        x = sp.to_codes(q.x)[0]
        blo, bhi, values = self._user_bounds(q)
        found = self._neighbours(q, x)
        if isinstance(found, dict):
            return None, found
        idx = found
        nn = self._R[self._desired[q.target][1][idx]]
        base = self._start_point(x, values, blo, bhi, nn)
        lo, hi = self._box(values, blo, bhi, base, nn)
        prob = _search.Problem(
            x, base, lo, hi, blo, bhi, values, q.target_index, q.bounds.max_changes
        )
        info: dict[str, Any] = {"n_neighbors": int(idx.size)}
        if not prob.perturbable.any():
            user = _search.Problem(x, base, blo, bhi, blo, bhi, values, q.target_index)
            return None, {**info, **_no_room(bool(user.perturbable.any()))}
        return prob, info

    def _user_bounds(self, q: Query) -> tuple[np.ndarray, np.ndarray, list[np.ndarray | None]]:
        """The query's bounds in codes: numeric intervals ``(blo, bhi)`` and, per
        feature, its allowed values (category codes; None: an interval)."""
        sp = self._space
        blo, bhi = np.full(sp.d, np.nan), np.full(sp.d, np.nan)
        values: list[np.ndarray | None] = [None] * sp.d
        for j, name in enumerate(sp.names):
            b = q.bounds[name]
            if sp.numeric[j]:
                blo[j], bhi[j] = float(b.lower), float(b.upper)  # type: ignore[arg-type]
                if b.values is not None:
                    values[j] = np.asarray(b.values, dtype=float)
            else:
                lk = {c: k for k, c in enumerate(sp.categories[j])}  # type: ignore[arg-type]
                values[j] = np.array([lk[v] for v in b.values or ()], dtype=float)
        return blo, bhi, values

    def _neighbours(self, q: Query, x: np.ndarray) -> np.ndarray | dict[str, Any]:
        """Positions, among the training rows of the target class, of the query's
        neighbours (``n_neighbors`` nearest, or those within ``radius``); or the
        diagnostics of an infeasible query."""
        desired = self._desired.get(q.target)
        if desired is None:
            return {  # a limit of the search, not a proof: "failed"
                "status": "failed",
                "reason": f"no training row has the target class {_py(q.target)!r}",
            }
        tree, rows = desired
        v = self._space.encode(x[None, :])
        if self.radius is None:
            k = min(self.n_neighbors, rows.size)
            return tree.query(v, k=k, return_distance=False)[0]  # type: ignore[no-any-return]
        idx = tree.query_radius(v, r=float(self.radius))[0]
        if idx.size == 0:
            return {  # a limit of the search, not a proof: "failed"
                "status": "failed",
                "reason": (
                    f"no training row of class {_py(q.target)!r} within radius {self.radius} of "
                    "the query; increase radius or use radius=None"
                ),
            }
        return idx  # type: ignore[no-any-return]

    def _start_point(
        self,
        x: np.ndarray,
        values: list[np.ndarray | None],
        blo: np.ndarray,
        bhi: np.ndarray,
        nn: np.ndarray,
    ) -> np.ndarray:
        """The query moved inside the user's bounds: a numeric value to the nearest
        allowed one, a category to the allowed one most common among the neighbours
        ``nn``."""
        sp = self._space
        base = x.copy()
        for j in range(sp.d):
            vals = values[j]
            if vals is not None:
                if vals.size and not np.any(vals == x[j]):
                    if sp.numeric[j]:
                        base[j] = vals[np.argmin(np.abs(vals - x[j]))]
                    else:
                        counts = [(np.sum(nn[:, j] == c), -k) for k, c in enumerate(vals)]
                        base[j] = vals[max(range(len(vals)), key=lambda k: counts[k])]
            elif sp.numeric[j]:
                base[j] = min(max(x[j], blo[j]), bhi[j])
        return base

    def _box(
        self,
        values: list[np.ndarray | None],
        blo: np.ndarray,
        bhi: np.ndarray,
        base: np.ndarray,
        nn: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The search interval of every numeric feature without allowed values: the
        user's bounds cut by the neighbours' range (INTERVALS), integers rounded in."""
        sp = self._space
        lo, hi = blo.copy(), bhi.copy()
        for j in range(sp.d):
            if sp.numeric[j] and values[j] is None:
                lo[j], hi[j] = _search.intervals(
                    blo[j], bhi[j], base[j], float(nn[:, j].min()), float(nn[:, j].max())
                )
                if sp.integer[j]:
                    lo[j], hi[j] = math.ceil(lo[j] - 1e-9), math.floor(hi[j] + 1e-9)
        return lo, hi

    def _explain_batch(self, queries: list[Query]) -> list[Candidates]:
        sp = self._space
        out: list[Candidates | None] = [None] * len(queries)
        problems, owners, infos = [], [], {}
        for k, q in enumerate(queries):
            prob, info = self._problem(q)
            infos[k] = info
            if prob is None:
                status = info.pop("status")
                out[k] = Candidates(sp.to_frame(np.zeros((0, sp.d))), status, info)
            else:
                problems.append(prob)
                owners.append(k)
        if problems:
            specs = _search.plan(
                problems, ~sp.numeric, self._pairs, variants=self._variants(), n_pairs=self.n_pairs
            )
            found = _search.run(
                problems,
                specs,
                decide=self._decider(queries),
                plausible=self._plausible,
                dep=self._deps.predict,
                discrete=~sp.numeric,
                integer=sp.integer,
                n_grid=self.n_grid,
                n_refine=self.n_refine,
                delta=self.dependency == "delta",
                expired=self._expired(queries),
                time_left=self._time_left(queries),
            )
            shortlists = self._rank(problems, found, [queries[k] for k in owners])
            verified = self._admissible([queries[k] for k in owners], shortlists)
            for p, k in enumerate(owners):
                rows, deltas, variants = verified[p]
                diag = {
                    **infos[k],
                    "n_specs": sum(1 for s in specs if s.problem == p),
                    "n_candidates": len(found.rows[p]),
                    "delta": float(deltas[0]) if len(deltas) else np.nan,
                    "variant": int(variants[0]) if len(variants) else None,
                }
                if found.rows_of is not None:
                    diag["n_evaluated"] = int(found.rows_of[p])
                    diag["n_model_valid"] = int(found.valid_of[p])  # type: ignore[index]
                    diag["n_rounds"] = int(found.rounds_of[p])  # type: ignore[index]
                timed_out = found.timed_out_of is not None and bool(found.timed_out_of[p])
                status = "timeout" if timed_out else ("feasible" if len(rows) else None)
                if not len(rows):
                    diag["reason"] = (
                        "time limit reached before a valid and plausible candidate was found"
                        if timed_out
                        else _NONE_IN_BOX
                    )
                out[k] = Candidates(
                    sp.to_frame(rows) if len(rows) else sp.to_frame(np.zeros((0, sp.d))),
                    status,
                    diag,
                )
        return [c for c in out if c is not None]

    def _expired(self, queries: list[Query]) -> Any:
        """Whether the batch's time is up: ``time_limit`` per query, pooled over the
        batch (:func:`~counterfact.methods._pipeline.pooled_deadline`), checked between rounds."""
        if self.time_limit is None or not queries:
            return lambda: False
        return pooled_deadline(queries).expired

    def _time_left(self, queries: list[Query]) -> Any:
        """Seconds left of the batch's pooled time (see :meth:`_expired`), or None."""
        if self.time_limit is None or not queries:
            return None
        return pooled_deadline(queries).left

    def _rank(
        self, problems: list[_search.Problem], found: _search.Found, queries: list[Query]
    ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Per problem, the best candidates by UFCE's score (a shortlist for verification);
        candidates that break a relation between features are dropped first, so that
        the shortlist holds the best of those that can be answers."""
        sp = self._space
        n_cfs = [q.n_counterfactuals for q in queries]
        out = []
        for p, prob in enumerate(problems):
            if not found.rows[p]:
                out.append((np.zeros((0, sp.d)), np.zeros(0), np.zeros(0, dtype=int)))
                continue
            Z = np.vstack(found.rows[p])
            var = np.asarray(found.variants[p], dtype=int)
            q = queries[p]
            if q.bounds.relations:
                frame = sp.to_frame(Z)
                keep = np.ones(len(Z), dtype=bool)
                for rel in q.bounds.relations:
                    keep &= rel.holds(q.x, frame, self.schema_)
                Z, var = Z[keep], var[keep]
            if prob.max_changes is not None:
                tol = 1e-7 * np.maximum(1.0, np.maximum(np.abs(Z), np.abs(prob.x)))
                keep = (np.abs(Z - prob.x) > tol).sum(axis=1) <= prob.max_changes
                Z, var = Z[keep], var[keep]
            if q.costs is not None:  # the call's costs replace UFCE's score
                delta = q.costs.evaluate(q.x, sp.to_frame(Z))
            else:
                delta = _search.score(Z, prob.x, ~sp.onehot, self._mad, float(self.lam))
            order = np.lexsort((var, delta))
            Z, delta, var = Z[order], delta[order], var[order]
            _, first = np.unique(np.round(Z, 9), axis=0, return_index=True)
            first = np.sort(first)
            take = first[: max(2 * n_cfs[p], n_cfs[p] + 5)]
            out.append((Z[take], delta[take], var[take]))
        return out

    def _admissible(
        self, queries: list[Query], shortlists: list[tuple[np.ndarray, np.ndarray, np.ndarray]]
    ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Keep the shortlisted rows that satisfy every constraint of their query (the
        model already assigned them the target class with its own ``predict``)."""
        out = []
        for q, (Z, delta, var) in zip(queries, shortlists, strict=True):
            if len(Z):
                ok = np.asarray(q.bounds.satisfied(self._space.to_frame(Z)), dtype=bool)
                Z, delta, var = Z[ok], delta[ok], var[ok]
            out.append((Z, delta, var))
        return out


def _no_room(user_room: bool) -> dict[str, Any]:
    """Diagnostics of a query with nothing to perturb: infeasible when the user's own
    constraints leave no feature free (``user_room`` False), else a neighbourhood
    too narrow inside the user's ranges."""
    if not user_room:
        return {
            "status": "infeasible",
            "reason": ("no feature may change: features_to_vary, immutables and ranges leave none"),
        }
    return {
        "status": None,
        "reason": (
            "the desired-class neighbourhood leaves no room to move inside the user's "
            "ranges (INTERVALS); widen the ranges or the neighbourhood (n_neighbors, radius)"
        ),
    }
