"""A feature time alone moves, whose query value lies off its grid (a tenure in steps of 5
recorded as 7): time takes it to 12, 17, ... (off the grid too).  MACE and CE-OCL search
those values and the answer is reported at them, so waiting is proven, not ruled out.
Known answer: the first month at which the model accepts the person, by brute force over
the horizon."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

import counterfact as cf

pytest.importorskip("z3")


@pytest.fixture(scope="module")
def tenure():
    rng = np.random.default_rng(1)
    n = 400
    frame = pd.DataFrame(
        {"tenure": rng.integers(0, 40, n) * 5, "income": rng.normal(50, 10, n).round(1)}
    )
    score = frame.tenure / 20 + frame.income / 10 - 10 + rng.normal(0, 0.3, n)
    frame["y"] = (score > 0).astype(int)
    data = cf.Dataset.from_frame(frame, target="y")
    model = LogisticRegression().fit(frame[["tenure", "income"]], frame.y)
    rows = cf.rows_to_explain(model, data, target=1).head(3).copy()
    rows["tenure"] = rows["tenure"] + 2  # off the grid of 5
    return data, model, rows


def _first_month(model, row, horizon):
    """The first month whose tenure (5 more every 3 months) the model accepts, or None."""
    for t in range(horizon + 1):
        later = row.copy()
        later["tenure"] = row["tenure"] + 5 * (t // 3)
        if model.predict(later.to_frame().T[["tenure", "income"]].astype(float))[0] == 1:
            return t
    return None


@pytest.mark.parametrize(
    "make",
    [
        lambda: cf.MACE(solver="z3", time_limit=30),
        lambda: cf.MACE(solver="highs", time_limit=30),
        lambda: cf.CEOCL(time_limit=30),
    ],
    ids=["mace-z3", "mace-highs", "ceocl"],
)
def test_waiting_off_the_grid_is_proven_at_the_first_month(tenure, make):
    data, model, rows = tenure
    assert data.schema["tenure"].resolution == 5
    timeline = cf.Timeline(horizon=36, advancing={"tenure": 5 / 3}, wait_cost=0.0001)
    constraints = cf.Constraints(timeline=timeline, immutable=["income"])
    result = make().fit(model, data).explain(rows, target=1, constraints=constraints)
    for q in rows.index:
        month = _first_month(model, rows.loc[q], 36)
        if month is None:
            assert result.status[q] == "infeasible", result.certificate(q)
            continue
        assert result.status[q] == "optimal", result.certificate(q)
        assert int(result.elapsed().loc[(q, 0)]) == month
        assert result.counterfactuals.loc[(q, 0), "tenure"] == rows.loc[q, "tenure"] + 5 * (
            month // 3
        )
    assert (result.status == "optimal").sum() >= 2
