"""The subcommands: datasets, explain, demo, benchmark, report.

Each only parses its options and calls the public API; user errors are raised
as :class:`~counterfact.exceptions.CounterfactError` and turned into one
``counterfact: error: ...`` line by :func:`counterfact.cli.main`.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from .. import benchmark, constraints, datasets, methods, models, report
from .._utils._progress import should_show
from .._utils._values import _py
from ..benchmark._runner import _cells, mixed_runs
from ..constraints import Requirements
from ..constraints._timeline import MAX_HORIZON
from ..data._loading import load_csv, read_csv
from ..exceptions import CounterfactError, ValidationError
from ..models import desired_class, rows_to_explain
from ..models._loading import load_model_file
from ..models._votes import forest_of
from ._args import (
    check_writable,
    class_names,
    joined,
    parse_rows,
    parse_value,
    read_constraints_file,
    settle_method,
    units,
)
from ._options import ROBUSTNESS_TIME_LIMIT
from ._output import emit, info, stdout_to_stderr

__all__ = [
    "bound_robustness",
    "cmd_benchmark",
    "cmd_datasets",
    "cmd_demo",
    "cmd_explain",
    "cmd_report",
    "requirements_from_args",
    "with_horizon",
]

#: rows explained when --rows is not given
DEFAULT_ROWS = 5


def cmd_datasets(args: argparse.Namespace) -> int:
    """``counterfact datasets [NAME]``."""
    if args.name:
        d = datasets.info(args.name)
        for k, v in d.items():
            print(f"{k}: {v}")
        if d.get("bundled", True) or args.load:
            data = datasets.load(args.name)
            print()
            print(data.schema.describe().to_string())
        return 0
    rows = []
    for name in datasets.names():
        d = datasets.info(name)
        rows.append(
            {
                "name": name,
                "bundled": d.get("bundled"),
                "rows": d.get("n_rows"),
                "description": _shortened(str(d.get("description", ""))),
            }
        )
    print(pd.DataFrame(rows).to_string(index=False))
    return 0


def _shortened(text: str, width: int = 60) -> str:
    """``text`` cut to ``width`` characters, with "..." where it was cut."""
    return text if len(text) <= width else text[: width - 3].rstrip() + "..."


# ------------------------------------------------------------------- explain
def _queries_frame(path: str, data: Any) -> pd.DataFrame:
    frame = read_csv(path, what="--queries")
    frame = frame.drop(columns=[data.target], errors="ignore")
    try:
        data.schema.validate_frame(frame, what=f"--queries {path!r}")
    except CounterfactError as exc:
        raise ValidationError(
            f"{exc} The rows must have the training data's feature columns."
        ) from None
    return frame


def _with_units(args: argparse.Namespace, data: Any) -> Any:
    """``data`` with the units of --units (each checked against its schema)."""
    given = units(getattr(args, "units", None))
    if not given:
        return data
    try:
        return data.with_schema(data.schema.with_units(**given))
    except CounterfactError as exc:
        raise ValidationError(f"--units {args.units!r}: {exc}") from None


def _data_and_pool(args: argparse.Namespace) -> tuple[Any, Any, pd.DataFrame, str]:
    """(all data, training data, rows to choose from, what the row positions index)."""
    if args.data:
        data = _with_units(args, load_csv(args.data, target=args.target, what="--data"))
        info(
            args,
            f"{args.data}: {len(data)} rows, {len(data.schema)} features, target {data.target!r}",
        )
        train = data
        pool, what = data.X, f"--data {args.data!r}"
    else:
        if args.target:
            raise ValidationError(
                "--target names the target column of --data; a bundled --dataset has its own."
            )
        data = _with_units(args, datasets.load(args.dataset))
        if args.queries:
            train = data
            pool, what = data.X, "the dataset"
        else:
            if not 0 < args.test_size < 1:
                raise ValidationError(f"--test-size must be between 0 and 1. Got {args.test_size}.")
            train, test = data.split(test_size=args.test_size, random_state=args.seed)
            pool, what = test.X, "the test split (--test-size, --seed)"
    if args.queries:
        pool, what = _queries_frame(args.queries, data), f"--queries {args.queries!r}"
    return data, train, pool, what


def _model(args: argparse.Namespace, train: Any) -> Any:
    """The model of --model-file, or of --model fitted on ``train``; one that a
    --min-vote-share cannot apply to is refused here, before any method or copy is fitted."""
    model = _loaded_or_fitted(args, train)
    if getattr(args, "min_vote_share", None) is not None:
        owner = f"--model-file {args.model_file!r}" if args.model_file else f"--model {args.model}"
        instead = "Use --robustness, --min-probability or --robust-to for other models."
        forest_of(model, owner, asked="--min-vote-share", instead=instead)
    return model


def _loaded_or_fitted(args: argparse.Namespace, train: Any) -> Any:
    if args.model_file:
        model = load_model_file(
            args.model_file, allow_unsafe=args.allow_unsafe_model_load, data=train
        )
        info(args, f"model: {type(model).__name__} from {args.model_file}")
        return model
    values = pd.unique(train.y)
    if len(values) < 2:
        source = f"--data {args.data!r}" if getattr(args, "data", None) else "the training data"
        raise ValidationError(
            f"{source}: the target column {train.target!r} holds a single class "
            f"({_py(values[0])!r}), so no model can learn a decision to flip. Use data with at "
            "least two classes."
        )
    t0 = time.perf_counter()
    model = models.fit(train, args.model, random_state=args.seed)
    info(
        args,
        f"fitted a '{args.model}' model on {len(train)} rows in {time.perf_counter() - t0:.1f} s",
    )
    return model


def model_classes(model: Any) -> list[Any]:
    """The model's classes as Python values."""
    return [c.item() if hasattr(c, "item") else c for c in getattr(model, "classes_", [])]


def class_labels(args: argparse.Namespace, data: Any, classes: list[Any]) -> dict[Any, str]:
    """The classes' names: the dataset's, with those of --class-names instead (each of
    which must name a class of the model)."""
    given = class_names(getattr(args, "class_names", None))
    unknown = [k for k in given if not any(k == c or str(k) == str(c) for c in classes)]
    if unknown:
        raise ValidationError(
            f"--class-names {joined(args.class_names)!r} names {unknown}, not a class of the "
            f"model; its classes are {classes}."
        )
    return {**dict(data.metadata.get("target_labels") or {}), **given}


def target_class(
    args: argparse.Namespace, classes: list[Any], labels: dict[Any, str] | None = None
) -> Any:
    """--target-class as one of ``classes``, or a class's name (``labels``: the dataset's
    and --class-names); ``true`` names a class only when the classes are booleans."""
    if args.target_class is None:
        return None
    target = parse_value(args.target_class)
    is_bool = [isinstance(c, bool) for c in classes]
    if (isinstance(target, bool) and not all(is_bool)) or target not in classes:
        if args.target_class in classes:
            return args.target_class  # a label such as "1" or "true" in a model with string classes
        named = [c for c in classes if _named(c, labels) == args.target_class]
        if named:
            return named[0]
        names = [n for n in (_named(c, labels) for c in classes) if n is not None]
        also = f" or its name: {', '.join(names)}" if names else ""
        raise ValidationError(
            f"--target-class {args.target_class!r} is not a class of the model; choose one of "
            f"{classes}{also}."
        )
    return target


def _named(value: Any, labels: dict[Any, str] | None) -> str | None:
    """The name of class ``value`` in ``labels`` (None without one)."""
    if not labels:
        return None
    name = labels.get(value, labels.get(str(value)))
    return None if name is None else str(name)


def _select(
    args: argparse.Namespace, model: Any, data: Any, X: pd.DataFrame, what: str
) -> tuple[pd.DataFrame, Any, dict[Any, str]]:
    """The rows to explain among ``X`` (already cut to --rows), the desired class and the
    classes' names."""
    classes = model_classes(model)
    if len(classes) == 1:
        raise ValidationError(
            f"the model knows a single class {classes}: the training data's target column has one "
            "value, so every row is predicted as it and no change can flip the decision. Train on "
            "data with at least two classes."
        )
    labels = class_labels(args, data, classes)
    target = target_class(args, classes, labels)
    favourable = data.metadata.get("favourable")
    if target is None and favourable is None and len(classes) == 2:
        info(
            args,
            f"desired class: {classes[-1]!r}, the model's last class (choose another with "
            "--target-class)",
        )
    if target is None and favourable is None and len(classes) > 2:
        raise ValidationError(
            f"the model has {len(classes)} classes {classes} and the data names no favourable one; "
            "choose the desired class with --target-class."
        )
    wanted = desired_class(model, target=target, data=data)
    if not args.all_rows:
        keep = rows_to_explain(model, X, target=wanted, data=data)
        skipped = len(X) - len(keep)
        if len(keep) == 0:
            raise ValidationError(
                f"all {len(X)} selected rows are already predicted as the desired class "
                f"{wanted!r}: nothing to explain. Select other rows with --rows, another class "
                "with --target-class, or pass --all-rows."
            )
        if skipped:
            info(
                args,
                f"skipped {skipped} of {len(X)} rows already predicted as the desired class "
                f"{wanted!r} (--all-rows keeps them)",
            )
        X = keep
    if args.rows is None and len(X) > DEFAULT_ROWS:
        info(
            args,
            f"explaining the first {DEFAULT_ROWS} of {len(X)} rows of {what} (choose with --rows; "
            "':' for all)",
        )
        X = X.iloc[:DEFAULT_ROWS]
    return X, wanted, labels


def _check_explain(args: argparse.Namespace) -> None:
    """explain's options that can be checked before any loading or training."""
    if args.n_counterfactuals < 1:
        raise ValidationError(
            f"-n/--n-counterfactuals must be at least 1. Got {args.n_counterfactuals}."
        )
    class_names(args.class_names)  # a malformed --class-names fails before any work
    if args.n_jobs == 0:
        raise ValidationError(
            "--n-jobs must not be 0 (use 1, a number of workers, or -1 for all cores)."
        )
    if args.seed < 0:
        raise ValidationError(f"--seed must be a non-negative integer. Got {args.seed}.")
    _check_requirements(args)
    if args.out:
        check_writable(args.out)  # a bad path fails now, not after the computation


def cmd_explain(args: argparse.Namespace) -> int:
    """``counterfact explain``: rows of a dataset, of the user's file, or of a queries file."""
    params, constraints = settle_method(args)
    _check_explain(args)
    method = methods.get(args.method, **params)
    method._validate_params()  # a bad --param value fails now, before any loading or training
    with stdout_to_stderr():
        data, train, pool, what = _data_and_pool(args)
        constraints = with_horizon(args, data, constraints)
        constraints.resolve(data.schema)  # unknown features and contradictions, before any training
        if args.rows is not None:
            pool = pool.iloc[parse_rows(joined(args.rows) or "", len(pool), what=what)]
        model = _model(args, train)
        X, wanted, labels = _select(args, model, data, pool, what)
        t0 = time.perf_counter()
        method.fit(model, train)
        info(
            args,
            f"{args.method}: fitted in {time.perf_counter() - t0:.1f} s; explaining {len(X)} rows",
        )
        requirements = requirements_from_args(args, model, train)
        bound_robustness(args, method, requirements)
        t0 = time.perf_counter()
        result = method.explain(
            X,
            n_counterfactuals=args.n_counterfactuals,
            constraints=constraints,
            target=wanted,
            n_jobs=args.n_jobs,
            requirements=requirements,
        )
        found = int((result.found > 0).sum())
        if not should_show(getattr(method, "verbose", 0), len(X)):  # else the method said it
            info(
                args,
                f"{found}/{len(X)} rows got a counterfactual in {time.perf_counter() - t0:.1f} s",
            )
    emit(result, args.format, args.out, labels=labels)
    return 0


def with_horizon(args: argparse.Namespace, data: Any, given: Any) -> Any:
    """``--horizon N`` on a bundled dataset: its default timeline (its rates and cost of
    waiting, ``cf.datasets.timeline``) with horizon N, merged into ``given``; on the user's
    own file (``--data``) the horizon alone, as ``given`` already holds.  A timeline of the
    ``--constraints`` file is kept as it is (with horizon N): no default is merged into it."""
    if getattr(args, "horizon", None) is None:
        return given
    if args.constraints and read_constraints_file(args.constraints).timeline is not None:
        return given  # the file's own timeline, its horizon set by the flag
    default = None if args.data else datasets.timeline(data, horizon=args.horizon)
    # on data that nothing moves with time, explain warns that the horizon helps no answer
    return given if default is None else given.merge(constraints.Constraints(timeline=default))


def bound_robustness(args: argparse.Namespace, method: Any, req: Requirements) -> None:
    """Under --robustness, bound the fitted ``method``'s time and say how far.

    ``robustness`` makes one ``explain`` call per setting of its ladder, and each gets the
    method's ``time_limit`` per row. Decision: a method with no limit of its own (MACE's
    default) and no --time-limit gets :data:`ROBUSTNESS_TIME_LIMIT` per row and setting,
    because without one a search over a forest and its retrained copies may not end (German
    Credit's default forest of 100 trees under --horizon 12: 5 rows had not finished after
    14 minutes; with the bound, 330 s). A setting cut short is said in the row's reason,
    not hidden. The status line says the most calls per row and the limit each gets."""
    if req.robustness is None:
        return
    params = method.get_params()
    each = ""
    if "time_limit" in params:
        if params["time_limit"] is None:
            method.set_params(time_limit=ROBUSTNESS_TIME_LIMIT)
        each = f", each with a time limit of {method.time_limit:g} s per row"
        if args.time_limit is None and params["time_limit"] is None:
            each += " (the --robustness default; --time-limit changes it)"
    steps = methods.robustness_ladder(method, req)
    kinds = [
        kind
        for kind, used in (
            ("vote shares", any(s.vote_share is not None for s in steps)),
            ("margins", any(s.margin is not None for s in steps)),
            ("retrained copies", any(s.copies for s in steps)),
        )
        if used
    ]
    calls = methods.robustness_calls(method, req)
    said = f"up to {calls} searches per row ({', '.join(kinds)}){each}"
    refits = methods.robustness_refits(req)
    info(
        args,
        f"--robustness {req.robustness:g}: {said}; first, the model is refitted up to "
        f"{refits} times on resamples of the training data (once per run)",
    )


def requirements_from_args(args: argparse.Namespace, model: Any, train: Any) -> Requirements:
    """The :class:`~counterfact.Requirements` of --min-probability, --robust-to (that many
    copies of ``model`` retrained on resamples of ``train``), --robustness,
    --min-vote-share, --regions and --measure (a named measure, or each method's own
    objective; not given: the default measure)."""
    robust = (
        models.retrained(model, train, n=args.robust_to, random_state=args.seed)
        if args.robust_to
        else None
    )
    return Requirements(
        min_probability=args.min_probability,
        robust_to=robust,
        regions=bool(getattr(args, "regions", False)),
        costs=getattr(args, "measure", None),
        robustness=args.robustness,
        min_vote_share=args.min_vote_share,
    )


def _check_requirements(args: argparse.Namespace) -> None:
    """--min-probability, --robust-to, --robustness and --min-vote-share, checked before
    any loading or training."""
    p = args.min_probability
    if p is not None and not 0.0 < p < 1.0:
        raise ValidationError(f"--min-probability must be between 0 and 1 (exclusive). Got {p}.")
    if args.robust_to < 0:
        raise ValidationError(
            f"--robust-to must be a number of retrained models (0 or more). Got {args.robust_to}."
        )
    r = args.robustness
    if r is not None and not 0.0 < r < 1.0:
        raise ValidationError(
            "--robustness must be between 0 and 1 (exclusive): the share of retrained models "
            f"that should still accept each answer, e.g. 0.95. Got {r}."
        )
    if r is not None and args.robust_to:
        raise ValidationError(
            "--robustness retrains its own copies of the model, so it cannot be combined with "
            "--robust-to. Drop one of them."
        )
    v = args.min_vote_share
    if v is not None and not 0.0 < v <= 1.0:
        raise ValidationError(
            "--min-vote-share must be in (0, 1]: the least share of the forest's trees voting "
            f"for the desired class, e.g. 0.66. Got {v}."
        )


# ---------------------------------------------------------------------- demo
def cmd_demo(args: argparse.Namespace) -> int:
    """``counterfact demo``: a few rejected German Credit applicants, explained as a lender
    would advise them: the dataset's actionability and its default timeline (age, years at
    the address and in the job move only with time, within --horizon months)."""
    name = args.method or methods.default_method()
    cls = methods.get_class(name)
    names = cls._param_names()  # type: ignore[attr-defined]
    params: dict[str, Any] = {
        k: v for k, v in {"random_state": 0, "time_limit": 30.0}.items() if k in names
    }
    if "verbose" in names and not args.quiet:
        params["verbose"] = 1
    if args.rows < 1 or args.n_counterfactuals < 1:
        raise ValidationError("--rows and -n must be at least 1.")
    if not 0 <= args.horizon <= MAX_HORIZON:
        raise ValidationError(
            f"--horizon must be a whole number of months from 0 to {MAX_HORIZON} (the months an "
            f"answer may take). Got {args.horizon}."
        )
    if args.out:
        check_writable(args.out)  # a bad path fails now, not after the computation
    with stdout_to_stderr():
        info(args, "loading German Credit (1,000 applicants, bundled)")
        data = datasets.load("german_credit")
        train, test = data.split(test_size=0.2, random_state=0)
        model = models.fit(train, args.model, random_state=0)
        acc = float((model.predict(test.X) == test.y).mean())
        rejected = rows_to_explain(model, test)
        info(
            args,
            f"model '{args.model}': test accuracy {acc:.3f}; {len(rejected)} of {len(test)} test "
            f"applicants are rejected; explaining {min(args.rows, len(rejected))} with {name}",
        )
        method = methods.get(name, **params).fit(model, train)
        advice = constraints.Constraints(timeline=datasets.timeline(data, horizon=args.horizon))
        result = method.explain(
            rejected.iloc[: args.rows], n_counterfactuals=args.n_counterfactuals, constraints=advice
        )
    frozen = list(data.schema.immutable)
    timed = [f.name for f in data.schema if f.actionability == "time"]
    print(
        f"German Credit, model '{args.model}' (test accuracy {acc:.3f}), method {name}; "
        f"not changed: {', '.join(frozen)}; moved only by time, within {args.horizon} months: "
        f"{', '.join(timed)}"
    )
    emit(result, "table", None, labels=dict(data.metadata.get("target_labels") or {}))
    if args.out:
        try:
            Path(args.out).write_text(result.to_json())
        except OSError as exc:
            raise ValidationError(
                f"--out {args.out!r} cannot be written: {exc.strerror or exc}."
            ) from None
    return 0


# ----------------------------------------------------------------- benchmark
def cmd_benchmark(args: argparse.Namespace) -> int:
    """``counterfact benchmark SPEC``: validate, run, and exit 1 if any cell errored."""
    if args.n_jobs == 0:
        raise ValidationError(
            "--n-jobs must not be 0 (use 1, a number of workers, or -1 for all cores)."
        )
    if args.queries is not None and args.queries < 1:
        raise ValidationError(
            f"--queries must be a whole number >= 1 (queries per dataset). Got {args.queries}."
        )
    spec = benchmark.load_spec(
        args.spec, queries=args.queries, full=args.full
    )  # validated before anything runs
    if args.time_limit is not None and args.time_limit <= 0:
        raise ValidationError(
            f"--time-limit must be a positive number of seconds. Got {args.time_limit}."
        )
    _check_resumable(args, spec)
    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise ValidationError(
            f"--out {args.out!r} is a file; pass a folder (it is created if missing)."
        )
    try:
        Path(args.out).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValidationError(
            f"--out {args.out!r} cannot be created: {exc.strerror or exc}."
        ) from None
    if args.full and not args.quiet:
        n_cells = len(_cells(spec))
        size = (
            "every eligible test row" if spec.queries is None else f"up to {spec.queries} queries"
        )
        folds = f", {spec.folds} folds" if spec.folds else ""
        chunks = f"; resumable every {spec.chunk_size} queries" if spec.chunk_size else ""
        print(
            f"full protocol of {spec.name!r}: {n_cells} cells, {size} per dataset, seeds "
            f"{list(spec.seeds)}{folds}{chunks} (run the same command again to resume)",
            file=sys.stderr,
        )
    with stdout_to_stderr():
        benchmark.run(
            spec,
            out=args.out,
            resume=not args.no_resume,
            n_jobs=args.n_jobs,
            time_limit=args.time_limit,
            verbose=not args.quiet,
        )
    failed = benchmark.failed_cells(args.out, spec)
    print(f"results in {str(args.out).rstrip('/')}/ (summary.csv, results.csv)")
    if len(failed):
        print(f"counterfact: {len(failed)} benchmark cell(s) failed:", file=sys.stderr)
        for _, row in failed.iterrows():
            print(f"  {row['cell']}: {row['reason']}", file=sys.stderr)
        print(f"  (details and tracebacks in {args.out}/cells/*.json)", file=sys.stderr)
        return 1
    return 0


def _check_resumable(args: argparse.Namespace, spec: Any) -> None:
    """Refuse an --out folder whose cells ran under other settings and would be mixed with
    this run's (:func:`~counterfact.benchmark._runner.mixed_runs`)."""
    if args.time_limit is not None:
        spec = replace(spec, time_limit=float(args.time_limit))
    mixed = mixed_runs(args.out, spec, resume=not args.no_resume)
    if mixed is not None:
        raise ValidationError(
            f"--out {args.out!r} {mixed}. Use a new --out, or delete that folder."
        )


# -------------------------------------------------------------------- report
def cmd_report(args: argparse.Namespace) -> int:
    """``counterfact report RESULTS``."""
    if not Path(args.results).is_dir():
        raise ValidationError(
            f"{args.results!r} is not a results folder; pass the --out folder of 'counterfact "
            "benchmark'."
        )
    if args.out:
        check_writable(args.out)  # a bad path fails now, not as an internal error
    with stdout_to_stderr():
        path = report.build(args.results, fmt=args.format, out=args.out)
    print(path)
    return 0
