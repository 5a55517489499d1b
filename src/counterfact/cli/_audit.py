"""``counterfact audit``: a recourse audit from the command line (:func:`counterfact.audit`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .. import methods
from .._utils._deps import import_optional, install_hint, is_available
from .._utils._validation import can_write_in
from ..exceptions import MissingDependencyError, ValidationError
from ..recourse import ActionSearch, Batch, Statistics, audit, global_recourse
from ..recourse._rows import COST_COLUMNS
from ..recourse._text import measure_words
from ._args import (
    settle_method,
    split_list,
)
from ._commands import (
    _check_requirements,
    _data_and_pool,
    _model,
    bound_robustness,
    model_classes,
    requirements_from_args,
    target_class,
    with_horizon,
)
from ._options import (
    add_constraint_flags,
    add_method,
    add_model,
    add_requirements,
    add_run,
    add_source,
)
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
A pickle --model-file therefore requires --allow-unsafe-model-load; an ONNX file (--model-file
model.onnx) runs nothing from the file and needs no flag."""

#: the costs --cost aggregates: the API's, less "costs" (a cf.Costs object, which no option
#: of the command line supplies)
COST_CHOICES = [c for c in COST_COLUMNS if c != "costs"]

#: what the --global-* options mean when left out (their argparse default is None, so that
#: one given without --global is refused)
GLOBAL_DEFAULTS = {"global_features": 2, "global_solver": "auto"}

#: the summary columns printed on standard output
_SUMMARY_COLUMNS = [
    "grouping",
    "group",
    "n",
    "n_rejected",
    "recourse_rate",
    "holding_rate",  # under --robustness only
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
        help="recourse audit of a population: who has recourse, who provably has none, "
        "at what cost per group",
        description="Recourse audit of every rejected row, overall and per group.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_source(a, list_datasets=False)
    add_model(a, default="rf")
    add_method(a, proofs=True)
    _add_population(a)
    add_requirements(
        a,
        probability="count as recourse only answers whose probability of the favourable class "
        "is at least P (0 < P < 1)",
        robust="count as recourse only answers that also hold for N copies of the model "
        "retrained on resamples",
    )
    add_constraint_flags(a)
    add_run(
        a,
        seed_help="seed of the split, the model, the method, the sample and the bootstrap",
        rows="the audited rows",
        queries=False,  # an audit reads its rows from --data, not from --queries
    )
    _add_batch(a)
    _add_global(a)
    a.set_defaults(func=cmd_audit, queries=None)
    return a  # type: ignore[no-any-return]


def _add_population(a: argparse.ArgumentParser) -> None:
    """Who is audited, in which groups, and the cost aggregated."""
    a.add_argument(
        "--groups",
        action="append",
        metavar="C1,C2",
        help="grouping columns, e.g. sex,race,age (numeric ones are binned; repeatable)",
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
        choices=COST_CHOICES,
        help="the cost aggregated (default effort: 1 per changed feature plus each move in "
        "MAD-units, the same scale for every method); l1: the range-normalised l1 distance; "
        "method: the method's own objective; n_changed. (Python: audit(measure=...); "
        "--measure is the search's measure, Python's Requirements(costs=...).)",
    )
    a.add_argument(
        "--max-rows",
        type=int,
        metavar="N",
        help="audit a seeded sample of N rows of the population (default: all)",
    )


def _add_batch(a: argparse.ArgumentParser) -> None:
    """How the rows are run (chunks, parallel backend) and what is written where."""
    a.add_argument(
        "--parallel",
        choices=["loky", "dask", "ray"],
        help="where the chunks run: joblib's loky processes, Dask or Ray (default loky)",
    )
    a.add_argument(
        "--address",
        metavar="URL",
        help="a running cluster to run on, with --parallel: a Dask scheduler "
        "(tcp://host:8786) or a Ray cluster (host:6379); default: a local one for the run",
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


def _add_global(a: argparse.ArgumentParser) -> None:
    """--global K and its options: actions that are the same for everyone."""
    g = a.add_argument_group("global recourse")
    g.add_argument(
        "--global",
        dest="global_k",
        type=int,
        metavar="K",
        help="also find at most K actions, the same for everyone, that help the most "
        "rejected people",
    )
    g.add_argument(
        "--global-features",
        type=int,
        metavar="N",
        help="features one action may change (default 2)",
    )
    g.add_argument(
        "--global-solver",
        choices=["auto", "greedy", "milp"],
        help="how the actions are chosen (default auto: the exact MILP when small, else greedy)",
    )
    g.add_argument(
        "--global-max-cost-ratio",
        type=float,
        metavar="R",
        help="an action counts for a person only if it costs at most R times their own "
        "counterfactual",
    )


def cmd_audit(args: argparse.Namespace) -> int:
    """Run the audit described by ``args``, write its files and print the summary."""
    params, constraints = settle_method(args)
    _check_numbers(args)
    _check_global(args)
    _check_requirements(args)
    if not args.no_html:  # before any work: a missing extra fails now, not after the audit
        _check_report_deps()
    _check_out(args.out)  # a bad path fails now; the folder is made once the input holds
    with stdout_to_stderr():
        data, train, pool, what = _data_and_pool(args)
        constraints = with_horizon(args, data, constraints)
        constraints.resolve(data.schema)
        _check_groups(args.groups, data, pool)
        out = _out_dir(args.out)
        if args.max_rows is not None and len(pool) > args.max_rows:
            pool = pool.sample(args.max_rows, random_state=args.seed)
            info(args, f"auditing a seeded sample of {args.max_rows} rows of {what}")
        model = _model(args, train)
        args.target_value = target_class(
            args, model_classes(model), dict(data.metadata.get("target_labels") or {})
        )
        method = methods.get(args.method, **params).fit(model, train)
        requirements = requirements_from_args(args, model, train)
        bound_robustness(args, method, requirements)
        result = _audit(args, method, pool, (constraints, requirements), data, out)
        found = _global(args, method, pool, constraints, data, result)
        paths = result.save(out, html=not args.no_html, global_recourse=found)
        info(args, f"{result!r}; wrote {', '.join(str(p) for p in paths.values())}")
    s = result.summary()
    shown = [c for c in _SUMMARY_COLUMNS if c in s.columns]  # holding_rate: --robustness
    sys.stdout.write(s[shown].to_string(index=False) + "\n")
    sys.stdout.write(f"cost: {measure_words(result.meta)}\n")
    _print_sensitivity(result.sensitivity())
    if found is not None:
        _print_global(found)
    return 0


def _target(args: argparse.Namespace) -> Any:
    """The favourable class of --target-class (a class or its name; None: the dataset's)."""
    return getattr(args, "target_value", None)


def _check_numbers(args: argparse.Namespace) -> None:
    """The audit's numeric options and --address, checked before any work."""
    if args.max_rows is not None and args.max_rows < 1:
        raise ValidationError(f"--max-rows must be at least 1. Got {args.max_rows}.")
    if args.address and args.parallel not in ("dask", "ray"):
        raise ValidationError("--address names a cluster: pass --parallel dask or --parallel ray.")
    for option, value, low in (
        ("--chunk-size", args.chunk_size, 1),
        ("--n-bootstrap", args.n_bootstrap, 0),
        ("--min-group-size", args.min_group_size, 0),
        ("--bins", args.bins, 1),
    ):
        if value < low:
            raise ValidationError(
                f"{option} must be a whole number of at least {low}. Got {value}."
            )


def _print_sensitivity(sens: dict[str, Any] | None) -> None:
    """With --protected: one line on how often the answers change it, and what freezing it
    does."""
    if sens is None:
        return
    share = "" if not sens["n_recourse"] else f" ({100 * sens['share_changed']:.0f}%)"
    cost = sens["increase_mean"]
    costs = "" if cost != cost else f"; cost up by {cost:.2f} on average"
    sys.stdout.write(
        f"protected {sens['protected']}: {sens['n_changed']} of {sens['n_recourse']} answers "
        f"change it{share}; with it frozen, {sens['n_recourse_frozen']} of {sens['n_rerun']} "
        f"rows re-explained keep recourse, {sens['n_proven_none_frozen']} provably lose it"
        f"{costs} (details in audit.json)\n"
    )


def _audit(
    args: argparse.Namespace, method: Any, pool: Any, rules: tuple[Any, Any], data: Any, out: Path
) -> Any:
    """The audit of ``pool`` (:func:`counterfact.audit`) as the options say, under
    ``rules``: the constraints and the requirements."""
    constraints, requirements = rules
    return audit(
        method,
        pool,
        groups=split_list(args.groups) or None,
        constraints=constraints,
        requirements=requirements,
        target=_target(args),
        data=data,
        protected=args.protected,
        measure=args.cost,
        bins=args.bins,
        statistics=_statistics(args),
        batch=Batch(
            n_jobs=args.n_jobs,
            parallel=args.parallel,
            chunk_size=args.chunk_size,
            out_dir=out / "chunks",
            address=args.address,
        ),
    )


def _statistics(args: argparse.Namespace) -> Statistics:
    """How the figures are estimated: --n-bootstrap, --min-group-size and --seed."""
    return Statistics(
        n_bootstrap=args.n_bootstrap, min_group_size=args.min_group_size, random_state=args.seed
    )


def _global(
    args: argparse.Namespace, method: Any, pool: Any, constraints: Any, data: Any, result: Any
) -> Any:
    """With --global K: the global recourse actions (:func:`counterfact.global_recourse`)."""
    if args.global_k is None:
        return None
    found = global_recourse(
        method,
        pool,
        max_actions=args.global_k,
        groups=split_list(args.groups) or None,
        measure=args.cost or "effort",
        constraints=constraints,
        target=_target(args),
        individual=result,
        max_cost_ratio=args.global_max_cost_ratio,
        data=data,
        bins=args.bins,
        search=ActionSearch(max_features=args.global_features, solver=args.global_solver),
        statistics=_statistics(args),
    )
    info(args, f"{found!r}")
    return found


def _check_report_deps() -> None:
    """Every package the HTML report needs, named in one error with the extra that brings them."""
    missing = [name for name in ("jinja2", "matplotlib") if not is_available(name)]
    if missing:
        verb = "is" if len(missing) == 1 else "are"
        raise MissingDependencyError(
            f"the audit's HTML report needs {' and '.join(missing)}, which {verb} not installed. "
            f"Install them with: {install_hint(missing[0])}; or pass --no-html to write the CSV "
            "and JSON files only."
        )


def _check_global(args: argparse.Namespace) -> None:
    """The --global options, checked before any work; the --global-* options need --global."""
    if args.global_k is None:
        alone = [
            f"--{dest.replace('_', '-')}"
            for dest in (*GLOBAL_DEFAULTS, "global_max_cost_ratio")
            if getattr(args, dest) is not None
        ]
        if alone:
            verb, them = ("needs", "it") if len(alone) == 1 else ("need", "them")
            raise ValidationError(
                f"{' and '.join(alone)} {verb} --global N (they shape the global actions "
                f"that it finds): add --global N, or drop {them}."
            )
        return
    for dest, value in GLOBAL_DEFAULTS.items():
        if getattr(args, dest) is None:
            setattr(args, dest, value)
    if args.global_k < 1:
        raise ValidationError(
            f"--global must be at least 1 (the number of actions). Got {args.global_k}."
        )
    if getattr(args, "horizon", None) is not None:
        raise ValidationError(
            "--global finds actions applied today and takes no timeline: drop --horizon, or "
            "--global (the audit alone honours --horizon)."
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


def _check_out(arg: str) -> None:
    """--out names a folder, or a path where one can be made (its nearest existing parent
    is a writable folder), without making it yet."""
    out = Path(arg)
    if out.exists() and not out.is_dir():
        raise ValidationError(f"--out {arg!r} is a file; pass a folder (it is created if missing).")
    parent = next((p for p in (out, *out.absolute().parents) if p.exists()), None)
    if parent is None or not parent.is_dir() or not can_write_in(parent):
        raise ValidationError(
            f"--out {arg!r} cannot be created: {parent} is not a writable folder."
        )


def _out_dir(arg: str) -> Path:
    """The --out folder, created if missing."""
    out = Path(arg)  # checked by _check_out before any work
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
