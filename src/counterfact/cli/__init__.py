"""The ``counterfact`` command: datasets, explain, demo, benchmark, report, audit.

The command line only parses arguments and calls the public API.  Every user
error prints one line ``counterfact: error: <what, and how to fix it>`` on
standard error and exits with status 2 (``--debug`` shows the traceback);
standard output carries only the requested output (solver logs go to standard
error), so ``--format json`` and ``--format csv`` always parse.

Subcommands of optional parts of the package (``serve``) are added when their
module is importable: each provides ``add_parser(subparsers)``.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import sys
import warnings
from collections.abc import Sequence
from typing import Any, NoReturn

from .. import methods
from .._utils._version import __version__
from ..exceptions import CounterfactError
from ..models._fit import KINDS
from ._audit import add_audit
from ._commands import cmd_benchmark, cmd_datasets, cmd_demo, cmd_explain, cmd_report
from ._methods import add_parser as add_methods
from ._methods import run as run_methods
from ._options import (
    add_constraint_flags,
    add_method,
    add_model,
    add_requirements,
    add_run,
    add_source,
    method_help,
)

__all__ = ["build_parser", "main"]

#: modules that may register extra subcommands (``add_parser(subparsers)``)
EXTRA_COMMANDS = ("counterfact.serve._cli",)

_UNSAFE_EPILOG = (
    "Loading a pickled/joblib model runs arbitrary code from the file: only load files you "
    "trust. A pickle --model-file therefore requires --allow-unsafe-model-load; an ONNX file "
    "(--model-file model.onnx) is data, runs nothing from the file and needs no flag."
)

_EXPLAIN_EPILOG = (
    """\
Which rows are explained:
  --dataset NAME   rows of the held-out test split (--test-size, --seed); the model is fitted
                   on the rest (or given with --model-file).
  --data FILE      rows of your own CSV file, numbered 0, 1, ... in file order; the model is
                   fitted on the whole file (or given with --model-file) and the methods learn
                   from the whole file.
  --queries FILE   rows of a separate CSV (same feature columns; a target column is ignored),
                   explained against a model fitted on --data/--dataset or given with --model-file.
By default only rows the model does not already assign to the desired class are explained
(--target-class, else the dataset's favourable class, else the model's last class), and only
the first 5 of them unless --rows is given; --all-rows keeps the others (they get status
'failed').

"""
    + _UNSAFE_EPILOG
)


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one ``counterfact: error:`` line (exit 2)."""

    def error(self, message: str) -> NoReturn:
        hint = f" (see '{self.prog} --help')"
        sys.stderr.write(f"counterfact: error: {message}{hint}\n")
        raise SystemExit(2)


def _common() -> argparse.ArgumentParser:
    """-v/-q/--debug, accepted before or after the subcommand."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        default=argparse.SUPPRESS,
        help="show progress bars and the methods' own progress (verbose=1)",
    )
    p.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        default=argparse.SUPPRESS,
        help="print only the output: no status lines, no progress bars",
    )
    p.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="show the full traceback of an error",
    )
    return p


def _add_explain(sub: Any, common: argparse.ArgumentParser) -> None:
    e = sub.add_parser(
        "explain",
        parents=[common],
        help="explain rows of a dataset, of your CSV file, or of a queries file",
        description="Counterfactual explanations for rows of a dataset.",
        epilog=_EXPLAIN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_source(e)
    e.add_argument(
        "--queries",
        metavar="FILE",
        help="a CSV of rows to explain, separate from the training data",
    )
    add_model(e, default="rf")
    add_method(e)
    _add_rows(e)
    add_constraint_flags(e)
    _add_output(e)
    add_run(e, seed_help="random seed of the split, the model and the method", rows="test rows")
    add_requirements(
        e,
        probability="each answer's probability of the desired class at least P "
        "(a margin; 0 < P < 1)",
        robust="answers must also hold for N copies of the model retrained on resamples "
        "(default 0)",
    )
    e.add_argument(
        "--regions",
        action="store_true",
        help="also show each answer's certified region: the box of values that all work",
    )
    e.set_defaults(func=cmd_explain)


def _add_rows(e: argparse.ArgumentParser) -> None:
    """Which rows are explained, how many answers each, towards which class."""
    e.add_argument(
        "--rows",
        action="append",
        metavar="ROWS",
        help="row positions: '0:5', '3,7,9', '10:' or ':' for all "
        "(default: the first 5 to explain; repeatable)",
    )
    e.add_argument(
        "--all-rows",
        action="store_true",
        help="also explain rows already predicted as the desired class",
    )
    e.add_argument(
        "-n",
        "--n-counterfactuals",
        type=int,
        default=1,
        metavar="N",
        help="counterfactuals per row (default 1)",
    )
    e.add_argument(
        "--target-class",
        metavar="CLASS",
        help="the desired class (default: the dataset's favourable class; "
        "needed for multi-class models)",
    )


def _add_output(e: argparse.ArgumentParser) -> None:
    """--format, --out and --class-names."""
    e.add_argument(
        "--format",
        choices=["table", "csv", "json"],
        default="table",
        help="output format (default table)",
    )
    e.add_argument(
        "--out", metavar="FILE", help="write the output to FILE instead of standard output"
    )
    e.add_argument(
        "--class-names",
        action="append",
        metavar="C=NAME,...",
        help="names of the classes in the table, e.g. 0=rejected,1=approved "
        "(default: the dataset's; repeatable)",
    )


def _add_datasets(sub: Any, common: argparse.ArgumentParser) -> None:
    d = sub.add_parser("datasets", parents=[common], help="list the datasets, or describe one")
    d.add_argument("name", nargs="?", help="a dataset to describe (default: list them all)")
    d.add_argument(
        "--load",
        action="store_true",
        help="also load a dataset that is not bundled (from its path/env var)",
    )
    d.set_defaults(func=cmd_datasets)


def _add_demo(sub: Any, common: argparse.ArgumentParser) -> None:
    m = sub.add_parser(
        "demo",
        parents=[common],
        help="explain a few rejected German Credit applicants",
        description="Explain a few rejected German Credit applicants. The demo shows the "
        "method's progress without -v; -q hides it.",
    )
    choices = methods.names()
    m.add_argument("--method", choices=choices, metavar="METHOD", help=method_help(choices))
    m.add_argument(
        "--model",
        default="lr",
        choices=list(KINDS),
        metavar="KIND",
        help=f"model kind (default lr): {', '.join(KINDS)}",
    )
    m.add_argument(
        "--rows", type=int, default=3, help="how many rejected applicants to explain (default 3)"
    )
    m.add_argument(
        "--horizon",
        type=int,
        default=12,
        metavar="N",
        help="answers may take up to N months: age and tenure move with them (default 12)",
    )
    m.add_argument(
        "-n",
        "--n-counterfactuals",
        type=int,
        default=2,
        metavar="N",
        help="counterfactuals per applicant (default 2)",
    )
    m.add_argument("--out", metavar="FILE", help="also write the result as JSON to FILE")
    m.set_defaults(func=cmd_demo)


def _add_benchmark(sub: Any, common: argparse.ArgumentParser) -> None:
    b = sub.add_parser(
        "benchmark",
        parents=[common],
        help="run a benchmark spec (YAML); exits 1 if any cell errored",
        description="Run every cell (dataset x model x method x seed) of a benchmark spec into "
        "--out, resuming the cells already there. A progress bar over the cells shows on "
        "standard error unless -q; the methods run quietly.",
    )
    b.add_argument("spec", help="the spec file (YAML or JSON), e.g. benchmarks/papers/mace.yaml")
    b.add_argument(
        "--out", default="results", metavar="DIR", help="results folder (default results)"
    )
    b.add_argument(
        "--no-resume", action="store_true", help="run every cell again, even those already in --out"
    )
    b.add_argument("--n-jobs", type=int, default=1, help="parallel workers per cell (default 1)")
    b.add_argument(
        "--full",
        action="store_true",
        help="run the protocol at the paper's size (the spec's 'full:' section: queries, seeds, "
        "folds); resumable: run the same command again to go on",
    )
    b.add_argument(
        "--queries",
        type=int,
        help="cap the queries per dataset (a quicker run of the same protocol)",
    )
    b.add_argument(
        "--time-limit",
        type=float,
        metavar="SECONDS",
        help="seconds per query, replacing the spec's time_limit",
    )
    b.set_defaults(func=cmd_benchmark)


def _add_report(sub: Any, common: argparse.ArgumentParser) -> None:
    r = sub.add_parser("report", parents=[common], help="render a report from benchmark results")
    r.add_argument("results", help="a results folder written by 'counterfact benchmark'")
    r.add_argument(
        "--format", choices=["html", "md"], default="html", help="report format (default html)"
    )
    r.add_argument("--out", metavar="FILE", help="where to write the report")
    r.set_defaults(func=cmd_report)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests)."""
    common = _common()
    p = _Parser(
        prog="counterfact",
        parents=[common],
        description="Counterfactual explanations for tabular classifiers: what is the smallest "
        "realistic change to a row that flips the model's decision?",
    )
    p.add_argument(
        "--version",
        action="version",
        version=f"counterfact {__version__}",
        help="print the version and exit",
    )
    sub: Any = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_datasets(sub, common)
    _add_explain(sub, common)
    _add_demo(sub, common)
    _add_benchmark(sub, common)
    _add_report(sub, common)
    add_methods(sub)
    sub.choices["methods"].set_defaults(func=run_methods)
    _add_common(sub.choices["methods"])
    _add_extra_commands(sub)
    add_audit(sub, common)
    return p


def _add_extra_commands(sub: Any) -> None:
    """The subcommands of :data:`EXTRA_COMMANDS` whose module imports."""
    for module in EXTRA_COMMANDS:
        try:
            mod = importlib.import_module(module)
        except ImportError:  # an optional part that is not installed: no subcommand
            continue
        add = getattr(mod, "add_parser", None)
        if callable(add):
            before = set(sub.choices)
            add(sub)
            for name in set(sub.choices) - before:
                _add_common(sub.choices[name])


def _add_common(parser: argparse.ArgumentParser) -> None:
    """-v/-q/--debug after an extra subcommand too (unless it defines them itself)."""
    for action in _common()._actions:
        try:
            parser.add_argument(
                *action.option_strings,
                action="store_true",
                default=argparse.SUPPRESS,
                help=action.help,
            )
        except argparse.ArgumentError:
            continue


def _show_warning(message: Any, category: Any, *_: Any, **__: Any) -> None:
    """A warning as one ``counterfact: warning: ...`` line on standard error."""
    print(f"counterfact: warning: {' '.join(str(message).split())}", file=sys.stderr)


def _unrecognized(parser: argparse.ArgumentParser, args: Any, extra: list[str]) -> NoReturn:
    """Refuse arguments the subcommand does not know, in its own words (its ``--help``),
    naming its option closest to each unknown one."""
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    own = subs.choices.get(getattr(args, "command", None), parser)
    options = [o for a in own._actions for o in a.option_strings if o.startswith("--")]
    close = {
        e: m[0]
        for e in extra
        if e.startswith("--") and (m := difflib.get_close_matches(e.split("=")[0], options, 1, 0.7))
    }
    said = "; ".join(f"{e.split('=')[0]}: did you mean {m}?" for e, m in close.items())
    own.error(f"unrecognized arguments: {' '.join(extra)}" + (f" ({said})" if said else ""))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``counterfact`` command; returns the exit status."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        _unrecognized(parser, args, extra)
    for flag in ("verbose", "quiet", "debug"):
        if not hasattr(args, flag):
            setattr(args, flag, False)
    if args.verbose and args.quiet:
        parser.error("-v/--verbose and -q/--quiet exclude each other")
    saved = os.environ.get("TQDM_DISABLE")
    if args.quiet:
        os.environ["TQDM_DISABLE"] = "1"
    try:
        with warnings.catch_warnings():
            if not args.debug:  # a warning is one line in the command line's words
                warnings.showwarning = _show_warning
            return int(args.func(args) or 0)
    except CounterfactError as exc:
        if args.debug:
            raise
        print(f"counterfact: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("counterfact: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader stopped early (`counterfact methods | head`): not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # a bug, not a user error: one line, the traceback under --debug
        if args.debug:
            raise
        msg = " ".join(str(exc).split())[:300]
        print(
            f"counterfact: error: internal error {type(exc).__name__}: {msg} "
            "(run again with --debug for the traceback, and please report it)",
            file=sys.stderr,
        )
        return 1
    finally:
        if args.quiet:
            if saved is None:
                os.environ.pop("TQDM_DISABLE", None)
            else:
                os.environ["TQDM_DISABLE"] = saved
