"""GreedySearch: change one feature at a time, the change that helps the model most."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from counterfact import ValidationError
from counterfact.methods import Candidates, CounterfactualMethod, MethodTags, Query

__all__ = ["GreedySearch"]

#: the constraint kinds honoured: every candidate is filtered with the query's bounds
HONOURED = frozenset(
    {
        "immutable",
        "increasing",
        "decreasing",
        "ranges",
        "allowed_values",
        "features_to_vary",
        "max_changes",
        "relations",
    }
)


class GreedySearch(CounterfactualMethod):
    """A greedy search: from the row, change one feature at a time.

    At each step every single-feature change to a few candidate values (the
    training data's quantiles for a numeric feature, every category for a
    categorical one) is scored by the model's probability of the target; rows
    the model already assigns to the target are the answers, nearest first (fewest
    changed features, then the smallest range-normalised change).  Otherwise the
    search moves to the change that raised the probability most, and stops after
    ``max_steps`` steps or when no change raises it.

    What it proves: nothing.  An answer is a valid counterfactual (the library
    checks it with the real model and the constraints), but a nearer one may
    exist; "none found" is not a proof that none exists.

    Parameters
    ----------
    max_steps : int
        Features changed at most (one per step).
    n_values : int
        Candidate values per numeric feature (quantiles of the training data).
    random_state : int, optional
        Unused (the search is deterministic); kept for the common interface.
    time_limit : float, optional
        Seconds per row; the search stops with status ``timeout`` when it runs out.
    """

    name: ClassVar[str] = "greedy"
    tags: ClassVar[MethodTags] = MethodTags(
        display_name="greedy search",
        summary="changes one feature at a time, the change that most raises the model's "
        "probability of the target (no proof)",
        constraints=HONOURED,
        fast_params={"max_steps": 4, "n_values": 6},
    )

    def __init__(
        self,
        *,
        max_steps: int = 5,
        n_values: int = 8,
        random_state: int | None = None,
        time_limit: float | None = None,
    ) -> None:
        self.max_steps = max_steps
        self.n_values = n_values
        self.random_state = random_state
        self.time_limit = time_limit

    def _check_params(self) -> None:
        for name, least in (("max_steps", 1), ("n_values", 2)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValidationError(
                    f"The '{name}' parameter of {type(self).__name__} must be an integer "
                    f">= {least}. Got {value!r}."
                )

    def _fit(self) -> None:
        """The candidate values of each feature, from the training data."""
        levels = np.linspace(0.0, 1.0, self.n_values)
        self._values: dict[str, list[Any]] = {}
        for f in self.schema_:
            if f.is_numeric:
                column = self.data_.X[f.name].astype(float)
                values = sorted({f.snap(v) for v in column.quantile(levels)})
            else:
                values = list(f.categories or ())
            self._values[f.name] = values

    @classmethod
    def certificate(cls, status: str, diagnostics: Mapping[str, Any] | None = None) -> str:
        if status in ("optimal", "feasible"):
            return f"{cls.tags.display_name}: a valid counterfactual, not proven nearest"
        return super().certificate(status, diagnostics)

    def _explain_one(self, query: Query) -> Candidates:
        row, current = query.x.copy(), query.query_confidence
        for step in range(self.max_steps):
            if query.expired():
                return Candidates(_empty(query), "timeout", {"steps": step})
            moves = self._moves(query, row)
            if moves.empty:
                break
            scores = self.model_.predict_proba(moves)[:, query.target_index]
            reached = np.asarray(self.model_.predict(moves) == query.target, dtype=bool)
            if reached.any():
                answers = self._nearest_first(query, moves[reached])
                return Candidates(answers, "feasible", {"steps": step + 1})
            best = int(np.argmax(scores))
            if scores[best] <= current:
                break
            row, current = moves.iloc[best], float(scores[best])
        reason = "no single change raised the model's probability of the target further"
        return Candidates(_empty(query), "failed", {"reason": reason})

    def _moves(self, query: Query, row: pd.Series) -> pd.DataFrame:
        """Every row one feature away from ``row`` that satisfies the query's bounds."""
        out = []
        for name in query.bounds.mutable:
            for value in self._values[name]:
                if value != row[name]:
                    moved = row.copy()
                    moved[name] = value
                    out.append(moved)
        if not out:
            return _empty(query)
        frame = pd.DataFrame(out).reset_index(drop=True).astype(query.x.to_frame().T.dtypes)
        keep = np.asarray(query.bounds.satisfied(frame), dtype=bool)
        return frame[keep].reset_index(drop=True)

    def _nearest_first(self, query: Query, rows: pd.DataFrame) -> pd.DataFrame:
        """``rows`` by the number of changed features, then the range-normalised change."""
        n_changed = np.zeros(len(rows))
        size = np.zeros(len(rows))
        for f in self.schema_:
            if f.is_numeric:
                step = np.abs(rows[f.name].astype(float) - float(query.x[f.name])) / f.range
            else:
                step = (rows[f.name] != query.x[f.name]).astype(float)
            n_changed += np.asarray(step > 0, dtype=float)
            size += np.asarray(step, dtype=float)
        order = np.lexsort((size, n_changed))
        return rows.iloc[order].reset_index(drop=True)


def _empty(query: Query) -> pd.DataFrame:
    return query.x.to_frame().T.iloc[0:0]
