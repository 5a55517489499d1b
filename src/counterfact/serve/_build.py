"""Building a :class:`Service` from a dataset, a model and method names (start-up work)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .. import datasets, methods, models
from ..data import Dataset
from ..exceptions import (
    CounterfactError,
    MissingDependencyError,
    UnsupportedModelError,
    ValidationError,
)
from ..models import as_adapter, rows_to_explain
from ._meaning import resolve_class_names
from ._request import Limits
from ._service import Service

__all__ = ["build_service", "fit_methods"]

logger = logging.getLogger("counterfact.serve")


def fit_methods(
    model: Any,
    train: Dataset,
    names: Sequence[str] | None = None,
    *,
    random_state: int | None = 0,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Fit methods once, before serving.

    Parameters
    ----------
    model : classifier
        The fitted model.
    train : Dataset
        Data the methods learn from.
    names : sequence of str, optional
        Method names.  ``None``: every registered method whose optional
        dependencies are installed and that supports the model; those that
        cannot be used are skipped with a log line.  Named methods that fail
        raise instead.
    random_state : int, optional
        Seed passed to each method.
    params : mapping, optional
        Extra constructor parameters per method name.
    log : callable, optional
        Where progress lines go (default: the ``counterfact.serve`` logger).
    """
    say = log or logger.info
    explicit = names is not None
    todo = list(names) if names is not None else methods.names()
    if explicit:
        unknown = [n for n in todo if n not in methods.names(peers=True)]
        if unknown:
            raise ValidationError(
                f"Unknown methods {unknown}. Available methods: {methods.names()}."
            )
        if not todo:
            raise ValidationError("--methods is empty: name at least one method.")
    fitted: dict[str, Any] = {}
    for name in todo:
        start = time.perf_counter()
        extra = dict((params or {}).get(name, {}))
        try:
            cls: Any = methods.get_class(name)
            accepted = cls._param_names()
            # a method's own progress (L2C's training bar) only with `serve -v` (the logger at DEBUG)
            shown = 1 if logger.isEnabledFor(logging.DEBUG) else 0
            kw = {
                k: v
                for k, v in (("random_state", random_state), ("verbose", shown))
                if k in accepted
            }
            m = cls(**{**kw, **extra})
            say(f"fitting {name} ...")
            m.fit(model, train)
        except (MissingDependencyError, UnsupportedModelError) as exc:
            if explicit:
                raise
            say(f"skipping {name}: {exc}")
            continue
        if "verbose" in m._param_names() and "verbose" not in extra:
            m.verbose = 0  # progress while fitting only, not on every request
        fitted[name] = m
        say(f"fitted {name} in {time.perf_counter() - start:.1f} s")
    if not fitted:
        raise ValidationError(
            "No method could be fitted for this model; install the extras or pass --methods."
        )
    return fitted


def build_service(
    data: Dataset | str = "german_credit",
    *,
    model: Any = "lr",
    methods: Sequence[str] | None = None,
    random_state: int = 0,
    test_size: float = 0.2,
    limits: Limits | None = None,
    method_params: Mapping[str, Mapping[str, Any]] | None = None,
    log: Callable[[str], None] | None = None,
    warm_up: bool = True,
    class_names: Mapping[Any, Any] | Sequence[Any] | str | None = None,
    robust_to: int = 0,
) -> Service:
    """Load data, fit the model (when given a kind) and the methods, and wrap them.

    Parameters
    ----------
    data : Dataset or str
        A dataset or the name of a bundled one.
    model : str or classifier
        A model kind for :func:`counterfact.models.fit` (fitted on a training
        split; examples come from the held-out rows), or an already fitted
        model (methods then learn from all of ``data``).
    methods : sequence of str, optional
        Method names (default: every usable installed method).
    random_state : int
        Seed of the split, the model and the methods.
    test_size : float
        Held-out fraction when the model is fitted here.
    limits : Limits, optional
        Request limits.
    method_params : mapping, optional
        Extra constructor parameters per method.
    log : callable, optional
        Where progress lines go.
    warm_up : bool
        Explain one example row with each method before serving, so that work
        a method defers to its first explanation is not paid by the first user.
    class_names : mapping, sequence or str, optional
        Readable names of the classes (see :class:`Service`), checked before
        anything is fitted.
    robust_to : int
        Refit this many copies of the model on bootstrap resamples of the
        training data (:func:`counterfact.models.retrained`), so that a request
        may ask for answers that hold for all of them (``robust``).
    """
    say = log or logger.info
    if isinstance(data, str):
        data = datasets.load(data)
    if isinstance(model, str):
        train, test = data.split(test_size=test_size, random_state=random_state)
        say(f"fitting model '{model}' on {len(train)} rows of {data.name} ...")
        fitted_model = models.fit(train, model, random_state=random_state)
        pool = test
    else:
        fitted_model, train, pool = model, data, data
    if isinstance(robust_to, bool) or not isinstance(robust_to, int) or robust_to < 0:
        raise ValidationError(
            f"robust_to must be an int >= 0 (retrained copies of the model). Got {robust_to!r}."
        )
    labels = resolve_class_names(
        list(as_adapter(fitted_model, data.schema).classes_),
        class_names,
        data.metadata.get("target_labels") or {},
    )
    fitted = fit_methods(
        fitted_model, train, methods, random_state=random_state, params=method_params, log=say
    )
    others: list[Any] = []
    if robust_to:
        start = time.perf_counter()
        others = models.retrained(fitted_model, train, n=robust_to, random_state=random_state)
        say(f"retrained {robust_to} copies of the model in {time.perf_counter() - start:.1f} s")
    try:
        examples = rows_to_explain(fitted_model, pool.X, data=data)
    except ValidationError:  # several classes, none favourable: every row is an example
        examples = pool.X
    service = Service(
        data=data,
        model=fitted_model,
        methods=fitted,
        examples=examples,
        limits=limits,
        class_names=labels,
        robust_to=others,
    )
    if warm_up and len(service.examples):
        row = service.example(0)["row"]
        for name in service.method_names:
            start = time.perf_counter()
            try:
                service.warm_up(name, row)
            except CounterfactError as exc:
                say(f"warm-up of {name} failed: {exc}")
                continue
            say(f"warmed up {name} in {time.perf_counter() - start:.1f} s")
    return service
