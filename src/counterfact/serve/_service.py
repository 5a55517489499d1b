"""What the server does, without HTTP: validate a request, explain, render the answer.

:class:`Service` holds one dataset (for the schema and the example rows), one
fitted model and the fitted methods.  Everything it receives is plain JSON
data (dicts, lists, numbers, strings); everything it returns is too.  Every
invalid input raises a :class:`~counterfact.exceptions.CounterfactError`
subclass whose message says what was wrong and how to fix it; the HTTP layer
turns those into 4xx answers.

Concurrency and cancellation (documented decisions)
---------------------------------------------------
Methods are fitted once, before the server accepts requests.  The
explanation itself runs in a worker thread so that the event loop keeps
answering (``/health`` included).  Whether a method's search is safe to run
twice at the same time on one instance is not part of the method contract (a
search may fill per-model caches on the instance), so no two requests share
an instance: each running explanation holds a deep copy of the fitted method
of its own (:mod:`._pool`), and ``Limits.method_concurrency`` of them run at
once per method.  The per-request time limit is set on a shallow copy of that
instance.

Every explanation runs with a :class:`~counterfact._utils._deadline.CancelToken`
(``ExplainJob.cancel``), checked by every method's search loop and by the
solvers' interrupt hooks.  The HTTP layer cancels it when the client
disconnects; :meth:`Service.run_explain` cancels it when the request's
deadline (:attr:`ExplainJob.deadline`) passes.  A cancelled request gives its
method's slot and its place among ``max_pending`` back at once.
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from .._utils._values import _py
from ..constraints import Constraints, Requirements, Timeline
from ..constraints._costs import MEASURES
from ..constraints._kinds import CONSTRAINT_KINDS
from ..constraints._requirements import OWN_MEASURE
from ..constraints._timeline import MAX_HORIZON
from ..data import Dataset
from ..datasets import timeline as default_timeline
from ..exceptions import (
    ConstraintError,
    NotFittedError,
    UnsupportedConstraintError,
    ValidationError,
)
from ..methods import CounterfactualMethod, fit_robustness_copies, robustness_calls
from ..methods import default_method as registry_default
from ..methods import names as registered_methods
from ..methods._pipeline._prepare import check_n_counterfactuals
from ..models import desired_class, rows_to_explain
from ..models._adapter import as_adapter
from ..models._select import check_label
from ..models._votes import forest_of
from ..result._text import measure_words
from ..schema._format import format_value
from ..schema._numbers import MAX_INTEGER, finite_number, show_number
from ._meaning import resolve_class_names, status_meanings
from ._pool import MethodPool
from ._quota import Quotas
from ._render import jsonable, render
from ._request import ExplainJob, Limits, ServerBusy

__all__ = ["Service"]

logger = logging.getLogger("counterfact.serve")


class Service:
    """A model, its data and fitted methods, answering JSON requests.

    Parameters
    ----------
    data : Dataset
        The data the server describes (schema, domains) and takes example
        rows from.
    model : classifier
        The fitted model the methods were fitted on.
    methods : mapping of str to CounterfactualMethod
        Fitted methods by name; they are only read from now on.
    examples : DataFrame, optional
        Rows offered as examples; by default the rows of ``data`` the model
        does not assign to the favourable class (:func:`counterfact.rows_to_explain`).
    favourable : label, optional
        The class a person wants (default: the dataset's, when it says).
        It is the default ``target`` of ``explain``.
    limits : Limits, optional
        Request limits.
    default_method : str, optional
        Used when a request names none (default: the methods registry's
        choice among the loaded methods, :func:`counterfact.methods.default_method`).
    class_names : mapping, sequence or str, optional
        Readable names of the classes: one per class in the model's order
        (``["bad", "good"]``, ``"bad,good"``) or ``{class: name}``.  Default:
        the dataset's ``target_labels``, else the classes as written.
    robust_to : sequence of fitted models, optional
        Other fitted models (e.g. :func:`counterfact.models.retrained` copies)
        that a request asking for ``robust`` answers must also hold for.
    """

    def __init__(
        self,
        *,
        data: Dataset,
        model: Any,
        methods: Mapping[str, CounterfactualMethod],
        examples: pd.DataFrame | None = None,
        favourable: Any = None,
        limits: Limits | None = None,
        default_method: str | None = None,
        class_names: Mapping[Any, Any] | Sequence[Any] | str | None = None,
        robust_to: Sequence[Any] | None = None,
    ) -> None:
        if not isinstance(data, Dataset):
            raise ValidationError(f"data must be a counterfact Dataset. Got {type(data).__name__}.")
        if not methods:
            raise ValidationError("The server needs at least one fitted method.")
        self.data = data
        self.schema = data.schema
        self.model = as_adapter(model, self.schema)
        self.limits = limits or Limits()
        self._methods = _checked_methods(methods, self.schema)
        self._pools = {
            name: MethodPool(m, self.limits.method_concurrency, log=logger.warning)
            for name, m in self._methods.items()
        }
        self.quotas = Quotas(self.limits.requests_per_minute, self.limits.counterfactuals_per_hour)
        self.favourable = _favourable_class(self.model, favourable, data)
        labels = (getattr(data, "metadata", None) or {}).get("target_labels") or {}
        self._class_labels = resolve_class_names(list(self.model.classes_), class_names, labels)
        self.robust_to = _robust_models(robust_to, self.model, data)
        #: the measure of effort every answer's cost is given in, whatever the method: one
        #: scale for "compare all" (the default measure, its moves in MADs of the rows the
        #: methods learnt from, as ``result.cost()`` counts them; the first method's)
        self.measure = next(iter(self._methods.values())).effort_
        #: the dataset's default timeline (None: it has none), for a request without a horizon
        self.timeline = default_timeline(data)
        self.examples = self._example_rows(examples)
        self.default_method = self._choose_default_method(default_method)
        self._pending = 0
        self._pending_lock = threading.Lock()

    def _example_rows(self, examples: pd.DataFrame | None) -> pd.DataFrame:
        """The example rows, validated; by default those of the data the model does not
        assign to the favourable class (all of them when no class is known as favourable)."""
        if examples is None:
            examples = (
                rows_to_explain(
                    self.model.model, self.data.X, target=self.favourable, data=self.data
                )
                if self.favourable is not None
                else self.data.X
            )
        if not len(examples):
            return examples
        return self.schema.validate_frame(examples, what="examples")

    def _choose_default_method(self, name: str | None) -> str:
        """The method used when a request names none: ``name``, else the registry's choice."""
        if name is None:
            name = registry_default(self._methods)
        if name not in self._methods:
            raise ValidationError(
                f"default_method {name!r} is not among the methods {list(self._methods)}."
            )
        return name

    # ------------------------------------------------------------- describe
    @property
    def method_names(self) -> list[str]:
        """Names of the loaded methods."""
        return list(self._methods)

    def class_labels(self) -> dict[str, str]:
        """Readable names of the classes (``{"0": "bad", "1": "good"}``)."""
        return dict(self._class_labels)

    def schema_info(self) -> dict[str, Any]:
        """Features (kind, domain, actionability, resolution, description, unit), classes
        and the favourable one."""
        feats = []
        for f in self.schema:
            feats.append(
                {
                    "name": f.name,
                    "kind": f.kind,
                    "lower": f.lower,
                    "upper": f.upper,
                    "categories": None if f.categories is None else jsonable(list(f.categories)),
                    "actionability": f.actionability,
                    "resolution": f.resolution,
                    "description": f.description,
                    "unit": f.unit,
                }
            )
        model = self.model.model
        steps = getattr(model, "steps", None)
        return {
            "dataset": self.data.name,
            "model": type(steps[-1][1] if steps else model).__name__,
            "target": self.schema.target,
            "classes": jsonable(list(self.model.classes_)),
            "class_labels": self.class_labels(),
            "favourable": jsonable(self.favourable),
            "features": feats,
            "n_examples": len(self.examples),
            "robust_to": len(self.robust_to),
            "measure": str(measure_words(self.measure.costs)),
            "timeline": self._timeline_info(),
            "limits": {
                "max_rows": self.limits.max_rows,
                "max_body_bytes": self.limits.max_body_bytes,
                "max_counterfactuals": self.limits.max_counterfactuals,
                "max_time_limit": self.limits.max_time_limit,
                "default_time_limit": self.limits.default_time_limit,
                "requests_per_minute": self.limits.requests_per_minute,
                "counterfactuals_per_hour": self.limits.counterfactuals_per_hour,
            },
        }

    def methods_info(self) -> list[dict[str, Any]]:
        """Loaded methods: parameters and the constraint kinds each honours."""
        out = []
        for name, m in self._methods.items():
            doc = (type(m).__doc__ or "").strip().splitlines()
            out.append(
                {
                    "name": name,
                    "class_name": type(m).__name__,
                    "summary": doc[0] if doc else "",
                    "parameters": jsonable(m.get_params()),
                    "supported_constraints": sorted(m.supported_constraints),
                    "unsupported_constraints": sorted(
                        set(CONSTRAINT_KINDS) - set(m.supported_constraints)
                    ),
                    "certified": type(m).tags.proves_optimality,
                    "default": name == self.default_method,
                    "display_name": type(m).tags.display_name,
                    "proves_optimality": type(m).tags.proves_optimality,
                    "proves_infeasibility": type(m).tags.proves_infeasibility,
                    "meaning": self._meanings(m),
                }
            )
        return out

    def example(self, index: int = 0) -> dict[str, Any]:
        """Example row number ``index``, from 0 to ``total - 1`` (another index is a
        :class:`ValidationError` naming the range)."""
        n = len(self.examples)
        if n == 0:
            raise ValidationError(
                "There is no example row: the model assigns every row of the data to the "
                "favourable class."
            )
        k = int(index)
        if not 0 <= k < n:
            said = f"index={k}" if abs(k) < 10**12 else "index"
            raise ValidationError(
                f"{said} is out of range: there are {n} examples, numbered 0 to {n - 1}. "
                f"Ask for an index from 0 to {n - 1}."
            )
        row = self.examples.iloc[k]
        return {
            "index": k,
            "total": n,
            "id": jsonable(self.examples.index[k]),
            "row": {n_: jsonable(v) for n_, v in row.items()},
        }

    # -------------------------------------------------------------- inputs
    def rows_frame(self, rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
        """Validate JSON rows against the schema: known features, JSON types, domains."""
        if len(rows) == 0:
            raise ValidationError(
                "rows is empty: send at least one row (an object of feature: value)."
            )
        if len(rows) > self.limits.max_rows:
            raise ValidationError(
                f"{len(rows)} rows in one request; this server answers at most "
                f"{self.limits.max_rows} "
                "rows per request. Split the request."
            )
        names = self.schema.names
        for i, r in enumerate(rows):
            unknown = [k for k in r if k not in self.schema]
            if unknown:
                raise ValidationError(
                    f"rows[{i}] has unknown features {unknown}. Known features: {names}."
                )
            missing = [n for n in names if n not in r]
            if missing:
                raise ValidationError(
                    f"rows[{i}] lacks the features {missing}; every row needs all of {names}."
                )
            for f in self.schema:
                if f.is_numeric:
                    _check_number(r[f.name], f, f"rows[{i}]['{f.name}']")
        frame = pd.DataFrame([dict(r) for r in rows], columns=names)
        frame = self.schema.validate_frame(frame, what="rows")
        for f in self.schema:
            if not f.is_numeric:
                continue
            vals = frame[f.name].to_numpy(dtype=float)
            lo, hi = float(f.lower) - 1e-9, float(f.upper) + 1e-9  # type: ignore[arg-type]
            bad = np.flatnonzero((vals < lo) | (vals > hi))
            if bad.size:
                i = int(bad[0])
                raise ValidationError(
                    f"rows[{i}]['{f.name}'] = {_py(frame[f.name].iloc[i])!r} is outside the "
                    "feature's domain "
                    f"[{format_value(f, f.lower)}, {format_value(f, f.upper)}] (the range the "
                    "model was trained on). Send a value inside it."
                )
        frame.index = pd.RangeIndex(len(frame))
        return frame

    def constraints_from(self, spec: Mapping[str, Any] | None) -> Constraints | None:
        """A :class:`~counterfact.Constraints` from its JSON form, validated against the schema."""
        if not spec:
            return None
        d = {
            k: v
            for k, v in spec.items()
            if v is not None and (k == "features_to_vary" or v not in ([], {}))
        }
        if not d:
            return None
        c = Constraints.from_dict(d)
        c.resolve(self.schema)
        if c.max_changes is not None and c.max_changes > len(self.schema):
            raise ConstraintError(
                f"constraints.max_changes={c.max_changes} exceeds the number of features "
                f"({len(self.schema)}); "
                "pass at most that many, or leave it out for no cap."
            )
        return c

    def _check_ranges(self, c: Constraints) -> None:
        """A range wholly outside its feature's domain is refused, as a row's value
        outside it is: the server answers only inside the range the model was trained on
        (a range that overlaps the domain is cut to it, as in the Python API)."""
        for name, (lo, hi) in c.ranges.items():
            f = self.schema[name]
            if not f.is_numeric:
                continue
            low, high = float(f.lower), float(f.upper)  # type: ignore[arg-type]
            if (lo is not None and lo > high + 1e-9) or (hi is not None and hi < low - 1e-9):
                raise ValidationError(
                    f"constraints.ranges['{name}'] = [{_py(lo)}, {_py(hi)}] lies outside the "
                    f"feature's domain [{format_value(f, f.lower)}, {format_value(f, f.upper)}] "
                    "(the range the model was trained on). Send a range that overlaps it."
                )

    def _timeline_info(self) -> dict[str, Any] | None:
        """The dataset's default timeline for the page: its horizon, the horizons offered
        (0: answers today) and the features only time moves; None without one."""
        if self.timeline is None:
            return None
        moved = list(self.timeline.moved_by_time(self.schema))
        offered = sorted({0, 6, 12, 24, self.timeline.horizon})
        return {"horizon": self.timeline.horizon, "horizons": offered, "time_features": moved}

    def _timed(
        self, c: Constraints | None, m: CounterfactualMethod, horizon: Any
    ) -> Constraints | None:
        """The request's constraints with the timeline of ``horizon``: the dataset's default
        timeline with that horizon (the horizon alone for a dataset without one); 0: none,
        answers today.  Not given: the default timeline, for a method that honours one and
        a request that states no timeline of its own.  A request with a timeline of its own
        and a ``horizon``: that timeline with that horizon, nothing else added (as the
        command line's ``--horizon`` does with a timeline in a constraints file)."""
        own = c is not None and c.timeline is not None
        if horizon is None:
            if self.timeline is None or own or "timeline" not in m.supported_constraints:
                return c
            timeline = self.timeline
        else:
            horizon = _checked_horizon(horizon)
            if c is not None and c.timeline is not None:
                return replace(c, timeline=c.timeline.with_horizon(horizon))
            if horizon == 0:
                return c
            timeline = (
                Timeline(horizon) if self.timeline is None else self.timeline.with_horizon(horizon)
            )
        return (c or Constraints()).merge(Constraints(timeline=timeline))

    def _method(self, name: str) -> CounterfactualMethod:
        if name not in self._methods:
            known = self.method_names
            if name in registered_methods():
                raise ValidationError(
                    f"Method {name!r} is not loaded on this server; it offers {known}. "
                    f"Start the server with --methods {','.join([*known, name])} to add it."
                )
            raise ValidationError(f"Unknown method {name!r}. This server offers {known}.")
        return self._methods[name]

    def prepare_explain(
        self,
        *,
        rows: Sequence[Mapping[str, Any]],
        method: str | None = None,
        n_counterfactuals: int = 1,
        target: Any = None,
        constraints: Mapping[str, Any] | None = None,
        time_limit: float | None = None,
        min_probability: float | None = None,
        min_vote_share: float | None = None,
        regions: bool = False,
        robust: bool = False,
        reasons: bool = False,
        measure: str | None = None,
        robustness: float | None = None,
        horizon: Any = None,
    ) -> ExplainJob:
        """Validate an explain request (fast; raises on anything invalid).

        ``min_probability``: the least probability of the target every answer must
        reach; ``min_vote_share``: the least share of the trees' votes every answer gets
        (a forest's server only); ``regions``: add each answer's certified region;
        ``robust``: answers must also hold for the server's retrained models (``robust_to``);
        ``reasons``: add each answer's reasons for a notice; ``robustness``: the share of
        retrained models that should still accept each answer; ``horizon``: the months an
        answer may take (:meth:`_timed`).
        """
        extra = self._requirements(min_probability, regions, robust, reasons)
        extra["min_vote_share"] = self._vote_share(min_vote_share)
        robustness = self._robustness(robustness, robust)
        _check_measure(measure)
        asked = Requirements(
            costs=measure,
            robustness=robustness,
            robust_to=extra["robust_to"],
            min_vote_share=extra["min_vote_share"],
            min_probability=extra["min_probability"],
        )
        extra["measure"], extra["robustness"] = measure, robustness
        name = method or self.default_method
        m = self._method(name)
        extra["calls"] = robustness_calls(m, asked)
        self._check_n_counterfactuals(n_counterfactuals)
        seconds = self._time_limit(time_limit)
        frame = self.rows_frame(rows)
        c = self._timed(self.constraints_from(constraints), m, horizon)
        if c is not None:
            self._check_constraints_for(m, c, frame)
            self._check_ranges(c)
        if target is None:
            target = self.favourable
        if target is not None:
            self._check_target(target)
        return ExplainJob(frame, name, c, target, int(n_counterfactuals), seconds, **extra)

    def _check_n_counterfactuals(self, n_counterfactuals: Any) -> None:
        """``n_counterfactuals`` is an int >= 1 within this server's limit."""
        check_n_counterfactuals(n_counterfactuals)
        if n_counterfactuals > self.limits.max_counterfactuals:
            raise ValidationError(
                f"n_counterfactuals={n_counterfactuals} exceeds this server's limit of "
                f"{self.limits.max_counterfactuals} per row."
            )

    def _time_limit(self, time_limit: Any) -> float:
        """The checked time limit per row in seconds (None: the server's default)."""
        if time_limit is None:
            time_limit = self.limits.default_time_limit
        hint = "Send a number of seconds > 0, or null for the default."
        seconds = finite_number(time_limit, "time_limit", hint=hint)
        if seconds <= 0:
            raise ValidationError(
                f"time_limit must be a number of seconds > 0. Got {show_number(time_limit)}. {hint}"
            )
        if seconds > self.limits.max_time_limit:
            raise ValidationError(
                f"time_limit={show_number(time_limit)} s exceeds this server's cap of "
                f"{self.limits.max_time_limit:g} s per row. Ask for less."
            )
        return seconds

    def _check_constraints_for(
        self, m: CounterfactualMethod, c: Constraints, frame: pd.DataFrame
    ) -> None:
        """Method ``m`` honours every kind of ``c``, and ``c`` admits every row of ``frame``."""
        unsupported = sorted(c.kinds() - set(m.supported_constraints))
        if unsupported:
            raise UnsupportedConstraintError(
                f"{type(m).__name__} cannot honour constraints of kind {unsupported}. It supports "
                f"{sorted(m.supported_constraints)}; use a method that supports them or drop "
                "them."
            )
        resolved = c.resolve(self.schema)
        for i, (_, x) in enumerate(frame.iterrows()):
            try:
                resolved.for_query(x)
            except ConstraintError as exc:
                raise ConstraintError(f"rows[{i}]: {exc}") from None

    def _requirements(
        self, min_probability: Any, regions: Any, robust: Any, reasons: Any
    ) -> dict[str, Any]:
        """The checked ``min_probability``, ``regions``, ``robust_to`` and ``reasons`` of a
        request."""
        for name, flag in (("regions", regions), ("robust", robust), ("reasons", reasons)):
            if not isinstance(flag, bool):
                raise ValidationError(f"{name} must be true or false. Got {flag!r}.")
        p = _fraction(
            min_probability,
            "min_probability",
            "the least probability of the target an answer must reach",
            "Send a probability strictly between 0 and 1 (0.6 for 60 %), or null for none.",
        )
        if robust and not self.robust_to:
            raise ValidationError(
                "robust: this server has no retrained models to check answers against; start it "
                "with "
                "--robust-to N (N retrained copies of the model), or send robust=false."
            )
        return {
            "min_probability": p,
            "regions": regions,
            "robust_to": self.robust_to if robust else (),
            "reasons": reasons,
        }

    def _vote_share(self, value: Any) -> float | None:
        """The checked ``min_vote_share`` of a request: a JSON number in (0, 1], asked of a
        server whose model is a forest."""
        share = _fraction(
            value,
            "min_vote_share",
            "the least share of the trees' votes an answer must get",
            "Send a share in (0, 1] (0.6 for 60 % of the trees), or null for none.",
            one_allowed=True,
        )
        if share is not None:
            instead = "Send min_probability (a margin on the probability) instead" + (
                ", or robust: true for this server's retrained models." if self.robust_to else "."
            )
            forest_of(self.model, "this server's model", instead=instead)
        return share

    def _robustness(self, value: Any, robust: bool) -> float | None:
        """The checked ``robustness`` of a request: a JSON number strictly between 0 and 1,
        not beside ``robust`` (it retrains copies of its own)."""
        p = _fraction(
            value,
            "robustness",
            "the share of retrained models that should still accept each answer",
            "Send a share strictly between 0 and 1 (0.95 for 95 %), or null for none.",
        )
        if p is not None and robust:
            raise ValidationError(
                "robustness retrains copies of the model of its own (some enter the search, "
                "the others estimate the share), so it cannot be combined with robust: true. "
                "Send robust: false to keep robustness, or drop robustness."
            )
        return p

    def _check_target(self, target: Any) -> None:
        """``target`` is one of the model's classes (a boolean only when the classes are
        booleans)."""
        classes = [_py(c) for c in self.model.classes_]
        check_label(self.model.classes_, target)
        try:
            known = (
                any(type(target) is type(c) and target == c for c in classes) or target in classes
            )
        except (TypeError, OverflowError):
            known = False
        if not known:
            raise ValidationError(
                f"target {show_number(target)} is not a class of the model; its classes are "
                f"{classes}. "
                "Send one of them (or null for the favourable class)."
            )

    # ------------------------------------------------------------- running
    def acquire(self) -> None:
        """Admit one explanation; :class:`ServerBusy` when ``max_pending`` are in flight.

        Pair with :meth:`release` once the explanation has finished.
        """
        with self._pending_lock:
            if self._pending >= self.limits.max_pending:
                raise ServerBusy(
                    f"{self._pending} explanations are already running or waiting (limit "
                    f"{self.limits.max_pending}); retry in a few seconds."
                )
            self._pending += 1

    def release(self) -> None:
        """One admitted explanation has finished."""
        with self._pending_lock:
            self._pending = max(0, self._pending - 1)

    @property
    def pending(self) -> int:
        """Explanations admitted and not finished."""
        return self._pending

    def run_explain(self, job: ExplainJob) -> dict[str, Any]:
        """Explain (CPU-bound: call from a worker thread) and render the answer.

        Waits for a free instance of the method (:class:`~._pool.Cancelled` if
        ``job.cancel`` is set meanwhile), then explains with ``job.cancel``; once
        started, the job is cancelled when :attr:`ExplainJob.deadline` passes,
        and a cancellation gives the method's slot back at once.
        """
        lease = self._pools[job.method].checkout(job.cancel)  # a cancellation gives its slot back
        # once per instance, before the clock starts: a row's searches, not the retraining,
        # are what the deadline is sized for
        fit_robustness_copies(lease.instance, job.requirements())
        timer = threading.Timer(job.deadline, job.cancel.cancel)
        timer.daemon = True
        timer.start()
        try:
            result, elapsed = self._explain_on(lease.instance, job)
        finally:
            timer.cancel()
            lease.finish()
        return render(
            result,
            job,
            elapsed,
            schema=self.schema,
            model=self.model,
            class_labels=self.class_labels(),
            decision=self.decision,
            meanings=self._meanings(self._methods[job.method]),
            measure=self.measure,
        )

    def _meanings(self, method: CounterfactualMethod) -> dict[str, str]:
        """Per status, what an answer of ``method`` means, naming the page's measure."""
        return status_meanings(type(method).tags, measure_words(self.measure.costs).lesser)

    @staticmethod
    def _explain_on(instance: CounterfactualMethod, job: ExplainJob) -> tuple[Any, float]:
        m = copy.copy(instance)
        if "time_limit" in m._param_names():
            m.time_limit = job.time_limit  # type: ignore[attr-defined]
        start = time.perf_counter()
        result = m.explain(
            job.frame,
            n_counterfactuals=job.n_counterfactuals,
            constraints=job.constraints,
            target=job.target,
            cancel=job.cancel,
            requirements=job.requirements(),
        )
        return result, time.perf_counter() - start

    def warm_up(self, method: str, row: Mapping[str, Any]) -> None:
        """Explain ``row`` once on the fitted method itself, before serving, so that work it
        defers to its first explanation is done (and copied into every instance)."""
        job = self.prepare_explain(rows=[row], method=method)
        self._explain_on(self._methods[method], job)

    def explain(self, **request: Any) -> dict[str, Any]:
        """Validate and run in the calling thread (for scripts and tests)."""
        return self.run_explain(self.prepare_explain(**request))

    def predict(self, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Decision and class probabilities per row."""
        frame = self.rows_frame(rows)
        preds, proba = self.model.predict_with_proba(frame)
        return {
            "classes": jsonable(list(self.model.classes_)),
            "favourable": jsonable(self.favourable),
            "predictions": [
                self.decision(preds[i], proba[i]) | {"row": i} for i in range(len(frame))
            ],
        }

    def decision(self, pred: Any, proba: np.ndarray) -> dict[str, Any]:
        """The decision for one row: class, its label, probabilities."""
        classes = [_py(c) for c in self.model.classes_]
        labels = self.class_labels()
        fav = None if self.favourable is None else float(proba[classes.index(self.favourable)])
        return {
            "prediction": jsonable(pred),
            "label": labels.get(str(_py(pred)), str(_py(pred))),
            "probabilities": {str(c): float(p) for c, p in zip(classes, proba, strict=True)},
            "probability_favourable": fav,
        }


def _checked_methods(
    methods: Mapping[str, CounterfactualMethod], schema: Any
) -> dict[str, CounterfactualMethod]:
    """The methods by name, each a fitted counterfact method fitted on ``schema``'s columns."""
    out: dict[str, CounterfactualMethod] = {}
    for name, m in methods.items():
        if not isinstance(m, CounterfactualMethod):
            raise ValidationError(
                f"methods[{name!r}] is not a counterfact method. Got {type(m).__name__}."
            )
        if not getattr(m, "fitted_", False):
            raise NotFittedError(f"methods[{name!r}] is not fitted; call fit(model, data) first.")
        if m.schema_.names != schema.names:
            raise ValidationError(
                f"methods[{name!r}] was fitted on the columns {m.schema_.names}, not on the "
                f"server's data {schema.names}."
            )
        out[name] = m
    return out


def _favourable_class(model: Any, favourable: Any, data: Dataset) -> Any:
    """The favourable class: ``favourable``, else the dataset's; None when several classes
    and none is known as favourable (requests then name their target)."""
    classes = [_py(c) for c in model.classes_]
    try:
        fav = desired_class(model.model, target=favourable, data=data)
    except ValidationError:
        if favourable is not None:
            raise
        fav = None
    return _py(fav) if _py(fav) in classes else None


def _robust_models(models: Sequence[Any] | None, model: Any, data: Dataset) -> tuple[Any, ...]:
    """The retrained models answers may be asked to hold for, checked against the served model."""
    if models is None:
        return ()
    if isinstance(models, (str, bytes)) or not isinstance(models, Sequence):
        raise ValidationError(
            f"robust_to must be a list of fitted models. Got {type(models).__name__}."
        )
    out = []
    for k, other in enumerate(models):
        adapter = as_adapter(other, data.schema)
        if [_py(c) for c in adapter.classes_] != [_py(c) for c in model.classes_]:
            raise ValidationError(
                f"robust_to[{k}] has classes {list(adapter.classes_)}; the served model has "
                f"{list(model.classes_)}."
            )
        out.append(other)
    return tuple(out)


def _check_number(v: Any, f: Any, where: str) -> None:
    """A JSON value of a numeric feature: a finite number (not a boolean); for an
    integer feature a whole number of magnitude at most 2**53."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValidationError(f"{where} is {f.kind}: send a JSON number. Got {v!r}.")
    num = finite_number(v, where)
    if f.kind == "integer":
        if not float(num).is_integer():
            raise ValidationError(
                f"{where} is integer, but {show_number(v)} is fractional: send a whole number."
            )
        if abs(num) > MAX_INTEGER:
            raise ValidationError(
                f"{where} = {show_number(v)} is beyond what an integer feature holds (at most "
                "2**53 = "
                f"{MAX_INTEGER} in magnitude); the feature's domain is "
                f"[{format_value(f, f.lower)}, "
                f"{format_value(f, f.upper)}]."
            )


def _fraction(
    value: Any, name: str, what: str, hint: str, *, one_allowed: bool = False
) -> float | None:
    """``value`` of request field ``name`` checked as a finite JSON number strictly between
    0 and 1 (up to 1 itself when ``one_allowed``); None stays None. ``what`` says what the
    number means, ``hint`` what to send instead."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValidationError(f"{name} must be a JSON number. Got {value!r}. {hint}")
    x = finite_number(value, name, hint=hint)
    if not (0.0 < x <= 1.0 if one_allowed else 0.0 < x < 1.0):
        interval = "in (0, 1]" if one_allowed else "strictly between 0 and 1"
        raise ValidationError(
            f"{name} must be {interval} ({what}). Got {show_number(value)}. {hint}"
        )
    return x


def _check_measure(measure: Any) -> None:
    """The request's ``measure``: null, a named measure, or the methods' own objective."""
    if measure is None or (
        isinstance(measure, str) and (measure in MEASURES or measure == OWN_MEASURE)
    ):
        return
    raise ValidationError(
        f"measure must be one of {sorted(MEASURES)} or {OWN_MEASURE!r} (each method's own "
        f"objective, as in its paper), or null for the measure of effort. Got {measure!r}."
    )


def _checked_horizon(horizon: Any) -> int:
    """A request's ``horizon``: a whole number of months from 0 to :data:`MAX_HORIZON`."""
    if isinstance(horizon, bool) or not isinstance(horizon, int) or not 0 <= horizon <= MAX_HORIZON:
        raise ValidationError(
            f"horizon must be a whole number of months from 0 to {MAX_HORIZON} (0: "
            "answers today), or null for the dataset's default timeline."
        )
    return horizon
