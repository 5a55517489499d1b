"""``counterfact methods``: the registered methods and what each declares (its tags)."""

from __future__ import annotations

import argparse
from typing import Any

from .. import methods
from ..methods import _registry

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
    summary, paper = tags.summary, tags.paper or "—"
    return (
        f"`{_public(name, cls)}`",
        f"`{name}`",
        summary,
        paper,
        ", ".join(proves) or "—",
        _needs(name, cls),
    )


def _public(name: str, cls: type[methods.CounterfactualMethod]) -> str:
    """Where users find the class: ``cf.X`` for the library's own methods, else its package."""
    if name in _registry.builtin_classes().values() and not cls.tags.peer:
        return f"cf.{cls.__name__}"
    return f"{cls.__module__.rsplit('.', 1)[0]}.{cls.__name__}"


def _needs(name: str, cls: type[methods.CounterfactualMethod]) -> str:
    """What to install: another package's method needs that package."""
    package = _registry.provider(name)
    if package is not None:
        return f"`pip install {package}`"
    extra = cls.tags.extra
    return f'`pip install "counterfact[{extra}]"`' if extra else "the core install"


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
        description="The registered counterfactual methods and the facts each declares on its "
        "class.",
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
            f"{'':8s} proves: {row['proves']}; needs: {row['needs'].strip('`')}; paper: "
            f"{row['paper']}"
        )
        print(f"{'':8s} honours: {_honours(cls)}")
    return 0


def _honours(cls: type[methods.CounterfactualMethod]) -> str:
    """The constraint kinds and costs a method honours (its tags), for the plain listing."""
    tags = cls.tags
    kinds = ", ".join(sorted(tags.constraints)) or "no constraint kind"
    costs = {"exact": "costs exactly", "search": "costs in its search"}.get(tags.costs or "", "")
    return kinds + (f"; {costs}" if costs else "; no costs")
