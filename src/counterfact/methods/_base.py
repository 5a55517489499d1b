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

Candidates are raw rows; the base class decides which are reported.
"""

from __future__ import annotations

import inspect
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._validation import Interval, Options, TypeSpec, validate_params
from ..constraints import (
    CONSTRAINT_KINDS,
    Constraints,
    QueryBounds,
    ResolvedConstraints,
    satisfied_many,
)
from ..data import Dataset
from ..exceptions import (
    NotFittedError,
    UnsupportedConstraintError,
    ValidationError,
)
from ..models import ModelAdapter, as_adapter
from ..result import STATUSES, CounterfactualResult
from ..schema import Schema

__all__ = ["Candidates", "CounterfactualMethod", "Query"]


@dataclass
class Query:
    """Everything a method needs to explain one row."""

    id: Any
    x: pd.Series
    target: Any
    target_index: int
    bounds: QueryBounds
    constraints: ResolvedConstraints
    n_counterfactuals: int
    rng: np.random.Generator
    time_limit: float | None
    predicted: Any = None
    #: the model's probability of ``target`` for the query itself
    query_confidence: float = float("nan")
    started: float = field(default_factory=time.perf_counter)

    def time_left(self) -> float:
        """Seconds left before the time limit (inf without a limit)."""
        if self.time_limit is None:
            return float("inf")
        return self.time_limit - (time.perf_counter() - self.started)

    def expired(self) -> bool:
        """Whether the time limit has run out."""
        return self.time_left() <= 0


@dataclass
class Candidates:
    """What a method proposes for one query.

    ``frame`` holds raw rows, best first.  ``status`` is the method's claim
    (``optimal`` when the first row is proven nearest, ``feasible``,
    ``infeasible`` when none exists, ``timeout``); the base class downgrades it
    when verification rejects rows.  ``diagnostics`` are method facts.
    """

    frame: pd.DataFrame
    status: str | None = None
    diagnostics: dict[str, Any] = field(default_factory=dict)


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
        self.classes_ = self.model_.classes_
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

        Returns
        -------
        CounterfactualResult
        """
        self._check_fitted()
        tasks, _resolved, constraints = self._prepare(X, n_counterfactuals, constraints, target)
        outcomes = self._run(tasks, n_jobs=n_jobs, backend=backend, chunk_size=chunk_size)
        return self._assemble(tasks, outcomes, constraints, n_counterfactuals)

    # ........................................................... preparing
    def _prepare(
        self, X: Any, n_counterfactuals: Any, constraints: Constraints | Sequence[Constraints] | None, target: Any
    ) -> tuple[list[Query], ResolvedConstraints, Any]:
        if isinstance(n_counterfactuals, bool) or not isinstance(n_counterfactuals, (int, np.integer)) or n_counterfactuals < 1:
            raise ValidationError(
                f"n_counterfactuals must be an int >= 1. Got {n_counterfactuals!r}."
            )
        frame = self.schema_.validate_frame(X, what="X")
        if frame.index.has_duplicates:
            raise ValidationError("X has duplicate index labels; query ids must be unique (reset_index()).")
        per_row = isinstance(constraints, (list, tuple))
        if per_row and len(constraints) != len(frame):  # type: ignore[arg-type]
            raise ValidationError(
                f"constraints has {len(constraints)} entries for {len(frame)} rows of X; pass one "  # type: ignore[arg-type]
                "Constraints per row, or a single Constraints for every row."
            )
        items: list[Any] = [Constraints() if c is None else c for c in (constraints if per_row else [constraints])]  # type: ignore[union-attr]
        resolved_by_id: dict[int, ResolvedConstraints] = {}  # each distinct object checked and resolved once
        for k, c in enumerate(items):
            if not isinstance(c, Constraints):
                where = f"constraints[{k}]" if per_row else "constraints"
                raise ValidationError(f"{where} must be a cf.Constraints. Got {type(c).__name__}.")
            if id(c) not in resolved_by_id:
                unsupported = sorted(c.kinds() - set(self.supported_constraints))
                if unsupported:
                    raise UnsupportedConstraintError(
                        f"{type(self).__name__} cannot honour constraints of kind {unsupported}. It supports "
                        f"{sorted(self.supported_constraints)}; use a method that supports them "
                        "(CE-OCL supports causal constraints) or drop them."
                    )
                resolved_by_id[id(c)] = c.resolve(self.schema_)
        row_resolved = [resolved_by_id[id(items[k if per_row else 0])] for k in range(len(frame))]
        resolved = resolved_by_id[id(items[0])] if items else Constraints().resolve(self.schema_)
        given: Any = items if per_row else items[0]
        preds, proba = self.model_.predict_with_proba(frame)
        targets = self._targets(preds, target, len(frame))
        seeds = np.random.SeedSequence(getattr(self, "random_state", None)).spawn(len(frame))
        tasks = []
        for i, (qid, x) in enumerate(frame.iterrows()):
            bounds = row_resolved[i].for_query(x)
            tasks.append(
                Query(
                    id=qid,
                    x=x,
                    target=targets[i],
                    target_index=self.model_.class_index(targets[i]),
                    bounds=bounds,
                    constraints=row_resolved[i],
                    n_counterfactuals=int(n_counterfactuals),
                    rng=np.random.default_rng(seeds[i]),
                    time_limit=getattr(self, "time_limit", None),
                    predicted=preds[i],
                    query_confidence=float(proba[i, self.model_.class_index(targets[i])]),
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
    def _run(self, tasks: list[Query], *, n_jobs: int | None, backend: str | None, chunk_size: int | None) -> list[Candidates]:
        todo = [i for i, t in enumerate(tasks) if not t.bounds.infeasible and t.predicted != t.target]
        out: list[Candidates] = [Candidates(pd.DataFrame(columns=self.schema_.names)) for _ in tasks]
        for i, t in enumerate(tasks):
            if t.bounds.infeasible:
                out[i] = Candidates(pd.DataFrame(columns=self.schema_.names), "infeasible", {"reason": "a feature has no allowed value"})
            elif t.predicted == t.target:
                out[i] = Candidates(pd.DataFrame(columns=self.schema_.names), "failed", {"reason": "query already predicted as target"})
        if not todo:
            return out
        n_jobs = 1 if n_jobs is None else int(n_jobs)
        sub = [tasks[i] for i in todo]
        if n_jobs == 1 and backend is None:
            results = self._solve_chunk(sub, progress=True)
        else:
            from joblib import Parallel, delayed, effective_n_jobs, parallel_config

            workers = effective_n_jobs(n_jobs)
            size = chunk_size or max(1, int(np.ceil(len(sub) / (4 * workers))))
            chunks = [sub[k : k + size] for k in range(0, len(sub), size)]
            with parallel_config(backend=backend or "loky", n_jobs=n_jobs):
                gen = Parallel(return_as="generator")(delayed(_solve)(self, c) for c in chunks)
                parts = list(self._progress(gen, total=len(chunks), unit="chunk"))
            results = [r for part in parts for r in part]
        for i, r in zip(todo, results, strict=True):
            out[i] = r
        return out

    def _progress(self, iterable: Any, total: int, unit: str = "query") -> Any:
        show = bool(getattr(self, "verbose", 0)) or (total >= 50 and sys.stderr.isatty())
        if not show:
            return iterable
        from tqdm.auto import tqdm

        return tqdm(iterable, total=total, unit=unit, desc=type(self).__name__)

    def _solve_chunk(self, tasks: list[Query], progress: bool = False) -> list[Candidates]:
        if type(self)._explain_batch is not CounterfactualMethod._explain_batch:
            start = time.perf_counter()
            for t in tasks:
                t.started = start
            cands = self._explain_batch(tasks)
            elapsed = (time.perf_counter() - start) / max(1, len(tasks))
            for c in cands:
                c.diagnostics.setdefault("_runtime", elapsed)
            return cands
        out = []
        it = self._progress(tasks, total=len(tasks)) if progress else tasks
        for t in it:
            t.started = time.perf_counter()
            try:
                c = self._explain_one(t)
            except (ValidationError, UnsupportedConstraintError, NotFittedError):
                raise
            if isinstance(c, pd.DataFrame):
                c = Candidates(c)
            c.diagnostics.setdefault("_runtime", time.perf_counter() - t.started)
            out.append(c)
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
    def _assemble(self, tasks: list[Query], outcomes: list[Candidates], constraints: Any, n_cf: int) -> CounterfactualResult:
        """Verify every candidate and build the result (``constraints``: one
        Constraints, or a list with one per task)."""
        names = self.schema_.names
        qids = [t.id for t in tasks]
        queries = pd.DataFrame([t.x for t in tasks], columns=names)
        queries.index = pd.Index(qids)
        queries = self.schema_.coerce(queries)
        # gather every candidate for a single batched model call
        frames, owners = [], []
        for i, c in enumerate(outcomes):
            f = c.frame
            if f is None or len(f) == 0:
                continue
            missing = [n for n in names if n not in f.columns]
            if missing:
                raise ValidationError(f"{type(self).__name__} returned candidates without columns {missing}.")
            frames.append(f.loc[:, names].reset_index(drop=True))
            owners.append(np.full(len(f), i))
        statuses, diags, kept = [], [], []
        conf_all = np.zeros(0)
        flips_all = np.zeros(0, dtype=bool)
        allc = None
        own = np.zeros(0, dtype=int)
        if frames:
            allc = pd.concat(frames, ignore_index=True)
            own = np.concatenate(owners)
            coerced_ok = np.ones(len(allc), dtype=bool)
            try:
                allc = self.schema_.coerce(allc)
            except (TypeError, ValueError):
                # fall back to row-wise coercion to find the culprits
                good = []
                for k in range(len(allc)):
                    try:
                        self.schema_.coerce(allc.iloc[[k]])
                        good.append(True)
                    except (TypeError, ValueError):
                        good.append(False)
                coerced_ok = np.array(good)
                allc = allc[coerced_ok].reset_index(drop=True)
                own = own[coerced_ok]
            sat = satisfied_many([t.bounds for t in tasks], allc, own)
            flips_all = np.zeros(len(allc), dtype=bool)
            conf_all = np.full(len(allc), np.nan)
            if sat.any():
                sub = allc[sat]
                pred, proba = self.model_.predict_with_proba(sub)
                tgt_idx = np.array([tasks[i].target_index for i in own[sat]])
                tgt = np.array([tasks[i].target for i in own[sat]], dtype=object)
                flips_all[sat] = np.array([p == t for p, t in zip(pred, tgt, strict=True)])
                conf_all[sat] = proba[np.arange(len(sub)), tgt_idx]
            valid_all = flips_all & sat
        else:
            sat = valid_all = np.zeros(0, dtype=bool)
            coerced_ok = np.zeros(0, dtype=bool)
        cf_rows: list[int] = []
        cf_index, cf_conf = [], []
        keys = _keys(allc, names) if allc is not None else []
        for i, (t, c) in enumerate(zip(tasks, outcomes, strict=True)):
            m = own == i
            d = {k: v for k, v in c.diagnostics.items() if not k.startswith("_")}
            idx = np.flatnonzero(m)
            n_prop = len(c.frame) if c.frame is not None else 0
            d["n_proposed"] = n_prop
            d["n_rejected_constraints"] = int((~sat[idx]).sum()) + (n_prop - int(m.sum()))
            d["n_rejected_model"] = int((sat[idx] & ~flips_all[idx]).sum())
            seen: set[tuple[Any, ...]] = set()
            xkey = _key(t.x, names)
            rank = 0
            first_rejected = len(idx) > 0 and not valid_all[idx[0]]
            dup = 0
            for k in map(int, idx):
                if not valid_all[k]:
                    continue
                key = keys[k]
                if key in seen or key == xkey:
                    dup += 1
                    continue
                if rank >= n_cf:
                    break
                seen.add(key)
                cf_rows.append(k)
                cf_index.append((t.id, rank))
                cf_conf.append(conf_all[k])
                rank += 1
            d["n_duplicates"] = dup
            hint = c.status
            if rank > 0:
                st = hint if hint in ("optimal", "feasible") else "feasible"
                if st == "optimal" and first_rejected:
                    st = "feasible"
            else:
                st = hint if hint in ("infeasible", "timeout") else "failed"
                if hint in ("optimal", "feasible") and n_prop:
                    d.setdefault("reason", "every proposed candidate failed verification")
            statuses.append(st)
            diags.append(d)
            kept.append(c.diagnostics.get("_runtime", np.nan))
        if cf_rows:
            cf_frame = self.schema_.coerce(allc.iloc[cf_rows].reset_index(drop=True))  # type: ignore[union-attr]
        else:
            cf_frame = pd.DataFrame(columns=names)
        cf_frame.index = pd.MultiIndex.from_tuples(cf_index, names=["query", "rank"]) if cf_index else pd.MultiIndex.from_tuples([], names=["query", "rank"])
        assert all(s in STATUSES for s in statuses)  # internal invariant, not input validation
        idx = pd.Index(qids)
        return CounterfactualResult(
            queries=queries,
            counterfactuals=cf_frame,
            status=pd.Series(statuses, index=idx, dtype=object),
            runtime=pd.Series(kept, index=idx, dtype=float),
            diagnostics=pd.DataFrame(diags, index=idx),
            schema=self.schema_,
            target=pd.Series([t.target for t in tasks], index=idx),
            method=self.name or type(self).__name__,
            params=self.get_params(),
            constraints=None if isinstance(constraints, list) else constraints,
            query_constraints=dict(zip(qids, constraints, strict=True)) if isinstance(constraints, list) else None,
            model=self.model_,
            n_counterfactuals=n_cf,
            confidence=pd.Series(cf_conf, index=cf_frame.index, dtype=float),
            query_confidence=pd.Series([t.query_confidence for t in tasks], index=idx, dtype=float),
        )


def _norm(v: Any) -> Any:
    if isinstance(v, (float, np.floating)):
        return round(float(v), 9)
    if isinstance(v, np.generic):
        return v.item()
    return v


def _key(row: pd.Series, names: Sequence[str]) -> tuple[Any, ...]:
    return tuple(_norm(row[n]) for n in names)


def _keys(frame: pd.DataFrame, names: Sequence[str]) -> list[tuple[Any, ...]]:
    """``_key`` of every row of ``frame``, column by column (no per-row pandas indexing)."""
    cols = []
    for n in names:
        col = frame[n]
        if pd.api.types.is_float_dtype(col.dtype):
            cols.append([round(v, 9) for v in col.to_numpy(dtype=float).tolist()])
        else:
            cols.append([_norm(v) for v in col.tolist()])
    return list(zip(*cols, strict=True)) if cols else [() for _ in range(len(frame))]


def _solve(method: CounterfactualMethod, tasks: list[Query]) -> list[Candidates]:
    """Worker entry point (module level so it pickles)."""
    return method._solve_chunk(tasks)
