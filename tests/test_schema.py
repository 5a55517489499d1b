from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.exceptions import SchemaError, ValidationError


def test_infer_kinds_and_bounds(toy_frame):
    s = cf.Schema.infer(toy_frame, target="y")
    assert s.names == ["age", "income", "job", "edu"]
    assert [s[n].kind for n in s.names] == ["integer", "real", "categorical", "ordinal"]
    assert (s["age"].lower, s["age"].upper) == (25.0, 58.0)
    assert s["edu"].categories == ("lo", "mid", "hi")
    assert s.classes == (0, 1)
    np.testing.assert_allclose(s.ranges(), [33.0, 3.0, 1.0, 2.0])


def test_infer_overrides(toy_frame):
    s = cf.Schema.infer(toy_frame, target="y", kinds={"age": "real"}, immutable=["job"], increasing=["age"])
    assert s["age"].kind == "real" and s["age"].actionability == "increasing"
    assert s.immutable == ["job"]
    with pytest.raises(SchemaError, match="unknown columns"):
        cf.Schema.infer(toy_frame, target="y", immutable=["nope"])


def test_feature_validation():
    with pytest.raises(SchemaError, match="kind"):
        cf.Feature("a", "float")  # type: ignore[arg-type]
    with pytest.raises(SchemaError, match="unordered"):
        cf.Feature("a", "categorical", categories=("x", "y", "z"), actionability="increasing")
    with pytest.raises(SchemaError, match="exactly 2"):
        cf.Feature("a", "binary", categories=("x", "y", "z"))
    f = cf.Feature("n", "integer", lower=0.5, upper=3.7)
    assert (f.lower, f.upper) == (1.0, 3.0)
    assert f.contains(2) and not f.contains(2.5) and not f.contains(4)


def test_validate_frame_errors(toy_frame):
    s = cf.Schema.infer(toy_frame, target="y")
    X = toy_frame.drop(columns="y")
    with pytest.raises(ValidationError, match="lacks the columns"):
        s.validate_frame(X.drop(columns="job"))
    with pytest.raises(ValidationError, match="not among its categories"):
        s.validate_frame(X.assign(job="zzz"))
    with pytest.raises(ValidationError, match="NaN"):
        s.validate_frame(X.assign(income=np.nan))
    with pytest.raises(ValidationError, match="fractional"):
        s.validate_frame(X.assign(age=30.5))
    before = X.copy()
    out = s.validate_frame(X)
    pd.testing.assert_frame_equal(before, X)  # not mutated
    assert out["age"].dtype == np.int64


def test_round_trip_dict(toy_frame):
    s = cf.Schema.infer(toy_frame, target="y")
    assert cf.Schema.from_dict(s.to_dict()) == s


def test_dataset_split_and_mad(toy_frame):
    d = cf.Dataset.from_frame(toy_frame, target="y")
    tr, te = d.split(test_size=0.5, random_state=0, stratify=False)
    assert len(tr) + len(te) == 6
    m = d.mad()
    # age: median 36.5, |dev| = 11.5,3.5,3.5,21.5,10.5,6.5 -> median 8.5
    assert m[0] == pytest.approx(8.5)
    # income: median 2.55, |dev| = 1.05,.45,.35,1.55,.35,1.45 -> median 0.75
    assert m[1] == pytest.approx(0.75)
    assert m[2] == 1.0  # categorical
    # edu ranks 0,1,2,1,0,2: median 1, |dev| 1,0,1,0,1,1 -> median 1
    assert m[3] == pytest.approx(1.0)


def test_mad_fallback():
    frame = pd.DataFrame({"g": [0, 0, 0, 0, 10], "c": [3, 3, 3, 3, 3], "y": [0, 1, 0, 1, 0]})
    d = cf.Dataset.from_frame(frame, target="y", kinds={"g": "integer", "c": "integer"})
    m = d.mad()
    assert m[0] == pytest.approx(2.0)  # MAD 0 -> mean absolute deviation 10/5
    assert m[1] == 1.0  # constant -> 1


def test_quantile_bins():
    edges = cf.data.quantile_bins(np.arange(100), n_bins=4)
    assert len(edges) == 5
    edges = cf.data.quantile_bins([0, 0, 0, 0, 0, 0, 1], n_bins=4)
    assert edges[0] == 0 and edges[-1] == 1
