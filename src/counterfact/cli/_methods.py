"""``counterfact methods``: the registered methods and what each declares (its tags)."""

from __future__ import annotations

import argparse
from typing import Any

from .. import methods

__all__ = ["add_parser", "methods_table", "run"]

_COLUMNS = ("class", "registry", "what it does", "paper", "proves", "needs")


def _row(name: str, cls: type[methods.CounterfactualMethod]) -> tuple[str, ...]:
    tags = cls.tags
    proves = [
        w
        for w, on in (
            ("optimality", tags.proves_optimality),
            ("infeasibility", tags.proves_infeasibility),
        )
        if on
    ]
    public = (
        f"cf.{cls.__name__}"
        if not tags.peer
        else f"{cls.__module__.rsplit('.', 1)[0]}.{cls.__name__}"
    )
    needs = f'`pip install "counterfact[{tags.extra}]"`' if tags.extra else "the core install"
    return (f"`{public}`", f"`{name}`", tags.summary, tags.paper, ", ".join(proves) or "—", needs)


def methods_table(*, peers: bool = True) -> str:
    """A Markdown table of the registered methods, from each class's tags (the README's table)."""
    classes = methods.classes(available=False, peers=peers)
    lines = ["| " + " | ".join(_COLUMNS) + " |", "| " + " | ".join("---" for _ in _COLUMNS) + " |"]
    lines += ["| " + " | ".join(_row(n, c)) + " |" for n, c in classes.items()]
    return "\n".join(lines)


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "methods",
        help="list the registered methods: what each does, proves and needs",
        description="The registered counterfactual methods and the facts each declares on its class.",
    )
    p.add_argument("--markdown", action="store_true", help="print the README's Markdown table")


def run(args: argparse.Namespace) -> int:
    if args.markdown:
        print(methods_table())
        return 0
    for name, cls in methods.classes(available=False, peers=True).items():
        row = dict(zip(_COLUMNS, _row(name, cls), strict=True))
        print(f"{name:8s} {cls.tags.display_name}: {cls.tags.summary}")
        print(
            f"{'':8s} proves: {row['proves']}; needs: {row['needs'].strip('`')}; paper: {cls.tags.paper}"
        )
    return 0
