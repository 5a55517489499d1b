"""The "minimum observable" baseline: the closest observed row of the target class."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..._utils._validation import Interval, Options, TypeSpec
from ...metrics._distances import DistanceEncoder
from ...schema._format import format_value
from .._base import CounterfactualMethod
from .._pipeline import Candidates, Query
from .._pipeline._calendar import project_time
from .._tags import SEARCH_KINDS, MethodTags

__all__ = ["NearestObservable"]


#: the diagnostics key of the nearest admissible observed row's value in the measure
NEAREST_VALUE = "nearest_value"

#: why no observed row of the target class is admissible: in general, and when the values
#: that may not change for the row (:attr:`FeatureBounds.fixed`) already rule out every one
NO_ADMISSIBLE = "no admissible observed row of the target class"
NONE_KEEPS = (
    f"{NO_ADMISSIBLE}: none keeps the values that may not change for this row (such as immutable "
    "features, those not allowed to vary, and those only time moves unless a timeline is "
    "given)"
)


#: the diagnostics key of which fixed values rule out every row of the target class
FIXED_KEPT = "fixed_kept"
#: the most fixed values :func:`_fixed_words` names
MAX_NAMED = 4


def _fixed_words(masks: list[tuple[Any, Any, np.ndarray]], n_rows: int) -> str:
    """Which of the row's fixed values (``masks``: :meth:`QueryBounds.fixed_masks` over the
    ``n_rows`` observed rows of the target class) rule those rows out:
    the rarest kept first, then each value that the fewest of the rows left also keep,
    until none is left (at most :data:`MAX_NAMED` named, then that none keeps them all).
    German Credit's logistic regression, test row 383: ``"of the 653 rows of the target
    class, 30 keep age 26 years; 2 of those also keep checking_status '>= 200 DM / salary
    assigned'; none of those also keeps purpose 'car (new)'"``. Decision: a greedy order,
    not the smallest set of values that rules every row out (a set-cover problem); the
    values named are a cause, each count exact."""
    masks = list(masks)
    n_fixed = len(masks)
    left = np.ones(n_rows, dtype=bool)
    parts: list[str] = []
    while masks and left.any() and len(parts) < MAX_NAMED:
        k = min(range(len(masks)), key=lambda i: int((left & masks[i][2]).sum()))
        feature, value, kept = masks.pop(k)
        left &= kept
        n = int(left.sum())
        said = format_value(feature, value, unit=True)
        said = said if feature.is_numeric else repr(said)
        verb = "keep" if n > 1 else "keeps"
        head = f"{n or 'none'}{' of those also' if parts else ''} {verb}"
        parts.append(f"{head} {feature.name} {said}")
    more = f"; none keeps all {n_fixed} values that may not change" if left.any() else ""
    return f"of the {n_rows} rows of the target class, " + "; ".join(parts) + more


#: diagnostics key: whether the observed rows were moved onto the query's timeline (their
#: features only time moves set where time takes the person) before the nearest was chosen
MOVED_BY_TIME = "observed_moved_by_time"


def _is_nearest(d: Mapping[str, Any]) -> bool:
    """Whether the returned answer is the nearest admissible observed row: its value is the
    nearest's (no change was reverted, the first candidate was kept)."""
    value, nearest = d.get("answer_value"), d.get(NEAREST_VALUE)
    if value is None or nearest is None or "measure" not in d or d.get("n_reverted"):
        return False
    return bool(np.isclose(float(value), float(nearest), rtol=1e-9, atol=1e-12))


class NearestObservable(CounterfactualMethod):
    """Closest training row that the model assigns to the target class.

    This is the *minimum observable* (MO) baseline of MACE (Karimi et al.,
    AISTATS 2020, Sec. 5): among the observed training rows predicted as the
    desired class, return the nearest under MACE's normalised distance (eq. 3:
    numeric features by range, categorical by indicator, ordinal by rank;
    ``norm`` l0, l1, linf, or a convex combination ``(alpha, beta, gamma)``).
    Every constraint is honoured by filtering the candidate rows with the
    query's bounds (immutables, directions, ranges, allowed values, features to
    vary, max changes), so the result is the nearest *admissible* observed
    row.  Up to ``n_counterfactuals`` distinct rows are returned, nearest first.

    The status is ``feasible``, never ``optimal``: the first answer is exactly
    the nearest admissible observed row under the call's measure (the measure of
    effort by default, ``norm`` under ``Requirements(costs="own")``), which is
    not a proof that no smaller change exists.  Its certificate says so: "nearest
    observed row".

    With ``sparsify=True`` the pipeline then reverts every change of that
    row the model does not need (verified with the real model and the
    constraints; see :mod:`counterfact.methods._pipeline`): the answer is no
    longer an observed row, changes fewer features, and its status is
    ``feasible`` when a revert happened (the "nearest observed" certificate no
    longer applies).  Likewise under a timeline: an observed row that waits is
    brought forward to the earliest month at which its changes verify (the
    pipeline's last step before selection), and is then no longer the observed
    row either.

    Parameters
    ----------
    norm : {"l0", "l1", "linf"} or tuple of three floats
        Distance (MACE eq. 3).
    random_state : int, optional
        Unused (the method is deterministic); kept for the common interface.
    time_limit : float, optional
        Unused (the search is a vectorised scan).
    verbose : int
        Progress output.
    sparsify : bool
        Revert the changes of the returned rows that the model does not need
        (off by default). Even without it, under ``alternatives="distinct"`` (the
        default of ``explain``) a move smaller than the feature's meaningful step is
        put back to the query's value (an age of 62 where the query is 62 and the
        observed row 63), so an answer can differ from its observed row by such
        moves; ``alternatives="method"`` returns the observed rows as they are.
    """

    name: ClassVar[str] = "nearest"
    tags: ClassVar[MethodTags] = MethodTags(
        display_name="nearest observed row",
        summary="the nearest observed row the model accepts (MACE's minimum-observable baseline)",
        paper="Karimi et al., AISTATS 2020 (Sec. 5, MO)",
        constraints=SEARCH_KINDS | {"timeline"},  # through the checker and the snap phase
        order=3,
        measure="distance",
        costs="search",
        own_objective=("norm",),
    )
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "norm": [
            Options(("l0", "l1", "linf")),
            TypeSpec(
                (tuple, list),
                "a tuple (alpha, beta, gamma) of non-negative floats",
                lambda v: len(v) == 3 and all(isinstance(a, (int, float)) and a >= 0 for a in v),
            ),
        ],
        "time_limit": [None, Interval(float, 0, None, closed="neither")],
        "sparsify": [TypeSpec((bool,), "a bool")],
    }

    def __init__(
        self,
        *,
        norm: str | tuple[float, float, float] = "l1",
        random_state: int | None = None,
        time_limit: float | None = None,
        verbose: int = 0,
        sparsify: bool = False,
    ) -> None:
        self.norm = norm
        self.random_state = random_state
        self.time_limit = time_limit
        self.verbose = verbose
        self.sparsify = sparsify

    @classmethod
    def certificate(cls, status: str, diagnostics: Mapping[str, Any] | None = None) -> str:
        d = dict(diagnostics or {})
        if status == "feasible" and _is_nearest(d):
            rows = "observed rows"
            if d.get(MOVED_BY_TIME):
                rows = (
                    "observed rows, each with its features that only time moves set to where "
                    "time takes this person, so the answer need not be an observed row itself"
                )
            return (
                f"{cls.tags.display_name}: the nearest observed row of the target class that "
                f"the constraints admit (exact among the {rows}; not a proof that no "
                f"smaller change exists), smaller meaning {d['measure']}"
            )
        base = super().certificate(status, diagnostics)
        return f"{base}; {d[FIXED_KEPT]}" if d.get(FIXED_KEPT) else base

    def answer_value(self, query: Query, row: pd.Series) -> float | None:
        """The returned answer's value in the measure the rows were ordered by."""
        if query.costs is not None:
            return float(query.costs.evaluate(query.x, row.to_frame().T)[0])
        enc = self._encoder
        q = enc.transform(query.x.to_frame().T)[0]
        return float(enc.distances(enc.transform(row.to_frame().T), q, self._norm())[0])

    def _norm(self) -> Any:
        return tuple(self.norm) if isinstance(self.norm, list) else self.norm

    def _fit(self) -> None:
        X = self.data_.X
        self._pool = X.reset_index(drop=True)
        self._pred = np.asarray(self.model_.predict(self._pool))
        self._encoder = DistanceEncoder(self.schema_)
        self._matrix = self._encoder.transform(self._pool)

    def _observed(self, query: Query) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
        """The observed rows, their predictions and encodings; under a timeline each row
        moved onto the query's (its features only time moves at the month its other
        values need, :func:`~counterfact.methods._pipeline._calendar.project_time`) and
        predicted again."""
        if query.bounds.timeline is None:
            return self._pool, self._pred, self._matrix
        own = np.zeros(len(self._pool), dtype=int)
        pool = project_time(self.schema_, [query], own, self._pool)
        if pool is self._pool:
            return self._pool, self._pred, self._matrix
        return pool, np.asarray(self.model_.predict(pool)), self._encoder.transform(pool)

    def _explain_one(self, query: Query) -> Candidates:
        pool, pred, matrix = self._observed(query)
        cand = np.flatnonzero(pred == query.target)
        if cand.size == 0:
            return Candidates(
                pool.iloc[0:0],
                "failed",
                {"reason": "no training row is predicted as the target"},
            )
        ok = query.bounds.satisfied(pool.iloc[cand])
        if not ok.any():
            masks = query.bounds.fixed_masks(pool.iloc[cand])  # once: the test and the words
            if not masks or np.all([kept for *_, kept in masks], axis=0).any():
                return Candidates(pool.iloc[0:0], "failed", {"reason": NO_ADMISSIBLE})
            said = {"reason": NONE_KEEPS, FIXED_KEPT: _fixed_words(masks, cand.size)}
            return Candidates(pool.iloc[0:0], "failed", said)
        cand = cand[ok]
        qv = self._encoder.transform(query.x.to_frame().T)[0]
        if query.costs is not None:  # the call's costs replace the norm
            d = query.costs.matrix(matrix[cand], qv)
            measure = query.costs.costs.words()
        else:
            d = self._encoder.distances(matrix[cand], qv, self._norm())
            measure = f"the range-normalised distance, norm {self.norm}"
        order = np.argsort(d, kind="stable")
        # enough rows to survive de-duplication
        want = max(4 * query.n_counterfactuals, query.n_counterfactuals + 10)
        pos = self._reaching(query, pool, cand, order, want)
        if pos.size == 0:
            return Candidates(
                pool.iloc[0:0],
                "failed",
                {
                    "reason": (
                        "no observed row reaches the target with the margin in every model asked"
                    )
                },
            )
        take = cand[pos]
        frame = pool.iloc[take]
        uniq = ~frame.duplicated().to_numpy()
        frame = frame[uniq]
        dist = d[pos][uniq]
        return Candidates(
            pd.DataFrame(frame).reset_index(drop=True),
            "feasible",
            {
                NEAREST_VALUE: float(dist[0]),
                "measure": measure,
                "n_admissible": int(cand.size),
                MOVED_BY_TIME: pool is not self._pool,
            },
        )

    def _reaching(
        self, query: Query, pool: pd.DataFrame, cand: np.ndarray, order: np.ndarray, want: int
    ) -> np.ndarray:
        """Positions (into ``cand``, nearest first) of the first ``want`` rows that reach
        the target in the call's judge: with a margin or other models asked for, rows
        are judged a growing block at a time (the same rows as judging them all)."""
        if query.judge is None or not query.judge.demanding:
            return order[:want]
        found: list[int] = []
        lo, size = 0, max(64, 4 * want)
        while lo < len(order) and len(found) < want:
            block = order[lo : lo + size]
            rows = pool.iloc[cand[block]]
            ok, _ = query.judge(
                rows, [query.target] * len(block), [query.target_index] * len(block)
            )
            found.extend(block[ok][: want - len(found)].tolist())
            lo += size
            size *= 4
        return np.asarray(found, dtype=int)
