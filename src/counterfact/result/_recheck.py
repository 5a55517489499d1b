"""A result read from a file, re-checked with the model: every claim the file makes that
the model can test.

* every counterfactual: the model predicts its query's target, with the margin
  (``requirements.min_probability``) and, for a forest, the trees' votes
  (``requirements.min_vote_share``, counted from its trees), and satisfies the
  query's constraints;
* every other model it is given (``robust_to``): the same decision and margin; without
  them a claim to hold for other models is "not re-checked", and says so; a robustness
  estimate (``Requirements(robustness=p)``) is always "not re-checked" there, since its
  retrained copies are not saved;
* the proofs (``optimal``, ``infeasible`` and their certificates' bounds) cannot be
  re-checked by a model: in a file whose hash does not vouch for them, a note says so;
* every region: the real model (and the margin, and every other model given) at all
  its corners (at most :data:`CHECK_CORNERS`, a seeded sample beyond) and at
  :data:`CHECK_INSIDE` seeded points inside, half of them on the features' grids.

An answer or a region that the model contradicts is refused (a
:class:`~counterfact.exceptions.ValidationError` naming it), as the library
never returns an answer its checks reject.  A certified region that passes, in a
file whose hash does not vouch for it, is kept as "checked", not "certified":
sampling is a check, not the proof.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from .._utils._values import _py
from ..constraints import Constraints
from ..constraints._votes import votes_needed
from ..exceptions import ValidationError
from ..models._adapter import ModelAdapter, as_adapter
from ..models._votes import forest_of, tree_votes
from ..schema import Schema
from ._points import CHECK_CORNERS, CHECK_INSIDE, corner_values, inside_values
from ._region import Region

__all__ = ["Recheck", "recheck"]

_SEED = 0
#: how far below the margin a probability may fall (floating-point noise only)
_TOL = 1e-12


@dataclass(frozen=True)
class Recheck:
    """The models a loaded result is re-checked with (see the module docstring).

    Attributes
    ----------
    model : ModelAdapter
        The explained model.
    others : tuple of ModelAdapter
        The other models the answers claim to hold for (``robust_to``).
    min_probability : float or None
        The least probability of the target, in every model.
    min_vote_share : float or None
        The least share of a forest's trees voting for the target, in every model.
    """

    model: ModelAdapter
    others: tuple[ModelAdapter, ...]
    min_probability: float | None
    min_vote_share: float | None = None

    def failures(self, rows: pd.DataFrame, targets: Sequence[Any]) -> list[str | None]:
        """Per row, why it does not reach its target in words (None: it does)."""
        out: list[str | None] = [None] * len(rows)
        named = [("the model", self.model)]
        named += [(f"robust_to[{k}]", m) for k, m in enumerate(self.others)]
        for name, adapter in named:
            if not len(rows):
                break
            pred, proba = adapter.predict_with_proba(rows)
            cols = [adapter.class_index(t) for t in targets]
            conf = np.asarray(proba)[np.arange(len(rows)), cols]
            for i, (p, t, c) in enumerate(zip(pred, targets, conf, strict=True)):
                if out[i] is None:
                    out[i] = self._failure(name, p, t, float(c))
            self._vote_failures(name, adapter, rows, targets, out)
        return out

    def _vote_failures(
        self,
        name: str,
        adapter: ModelAdapter,
        rows: pd.DataFrame,
        targets: Sequence[Any],
        out: list[str | None],
    ) -> None:
        """Under ``min_vote_share``: mark the rows, not failed yet, whose target fewer than
        the share of the forest's trees vote for (counted from the trees)."""
        share = self.min_vote_share
        if share is None:
            return
        forest = forest_of(
            adapter, f"{name} given to from_json", instead="Pass the forest that was explained."
        )
        need = votes_needed(share, len(forest.estimators_))
        votes = tree_votes(adapter, rows)
        for i, t in enumerate(targets):
            got = int(votes[i, adapter.class_index(t)])
            if out[i] is None and got < need:
                out[i] = (
                    f"{got} of {len(forest.estimators_)} trees of {name} vote for the target, "
                    f"fewer than the min_vote_share {share:g} asks ({need})"
                )

    def _failure(self, name: str, predicted: Any, target: Any, conf: float) -> str | None:
        if predicted != target:
            return f"{name} predicts {_py(predicted)!r}, not the target {_py(target)!r}"
        p = self.min_probability
        if p is not None and conf < p - _TOL:
            return (
                f"{name} gives the target a probability of {conf:.4f}, below the "
                f"min_probability {p:g}"
            )
        return None


def recheck(
    result: Any, model: Any, robust_to: Sequence[Any] | None, *, protected: bool
) -> tuple[dict[str, Any], list[str]]:
    """The constructor's keywords of ``result`` re-checked with ``model`` (it holds the
    model, the confidences are the model's, certified regions that only a check now
    supports are "checked"), and the notes on what was not re-checked.

    ``protected``: whether a matching hash vouches for the file's claims (its proofs
    and its other models).  Raises ValidationError naming every answer and region that
    the models contradict."""
    judge = _judge(result, model, robust_to)
    parts = {**result.parts(), "model": judge.model}  # the adapter, as explain keeps it
    parts.update(_confidences(result, judge.model))
    problems = _answer_problems(result, judge)
    regions, region_problems, notes = _regions(result, judge, protected)
    problems += region_problems
    if problems:
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        raise ValidationError(
            f"Result document: {len(problems)} claims fail the re-check with the given "
            f"model: {'; '.join(problems[:5])}{more}. Is it the model the result was "
            "explained with?"
        )
    parts["regions"] = regions
    return parts, [
        *_robust_notes(result, robust_to, protected),
        *_robustness_notes(result, protected),
        *_proof_notes(result, protected),
        *notes,
    ]


def _judge(result: Any, model: Any, robust_to: Sequence[Any] | None) -> Recheck:
    """The models to re-check with, the other ones checked against the document."""
    adapter = as_adapter(model, result.schema)
    claimed = int(result.requirements.get("robust_to") or 0)
    given = list(robust_to or [])
    if given and len(given) != claimed:
        raise ValidationError(
            f"from_json: robust_to lists {len(given)} models, but the document's answers were "
            f"asked to hold for {claimed} other models; pass exactly those "
            + ("models." if claimed else "(none: leave robust_to out).")
        )
    others = tuple(as_adapter(m, result.schema) for m in given)
    for k, other in enumerate(others):
        if set(other.classes_.tolist()) != set(adapter.classes_.tolist()):
            raise ValidationError(
                f"robust_to[{k}] has classes {other.classes_.tolist()}; the model has "
                f"{adapter.classes_.tolist()}. Every model must decide between the same classes."
            )
    req = result.requirements
    return Recheck(adapter, others, req.get("min_probability"), req.get("min_vote_share"))


def _robust_notes(result: Any, robust_to: Sequence[Any] | None, protected: bool) -> list[str]:
    claimed = int(result.requirements.get("robust_to") or 0)
    if not claimed or robust_to or protected:
        return []
    return [
        f"Its answers were asked to hold for {claimed} other model"
        f"{'s' if claimed != 1 else ''} as well; that was not re-checked (pass them to "
        "from_json as robust_to=[...])."
    ]


def _proof_notes(result: Any, protected: bool) -> list[str]:
    """In a file whose hash does not vouch for it: its proofs (the rows said ``optimal``
    or ``infeasible``, and their certificates' bounds) are its own words, since a model
    can check an answer but not that no better one exists."""
    proven = int(result.status.isin(["optimal", "infeasible"]).sum())
    if protected or not proven:
        return []
    rows = f"{proven} row{'s' if proven != 1 else ''}"
    return [
        f"Its proofs were not re-checked: {rows} say 'optimal' or 'infeasible' and their "
        "certificates state bounds, but the file's hash does not vouch for them and a model "
        "can check an answer, not that no better one exists; explain again to prove them anew."
    ]


def _robustness_notes(result: Any, protected: bool) -> list[str]:
    """Under ``Requirements(robustness=p)``, in a file whose hash does not vouch for it:
    the held-out copies' counts (and so each estimate and ``reached``) and the setting
    each row kept cannot be re-checked with the model alone, since the copies are not
    saved with the result."""
    if protected or result.requirements.get("robustness") is None:
        return []
    return [
        "Its answers' robustness (how many held-out retrained copies accept each, and the "
        "margin or vote share of the setting each row kept) was not re-checked: the copies "
        "are not saved with the result; explain again to re-estimate it."
    ]


def _confidences(result: Any, adapter: ModelAdapter) -> dict[str, pd.Series]:
    """The model's probability of the target for every query and counterfactual."""
    out = {}
    for key, frame, owners in (
        ("query_confidence", result.queries, result.queries.index),
        (
            "confidence",
            result.counterfactuals,
            result.counterfactuals.index.get_level_values(0) if len(result.counterfactuals) else [],
        ),
    ):
        if not len(frame):
            continue
        _, proba = adapter.predict_with_proba(frame)
        cols = [adapter.class_index(t) for t in result.target.reindex(owners)]
        out[key] = pd.Series(
            np.asarray(proba)[np.arange(len(cols)), cols], index=frame.index, dtype=float
        )
    return out


def _answer_problems(result: Any, judge: Recheck) -> list[str]:
    """Every counterfactual the models reject, and every constraint one violates."""
    cfs = result.counterfactuals
    if not len(cfs):
        return []
    want = result.target.reindex(cfs.index.get_level_values(0)).tolist()
    problems = [
        f"(query {q!r}, rank {r}): {why}"
        for (q, r), why in zip(cfs.index, judge.failures(cfs, want), strict=True)
        if why is not None
    ]
    return problems + _violations(result)


def _violations(result: Any) -> list[str]:
    """Every constraint a counterfactual of ``result`` violates, in words."""
    cfs, out = result.counterfactuals, []
    for q in dict.fromkeys(cfs.index.get_level_values(0)):
        rows = cfs.xs(q, level=0, drop_level=False)
        c = result.constraints_for(q) or Constraints()
        table = c.violations(result.queries.loc[q], rows.set_axis(range(len(rows))), result.schema)
        for _, v in table.iterrows():
            rank = rows.index[int(v["row"])][1]
            out.append(f"(query {q!r}, rank {rank}): {v['kind']} {v['feature']}: {v['detail']}")
    return out


def _regions(
    result: Any, judge: Recheck, protected: bool
) -> tuple[dict[tuple[Any, int], Region], list[str], list[str]]:
    """The regions re-checked: kept, or "checked" where only the check supports a certified
    one; the problems (regions the models contradict) and the notes."""
    kept, problems, dropped, sampled = {}, [], 0, 0
    for (q, r), region in result.regions.items():
        rows, capped = region_points(region, result.schema, result.counterfactuals.loc[(q, r)])
        sampled += capped
        why = judge.failures(rows, [result.target[q]] * len(rows))
        bad = [i for i, w in enumerate(why) if w is not None]
        if bad:
            point = _point(rows.iloc[bad[0]], region)
            problems.append(
                f"the region of (query {q!r}, rank {r}): at {point}, {why[bad[0]]} "
                f"({len(bad)} of the {len(rows)} points checked fail)"
            )
        elif region.certified and not protected:
            dropped += 1
            region = replace(region, certified=False, n_checked=len(rows), how=_checked_how(region))
        kept[(q, r)] = region
    notes = [_dropped_note(dropped)] if dropped else []
    if sampled:
        notes.append(
            f"{sampled} regions have more than {CHECK_CORNERS} corners: a seeded sample of "
            f"{CHECK_CORNERS} of them was checked."
        )
    return kept, problems, notes


def _checked_how(region: Region) -> str:
    return (
        f"checked with the model at its corners and {CHECK_INSIDE} points inside when read "
        f"from a file whose hash does not vouch for the proof it stated ({region.how})"
    )


def _dropped_note(n: int) -> str:
    return (
        f"{n} certified region{'s' if n != 1 else ''} kept as checked, not proven: the file's "
        "hash does not vouch for the proof, and checking points is not a proof."
    )


def _point(row: pd.Series, region: Region) -> str:
    """The region's features at one checked point, in words."""
    return ", ".join(f"{name}={_py(row[name])!r}" for name in region.bounds) or "its point"


def region_points(region: Region, schema: Schema, base: pd.Series) -> tuple[pd.DataFrame, bool]:
    """The points of ``region`` to check (:mod:`counterfact.result._points`: its corners
    and :data:`CHECK_INSIDE` seeded points inside); the other features at ``fixed`` (else
    ``base``, its counterfactual).  Also whether the corners were sampled."""
    rng = np.random.default_rng(_SEED)
    corners, sampled = corner_values(region.bounds, rng)
    inside = inside_values(region.bounds, schema, rng)
    row = {**{k: _py(v) for k, v in base.items()}, **dict(region.fixed)}
    n = len(next(iter(corners.values()))) if corners else 1
    columns = {name: corners[name] + inside[name] for name in region.bounds}
    frame = pd.DataFrame([row] * (n + (CHECK_INSIDE if corners else 0)), columns=schema.names)
    for name, values in columns.items():
        frame[name] = values
    return schema.coerce(frame), sampled
