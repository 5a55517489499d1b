"""Recourse cards: a few queries per cell, each with only the features its
counterfactuals change (at each feature's resolution), the probability of the
target before and after, and the method's guarantee in words."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..result import CounterfactualResult

__all__ = ["Card", "CardAnswer", "collect_cards"]


@dataclass
class CardAnswer:
    """One counterfactual of a card."""

    rank: int
    changes: list[Any]  # counterfact.result._text.Change
    after: str  # P(target) of the counterfactual, formatted


@dataclass
class Card:
    """One query of one cell."""

    cell: str
    cell_id: str
    query: str
    status: str
    target: str
    before: str  # P(target) of the query, formatted
    certificate: str
    reason: str
    answers: list[CardAnswer] = field(default_factory=list)


def _prob(v: Any) -> str:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return "?"
    return "?" if math.isnan(f) else f"{f:.3f}"


def collect_cards(out: Path, limit: int) -> list[Card]:
    """Up to ``limit`` cards per finished cell of a results folder."""
    cards: list[Card] = []
    for meta_path in sorted((out / "cells").glob("*.json")):
        if meta_path.name.endswith(".result.json"):
            continue
        meta = json.loads(meta_path.read_text())
        if meta.get("status") != "done":
            continue
        r = CounterfactualResult.from_json(
            (out / "cells" / f"{meta['cell']}.result.json").read_text()
        )
        reasons = r.reason
        for q in list(r.queries.index)[:limit]:
            card = Card(
                cell=f"{meta['dataset']} / {meta['model']} / {meta['method']}",
                cell_id=str(meta["cell"]),
                query=str(q),
                status=str(r.status[q]),
                target=str(r.target[q]),
                before=_prob(r.query_confidence.get(q)),
                certificate=r.certificate(q),
                reason=str(reasons[q]),
            )
            for rank in r.for_query(q).sort_index().index:
                card.answers.append(
                    CardAnswer(int(rank), r.changes(q, rank), _prob(r.confidence.get((q, rank))))
                )
            cards.append(card)
    return cards
