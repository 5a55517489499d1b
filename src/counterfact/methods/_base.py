"""The base class every method derives from.

It owns the scikit-learn contract (keyword-only parameters stored unchanged,
``get_params``/``set_params``, validation at ``fit``) and ``fit``; ``explain``
runs the one explain pipeline (:mod:`counterfact.methods._pipeline`): prepare
the queries, search, snap, verify, sparsify, select diverse answers, assemble
the result.  A method declares its facts in ``tags`` (:class:`MethodTags`) and
plugs into these documented hooks, and only these (:data:`HOOKS`):

* ``_fit(self)`` (optional): one-off work, using ``self.model_``,
  ``self.data_`` (training :class:`~counterfact.data.Dataset`) and ``self.schema_``;
* ``_explain_one(self, query) -> Candidates`` for per-query search, or
  ``_explain_batch(self, queries) -> list[Candidates]`` for methods that
  search a batch at once (``tags.batch``);
* ``_batch_size(self, n) -> int`` (optional, batch methods): queries per call
  of ``_explain_batch``, each sub-batch's clock starting when it starts;
* ``_before_search(self, queries, parallel)`` (optional): work to do once
  before the queries are searched, e.g. in the parent process before workers fork;
* ``_check_params(self)`` (optional): checks of parameter combinations that
  the declarative ``_parameter_constraints`` cannot express;
* ``_sparsifies(self) -> bool`` (optional): whether every change the model does
  not need is reverted after the search (default: the ``sparsify`` parameter
  when the method has one, else ``tags.sparsify``);
* ``_own_region(self) -> bool`` (optional): whether the method searches inside
  a region of its own (CE-OCL's trust region), so that the pipeline keeps its
  moves instead of reverting those smaller than a feature's step (default False);
* ``_distance_norm(self)`` (optional): the norm the method measures distance
  with, by which its answers are listed (default: the ``norm`` parameter when
  the method has one; the pipeline uses l1 for anything else);
* ``_encodes_margin(self) -> bool`` (optional): whether a margin
  (``min_probability``) may be asked of the fitted method for its model; an exact
  method says where it can encode one, and ``Requirements(robustness=p)`` leaves the
  margins out where it cannot (default True);
* ``certificate(status, diagnostics)`` and ``guarantee(params)`` (classmethods,
  optional): the method's guarantee in plain words, for one answer and for a
  whole run.

Candidates are raw rows; the pipeline decides which are reported.  Inside its
search a method may check rows with :meth:`~CounterfactualMethod.verify` (the
real model and the query's constraints, as the pipeline does afterwards).
What the pipeline reads from a method is declared in one place,
:class:`~counterfact.methods._pipeline._protocol.PipelineMethod`.  ``explain``
changes nothing on the fitted method, and a query (:class:`Query`) is
immutable: a method reads it and returns :class:`Candidates`.

Seeding by the row
------------------
Every query's generator is seeded from ``(random_state, the row's values)``, so
one person gets the same random stream -- and the same answer -- explained
alone, at any position of a batch, with ``n_jobs=k`` or in chunks of any size
(the page, the command line and a notebook agree).  Methods draw only from
``query.rng`` and never depend on which other queries share their batch.  With
``random_state=None`` each ``explain`` call draws fresh entropy (still one
stream per row).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._utils._deadline import CancelToken
from .._utils._validation import Interval, Options, TypeSpec, validate_params
from ..constraints import Constraints, Costs, Requirements
from ..constraints._costs import BoundCosts
from ..data import Dataset
from ..data._dataset import mad
from ..exceptions import NotFittedError, ValidationError
from ..metrics import distance
from ..models import ModelAdapter
from ..models._adapter import as_adapter, check_model
from ..result import Certificate, CounterfactualResult
from ..result._text import certificate_text, diagnostic_number
from ..schema import Schema
from ._pipeline import Candidates, Judge, Query, check_rows, diversity_steps, explain
from ._tags import MethodTags

__all__ = ["COMMON_PARAMS", "HOOKS", "CounterfactualMethod", "plain_guarantee"]

#: the hooks a method may override (everything else of the base class is the pipeline's)
HOOKS: frozenset[str] = frozenset(
    {
        "_fit",
        "_explain_one",
        "_explain_batch",
        "_batch_size",
        "_before_search",
        "_own_test",
        "_check_params",
        "_sparsifies",
        "_own_region",
        "_distance_norm",
        "_encodes_margin",
    }
)

#: parameter constraints shared by every method that has the parameter
COMMON_PARAMS: dict[str, list[Any]] = {
    "random_state": [None, Interval(int, 0, None)],
    "time_limit": [None, Interval(float, 0, None, closed="neither")],
    "verbose": [Interval(int, 0, None), TypeSpec((bool,), "a bool")],
    "norm": [Options(("l0", "l1", "linf", "l2"))],
}


class CounterfactualMethod:
    """Base class of every counterfactual method (scikit-learn contract).

    Subclasses define a keyword-only ``__init__`` that stores its parameters
    unchanged, a registry ``name``, their ``tags`` (:class:`MethodTags`),
    ``_parameter_constraints`` and the hooks (see the module docstring).

    What :meth:`explain` guarantees
    -------------------------------
    Every reported counterfactual has its numeric values on the feature's
    resolution and was verified *after* that rounding with the real model
    and the constraints.  Methods that sparsify (UFCE, MD-PSO, L2C by
    default; ``nearest`` with ``sparsify=True``) have every change the
    model does not need reverted.  By default (``alternatives="distinct"``)
    no answer shows a move smaller than its feature's meaningful step,
    max(resolution, 0.1 x MAD), as a change (such moves are reverted when
    the model allows, else the answer is kept only as the query's first),
    the counterfactuals of one query are pairwise *different* -- another
    set of meaningfully changed features, or some feature differing by
    more than its step; discrete features by value -- they are options, not
    copies (none dominated by another; two with the same changes a step of
    the measure apart, see :mod:`counterfact.methods._pipeline._diversity`)
    and they are listed nearest first.  Diagnostics count each step
    (``n_snapped``, ``n_snap_failed``, ``n_reverted``, ``n_substep_reverted``,
    ``n_substep_dropped``, ``n_duplicates``, ``n_dominated``,
    ``n_too_similar``, ``n_region_copies``); a query with fewer answers than
    asked says why in ``diagnostics["reason"]``.

    Time limit (``time_limit``, seconds per query): it covers the whole
    call, not only the search.  Each query's search gets the limit less
    what the pipeline keeps back for the input checks and for the
    verification and sparsification after it (a fixed share: 10 % of the
    limit up to 0.2 s, with the input checks at most 40 % of the limit, so
    the same call behaves the same way every time), and sparsification
    stops at the call's deadline (``n x time_limit`` for ``n`` queries),
    keeping the verified reverts made so far (``diagnostics["sparsify_stopped"]``).

    Reproducibility: each query's random stream depends only on
    ``random_state`` and the row's values, so a row's answer is the same
    alone or in any batch, and ``n_jobs``, ``parallel`` and chunking
    (:func:`~counterfact.methods.explain_in_chunks`) do not change the
    result.  ``explain`` changes nothing on the fitted method.

    Progress: a bar over the queries on standard error when ``verbose`` is
    set or standard error is a terminal, and a closing line counting the
    queries without a counterfactual by reason.  Nothing is written to
    standard output.

    Parameters of :meth:`explain`
    -----------------------------
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
    requirements : Requirements, optional
        What every answer must also satisfy, and how it is priced
        (:class:`~counterfact.Requirements`): ``min_probability``, a margin
        on the model's probability of the target, checked with the real
        model (exact methods encode it in their solver, so "optimal" and
        "infeasible" stay proofs under it, and raise
        :class:`UnsupportedConstraintError` for a model whose probability
        they cannot encode exactly); ``robust_to``, other models every
        answer must also reach the target in (exact methods encode every
        model in one problem); ``regions``, also compute each answer's
        certified region (:meth:`CounterfactualResult.region`: the widest box
        around it in which every point reaches the target, proven by interval
        bounds and a MILP for the compiled model, else checked on samples and
        marked not certified; each grown for up to ``time_limit`` seconds, 10
        without one, after the search and outside its time limit; without it
        ``result.region(q)`` computes one on demand); ``costs``, costs in the
        user's units replacing the method's distance (:class:`~counterfact.Costs`).
    alternatives : {"distinct", "method"}
        ``"distinct"``: the rule above; ``"method"``: the method's own
        answers and order.
    errors : {"coerce", "raise"}, optional
        What a row whose own constraints contradict themselves does (they
        name no valid box for that row: a :class:`ConstraintError` when
        resolved against the schema or the row, or a feature left with no
        allowed value).  ``"coerce"`` (the default with one Constraints per
        row) gives that row the status ``invalid`` with the reason and
        explains the others; ``"raise"`` (the default with one shared
        Constraints) raises.  A shared Constraints that contradicts itself
        regardless of the row always raises, and with a shared Constraints a
        row that cannot reach the allowed box is ``infeasible``.  Every row's
        constraints are checked before any search starts.
    n_jobs : int, optional
        Parallel workers (joblib); ``-1`` for all cores.
    parallel : str, optional
        joblib's backend: ``"loky"`` (default), ``"threading"``, ``"dask"``
        (the running ``distributed.Client``, else a local cluster for the call),
        ``"ray"`` (needs ``ray``; started locally for the call when not running).
    chunk_size : int, optional
        Queries per task when running in parallel.
    cancel : CancelToken, optional
        Set it (``cancel.cancel()``, from another thread) to stop the call
        early: every query's deadline then counts as passed, searches and
        solvers stop, and the queries not yet answered get the status
        ``timeout`` (the work done is still verified and returned).
    """

    name: ClassVar[str] = ""
    tags: ClassVar[MethodTags] = MethodTags(
        display_name="method", summary="a counterfactual method"
    )
    #: ``{param: [spec, ...]}``; see :mod:`counterfact._utils._validation`
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {}
    #: the common parameters' values for a method that does not take them (a
    #: method that does stores its own value on the instance)
    random_state: int | None = None
    time_limit: float | None = None
    verbose: int = 0

    @property
    def supported_constraints(self) -> frozenset[str]:
        """Constraint kinds the method honours (``tags.constraints``); others raise
        :class:`~counterfact.exceptions.UnsupportedConstraintError`."""
        return type(self).tags.constraints

    # ------------------------------------------------------------- params
    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [
            p.name for p in sig.parameters.values() if p.name != "self" and p.kind == p.KEYWORD_ONLY
        ]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Constructor parameters and their current values."""
        return {n: getattr(self, n) for n in self._param_names()}

    def set_params(self, **params: Any) -> CounterfactualMethod:
        """Set constructor parameters; unknown names raise."""
        valid = self._param_names()
        for k, v in params.items():
            if k not in valid:
                raise ValidationError(
                    f"{type(self).__name__} has no parameter {k!r}. Valid parameters: "
                    f"{sorted(valid)}."
                )
            setattr(self, k, v)
        return self

    def _validate_params(self) -> None:
        tl = getattr(self, "time_limit", None)
        if (
            "time_limit" in self._param_names()
            and isinstance(tl, (int, float))
            and not isinstance(tl, bool)
            and math.isinf(tl)
        ):
            raise ValidationError(
                f"The 'time_limit' parameter of {type(self).__name__} must be a finite number of "
                "seconds. "
                f"Got {tl!r}; pass time_limit=None for no limit."
            )
        specs = {
            **{k: v for k, v in COMMON_PARAMS.items() if k in self._param_names()},
            **self._parameter_constraints,
        }
        validate_params(type(self).__name__, self.get_params(), specs)
        self._check_params()

    def _check_params(self) -> None:
        """Hook: checks of parameter combinations beyond ``_parameter_constraints``."""

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
                f"{type(self).__name__}.fit needs a counterfact Dataset as data. Got "
                f"{type(data).__name__}; "
                "wrap a DataFrame with cf.Dataset.from_frame(frame, target=...)."
            )
        self._attach(model, data)
        self._fit()
        self.fitted_ = True
        return self

    def _attach(self, model: Any, data: Dataset) -> None:
        """What every fitted method holds besides its own learnt state (also set when
        a method is loaded from a file instead of fitted)."""
        self.schema_: Schema = data.schema
        self.data_: Dataset = data
        self.model_: ModelAdapter = as_adapter(model, data.schema)
        check_model(self.model_, data, owner=type(self).__name__)
        self.classes_ = self.model_.classes_
        #: per feature, by how much two answers of one query must differ (the diversity rule)
        spread = mad(data.X, data.schema)
        self.diversity_steps_: np.ndarray = diversity_steps(data.schema, spread)
        #: the default measure of effort bound to the training data, once (``cf.Costs()``)
        self.effort_: BoundCosts = BoundCosts(Costs(), data.schema, {}, tuple(spread))

    def _fit(self) -> None:
        """Hook: one-off work after the base class stored model, data and schema."""

    def _check_fitted(self, before: str = "explain") -> None:
        if not getattr(self, "fitted_", False):
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet. Call 'fit(model, data)' "
                f"with the model and its training Dataset before '{before}'."
            )

    # ------------------------------------------------------------- explain
    def explain(
        self,
        X: pd.DataFrame | pd.Series,
        *,
        n_counterfactuals: int = 1,
        constraints: Constraints | Sequence[Constraints] | None = None,
        target: Any = None,
        requirements: Requirements | None = None,
        alternatives: str = "distinct",
        errors: str | None = None,
        n_jobs: int | None = 1,
        parallel: str | None = None,
        chunk_size: int | None = None,
        cancel: CancelToken | None = None,
    ) -> CounterfactualResult:
        """Counterfactuals for each row of ``X``.

        Each parameter is documented on the class (*Parameters of explain*);
        the requirements beyond the constraints (a margin, other models,
        certified regions, costs) are one :class:`~counterfact.Requirements`.
        The result's guarantees, the time limit's sharing, reproducibility and
        progress: the class docstring.  The fitted method is left unchanged.

        Examples
        --------
        >>> result = method.explain(X, n_counterfactuals=2)                 # doctest: +SKIP
        >>> strict = cf.Requirements(min_probability=0.6, regions=True)     # doctest: +SKIP
        >>> result = method.explain(X, requirements=strict)                 # doctest: +SKIP
        """
        self._check_fitted()
        return explain(
            self,
            X,
            n_counterfactuals=n_counterfactuals,
            constraints=constraints,
            target=target,
            requirements=requirements,
            alternatives=alternatives,
            errors=errors,
            n_jobs=n_jobs,
            parallel=parallel,
            chunk_size=chunk_size,
            cancel=cancel,
        )

    # ---------------------------------------------------------------- hooks
    def _explain_one(self, query: Query) -> Candidates:
        raise NotImplementedError(
            f"{type(self).__name__} must implement _explain_one or _explain_batch."
        )

    def _explain_batch(self, queries: list[Query]) -> list[Candidates]:
        raise NotImplementedError(
            f"{type(self).__name__} declares tags.batch but does not implement _explain_batch."
        )

    def _batch_size(self, n: int) -> int:
        """Queries per call of ``_explain_batch`` (so that the progress bar moves;
        results do not depend on it: each query draws only from its own stream)."""
        return max(16, int(np.ceil(n / 20)))

    def _before_search(self, queries: list[Query], parallel: bool) -> None:
        """Hook: work to do once before ``queries`` are searched (``parallel``: in workers)."""

    def _own_test(self, rows: pd.DataFrame, target_index: Sequence[int]) -> np.ndarray | None:
        """Hook: the method's own test of answers beyond the constraints and the judge
        (UFCE: LOF plausibility), one bool per row of ``rows`` (raw; ``target_index``: each
        row's target column), or None for none.  The pipeline applies it wherever it checks
        rows, so that an answer changed after the search (rounded, sparsified, brought
        forward) still passes it."""
        return None

    def _sparsifies(self) -> bool:
        """Hook: whether every change the model does not need is reverted after the
        search: the ``sparsify`` parameter when the method has one, else ``tags.sparsify``."""
        params = self.get_params()
        if "sparsify" in params:
            return bool(params["sparsify"])
        return bool(type(self).tags.sparsify)

    def _own_region(self) -> bool:
        """Hook: whether the method searches inside a region of its own (such as a
        trust region around the data), whose moves the pipeline must keep rather
        than revert those smaller than a feature's step.  Default: no."""
        return False

    def _encodes_margin(self) -> bool:
        """Hook: whether a margin (``min_probability``) may be asked of the fitted method
        for its model. Default: yes (a method that searches and verifies checks the margin
        with the model's own probabilities); an exact method says where it can encode one."""
        return True

    def _distance_norm(self) -> Any:
        """Hook: the norm the method measures distance with (its answers are listed
        by it): the ``norm`` parameter when the method has one, else None."""
        return self.get_params().get("norm")

    # ......................................................... verification
    def verify(
        self, query: Query, frame: pd.DataFrame
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Check raw candidate rows for one query with the real model and the constraints.

        Returns ``(valid, flips, satisfies)`` boolean arrays; ``valid`` is both.
        Rows that cannot be coerced to the schema's types count as invalid.
        Methods may call this inside their search (e.g. to retry with a larger margin).
        """
        judge = query.judge if query.judge is not None else Judge(self.model_)
        return check_rows(self.schema_, judge, query, frame)

    # ............................................................ guarantees
    @classmethod
    def certificate(cls, status: str, diagnostics: Mapping[str, Any] | None = None) -> str:
        """The guarantee behind one query's answer, in plain words (shown with
        the answer by ``CounterfactualResult.certificate``, the CLI, the page).
        Methods that prove more override it and fall back on this text."""
        return certificate_text(
            cls.tags.display_name,
            status,
            diagnostics,
            proves_infeasibility=cls.tags.proves_infeasibility,
        )

    @classmethod
    def certificate_record(
        cls, status: str, diagnostics: Mapping[str, Any] | None = None
    ) -> Certificate:
        """The fields behind one query's certificate (``result.certificate_record``):
        here the status and the sentence; methods that prove bounds add the measure,
        the bounds and the tolerances."""
        return Certificate(status=status, sentence=cls.certificate(status, diagnostics))

    def answer_value(self, query: Query, row: pd.Series) -> float | None:
        """The reported answer ``row``'s value under the measure the certificate bounds
        (after it was rounded to the grids), or None for a method that proves no bound.
        The pipeline writes it into ``diagnostics["answer_value"]`` before it asks for
        :meth:`certificate_record`, so that the certificate states the returned answer."""
        return None

    @classmethod
    def guarantee(cls, params: Mapping[str, Any]) -> dict[str, str]:
        """What a run's answers mean, for an audit: ``"recourse"`` (a
        counterfactual found) and ``"none"`` (none found)."""
        return plain_guarantee(
            cls.tags.display_name, proves_infeasibility=cls.tags.proves_infeasibility
        )

    # .............................................................. measure
    def measure_name(self) -> str | None:
        """What :meth:`measure_values` measures for this method (None: it reports no
        measure of its own)."""
        norm = self._distance_norm()
        if type(self).tags.measure == "distance" and norm is not None:
            return f"range-normalised distance, norm {norm}"
        if type(self).tags.measure == "objective":
            return f"{type(self).tags.display_name} objective"
        return None

    def measure_values(self, result: CounterfactualResult) -> pd.Series | None:
        """The method's own cost of each query's first counterfactual (index:
        query; NaN without one), or None when it reports no cost of its own."""
        kind = type(self).tags.measure
        if kind == "objective":
            diag = result.diagnostics.reindex(result.queries.index)
            # the returned answer's own objective (after rounding), else the solver's
            key = "answer_value" if "answer_value" in diag.columns else "objective"
            if key not in diag.columns:
                return None
            first = result.found > 0
            return pd.to_numeric(diag[key], errors="coerce").where(first)
        norm = self._distance_norm()
        if kind == "distance" and norm is not None:
            d = distance(result, norm=tuple(norm) if isinstance(norm, list) else norm)
            d = pd.Series(np.asarray(d, dtype=float), index=result.counterfactuals.index)
            firsts = d[d.index.get_level_values(1) == 0] if len(d) else d
            out = pd.Series(np.nan, index=result.queries.index, dtype=float)
            if len(firsts):
                out.loc[firsts.index.get_level_values(0)] = firsts.to_numpy()
            return out
        return None


def diagnostic(diagnostics: Mapping[str, Any] | None, key: str) -> float | None:
    """A number from a query's diagnostics (None when missing), for ``certificate``."""
    return diagnostic_number(dict(diagnostics or {}), key)


def plain_guarantee(name: str, *, proves_infeasibility: bool = False) -> dict[str, str]:
    """What any method's answers mean, for an audit (methods that prove more say more)."""
    if proves_infeasibility:
        none = (
            f"{name} 'infeasible': proven that no counterfactual exists under the audit's "
            "constraints."
        )
    else:
        none = (
            f"{name}: 'no counterfactual found' is not a proof that none exists; such rows "
            "count as unknown."
        )
    return {
        "recourse": (
            f"{name}: counterfactuals found by search and re-checked with the real model; not "
            "proven "
            "nearest, so each cost is an upper bound on the cheapest counterfactual's cost."
        ),
        "none": none,
    }
