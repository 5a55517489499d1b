"""The ``counterfact`` command: datasets, explain, demo, benchmark, report.

The CLI only parses arguments and calls the public API.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from .exceptions import CounterfactError, ValidationError

__all__ = ["main"]

_UNSAFE_HELP = (
    "Loading a pickled/joblib model runs arbitrary code from the file: only load files you trust. "
    "--model-file therefore requires --allow-unsafe-model-load."
)


def _parse_value(text: str) -> Any:
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def _split_list(text: str | None) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()] if text else []


def _parse_rows(text: str, n: int) -> list[int]:
    rows: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if ":" in part:
            a, _, b = part.partition(":")
            rows.extend(range(int(a or 0), int(b) if b else n))
        elif part:
            rows.append(int(part))
    bad = [r for r in rows if not 0 <= r < n]
    if bad:
        raise ValidationError(f"--rows {text!r} selects rows {bad} outside 0..{n - 1} of the test split.")
    return rows


def _constraints(args: argparse.Namespace) -> Any:
    from .constraints import Constraints

    base = Constraints()
    if args.constraints:
        path = Path(args.constraints)
        text = path.read_text()
        if path.suffix.lower() == ".json":
            d = json.loads(text)
        else:
            import yaml

            d = yaml.safe_load(text)
        base = Constraints.from_dict(d)
    ranges = {}
    for item in args.range or []:
        name, _, spec = item.partition("=")
        lo, _, hi = spec.partition(":")
        if not name or not _:
            raise ValidationError(f"--range {item!r}: expected FEATURE=LOW:HIGH (either side may be empty).")
        ranges[name] = (float(lo) if lo else None, float(hi) if hi else None)
    allowed = {}
    for item in args.allowed or []:
        name, _, vals = item.partition("=")
        allowed[name] = [_parse_value(v) for v in vals.split(",")]
    flags = Constraints(
        immutable=_split_list(args.immutable),
        increasing=_split_list(args.increasing),
        decreasing=_split_list(args.decreasing),
        ranges=ranges,
        allowed_values=allowed,
        features_to_vary=_split_list(args.vary) or None,
        max_changes=args.max_changes,
    )
    return base.merge(flags)


def _load_data(args: argparse.Namespace) -> Any:
    from . import datasets
    from .data import Dataset

    if args.data:
        if not args.target:
            raise ValidationError("--data needs --target naming the target column.")
        frame = pd.read_csv(args.data)
        return Dataset.from_frame(frame, target=args.target, name=Path(args.data).stem)
    return datasets.load(args.dataset)


def _load_model(args: argparse.Namespace, train: Any) -> Any:
    from . import models

    if args.model_file:
        if not args.allow_unsafe_model_load:
            raise ValidationError(_UNSAFE_HELP)
        import joblib

        return joblib.load(args.model_file)
    return models.fit(train, args.model, random_state=args.seed)


def _cmd_datasets(args: argparse.Namespace) -> int:
    from . import datasets

    if args.name:
        info = datasets.info(args.name)
        for k, v in info.items():
            print(f"{k}: {v}")
        if info.get("bundled", True) or args.load:
            data = datasets.load(args.name)
            print()
            print(data.schema.describe().to_string())
        return 0
    rows = []
    for name in datasets.names():
        info = datasets.info(name)
        rows.append({"name": name, "bundled": info.get("bundled"), "rows": info.get("n_rows"), "description": str(info.get("description", ""))[:60]})
    print(pd.DataFrame(rows).to_string(index=False))
    return 0


def _method_params(args: argparse.Namespace) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for item in args.param or []:
        k, sep, v = item.partition("=")
        if not sep:
            raise ValidationError(f"--param {item!r}: expected NAME=VALUE.")
        params[k] = _parse_value(v)
    if args.seed is not None:
        params.setdefault("random_state", args.seed)
    if args.time_limit is not None:
        params.setdefault("time_limit", args.time_limit)
    return params


def _cmd_explain(args: argparse.Namespace) -> int:
    from . import methods

    data = _load_data(args)
    train, test = data.split(test_size=args.test_size, random_state=args.seed)
    model = _load_model(args, train)
    method = methods.get(args.method, **_method_params(args))
    method.fit(model, train)
    rows = _parse_rows(args.rows, len(test))
    X = test.X.iloc[rows]
    target = _parse_value(args.target_class) if args.target_class is not None else None
    result = method.explain(
        X, n_counterfactuals=args.n_counterfactuals, constraints=_constraints(args), target=target, n_jobs=args.n_jobs
    )
    _emit(result, args)
    return 0


def _emit(result: Any, args: argparse.Namespace) -> None:
    fmt = args.format
    if fmt == "json":
        text = result.to_json()
    elif fmt == "csv":
        text = result.to_frame().to_csv()
    else:
        lines = [repr(result), ""]
        for q in result.queries.index:
            conf = result.query_confidence.get(q)
            lines.append(f"query {q} (status {result.status[q]}, P(target={result.target[q]}) = {conf:.3f}):")
            desc = result.describe(q)
            lines += ["  " + ln.split(":", 1)[-1].strip() if ", #" in ln else "  " + ln for ln in desc.splitlines()]
        text = "\n".join(lines)
    if args.out:
        Path(args.out).write_text(text)
    else:
        print(text)


def _cmd_demo(args: argparse.Namespace) -> int:
    from . import datasets, methods, models
    from ._deps import is_available
    from .constraints import Constraints

    method_name = args.method or ("mace" if is_available("z3") and "mace" in methods.names() else "nearest")
    data = datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    model = models.fit(train, args.model, random_state=0)
    acc = (model.predict(test.X) == test.y).mean()
    print(f"German Credit: {len(train)} training rows, model '{args.model}' test accuracy {acc:.3f}")
    print(f"Method: {method_name}; immutable features: {data.schema.immutable}")
    pred = model.predict(test.X)
    bad = test.X[pred == data.classes[0]].iloc[: args.rows] if data.classes else test.X.iloc[: args.rows]
    method = methods.get(method_name, random_state=0, time_limit=60.0)
    method.fit(model, train)
    result = method.explain(bad, n_counterfactuals=args.n_counterfactuals, constraints=Constraints())
    print(repr(result))
    print(result.describe())
    if args.out:
        Path(args.out).write_text(result.to_json())
    return 0


def _cmd_benchmark(args: argparse.Namespace) -> int:
    from . import benchmark

    benchmark.run(args.spec, out=args.out, resume=not args.no_resume, n_jobs=args.n_jobs, queries=args.queries, time_limit=args.time_limit)
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from . import report

    path = report.build(args.results, fmt=args.format, out=args.out)
    print(path)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests)."""
    p = argparse.ArgumentParser(prog="counterfact", description="Counterfactual explanations for tabular classifiers.")
    sub = p.add_subparsers(dest="command", required=True)

    d = sub.add_parser("datasets", help="list the datasets, or describe one")
    d.add_argument("name", nargs="?")
    d.add_argument("--load", action="store_true", help="also load a non-bundled dataset (from its path/env var)")
    d.set_defaults(func=_cmd_datasets)

    e = sub.add_parser("explain", help="explain rows of a dataset's test split", epilog=_UNSAFE_HELP)
    src = e.add_mutually_exclusive_group()
    src.add_argument("--dataset", default="german_credit", help="bundled dataset name (default german_credit)")
    src.add_argument("--data", help="a CSV file of your own (needs --target)")
    e.add_argument("--target", help="target column of --data")
    e.add_argument("--model", default="rf", help="model kind to fit: lr, svm, tree, rf, gbm, mlp, xgb, lgbm")
    e.add_argument("--model-file", help="a joblib/pickle file with a fitted model (see --allow-unsafe-model-load)")
    e.add_argument("--allow-unsafe-model-load", action="store_true", help="acknowledge that loading --model-file runs code from it")
    e.add_argument("--method", default="nearest", help="method name (see `counterfact.methods.names()`)")
    e.add_argument("--param", action="append", help="method parameter NAME=VALUE (repeatable)")
    e.add_argument("--rows", default="0:5", help="rows of the test split: '0:5', '3,7,9'")
    e.add_argument("-n", "--n-counterfactuals", type=int, default=1)
    e.add_argument("--target-class", help="desired class (needed for multi-class models)")
    e.add_argument("--immutable", help="comma-separated features that must not change")
    e.add_argument("--increasing", help="comma-separated features that may only increase")
    e.add_argument("--decreasing", help="comma-separated features that may only decrease")
    e.add_argument("--range", action="append", help="FEATURE=LOW:HIGH (repeatable)")
    e.add_argument("--allowed", action="append", help="FEATURE=v1,v2 (repeatable)")
    e.add_argument("--vary", help="comma-separated features that may change (all others are fixed)")
    e.add_argument("--max-changes", type=int)
    e.add_argument("--constraints", help="YAML or JSON file with constraints (keys as cf.Constraints)")
    e.add_argument("--format", choices=["table", "csv", "json"], default="table")
    e.add_argument("--out", help="write the output to this file")
    e.add_argument("--seed", type=int, default=0)
    e.add_argument("--time-limit", type=float)
    e.add_argument("--test-size", type=float, default=0.2)
    e.add_argument("--n-jobs", type=int, default=1)
    e.set_defaults(func=_cmd_explain)

    m = sub.add_parser("demo", help="explain a few rejected German Credit applicants")
    m.add_argument("--method", help="method (default: mace when z3 is installed, else nearest)")
    m.add_argument("--model", default="lr")
    m.add_argument("--rows", type=int, default=3)
    m.add_argument("-n", "--n-counterfactuals", type=int, default=2)
    m.add_argument("--out", help="also write the result as JSON")
    m.set_defaults(func=_cmd_demo)

    b = sub.add_parser("benchmark", help="run a benchmark spec (YAML)")
    b.add_argument("spec")
    b.add_argument("--out", default="results")
    b.add_argument("--no-resume", action="store_true")
    b.add_argument("--n-jobs", type=int, default=1)
    b.add_argument("--queries", type=int, help="cap the queries per dataset (a quicker run of the same protocol)")
    b.add_argument("--time-limit", type=float, help="seconds per query, replacing the spec's time_limit")
    b.set_defaults(func=_cmd_benchmark)

    r = sub.add_parser("report", help="render a report from benchmark results")
    r.add_argument("results")
    r.add_argument("--format", choices=["html", "md"], default="html")
    r.add_argument("--out")
    r.set_defaults(func=_cmd_report)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``counterfact`` command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CounterfactError as exc:
        print(f"counterfact: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
