"""The options that several subcommands share, each declared once.

``explain`` and ``audit`` read rows the same way, fit or load a model the same way,
build a method from the registry the same way and take the same constraint flags;
each group of options is one function here.
"""

from __future__ import annotations

import argparse

from .. import datasets, methods
from ..constraints._costs import MEASURES
from ..constraints._kinds import cli_arguments
from ..constraints._requirements import OWN_MEASURE
from ..models._fit import KINDS

__all__ = [
    "MEASURE_CHOICES",
    "add_constraint_flags",
    "add_method",
    "add_model",
    "add_requirements",
    "add_run",
    "add_source",
    "method_help",
]


#: the names --measure takes: the named measures and each method's own objective
MEASURE_CHOICES = [*MEASURES, OWN_MEASURE]

#: the kinds' value shapes read as a list of features: a repeated flag adds to the list
LIST_SHAPES = ("names", "names_or_all")

#: seconds per row and setting under --robustness when the method has no time limit of
#: its own and --time-limit is not given (``_commands.bound_robustness``)
ROBUSTNESS_TIME_LIMIT = 10.0


def add_source(p: argparse.ArgumentParser, *, list_datasets: bool = True) -> None:
    """--dataset or --data (with --target): where the rows come from; --units: the units
    of its numeric features, used in the answers' words."""
    src = p.add_mutually_exclusive_group()
    listed = f": {', '.join(datasets.names())}" if list_datasets else ""
    src.add_argument(
        "--dataset",
        default="german_credit",
        metavar="NAME",
        help=f"a dataset of the package (default german_credit){listed}",
    )
    src.add_argument(
        "--data", metavar="FILE", help="a CSV file of your own, header row first (needs --target)"
    )
    p.add_argument("--target", metavar="COLUMN", help="the target column of --data")
    p.add_argument(
        "--units",
        action="append",
        metavar="F=UNIT,...",
        help="units of numeric features, shown in the answers (e.g. income=USD,"
        "loan_term=months); a bundled dataset has its own, which these replace (repeatable)",
    )


def add_model(p: argparse.ArgumentParser, *, default: str) -> None:
    """--model KIND, or --model-file (an .onnx file, or a pickle with
    --allow-unsafe-model-load)."""
    p.add_argument(
        "--model",
        choices=list(KINDS),
        metavar="KIND",
        help=f"model kind to fit (default {default}): {', '.join(KINDS)}",
    )
    p.add_argument(
        "--model-file",
        metavar="FILE",
        help="a fitted model: an .onnx file (loads safely), or a joblib/pickle file "
        "(needs --allow-unsafe-model-load)",
    )
    p.add_argument(
        "--allow-unsafe-model-load",
        action="store_true",
        help="acknowledge that loading a joblib/pickle --model-file runs code from it",
    )
    p.set_defaults(model_default=default)  # --model left out (``_args.settle``)


def method_help(choices: list[str], what: str = "counterfactual method") -> str:
    """The --method help: the registry's default and choices."""
    return f"{what} (default: {methods.default_method()}): {', '.join(choices)}"


def add_method(p: argparse.ArgumentParser, *, proofs: bool = False) -> None:
    """--method (the registry's names), --param NAME=VALUE and --solver."""
    # every registered method, as 'counterfact methods' lists them; a peer whose package is
    # missing is refused with its install command when chosen (``_args.check_method``)
    choices = methods.names(available=False, peers=True)
    ready = methods.names(peers=True)
    text = method_help([n if n in ready else f"{n} (not installed)" for n in choices])
    if proofs:
        proving = [n for n in choices if methods.get_class(n).tags.proves_infeasibility]
        text += f"; {' and '.join(proving)} can prove that no recourse exists"
    p.add_argument("--method", choices=choices, metavar="METHOD", help=text)
    p.add_argument(
        "--param",
        action="append",
        metavar="NAME=VALUE",
        help="a method parameter, e.g. time_limit=10 (repeatable)",
    )
    p.add_argument(
        "--solver",
        metavar="NAME",
        help="the method's solver, for methods that offer a choice (their solver parameter)",
    )


def add_constraint_flags(p: argparse.ArgumentParser) -> None:
    """The constraint flags, merged into --constraints FILE (keys as cf.Constraints)."""
    for kind, form in cli_arguments():  # one flag per kind that has one
        kwargs = form.argparse_kwargs()
        if kind.shape in LIST_SHAPES:  # given again: more features of the same kind
            kwargs.update(action="append", help=f"{form.help} (repeatable)")
        p.add_argument(form.flag, **kwargs)
    p.add_argument(
        "--constraints",
        metavar="FILE",
        help="a YAML or JSON file of constraints (keys as cf.Constraints)",
    )


def add_run(p: argparse.ArgumentParser, *, seed_help: str, rows: str, queries: bool = True) -> None:
    """--seed, --time-limit, --test-size and --n-jobs."""
    p.add_argument("--seed", type=int, help=f"{seed_help} (default 0)")
    p.add_argument(
        "--time-limit",
        type=float,
        metavar="SECONDS",
        help="time limit per row, for methods that have one (under --robustness, per row and "
        f"setting tried, {ROBUSTNESS_TIME_LIMIT:g} s when not given: a row may take several "
        "times the limit)",
    )
    p.add_argument(
        "--test-size",
        type=float,
        help=f"share of a --dataset held out as {rows} (default 0.2; not with --data"
        + (" or --queries)" if queries else ")"),
    )
    p.add_argument(
        "--n-jobs", type=int, default=1, help="parallel workers (-1: all cores; default 1)"
    )


def add_requirements(p: argparse.ArgumentParser, *, probability: str, robust: str) -> None:
    """--min-probability P, --robust-to N, --robustness P, --min-vote-share S and --measure
    NAME (see cf.Requirements), the first two with the command's help texts."""
    p.add_argument("--min-probability", type=float, metavar="P", help=probability)
    p.add_argument("--robust-to", type=int, default=0, metavar="N", help=robust)
    p.add_argument(
        "--robustness",
        type=float,
        metavar="P",
        help="the share of retrained models that should still accept each answer "
        "(0 < P < 1, e.g. 0.95): the model is retrained on resamples, each row gets the "
        "cheapest setting whose answer reaches P (else its most robust answer, and by how "
        "much it falls short), and each answer is reported with its estimate; not with "
        "--robust-to",
    )
    p.add_argument(
        "--min-vote-share",
        type=float,
        metavar="S",
        help="random forests and extra-trees: at least a share S of the trees vote for the "
        "desired class (0 < S <= 1; cf.vote_share_for(n_trees, alpha) gives Forel et al.'s "
        "threshold)",
    )
    p.add_argument(
        "--measure",
        choices=MEASURE_CHOICES,
        metavar="NAME",
        help="what 'smaller' means: the measure every method minimises, ranks its answers by "
        "and reports (default effort: 1 per changed feature plus each move in MADs, the "
        "median absolute deviations of the training data); fewest-changes, smallest-moves, "
        f"range-l1, or {OWN_MEASURE} (each method's own objective, as in its paper)",
    )
