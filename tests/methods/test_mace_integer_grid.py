"""An integer feature with a resolution above 1 (a loan in steps of 500): MACE's proof is
over the values the answer is reported on, so a tree ensemble's split between two of them
no longer turns a proven answer into a rounded, merely feasible one. Known answer: brute
force over every grid point, for each oracle."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import counterfact as cf

pytest.importorskip("z3")


@pytest.fixture(scope="module")
def loans():
    rng = np.random.default_rng(0)
    n = 400
    frame = pd.DataFrame(
        {
            "loan": rng.integers(1, 31, n) * 500,
            "months": rng.integers(6, 37, n),
            "purpose": rng.choice(["car", "home", "study"], n),
        }
    )
    score = -frame["loan"] / 4000 + frame["months"] / 12 + (frame["purpose"] == "home") * 0.8
    frame["ok"] = (score + rng.logistic(0, 0.4, n) > 0).astype(int)
    data = cf.Dataset.from_frame(frame, target="ok")
    model = cf.models.fit(data, "gbm", random_state=0, n_estimators=20, max_depth=2)
    points = pd.DataFrame(
        list(itertools.product(range(500, 15001, 500), range(6, 37), ["car", "home", "study"])),
        columns=["loan", "months", "purpose"],
    )
    return data, model, points, model.predict(points)


@pytest.mark.parametrize("solver", ["bnb", "z3", "highs"])
def test_every_oracle_proves_the_cheapest_point_on_the_integer_grid(loans, solver):
    data, model, points, predicted = loans
    assert data.schema["loan"].resolution == 500
    rows = cf.rows_to_explain(model, data).head(4)
    result = cf.MACE(solver=solver, time_limit=30).fit(model, data).explain(rows)
    first = result.cost().xs(0, level="rank")
    for q in rows.index:
        reach = points[predicted == result.target[q]]
        cheapest = float(result.costs.evaluate(rows.loc[q], reach).min())
        assert result.status[q] == "optimal", result.certificate(q)
        assert float(first[q]) == pytest.approx(cheapest, abs=1e-9)
        assert result.counterfactuals.loc[(q, 0), "loan"] % 500 == 0
        assert "on the grid of loan (resolution 500)" in result.certificate(q)
        assert not result.diagnostics.loc[q, "snapped"]


def test_a_query_off_the_grid_searches_the_grid_and_its_own_value(loans):
    data, model, points, _ = loans
    row = cf.rows_to_explain(model, data).head(1).copy()
    row["loan"] = row["loan"] + 250  # between two multiples of 500
    result = cf.MACE(solver="bnb", time_limit=30).fit(model, data).explain(row)
    q = row.index[0]
    own = points[points["loan"] == 500].assign(loan=row.loc[q, "loan"])
    reach = pd.concat([points, own], ignore_index=True)
    reach = reach[model.predict(reach) == result.target[q]]
    cheapest = float(result.costs.evaluate(row.loc[q], reach).min())
    assert result.status[q] == "optimal", result.certificate(q)
    assert float(result.cost().loc[(q, 0)]) == pytest.approx(cheapest, abs=1e-9)
    loan = result.counterfactuals.loc[(q, 0), "loan"]
    assert loan % 500 == 0 or loan == row.loc[q, "loan"]
    assert "loan (resolution 500)" in result.certificate(q)
