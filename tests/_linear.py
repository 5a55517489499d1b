"""What the result tests share: a small linear problem with a known direction."""

from __future__ import annotations

import numpy as np
import pandas as pd

import counterfact as cf


def linear_problem(tenure_weight: float) -> tuple[cf.Dataset, object]:
    """600 applicants whose approval rises with income, falls with debt and rises with
    tenure by ``tenure_weight`` a year (logistic noise 0.3), and a logistic regression
    fitted on them: ``(data, model)``."""
    rng = np.random.default_rng(0)
    n = 600
    frame = pd.DataFrame(
        {
            "income": rng.integers(10, 101, n),
            "debt": rng.integers(0, 51, n),
            "tenure": rng.integers(0, 21, n),
        }
    )
    score = 0.08 * frame["income"] - 0.12 * frame["debt"] + tenure_weight * frame["tenure"] - 3
    frame["approved"] = (score + rng.logistic(0, 0.3, n) > 0).astype(int)
    data = cf.Dataset.from_frame(frame, target="approved")
    return data, cf.models.fit(data, "lr", random_state=0)
