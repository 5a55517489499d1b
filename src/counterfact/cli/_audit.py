"""``counterfact audit``: a recourse audit from the command line (:func:`counterfact.audit`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .. import methods, models
from ..recourse import audit, global_recourse
from .._utils._deps import import_optional, install_hint, is_available
from ..exceptions import MissingDependencyError, ValidationError
from ._args import constraints_from_args, method_params, parse_value, split_list
from ._commands import _check_requirements, _data_and_pool, _model, demo_method
from ._output import info, stdout_to_stderr

__all__ = ["add_audit", "cmd_audit"]

_EPILOG = """\
Audits the rows of a dataset's held-out test split (--dataset; the model is fitted on the rest) or
of your CSV file (--data, --target; the model is fitted on the whole file unless --model-file is
given): every row the model does not assign to the favourable class (--target-class, else the
dataset's) is explained under the same constraints, then recourse rates, proofs of no recourse and
costs are aggregated overall and per group. Writes summary.csv, per_row.csv, actions.csv,
audit.json and audit.html into --out.

With --global K, also finds at most K actions -- the same change rules for everyone, such as
"reduce duration_months by 12" -- that get the most rejected people to the favourable class,
each verified on every person's own row with the real model, and how well they serve each group:
global_actions.csv, global_summary.csv, global_per_row.csv, global_counterfactuals.csv,
global.json, and a section of audit.html.

Loading a pickled/joblib model runs arbitrary code from the file: only load files you trust.
--model-file therefore requires --allow-unsafe-model-load."""

#: the summary columns printed on standard output
_SUMMARY_COLUMNS = [
    "grouping",
    "group",
    "n",
    "n_rejected",
    "recourse_rate",
    "proven_none_rate",
    "unknown_rate",
    "cost_median",
    "burden",
    "small",
]


def add_audit(subparsers: Any, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register the ``audit`` subcommand; ``common`` holds the -v/-q/--debug options."""
    a = subparsers.add_parser(
        "audit",
        parents=[common],
        help="recourse audit of a population: who has recourse, who provably has none, at what cost per group",
        description="Recourse audit of every rejected row, overall and per group.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    src = a.add_mutually_exclusive_group()
    src.add_argument(
        "--dataset",
        default="german_credit",
        metavar="NAME",
        help="a dataset of the package (default german_credit)",
    )
    src.add_argument(
        "--data", metavar="FILE", help="a CSV file of your own, header row first (needs --target)"
    )
    a.add_argument("--target", metavar="COLUMN", help="the target column of --data")
    a.add_argument(
        "--model",
        default="rf",
        metavar="KIND",
        help=f"model kind to fit (default rf): {', '.join(models.KINDS)}",
    )
    a.add_argument(
        "--model-file",
        metavar="FILE",
        help="a joblib/pickle file with a fitted model (needs --allow-unsafe-model-load)",
    )
    a.add_argument(
        "--allow-unsafe-model-load",
        action="store_true",
        help="acknowledge that loading --model-file runs code from it",
    )
    a.add_argument(
        "--method",
        metavar="METHOD",
        help="counterfactual method (default: mace when z3 is installed, else ufce; mace and ceocl can prove that no recourse exists)",
    )
    a.add_argument(
        "--param", action="append", metavar="NAME=VALUE", help="a method parameter (repeatable)"
    )
    a.add_argument(
        "--groups",
        metavar="C1,C2",
        help="grouping columns, e.g. sex,race,age (numeric ones are binned)",
    )
    a.add_argument(
        "--bins",
        type=int,
        default=4,
        metavar="N",
        help="quantile bins of a numeric grouping column (default 4)",
    )
    a.add_argument(
        "--protected",
        metavar="FEATURE",
        help="measure how often answers change this feature and what freezing it costs",
    )
    a.add_argument(
        "--target-class", metavar="CLASS", help="the favourable class (default: the dataset's)"
    )
    a.add_argument(
        "--cost",
        choices=["l1", "method", "n_changed"],
        default="l1",
        help="the cost aggregated (default l1: normalised l1)",
    )
    a.add_argument(
        "--max-rows",
        type=int,
        metavar="N",
        help="audit a seeded sample of N rows of the population (default: all)",
    )
    a.add_argument(
        "--min-probability",
        type=float,
        metavar="P",
        help="count as recourse only answers whose probability of the favourable class is at least P (0 < P < 1)",
    )
    a.add_argument(
        "--robust-to",
        type=int,
        default=0,
        metavar="N",
        help="count as recourse only answers that also hold for N copies of the model retrained on resamples",
    )
    for flag, what in (
        ("--immutable", "features that must not change"),
        ("--increasing", "features that may only increase"),
        ("--decreasing", "features that may only decrease"),
        ("--vary", "the only features that may change"),
    ):
        a.add_argument(flag, metavar="F1,F2", help=what)
    a.add_argument(
        "--range",
        action="append",
        metavar="FEATURE=LOW:HIGH",
        help="bounds of a feature (repeatable)",
    )
    a.add_argument(
        "--allowed",
        action="append",
        metavar="FEATURE=V1,V2",
        help="the values a feature may take (repeatable)",
    )
    a.add_argument("--max-changes", type=int, metavar="K", help="change at most K features")
    a.add_argument("--constraints", metavar="FILE", help="a YAML or JSON file of constraints")
    a.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the split, the model, the method, the sample and the bootstrap (default 0)",
    )
    a.add_argument(
        "--time-limit",
        type=float,
        metavar="SECONDS",
        help="time limit per row, for methods that have one",
    )
    a.add_argument(
        "--test-size",
        type=float,
        default=0.2,
        help="share of a --dataset held out as the audited rows (default 0.2)",
    )
    a.add_argument("--n-jobs", type=int, default=1, help="parallel workers (default 1)")
    a.add_argument(
        "--backend", choices=["loky", "dask", "ray"], help="parallel backend (default loky)"
    )
    a.add_argument("--chunk-size", type=int, default=200, help="rows per task (default 200)")
    a.add_argument(
        "--n-bootstrap",
        type=int,
        default=1000,
        help="bootstrap resamples per interval (default 1000)",
    )
    a.add_argument(
        "--min-group-size",
        type=int,
        default=30,
        help="flag groups with fewer rejected rows (default 30)",
    )
    a.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="folder for the outputs (chunks are kept there, so a re-run resumes)",
    )
    a.add_argument(
        "--no-html", action="store_true", help="skip the HTML report (no jinja2/matplotlib needed)"
    )
    g = a.add_argument_group("global recourse")
    g.add_argument(
        "--global",
        dest="global_k",
        type=int,
        metavar="K",
        help="also find at most K actions, the same for everyone, that help the most rejected people",
    )
    g.add_argument(
        "--global-features",
        type=int,
        default=2,
        metavar="N",
        help="features one action may change (default 2)",
    )
    g.add_argument(
        "--global-solver",
        choices=["auto", "greedy", "milp"],
        default="auto",
        help="how the actions are chosen (default auto: the exact MILP when small, else greedy)",
    )
    g.add_argument(
        "--global-max-cost-ratio",
        type=float,
        metavar="R",
        help="an action counts for a person only if it costs at most R times their own counterfactual",
    )
    a.set_defaults(func=cmd_audit, queries=None)
    return a  # type: ignore[no-any-return]


def cmd_audit(args: argparse.Namespace) -> int:
    """Run the audit described by ``args``, write its files and print the summary."""
    args.method = args.method or demo_method()
    cls = methods.get_class(args.method)
    params = method_params(args, cls)
    constraints = constraints_from_args(args)
    if args.max_rows is not None and args.max_rows < 1:
        raise ValidationError(f"--max-rows must be at least 1. Got {args.max_rows}.")
    _check_global(args)
    _check_requirements(args)
    if not args.no_html:  # before any work: a missing extra fails now, not after the audit
        _check_report_deps()
    out = _out_dir(args.out)
    with stdout_to_stderr():
        data, train, pool, what = _data_and_pool(args)
        constraints.resolve(data.schema)
        _check_groups(args.groups, data, pool)
        if args.max_rows is not None and len(pool) > args.max_rows:
            pool = pool.sample(args.max_rows, random_state=args.seed)
            info(args, f"auditing a seeded sample of {args.max_rows} rows of {what}")
        model = _model(args, train)
        method = methods.get(args.method, **params).fit(model, train)
        target = parse_value(args.target_class) if args.target_class is not None else None
        robust = (
            models.retrained(model, train, n=args.robust_to, random_state=args.seed)
            if args.robust_to
            else None
        )
        result = audit(
            method,
            pool,
            groups=split_list(args.groups) or None,
            constraints=constraints,
            target=target,
            data=data,
            protected=args.protected,
            cost=args.cost,
            bins=args.bins,
            n_jobs=args.n_jobs,
            backend=args.backend,
            chunk_size=args.chunk_size,
            out_dir=out / "chunks",
            random_state=args.seed,
            n_bootstrap=args.n_bootstrap,
            min_group_size=args.min_group_size,
            min_probability=args.min_probability,
            robust_to=robust,
        )
        found = None
        if args.global_k is not None:
            found = global_recourse(
                method,
                pool,
                max_actions=args.global_k,
                groups=split_list(args.groups) or None,
                cost=args.cost,
                constraints=constraints,
                target=target,
                max_features=args.global_features,
                individual=result,
                max_cost_ratio=args.global_max_cost_ratio,
                solver=args.global_solver,
                data=data,
                bins=args.bins,
                min_group_size=args.min_group_size,
                n_bootstrap=args.n_bootstrap,
                random_state=args.seed,
            )
            info(args, f"{found!r}")
        paths = result.save(out, html=not args.no_html, global_recourse=found)
        info(args, f"{result!r}; wrote {', '.join(str(p) for p in paths.values())}")
    s = result.summary()
    sys.stdout.write(s[_SUMMARY_COLUMNS].to_string(index=False) + "\n")
    if found is not None:
        _print_global(found)
    return 0


def _check_report_deps() -> None:
    """Every package the HTML report needs, named in one error with the extra that brings them."""
    missing = [name for name in ("jinja2", "matplotlib") if not is_available(name)]
    if missing:
        raise MissingDependencyError(
            f"the audit's HTML report needs {' and '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} not "
            f"installed. Install them with: {install_hint(missing[0])}; or pass --no-html to write the CSV and JSON "
            "files only."
        )


def _check_global(args: argparse.Namespace) -> None:
    """The --global options, checked before any work."""
    if args.global_k is None:
        return
    if args.global_k < 1:
        raise ValidationError(
            f"--global must be at least 1 (the number of actions). Got {args.global_k}."
        )
    if not 1 <= args.global_features <= 5:
        raise ValidationError(f"--global-features must be in [1, 5]. Got {args.global_features}.")
    if args.global_max_cost_ratio is not None and not args.global_max_cost_ratio > 0:
        raise ValidationError(
            f"--global-max-cost-ratio must be > 0. Got {args.global_max_cost_ratio}."
        )
    if args.global_solver == "milp":
        import_optional("highspy", purpose="--global-solver milp")


def _print_global(found: Any) -> None:
    """The global actions and the main findings on standard output."""
    table = found.actions[
        ["description", "n_works", "coverage", "n_new", "n_assigned", "cost_median"]
    ]
    sys.stdout.write(
        f"\nGlobal recourse: {found.n_covered} of {found.n_rejected} rejected rows covered "
        f"({100 * found.coverage:.1f}%)\n"
    )
    if len(table):
        sys.stdout.write(table.to_string() + "\n")
    for line in found.findings():
        sys.stdout.write(f"- {line}\n")


def _out_dir(arg: str) -> Path:
    """The --out folder, created if missing."""
    out = Path(arg)
    if out.exists() and not out.is_dir():
        raise ValidationError(f"--out {arg!r} is a file; pass a folder (it is created if missing).")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValidationError(f"--out {arg!r} cannot be created: {exc.strerror or exc}.") from None
    return out


def _check_groups(groups: str | None, data: Any, pool: Any) -> None:
    """Every --groups column is in the data or in the audited rows."""
    unknown = [
        g for g in split_list(groups) if g not in data.frame.columns and g not in pool.columns
    ]
    if unknown:
        raise ValidationError(
            f"--groups names columns {unknown} that the data does not have; its columns are "
            f"{list(data.frame.columns)}."
        )
