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
from ..models import rows_to_explain
from ..models._adapter import as_adapter
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
    todo = _methods_to_fit(names)
    fitted: dict[str, Any] = {}
    for name in todo:
        start = time.perf_counter()
        try:
            fitted[name] = _fit_one(name, model, train, random_state, (params or {}).get(name), say)
        except (MissingDependencyError, UnsupportedModelError) as exc:
            if explicit:
                raise
            say(f"skipping {name}: {exc}")
            continue
        say(f"fitted {name} in {time.perf_counter() - start:.1f} s")
    if not fitted:
        raise ValidationError(
            "No method could be fitted for this model; install the extras or pass --methods."
        )
    return fitted


def _methods_to_fit(names: Sequence[str] | None) -> list[str]:
    """The methods named (each checked to exist), else every registered method."""
    if names is None:
        return methods.names()
    todo = list(names)
    unknown = [n for n in todo if n not in methods.names(peers=True)]
    if unknown:
        raise ValidationError(f"Unknown methods {unknown}. Available methods: {methods.names()}.")
    if not todo:
        raise ValidationError("--methods is empty: name at least one method.")
    return todo


def _fit_one(
    name: str,
    model: Any,
    train: Dataset,
    random_state: int | None,
    params: Mapping[str, Any] | None,
    say: Callable[[str], None],
) -> Any:
    """Method ``name`` built with ``params`` (and the seed and verbosity it accepts) and fitted.

    Its own progress (L2C's training bar) shows only with ``serve -v`` (the logger at
    DEBUG), and only while it is fitted, not on every request.
    """
    extra = dict(params or {})
    cls: Any = methods.get_class(name)
    accepted = cls._param_names()
    shown = 1 if logger.isEnabledFor(logging.DEBUG) else 0
    kw = {k: v for k, v in (("random_state", random_state), ("verbose", shown)) if k in accepted}
    m = cls(**{**kw, **extra})
    say(f"fitting {name} ...")
    m.fit(model, train)
    if "verbose" in m._param_names() and "verbose" not in extra:
        m.verbose = 0
    return m


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
        A model kind for :func:`counterfact.models.fit`, fitted on a training split (examples are
        the held-out rows), or a fitted model (methods learn from all of ``data``).
    methods, method_params : sequence of str, mapping, optional
        Method names (default: every usable installed method), and extra constructor
        parameters per method.
    random_state, test_size : int, float
        Seed of the split, the model and the methods; held-out fraction when the model
        is fitted here.
    limits, log : Limits, callable, optional
        Request limits; where progress lines go.
    warm_up : bool
        Explain one example row with each method before serving, so that work a method
        defers to its first explanation is not paid by the first user.
    class_names : mapping, sequence or str, optional
        Readable names of the classes (see :class:`Service`), checked before any method
        is fitted.
    robust_to : int
        Refit this many copies of the model on bootstrap resamples of the training data
        (:func:`counterfact.models.retrained`); answers to ``robust`` requests hold for all.
    """
    say = log or logger.info
    data, fitted_model, train, pool = _model_and_rows(data, model, test_size, random_state, say)
    _check_robust_to(robust_to)
    labels = _class_labels(fitted_model, data, class_names)
    fitted = fit_methods(
        fitted_model, train, methods, random_state=random_state, params=method_params, log=say
    )
    service = Service(
        data=data,
        model=fitted_model,
        methods=fitted,
        limits=limits,
        class_names=labels,
        robust_to=_retrained(fitted_model, train, robust_to, random_state, say),
        examples=_examples(fitted_model, pool, data),
    )
    if warm_up:
        _warm_up(service, say)
    return service


def _model_and_rows(
    data: Dataset | str,
    model: Any,
    test_size: float,
    random_state: int,
    say: Callable[[str], None],
) -> tuple[Dataset, Any, Dataset, Dataset]:
    """The data (a bundled dataset loaded by name), the fitted model, the rows the
    methods learn from and the rows examples come from.

    A model kind is fitted on a training split (examples: the held-out rows); a fitted
    model is used as it is (methods learn from all of ``data``, examples too).
    """
    if isinstance(data, str):
        data = datasets.load(data)
    if not isinstance(model, str):
        return data, model, data, data
    train, test = data.split(test_size=test_size, random_state=random_state)
    say(f"fitting model '{model}' on {len(train)} rows of {data.name} ...")
    return data, models.fit(train, model, random_state=random_state), train, test


def _check_robust_to(robust_to: Any) -> None:
    """``robust_to`` is a number of retrained copies: an int >= 0 (not a boolean)."""
    if isinstance(robust_to, bool) or not isinstance(robust_to, int) or robust_to < 0:
        raise ValidationError(
            f"robust_to must be an int >= 0 (retrained copies of the model). Got {robust_to!r}."
        )


def _class_labels(model: Any, data: Dataset, class_names: Any) -> dict[str, str]:
    """The readable names of the model's classes (an invalid ``class_names`` fails here)."""
    return resolve_class_names(
        list(as_adapter(model, data.schema).classes_),
        class_names,
        data.metadata.get("target_labels") or {},
    )


def _retrained(
    model: Any, train: Dataset, robust_to: int, random_state: int, say: Callable[[str], None]
) -> list[Any]:
    """``robust_to`` copies of ``model`` refitted on bootstrap resamples of ``train``."""
    if not robust_to:
        return []
    start = time.perf_counter()
    others = models.retrained(model, train, n=robust_to, random_state=random_state)
    say(f"retrained {robust_to} copies of the model in {time.perf_counter() - start:.1f} s")
    return others  # type: ignore[no-any-return]


def _examples(model: Any, pool: Dataset, data: Dataset) -> Any:
    """The rows of ``pool`` offered as examples: those not assigned the favourable class."""
    try:
        return rows_to_explain(model, pool.X, data=data)
    except ValidationError:  # several classes, none favourable: every row is an example
        return pool.X


def _warm_up(service: Service, say: Callable[[str], None]) -> None:
    """Explain the first example row with each method (a failure is logged, not raised)."""
    if not len(service.examples):
        return
    row = service.example(0)["row"]
    for name in service.method_names:
        start = time.perf_counter()
        try:
            service.warm_up(name, row)
        except CounterfactError as exc:
            say(f"warm-up of {name} failed: {exc}")
            continue
        say(f"warmed up {name} in {time.perf_counter() - start:.1f} s")
