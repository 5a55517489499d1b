"""Each answer's estimated robustness: the share of retrained models that still accept it.

``explain(..., requirements=cf.Requirements(robustness=p))`` retrains the model on
bootstrap resamples of the training data and counts, for every answer, how many of the
copies never shown to the search still predict the target.  The counts travel in the
result's diagnostics (one entry per rank, :data:`ACCEPTED`) with the number of copies
(:data:`COPIES`), so that they survive a saved result; :func:`robustness_table` turns
them into the estimate and its exact (Clopper-Pearson) interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._utils._values import share_percent
from ..exceptions import ValidationError

__all__ = [
    "ACCEPTED",
    "CHOSEN",
    "COPIES",
    "LEVEL",
    "NOTE",
    "NO_MARGIN",
    "REACHED",
    "SETTING",
    "SHORTFALL",
    "STOPPED",
    "clopper_pearson",
    "held_words",
    "points",
    "robustness_note",
    "robustness_table",
    "robustness_words",
    "scope_words",
    "setting_words",
]

#: diagnostics column: per query, how many held-out copies accept each answer (by rank)
ACCEPTED = "robustness_accepted"
#: diagnostics column: per query, how many held-out copies judged its answers
COPIES = "robustness_copies"
#: diagnostics column: per query, the setting of the ladder its answers came from
SETTING = "robustness_setting"
#: diagnostics column: per query, whether its answers are said to reach ``p``: the copies
#: that choose let them, and the held-out copies' share confirms it
REACHED = "robustness_reached"
#: diagnostics column: per query, by how much its least robust answer falls short of ``p``
SHORTFALL = "robustness_shortfall"
#: diagnostics column: per query, whether the copies that choose let each answer (by rank)
#: reach ``p``
CHOSEN = "robustness_chosen"
#: diagnostics column: per query, what its certificate adds (the held-out copies' count)
NOTE = "robustness_note"
#: diagnostics column: per query, whether its search stopped before every setting was tried
STOPPED = "robustness_stopped"
#: what a short row's note adds when the ladder tried no margin (the method cannot
#: encode one exactly for the model)
NO_MARGIN = (
    "No margin was tried: the method cannot encode one exactly for this model (its "
    "probability is not a linear function of its outputs)."
)
#: the confidence level of the reported interval
LEVEL = 0.95


def clopper_pearson(k: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """The exact (Clopper-Pearson) two-sided interval for a share after ``k`` successes
    in ``n`` trials: it covers the true share at least ``level`` of the time, for any
    share (conservative; ``(0, 1)`` when ``n`` is 0)."""
    from scipy.stats import beta

    if n <= 0:
        return 0.0, 1.0
    alpha = 1.0 - level
    low = 0.0 if k <= 0 else float(beta.ppf(alpha / 2, k, n - k + 1))
    high = 1.0 if k >= n else float(beta.ppf(1 - alpha / 2, k + 1, n - k))
    return low, high


def _counts(value: Any) -> list[int]:
    """The per-rank counts of one query (a list; nothing for a query without answers)."""
    if isinstance(value, Sequence | np.ndarray) and not isinstance(value, str):
        return [int(v) for v in value]
    return []


def robustness_table(result: Any) -> pd.DataFrame:
    """Per answer ``(query, rank)``: the held-out copies that accept it (``accepted`` of
    ``copies``), the estimate (their share), its 95 % Clopper-Pearson interval (``low``,
    ``high``), the share asked for, by how much the estimate falls short of it (0 when
    it reaches it), whether the answer is said to reach it (``reached``: the copies that
    chose the setting let it, and its estimate confirms it; the choosing copies are not
    the held-out ones, so the estimate carries no optimism from the choice; the row's own
    verdict, ``diagnostics["robustness_reached"]`` and its certificate, speaks of its
    least robust answer) and the setting it came from. Each interval holds for its own
    answer; the answers of one call share the same held-out copies, so their estimates err
    together (a set of copies that leans one way lifts or lowers them all;
    ``Requirements(robustness_copies=...)`` narrows that)."""
    p = result.requirements.get("robustness")
    diag = result.diagnostics
    if p is None or ACCEPTED not in diag.columns:
        raise ValidationError(
            "This result was explained without a robustness requirement; pass "
            "requirements=cf.Requirements(robustness=0.95) to explain for each answer's "
            "estimated share of retrained models that still accept it."
        )
    rows = []
    for q, rank in result.counterfactuals.index:
        counts = _counts(diag.at[q, ACCEPTED])
        n = int(diag.at[q, COPIES])
        k = counts[int(rank)] if int(rank) < len(counts) else 0
        low, high = clopper_pearson(k, n)
        share = k / n if n else float("nan")
        rows.append(
            {
                "estimate": share,
                "low": low,
                "high": high,
                "accepted": k,
                "copies": n,
                "asked": float(p),
                "shortfall": max(0.0, float(p) - share),
                "reached": _reached(diag, q, int(rank), share, float(p)),
                "setting": diag.at[q, SETTING],
            }
        )
    columns = [
        "estimate",
        "low",
        "high",
        "accepted",
        "copies",
        "asked",
        "shortfall",
        "reached",
        "setting",
    ]
    return pd.DataFrame(rows, index=result.counterfactuals.index, columns=columns)


def _reached(diag: pd.DataFrame, query: Any, rank: int, share: float, p: float) -> bool | None:
    """Whether answer ``rank`` of ``query`` is said to reach ``p``: the copies that choose
    let it, and its own estimate confirms it (a result saved before the per-answer verdict
    was kept gives its row's: whether the row's least robust answer is)."""
    chosen = diag.at[query, CHOSEN] if CHOSEN in diag.columns else None
    if isinstance(chosen, Sequence | np.ndarray) and not isinstance(chosen, str):
        return rank < len(chosen) and bool(chosen[rank]) and share >= p - 1e-12
    return bool(diag.at[query, REACHED]) if REACHED in diag.columns else None


def setting_words(result: Any, query: Any) -> str:
    """Under ``Requirements(robustness=p)``: which answers a query's certificate speaks of,
    ``", under the setting chosen for robustness 90 % (margin 0.8)"`` (""
    without a robustness requirement or a setting; a row not said to reach ``p``, and a
    search stopped before every setting was tried, say so inside the brackets). Each row's
    answers were searched under the setting of the ladder it kept, so "no answer with
    fewer changes" holds among the answers under that setting, not among every answer that
    crosses the boundary."""
    p = result.requirements.get("robustness")
    diag = result.diagnostics
    if p is None or SETTING not in diag.columns or query not in diag.index:
        return ""
    setting = diag.at[query, SETTING]
    if not isinstance(setting, str) or not setting:
        return ""
    said = "the plain decision" if setting == "plain" else setting
    if REACHED in diag.columns and not bool(diag.at[query, REACHED]):
        said += "; not said to reach it"
    if STOPPED in diag.columns and bool(diag.at[query, STOPPED]):
        said += "; the search stopped before every setting was tried"
    return f", under the setting chosen for robustness {share_percent(p)} ({said})"


def robustness_note(result: Any, query: Any) -> str:
    """Under ``Requirements(robustness=p)``: the sentence a query's certificate ends with,
    how many retrained copies kept out of the search accept its answer, or that no
    setting tried reached ``p`` and by how much it falls short ("" otherwise)."""
    diag = result.diagnostics
    if NOTE not in diag.columns or query not in diag.index:
        return ""
    note = diag.at[query, NOTE]
    return note if isinstance(note, str) else ""


def points(gap: float) -> str:
    """A shortfall in percentage points, to one decimal: ``0.075 -> "7.5 points"`` (the
    same figure in a certificate, a notice and on the command line)."""
    return f"{100 * gap:.1f} points"


def held_words(row: Any) -> str:
    """One answer's estimated robustness in words, from its row of
    :func:`robustness_table`: ``"holds for 7 of 8 retrained models kept out of the search
    (estimate 87.5 %, 95 % interval 47-100 %); reaches the 95 % asked: no, short by 7.5
    points"``. The estimate to one decimal and the interval rounded outwards, so that the
    figures add up to the share asked."""
    said = f"{int(row['accepted'])} of {int(row['copies'])}"
    low, high = math.floor(100 * row["low"] + 1e-9), math.ceil(100 * row["high"] - 1e-9)
    shown = f"{round(100 * row['estimate'], 1):g} %, 95 % interval {low}-"
    verdict = "yes" if row["reached"] else f"no, short by {points(row['shortfall'])}"
    if not row["reached"] and row["shortfall"] <= 0:
        verdict = "not confirmed by the models that chose the setting"
    return (
        f"holds for {said} retrained models kept out of the search (estimate {shown}"
        f"{high} %); reaches the {share_percent(row['asked'])} asked: {verdict}"
    )


def scope_words(result: Any, query: Any) -> str:
    """Which answers a query's certificate speaks of, beyond its constraints: under
    ``Requirements(robustness=p)`` the setting the row kept (:func:`setting_words`; a row
    without an answer kept none, and its proof holds under the user's own floor);
    otherwise the margin, the share of a forest's trees' votes and the other models
    (``robust_to``) the call asked for, ``"; required: a probability of at least 0.6 for
    the target, at least 70 % of the trees' votes, the target in each of 4 other models
    too"`` ("" when none was asked). Without it, "no answer costs less" or
    "none passes the decision threshold" would read as said of every answer that crosses
    the boundary."""
    req = result.requirements or {}
    kept = setting_words(result, query)  # "" without robustness or without a setting
    if kept:
        return kept
    # without a setting (no answer under robustness) the row's search was the ladder's
    # first rung: the user's own margin and vote share, said as without robustness
    parts = []
    if req.get("min_probability") is not None:
        parts.append(f"a probability of at least {float(req['min_probability']):g} for the target")
    if req.get("min_vote_share") is not None:
        parts.append(f"at least {share_percent(req['min_vote_share'])} of the trees' votes")
    if req.get("robust_to"):
        n = int(req["robust_to"])
        parts.append(
            f"the target in each of {n} other models too"
            if n > 1
            else "the target in 1 other model too"
        )
    return "; required: " + ", ".join(parts) if parts else ""


def robustness_words(p: float | None) -> str:
    """The requirement in a person's words: ``"advice that still holds after the model is
    retrained: 95 %"`` ("" without one)."""
    if p is None:
        return ""
    return f"advice that still holds after the model is retrained: {share_percent(p)}"
