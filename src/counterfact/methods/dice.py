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

from .._deps import import_optional
from .._validation import Interval, Options
from ._base import Candidates, CounterfactualMethod, Query

__all__ = ["DiCE"]


class DiCE(CounterfactualMethod):
    """Adapter for DiCE's model-agnostic explainers (``random``, ``genetic``, ``kdtree``).

    Constraints: immutables and ``features_to_vary`` become DiCE's
    ``features_to_vary``; numeric bounds (ranges, directions, the domain)
    become ``permitted_range``; allowed categories become permitted values.
    Everything else (max changes, and whatever DiCE still gets wrong — it is
    known to return values outside the permitted range) is enforced by the
    base class's verification, which drops violating candidates.  DiCE seeds
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
            from ..exceptions import UnsupportedModelError

            raise UnsupportedModelError("The DiCE adapter supports binary classifiers only.")
        frame[outcome] = [classes.index(v) for v in self.data_.y]
        for f in self.schema_:
            if not f.is_numeric:
                frame[f.name] = frame[f.name].astype(str)
        self._outcome = outcome
        self._dice_data = dice_ml.Data(dataframe=frame, continuous_features=self.schema_.numeric, outcome_name=outcome)
        self._str_model = _StrInput(self.model_.model, self.schema_)
        self._dice_model = dice_ml.Model(model=self._str_model, backend="sklearn")

    def _explain_one(self, query: Query) -> Candidates:
        dice_ml = import_optional("dice_ml", purpose="the DiCE peer method")
        exp = dice_ml.Dice(self._dice_data, self._dice_model, method=self.dice_method)
        x = query.x.to_frame().T.copy()
        for f in self.schema_:
            if not f.is_numeric:
                x[f.name] = x[f.name].astype(str)
        vary = [n for n in query.bounds.mutable]
        if not vary:
            return Candidates(x.iloc[0:0], "infeasible", {"reason": "no mutable feature"})
        permitted: dict[str, list[Any]] = {}
        for n in vary:
            b = query.bounds[n]
            if b.feature.is_numeric:
                permitted[n] = [b.lower, b.upper]
            else:
                permitted[n] = [str(v) for v in b.values or ()]
        np_state, py_state = np.random.get_state(), random.getstate()
        seed = int(query.rng.integers(0, 2**31 - 1))
        left = query.time_left()
        self._str_model.deadline = None if left is None or not np.isfinite(left) else time.monotonic() + left
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                kwargs: dict[str, Any] = {"total_CFs": max(self.n_candidates, query.n_counterfactuals), "desired_class": int(query.target_index), "features_to_vary": vary, "permitted_range": permitted, "verbose": False}
                if self.dice_method == "random":
                    kwargs["random_seed"] = seed
                out = exp.generate_counterfactuals(x, **kwargs)
        except _DeadlineReached:
            return Candidates(x.iloc[0:0], "timeout", {"reason": f"DiCE did not finish within time_limit={self.time_limit} s"})
        except Exception as exc:  # DiCE raises when it finds nothing
            return Candidates(x.iloc[0:0], "failed", {"reason": f"DiCE: {type(exc).__name__}: {exc}"[:300]})
        finally:
            self._str_model.deadline = None
            np.random.set_state(np_state)
            random.setstate(py_state)
        cfs = out.cf_examples_list[0].final_cfs_df
        if cfs is None or len(cfs) == 0:
            return Candidates(x.iloc[0:0], "failed", {"reason": "DiCE returned no counterfactual"})
        cfs = cfs.drop(columns=[self._outcome], errors="ignore")
        for f in self.schema_:
            if not f.is_numeric:
                lookup = {str(c): c for c in f.categories or ()}
                cfs[f.name] = pd.Series([lookup.get(str(v), v) for v in cfs[f.name]], index=cfs.index, dtype=object)
            else:
                cfs[f.name] = pd.to_numeric(cfs[f.name], errors="coerce")
        return Candidates(cfs.reset_index(drop=True), "feasible", {"dice_method": self.dice_method})


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
                X[f.name] = pd.Series([lookup.get(str(v), v) for v in X[f.name]], index=X.index, dtype=object)
            elif f.kind == "integer":
                X[f.name] = np.round(pd.to_numeric(X[f.name])).astype(np.int64)
        return X

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise _DeadlineReached
        return self.model.predict_proba(self._convert(X))

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return np.argmax(self.predict_proba(X), axis=1)
