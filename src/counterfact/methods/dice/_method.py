"""DiCE (Mothilal et al., FAT* 2020) as a peer method, through the ``dice-ml`` package.

Three of the five papers compare against DiCE, so the benchmark can run it in
the same cells as our methods.  Needs ``pip install "counterfact[peers]"``.
"""

from __future__ import annotations

import random
import time
import warnings
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..._utils._deps import import_optional
from ..._utils._validation import Interval, Options
from ...exceptions import UnsupportedModelError
from .._base import CounterfactualMethod
from .._pipeline import Candidates, Query
from .._tags import SEARCH_KINDS, MethodTags

__all__ = ["DiCE"]


class DiCE(CounterfactualMethod):
    """Adapter for DiCE's model-agnostic explainers (``random``, ``genetic``, ``kdtree``).

    Constraints: immutables and ``features_to_vary`` become DiCE's
    ``features_to_vary``; numeric bounds (ranges, directions, the domain)
    become ``permitted_range``; allowed categories become permitted values.
    Everything else (max changes, and whatever DiCE still gets wrong — it is
    known to return values outside the permitted range) is enforced by the
    pipeline's verification, which drops violating candidates.

    dice-ml takes the categories of each categorical feature from the
    training frame and rejects any other value (in the query or among the
    permitted values).  The schema may know more categories than the
    training split shows (a binary feature that is 0 in every training row
    and 1 in a test row, as on Arrhythmia), so at ``fit`` the adapter appends
    one synthetic row per missing category to the frame it hands to dice-ml:
    a copy of the first training row with only that feature changed,
    labelled with the model's prediction.  They only extend dice-ml's
    category lists (numeric ranges are unchanged; DiCE's MAD and quantile
    statistics see at most a handful of extra rows); a KD-tree answer equal
    to one of them is discarded, so none is ever reported.  DiCE seeds
    NumPy's global RNG; the adapter saves and restores the global state around
    each call so that the user's RNG is untouched.

    Parameters
    ----------
    dice_method : {"random", "genetic", "kdtree"}
    n_candidates : int
        How many counterfactuals DiCE is asked for per query (at least
        ``n_counterfactuals``); extra candidates survive verification better.
    random_state, time_limit, verbose
        As every method.  DiCE has no time limit of its own; the adapter
        enforces ``time_limit`` at DiCE's next model call past the deadline
        (the query then gets status ``timeout``).
    """

    name: ClassVar[str] = "dice"
    tags: ClassVar[MethodTags] = MethodTags(
        display_name="DiCE",
        summary="the dice-ml package's explainers, for comparisons (peer adapter)",
        paper="Mothilal et al., FAT* 2020",
        constraints=SEARCH_KINDS,
        peer=True,
        requires=("dice_ml",),
        extra="peers",
        fast_params={"random_state": 0},
        order=90,
    )
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "dice_method": [Options(("random", "genetic", "kdtree"))],
        "n_candidates": [Interval(int, 1, None)],
    }

    def __init__(
        self,
        *,
        dice_method: str = "random",
        n_candidates: int = 5,
        random_state: int | None = None,
        time_limit: float | None = None,
        verbose: int = 0,
    ) -> None:
        self.dice_method = dice_method
        self.n_candidates = n_candidates
        self.random_state = random_state
        self.time_limit = time_limit
        self.verbose = verbose

    def _fit(self) -> None:
        dice_ml = import_optional("dice_ml", purpose="the DiCE peer method")
        frame = self.data_.X.copy()
        outcome = "__target__"
        classes = list(self.classes_)
        if len(classes) != 2:
            raise UnsupportedModelError("The DiCE adapter supports binary classifiers only.")
        frame[outcome] = [classes.index(v) for v in self.data_.y]
        for f in self.schema_:
            if not f.is_numeric:
                frame[f.name] = frame[f.name].astype(str)
        self._outcome = outcome
        self._str_model = _StrInput(self.model_.model, self.schema_)
        extra = _unseen_category_rows(frame, self.schema_, outcome)
        if len(extra):
            extra[outcome] = self._str_model.predict(extra)
            frame = pd.concat([frame, extra], ignore_index=True)
        #: rows added only so that dice-ml knows every category of the schema (never reported)
        self._synthetic = extra.drop(columns=[outcome], errors="ignore")
        self._dice_data = dice_ml.Data(
            dataframe=frame, continuous_features=self.schema_.numeric, outcome_name=outcome
        )
        self._dice_model = dice_ml.Model(model=self._str_model, backend="sklearn")

    def _explain_one(self, query: Query) -> Candidates:
        x = self._query_frame(query)
        vary = [n for n in query.bounds.mutable]
        if not vary:
            return Candidates(x.iloc[0:0], "infeasible", {"reason": "no mutable feature"})
        out = self._generate(x, query, vary)
        if isinstance(out, Candidates):
            return out
        cfs = out.cf_examples_list[0].final_cfs_df
        if cfs is None or len(cfs) == 0:
            return Candidates(x.iloc[0:0], "failed", {"reason": "DiCE returned no counterfactual"})
        cfs = cfs.drop(columns=[self._outcome], errors="ignore")
        if len(
            self._synthetic
        ):  # a KD-tree neighbour may be one of the added rows: never an answer
            cfs = cfs[~_rows_in(cfs, self._synthetic, self.schema_)]
            if len(cfs) == 0:
                return Candidates(
                    x.iloc[0:0], "failed", {"reason": "DiCE returned no counterfactual"}
                )
        return Candidates(
            self._decode(cfs).reset_index(drop=True),
            "feasible",
            {"dice_method": self.dice_method},
        )

    def _query_frame(self, query: Query) -> pd.DataFrame:
        """The query as a one-row frame with categories as strings (as dice-ml sees them)."""
        x = query.x.to_frame().T.copy()
        for f in self.schema_:
            if not f.is_numeric:
                x[f.name] = x[f.name].astype(str)
        return x

    def _dice_arguments(self, query: Query, vary: list[str]) -> dict[str, Any]:
        """``generate_counterfactuals``'s arguments: the number asked for, the target,
        the features to vary and their permitted ranges or categories, DiCE's own
        margin and (``dice_method="random"``) a seed drawn from the query's generator."""
        permitted: dict[str, list[Any]] = {}
        for n in vary:
            b = query.bounds[n]
            if b.feature.is_numeric:
                permitted[n] = [b.lower, b.upper]
            else:
                permitted[n] = [str(v) for v in b.values or ()]
        seed = int(query.rng.integers(0, 2**31 - 1))
        kwargs: dict[str, Any] = {
            "total_CFs": max(self.n_candidates, query.n_counterfactuals),
            "desired_class": int(query.target_index),
            "features_to_vary": vary,
            "permitted_range": permitted,
            "verbose": False,
        }
        if self.dice_method == "random":
            kwargs["random_seed"] = seed
        if query.min_probability is not None:  # DiCE's own margin: the target's probability
            kwargs["stopping_threshold"] = float(query.min_probability)
        return kwargs

    def _generate(self, x: pd.DataFrame, query: Query, vary: list[str]) -> Any:
        """DiCE's answer for the query, or the :class:`Candidates` of a timeout or a
        failure.  The global random states DiCE draws from are restored after it."""
        dice_ml = import_optional("dice_ml", purpose="the DiCE peer method")
        exp = dice_ml.Dice(self._dice_data, self._dice_model, method=self.dice_method)
        np_state, py_state = np.random.get_state(), random.getstate()
        kwargs = self._dice_arguments(query, vary)
        left = query.time_left()
        self._str_model.deadline = (
            None if left is None or not np.isfinite(left) else time.monotonic() + left
        )
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return exp.generate_counterfactuals(x, **kwargs)
        except _DeadlineReached:
            return Candidates(
                x.iloc[0:0],
                "timeout",
                {"reason": f"DiCE did not finish within time_limit={self.time_limit} s"},
            )
        except Exception as exc:  # DiCE raises when it finds nothing
            return Candidates(
                x.iloc[0:0], "failed", {"reason": f"DiCE: {type(exc).__name__}: {exc}"[:300]}
            )
        finally:
            self._str_model.deadline = None
            np.random.set_state(np_state)
            random.setstate(py_state)

    def _decode(self, cfs: pd.DataFrame) -> pd.DataFrame:
        """DiCE's rows with the schema's own categories (not their strings) and
        numeric columns as numbers."""
        for f in self.schema_:
            if not f.is_numeric:
                lookup = {str(c): c for c in f.categories or ()}
                cfs[f.name] = pd.Series(
                    [lookup.get(str(v), v) for v in cfs[f.name]], index=cfs.index, dtype=object
                )
            else:
                cfs[f.name] = pd.to_numeric(cfs[f.name], errors="coerce")
        return cfs


def _unseen_category_rows(frame: pd.DataFrame, schema: Any, outcome: str) -> pd.DataFrame:
    """One row per (feature, category) of the schema that the training frame lacks.

    dice-ml takes each categorical feature's list of categories from the frame
    it is given and rejects a query or a permitted value outside it (a binary
    feature that is 0 in every training row but 1 in a test row).  Each added
    row is a copy of the first training row with that one feature set to the
    missing category (categories already as strings, like ``frame``), so the
    numeric ranges DiCE derives from the data do not change.
    """
    rows = []
    first = frame.iloc[[0]].drop(columns=[outcome])
    for f in schema:
        if f.is_numeric:
            continue
        seen = set(frame[f.name].unique())
        for c in f.categories or ():
            if str(c) not in seen:
                r = first.copy()
                r[f.name] = str(c)
                rows.append(r)
    if not rows:
        return first.iloc[0:0].copy()
    return pd.concat(rows, ignore_index=True)


def _rows_in(cfs: pd.DataFrame, rows: pd.DataFrame, schema: Any) -> np.ndarray:
    """Which rows of ``cfs`` equal one of ``rows`` on every feature (categories compared
    as strings)."""

    def keys(frame: pd.DataFrame) -> list[tuple[Any, ...]]:
        cols: list[list[Any]] = []
        for f in schema:
            col = frame[f.name]
            if f.is_numeric:
                cols.append([round(float(v), 9) for v in pd.to_numeric(col, errors="coerce")])
            else:
                cols.append([str(v) for v in col])
        return list(zip(*cols, strict=True))

    added = set(keys(rows))
    return np.array([k in added for k in keys(cfs)], dtype=bool)


class _DeadlineReached(Exception):
    """Raised inside DiCE's search by a model call past the query's time limit."""


class _StrInput:
    """The user's model, fed DiCE's string-typed categories converted back to the schema's values.

    ``deadline`` (a ``time.monotonic()`` value, or None) stops DiCE's search:
    the first model call after it raises :class:`_DeadlineReached`.
    """

    def __init__(self, model: Any, schema: Any) -> None:
        self.model = model
        self.schema = schema
        self.classes_ = np.arange(len(model.classes_))
        self.deadline: float | None = None

    def _convert(self, X: pd.DataFrame) -> pd.DataFrame:
        X = X.loc[:, self.schema.names].copy()
        for f in self.schema:
            if not f.is_numeric:
                lookup = {str(c): c for c in f.categories or ()}
                # object dtype, as Schema.coerce gives it: a list of ints would become an int64
                # column, which a OneHotEncoder fitted on object columns cannot read
                X[f.name] = pd.Series(
                    [lookup.get(str(v), v) for v in X[f.name]], index=X.index, dtype=object
                )
            elif f.kind == "integer":
                X[f.name] = np.round(pd.to_numeric(X[f.name])).astype(np.int64)
        return X

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise _DeadlineReached
        return self.model.predict_proba(self._convert(X))

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return np.argmax(self.predict_proba(X), axis=1)
