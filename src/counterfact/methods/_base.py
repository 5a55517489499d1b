"""The base class every method derives from.

It owns what is shared: parameter validation, ``fit``, and the public
``explain`` (input checks, seeding, per-query time limits, re-verification of
every candidate against the real model and the constraints, parallel
execution through joblib, progress bars, assembling the result).  A method
fills in hooks:

* ``_fit(self)`` (optional): one-off work, using ``self.model_``,
  ``self.data_`` (training :class:`~counterfact.data.Dataset`) and ``self.schema_``;
* ``_explain_one(self, query: Query) -> Candidates`` for per-query search, or
  ``_explain_batch(self, queries: list[Query]) -> list[Candidates]`` for
  amortized methods.

Candidates are raw rows; the base class decides which are reported (see
:mod:`counterfact.methods._assemble`: snapping to each feature's resolution,
verification with the real model, optional sparsification, the diversity rule).

Seeding by position
-------------------
Every query's generator is seeded from ``(random_state, position)``, its
position in the whole input (``explain_in_chunks`` passes each chunk's
offset), so one query gets the same random stream whether it is explained
alone, in a batch, with ``n_jobs=k`` or in chunks of any size.  Methods draw
only from ``query.rng`` and never depend on which other queries share their
batch.  With ``random_state=None`` each ``explain`` call draws fresh entropy
(still one stream per position).
"""

from __future__ import annotations

import inspect
import math
import sys
import time
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._utils._progress import progress, should_show, summary_line
from .._utils._validation import Interval, Options, TypeSpec, validate_params
from ..constraints import CONSTRAINT_KINDS, Constraints, QueryBounds, ResolvedConstraints
from ..data import Dataset
from ..exceptions import (
    ConstraintError,
    NotFittedError,
    ValidationError,
)
from ..models import ModelAdapter, as_adapter
from ..models._adapter import check_model
from ..result import CounterfactualResult
from ..schema import Schema
from ._query import Candidates, Query, learn_post, set_budgets
from ._rows import _position_seeds, _resolve_rows

__all__ = ["Candidates", "CounterfactualMethod", "Query"]


_COMMON_PARAMS: dict[str, list[Any]] = {
    "random_state": [None, Interval(int, 0, None)],
    "time_limit": [None, Interval(float, 0, None, closed="neither")],
    "verbose": [Interval(int, 0, None), TypeSpec((bool,), "a bool")],
    "norm": [Options(("l0", "l1", "linf", "l2"))],
}


class CounterfactualMethod:
    """Base class of every counterfactual method (scikit-learn contract).

    Subclasses define a keyword-only ``__init__`` that stores its parameters
    unchanged, a ``name``, ``_parameter_constraints`` and the hooks.
    """

    name: ClassVar[str] = ""
    #: constraint kinds the method honours (others raise UnsupportedConstraintError)
    supported_constraints: ClassVar[frozenset[str]] = frozenset(CONSTRAINT_KINDS) - {"causal"}
    #: ``{param: [spec, ...]}``; see :mod:`counterfact._validation`
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {}
    #: the diversity rule's per-feature steps for the fitted data (see ``_assemble.steps_of``)
    _diversity_steps_cache: np.ndarray | None = None
    #: seconds per query of the work after the search (see ``_budget``), learnt per instance
    _post_seconds: float | None = None

    # ------------------------------------------------------------- params
    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [p.name for p in sig.parameters.values() if p.name != "self" and p.kind == p.KEYWORD_ONLY]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Constructor parameters and their current values."""
        return {n: getattr(self, n) for n in self._param_names()}

    def set_params(self, **params: Any) -> CounterfactualMethod:
        """Set constructor parameters; unknown names raise."""
        valid = self._param_names()
        for k, v in params.items():
            if k not in valid:
                raise ValidationError(
                    f"{type(self).__name__} has no parameter {k!r}. Valid parameters: {sorted(valid)}."
                )
            setattr(self, k, v)
        return self

    def _validate_params(self) -> None:
        tl = getattr(self, "time_limit", None)
        if "time_limit" in self._param_names() and isinstance(tl, (int, float)) and not isinstance(tl, bool) and math.isinf(tl):
            raise ValidationError(
                f"The 'time_limit' parameter of {type(self).__name__} must be a finite number of seconds. "
                f"Got {tl!r}; pass time_limit=None for no limit."
            )
        specs = {**{k: v for k, v in _COMMON_PARAMS.items() if k in self._param_names()}, **self._parameter_constraints}
        validate_params(type(self).__name__, self.get_params(), specs)

    def __repr__(self) -> str:
        sig = inspect.signature(type(self).__init__)
        parts = []
        for n, v in self.get_params().items():
            default = sig.parameters[n].default
            try:
                same = bool(v == default)
            except Exception:
                same = v is default
            if not same:
                parts.append(f"{n}={v!r}")
        return f"{type(self).__name__}({', '.join(parts)})"

    # ---------------------------------------------------------------- fit
    def fit(self, model: Any, data: Dataset) -> CounterfactualMethod:
        """Validate parameters, wrap the model and learn what the method needs.

        Parameters
        ----------
        model : classifier
            A fitted classifier with ``predict_proba(DataFrame)`` and ``classes_``.
        data : Dataset
            Training data (statistics, observed rows, ranges).

        Raises
        ------
        ValidationError
            The model does not fit the data: it was fitted on other columns,
            ``predict_proba`` fails on a few training rows or does not give one
            column per class, or its classes are not the data's classes.
        """
        self._validate_params()
        if not isinstance(data, Dataset):
            raise ValidationError(
                f"{type(self).__name__}.fit needs a counterfact Dataset as data. Got {type(data).__name__}; "
                "wrap a DataFrame with cf.Dataset.from_frame(frame, target=...)."
            )
        self.schema_: Schema = data.schema
        self.data_: Dataset = data
        self.model_: ModelAdapter = as_adapter(model, data.schema)
        check_model(self.model_, data, owner=type(self).__name__)
        self.classes_ = self.model_.classes_
        self._diversity_steps_cache = None  # recomputed from this data on first use
        self._post_seconds = None  # relearnt for this model
        self._fit()
        self.fitted_ = True
        return self

    def _fit(self) -> None:
        """Hook: one-off work after the base class stored model, data and schema."""

    def _check_fitted(self) -> None:
        if not getattr(self, "fitted_", False):
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet. Call 'fit(model, data)' "
                "with the model and its training Dataset before 'explain'."
            )

    # ------------------------------------------------------------- explain
    def explain(
        self,
        X: pd.DataFrame | pd.Series,
        *,
        n_counterfactuals: int = 1,
        constraints: Constraints | Sequence[Constraints] | None = None,
        target: Any = None,
        n_jobs: int | None = 1,
        backend: str | None = None,
        chunk_size: int | None = None,
        errors: str | None = None,
        _position_offset: int = 0,
        _feedback: bool = True,
    ) -> CounterfactualResult:
        """Counterfactuals for each row of ``X``.

        Parameters
        ----------
        X : DataFrame or Series
            Raw rows with the training columns (never modified).
        n_counterfactuals : int
            How many distinct counterfactuals per row (at most).
        constraints : Constraints or sequence of Constraints, optional
            Added to the schema's actionability.  A sequence gives each row of
            ``X`` its own constraints (one entry per row, in order: each user's
            own feedback), still searched in one call; the result then keeps
            them per query (:meth:`CounterfactualResult.constraints_for`).
        target : label or sequence of labels, optional
            Desired class.  Binary problems default to the other class;
            multi-class problems need it.
        n_jobs : int, optional
            Parallel workers (joblib); ``-1`` for all cores.
        backend : str, optional
            joblib backend: ``"loky"`` (default), ``"threading"``, ``"dask"``
            (needs a ``distributed.Client``), ``"ray"`` (needs ``ray``).
        chunk_size : int, optional
            Queries per task when running in parallel.
        errors : {"coerce", "raise"}, optional
            What a row whose own constraints contradict themselves does (they
            name no valid box for that row: a :class:`ConstraintError` when
            resolved against the schema or the row, or a feature left with no
            allowed value).  ``"coerce"`` (the default with one Constraints per
            row) gives that row the status ``invalid`` with the reason and
            explains the others; ``"raise"`` (the default with one shared
            Constraints) raises.  A shared Constraints that contradicts
            itself regardless of the row always raises, and with a shared
            Constraints a row that cannot reach the allowed box is
            ``infeasible``, as before.  Every row's constraints are checked
            before any search starts.
        _position_offset : int
            Internal (used by :func:`~counterfact.batch.explain_in_chunks`):
            the position of ``X``'s first row in the whole input, from which
            each query's random stream is seeded.
        _feedback : bool
            Internal: ``False`` hides the progress bar and the summary line
            (a chunk of :func:`~counterfact.batch.explain_in_chunks`, which
            shows its own).

        Returns
        -------
        CounterfactualResult

        Notes
        -----
        Every reported counterfactual has its numeric values on the feature's
        resolution and was verified *after* that rounding with the real model
        and the constraints.  Methods that sparsify (UFCE, MD-PSO, L2C by
        default; ``nearest`` with ``sparsify=True``) have every change the
        model does not need reverted.  The counterfactuals of one query are
        pairwise *different*: another set of changed features, or some feature
        differing by more than max(resolution, 0.1 x MAD); discrete features
        by value.  Diagnostics count each step (``n_snapped``,
        ``n_snap_failed``, ``n_reverted``, ``n_duplicates``, ``n_too_similar``).

        Time limit (``time_limit``, seconds per query): it covers the whole
        call, not only the search.  Each query's search gets the limit less
        what the base class keeps back for the input checks and for the
        verification and sparsification after it (learnt from this instance's
        earlier calls; at most 40 % of the limit), and sparsification stops at
        the call's deadline (``n x time_limit`` for ``n`` queries), keeping
        the verified reverts made so far (``diagnostics["sparsify_stopped"]``).

        Reproducibility: each query's random stream depends only on
        ``random_state`` and its position in ``X``, so ``n_jobs``, ``backend``
        and chunking do not change the result.

        Progress: a bar over the queries on standard error when ``verbose`` is
        set or standard error is a terminal, and a closing line counting the
        queries without a counterfactual by reason.  Nothing is written to
        standard output.
        """
        begin = time.perf_counter()
        self._check_fitted()
        tasks, _resolved, constraints = self._prepare(
            X, n_counterfactuals, constraints, target, errors=errors, offset=_position_offset
        )
        deadline = set_budgets(self, tasks, time.perf_counter() - begin, begin)
        outcomes = self._run(tasks, n_jobs=n_jobs, backend=backend, chunk_size=chunk_size, feedback=_feedback)
        t_post = time.perf_counter()
        result = self._assemble(tasks, outcomes, constraints, n_counterfactuals, deadline=deadline)
        learn_post(self, time.perf_counter() - t_post, tasks, outcomes)
        if _feedback and should_show(getattr(self, "verbose", 0), len(tasks)):
            print(summary_line(result.status, result.diagnostics), file=sys.stderr, flush=True)
        return result

    # ........................................................... preparing
    def _prepare(
        self,
        X: Any,
        n_counterfactuals: Any,
        constraints: Constraints | Sequence[Constraints] | None,
        target: Any,
        *,
        errors: str | None = None,
        offset: int = 0,
    ) -> tuple[list[Query], ResolvedConstraints, Any]:
        if isinstance(n_counterfactuals, bool) or not isinstance(n_counterfactuals, (int, np.integer)) or n_counterfactuals < 1:
            raise ValidationError(
                f"n_counterfactuals must be an int >= 1. Got {n_counterfactuals!r}."
            )
        frame = self.schema_.validate_frame(X, what="X")
        if frame.index.has_duplicates:
            raise ValidationError("X has duplicate index labels; query ids must be unique (reset_index()).")
        per_row, errors, row_resolved, resolved, given = _resolve_rows(self, frame, constraints, errors)
        free: ResolvedConstraints | None = None  # bounds of a row that is never searched
        preds, proba = self.model_.predict_with_proba(frame)
        targets = self._targets(preds, target, len(frame))
        seeds = _position_seeds(getattr(self, "random_state", None), int(offset), len(frame))
        tasks = []
        for i, (qid, x) in enumerate(frame.iterrows()):
            rc = row_resolved[i]
            why: str | None = None
            bounds: QueryBounds | None = None
            if isinstance(rc, ConstraintError):
                why = f"the row's constraints contradict themselves: {rc}"
            else:
                try:
                    bounds = rc.for_query(x)
                except ConstraintError as exc:
                    if errors == "raise":
                        raise
                    why = f"the row's constraints contradict themselves: {exc}"
                else:
                    if per_row and errors == "coerce" and bounds.infeasible:
                        empty = [b.feature.name for b in bounds.features if b.empty]
                        why = f"the row's constraints leave {empty} no allowed value"
            if why is not None:
                free = free or Constraints().resolve(self.schema_)
                rc, bounds = free, free.for_query(x)
            tasks.append(
                Query(
                    id=qid,
                    x=x,
                    target=targets[i],
                    target_index=self.model_.class_index(targets[i]),
                    bounds=bounds,  # type: ignore[arg-type]
                    constraints=rc,  # type: ignore[arg-type]
                    n_counterfactuals=int(n_counterfactuals),
                    rng=np.random.default_rng(seeds[i]),
                    time_limit=getattr(self, "time_limit", None),
                    predicted=preds[i],
                    query_confidence=float(proba[i, self.model_.class_index(targets[i])]),
                    position=int(offset) + i,
                    invalid=why,
                )
            )
        return tasks, resolved, given

    def _targets(self, preds: np.ndarray, target: Any, n: int) -> list[Any]:
        classes = self.model_.classes_
        if target is None:
            if len(classes) != 2:
                raise ValidationError(
                    f"The model has {len(classes)} classes {classes.tolist()}; pass target= the desired class."
                )
            return [classes[1] if p == classes[0] else classes[0] for p in preds]
        if isinstance(target, (list, tuple, np.ndarray, pd.Series)):
            if len(target) != n:
                raise ValidationError(f"target has {len(target)} entries for {n} queries.")
            targets = list(target)
        else:
            targets = [target] * n
        for t in targets:
            self.model_.class_index(t)
        return targets

    # ............................................................. running
    def _run(
        self, tasks: list[Query], *, n_jobs: int | None, backend: str | None, chunk_size: int | None, feedback: bool = True
    ) -> list[Candidates]:
        empty = pd.DataFrame(columns=self.schema_.names)
        out: list[Candidates] = [Candidates(empty) for _ in tasks]
        todo = []
        for i, t in enumerate(tasks):
            if t.invalid is not None:
                out[i] = Candidates(empty, "invalid", {"reason": t.invalid})
            elif t.bounds.infeasible:
                names = [b.feature.name for b in t.bounds.features if b.empty]
                out[i] = Candidates(empty, "infeasible", {"reason": f"the constraints leave {names} no allowed value for this query"})
            elif t.predicted == t.target:
                out[i] = Candidates(empty, "failed", {"reason": "query already predicted as target"})
            else:
                todo.append(i)
        if not todo:
            return out
        n_jobs = 1 if n_jobs is None else int(n_jobs)
        sub = [tasks[i] for i in todo]
        bar = progress(total=len(sub), desc=type(self).__name__, unit="query", verbose=getattr(self, "verbose", 0), disable=not feedback)
        try:
            if n_jobs == 1 and backend is None:
                results = self._solve_chunk(sub, bar=bar)
            else:
                from joblib import Parallel, delayed, effective_n_jobs, parallel_config

                workers = effective_n_jobs(n_jobs)
                size = chunk_size or max(1, int(np.ceil(len(sub) / (4 * workers))))
                chunks = [sub[k : k + size] for k in range(0, len(sub), size)]
                parts = []
                with parallel_config(backend=backend or "loky", n_jobs=n_jobs):
                    gen = Parallel(return_as="generator")(delayed(_solve)(self, c) for c in chunks)
                    for chunk, part in zip(chunks, gen, strict=True):
                        parts.append(part)
                        bar.update(len(chunk))
                results = [r for part in parts for r in part]
        finally:
            bar.close()
        for i, r in zip(todo, results, strict=True):
            out[i] = r
        return out

    def _sub_batches(self, n: int) -> int:
        """Queries per call of ``_explain_batch`` (so that the progress bar moves;
        results do not depend on it: each query draws only from its own stream)."""
        return max(16, int(np.ceil(n / 20)))

    def _solve_chunk(self, tasks: list[Query], bar: Any = None) -> list[Candidates]:
        """Run the method's hook on ``tasks``, advancing ``bar`` as queries finish.

        Per-query methods: each query's clock (``Query.started``) starts just
        before its own ``_explain_one``, and its runtime is its own wall time.
        Batch methods: ``_explain_batch`` runs on sub-batches
        (:meth:`_sub_batches`); every query of a sub-batch starts at the
        sub-batch's start, so a time limit bounds the sub-batch's wall time
        (a method may restart the clocks of smaller groups itself), and each
        query's runtime is the sub-batch's wall time divided among its queries.
        """
        out: list[Candidates] = []
        if type(self)._explain_batch is not CounterfactualMethod._explain_batch:
            size = self._sub_batches(len(tasks))
            for k in range(0, len(tasks), size):
                group = tasks[k : k + size]
                start = time.perf_counter()
                for t in group:
                    t.started = start
                cands = self._explain_batch(group)
                elapsed = (time.perf_counter() - start) / max(1, len(group))
                for c in cands:
                    c.diagnostics.setdefault("_runtime", elapsed)
                out.extend(cands)
                if bar is not None:
                    bar.update(len(group))
            return out
        for t in tasks:
            t.started = time.perf_counter()
            c = self._explain_one(t)
            if isinstance(c, pd.DataFrame):
                c = Candidates(c)
            c.diagnostics.setdefault("_runtime", time.perf_counter() - t.started)
            out.append(c)
            if bar is not None:
                bar.update(1)
        return out

    def _explain_one(self, query: Query) -> Candidates:
        raise NotImplementedError(f"{type(self).__name__} must implement _explain_one or _explain_batch.")

    def _explain_batch(self, queries: list[Query]) -> list[Candidates]:
        raise NotImplementedError  # pragma: no cover - sentinel, see _solve_chunk

    # ........................................................ verification
    def _check_candidates(self, query: Query, frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Check raw candidate rows for one query with the real model and the constraints.

        Returns ``(valid, flips, satisfies)`` boolean arrays; ``valid`` is both.
        Rows that cannot be coerced to the schema's types count as invalid.
        Methods may call this inside their search (e.g. to retry with a larger margin).
        """
        n = len(frame)
        if n == 0:
            z = np.zeros(0, dtype=bool)
            return z, z, z
        try:
            rows = self.schema_.coerce(frame)
        except (TypeError, ValueError, KeyError):
            z = np.zeros(n, dtype=bool)
            return z, z, z
        sat = query.bounds.satisfied(rows)
        flips = np.zeros(n, dtype=bool)
        if sat.any():
            flips[sat] = self.model_.predict(rows[sat]) == query.target
        return flips & sat, flips, sat

    # ........................................................... assembling
    def _assemble(
        self, tasks: list[Query], outcomes: list[Candidates], constraints: Any, n_cf: int, *, deadline: float | None = None
    ) -> CounterfactualResult:
        """Verify every candidate and build the result (``constraints``: one
        Constraints, or a list with one per task; ``deadline``: when
        sparsification stops); see :mod:`._assemble`."""
        from ._assemble import assemble

        return assemble(self, tasks, outcomes, constraints, n_cf, deadline=deadline)


def _solve(method: CounterfactualMethod, tasks: list[Query]) -> list[Candidates]:
    """Worker entry point (module level so it pickles)."""
    return method._solve_chunk(tasks)
