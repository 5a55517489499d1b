from __future__ import annotations

import os
import subprocess
import sys
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


@pytest.fixture(scope="session")
def credit_mace():
    """German Credit (80/20 split, seed 0), a logistic regression and MACE fitted on it:
    ``(train, test, model, mace)``."""
    pytest.importorskip("z3")
    import counterfact as cf

    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    return train, test, model, cf.MACE(time_limit=20, random_state=0).fit(model, train)


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


#: a Ray head node in a process of its own, on this machine: it prints its address and
#: keeps the cluster up until its standard input closes
_RAY_HEAD = """
import sys, ray
ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
print(ray.get_runtime_context().gcs_address, flush=True)
sys.stdin.read()
ray.shutdown()
"""


@pytest.fixture
def ray_cluster():
    """The address of a running Ray cluster on this machine, started here and stopped
    after the test (without token authentication, which Ray 2.59+ turns on for a local
    cluster and which a process can load only once)."""
    pytest.importorskip("ray")
    head = subprocess.Popen(
        [sys.executable, "-c", _RAY_HEAD],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "RAY_AUTH_MODE": "disabled"},
    )
    try:
        address = head.stdout.readline().strip()
        assert address, "the Ray head did not start"
        yield address
    finally:
        head.stdin.close()
        try:
            head.wait(timeout=60)
        except subprocess.TimeoutExpired:
            head.kill()
