from __future__ import annotations

import numpy as np
import pandas as pd

import counterfact as cf


def test_round_trip_and_coherence(toy_frame):
    s = cf.Schema.infer(toy_frame, target="y")
    enc = cf.Encoder(s)
    X = toy_frame.drop(columns="y")
    V = enc.transform(X)
    assert V.shape == (6, 1 + 1 + 3 + 1)
    back = enc.inverse_transform(V)
    ref = s.validate_frame(X)
    np.testing.assert_allclose(back["income"], ref["income"])
    for c in ("age", "job", "edu"):
        assert back[c].tolist() == ref[c].tolist()
    # noisy vectors still decode to coherent rows
    noisy = V + np.random.default_rng(0).normal(0, 0.3, V.shape)
    dec = enc.inverse_transform(noisy)
    s.validate_frame(dec)
    assert dec["age"].dtype == np.int64
    assert dec["age"].between(25, 58).all()


def test_minmax_scaling(toy_frame):
    s = cf.Schema.infer(toy_frame, target="y")
    V = cf.Encoder(s).transform(
        pd.DataFrame(
            {"age": [25, 58], "income": [1.1, 4.1], "job": ["a", "b"], "edu": ["lo", "hi"]}
        )
    )
    np.testing.assert_allclose(V[:, 0], [0, 1])
    np.testing.assert_allclose(V[:, 1], [0, 1])
    np.testing.assert_allclose(V[:, 5], [0, 1])
