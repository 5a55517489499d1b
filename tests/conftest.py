from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


@pytest.fixture(scope="session")
def shared_datasets() -> Path:
    if not SHARED.is_dir():
        pytest.skip("../shared/datasets is not present (only beside the development checkout)")
    return SHARED


@pytest.fixture
def toy_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": [25, 40, 33, 58, 47, 30],
            "income": [1.5, 3.0, 2.2, 4.1, 2.9, 1.1],
            "job": ["a", "b", "c", "a", "b", "c"],
            "edu": pd.Categorical(
                ["lo", "mid", "hi", "mid", "lo", "hi"], categories=["lo", "mid", "hi"], ordered=True
            ),
            "y": [0, 1, 0, 1, 1, 0],
        }
    )


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)
