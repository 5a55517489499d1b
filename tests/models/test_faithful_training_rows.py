"""Faithfulness before trust: an exact method refuses a compiled model that does not
reproduce the model's own runtime on the training rows (decisions off the ties, and
probabilities to the stated tolerance), and accepts a faithful one."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.exceptions import UnsupportedModelError
from counterfact.methods._pipeline._exact import (
    PROBABILITY_TOLERANCE,
    check_training_rows,
    training_rows,
)
from counterfact.methods.ceocl import _method as ceocl_module
from counterfact.methods.mace import _method as mace_module
from counterfact.models._adapter import as_adapter
from counterfact.models._compile import compile_model
from counterfact.models._fastpredict import spread_rows


@pytest.fixture(scope="module")
def fitted() -> tuple[cf.Dataset, object]:
    """German Credit's first 600 rows and a logistic regression on them."""
    data = cf.datasets.load("german_credit")
    train = data.subset(data.frame.index[:600])
    return train, cf.models.fit(train, "lr")


def _shifted_compile(shift: float):
    """``compile_model`` whose linear model's bias is moved by ``shift``."""

    def compile_shifted(model, schema):
        compiled = compile_model(model, schema)
        est = compiled.estimator
        return replace(compiled, estimator=replace(est, b=est.b + shift))

    return compile_shifted


@pytest.mark.parametrize("module", [mace_module, ceocl_module], ids=["MACE", "CE-OCL"])
def test_a_compiled_model_deciding_otherwise_is_refused(fitted, module, monkeypatch) -> None:
    train, model = fitted
    monkeypatch.setattr(module, "compile_model", _shifted_compile(2.0))
    method = cf.MACE if module is mace_module else cf.CEOCL
    with pytest.raises(UnsupportedModelError, match="otherwise than the model's own predict"):
        method(random_state=0).fit(model, train)


def test_the_refusal_names_the_row_and_the_way_on(fitted) -> None:
    train, model = fitted
    compiled = _shifted_compile(-2.0)(model, train.schema)
    with pytest.raises(UnsupportedModelError) as info:
        check_training_rows(compiled, as_adapter(model, train.schema), train.X, "MACE")
    message = str(info.value)
    assert "training rows" in message and "row " in message and "cf.UFCE" in message


class _OffOnSomeRows:
    """The model, with probabilities moved by 1e-4 on the rows labelled ``moved``."""

    def __init__(self, model, moved) -> None:
        self.model, self.moved, self.classes_ = model, set(moved), model.classes_

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return self.model.predict(X)

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        P = np.array(self.model.predict_proba(X), dtype=float)
        hit = X.index.isin(list(self.moved))
        P[hit] += [1e-4, -1e-4]
        return P


def test_probabilities_off_beyond_the_tolerance_are_refused(fitted) -> None:
    train, model = fitted
    compiled = compile_model(model, train.schema)
    outside = train.X.index.difference(spread_rows(train.X).index)[:5]
    adapter = as_adapter(_OffOnSomeRows(model, outside), train.schema)
    with pytest.raises(UnsupportedModelError, match=f"tolerance {PROBABILITY_TOLERANCE:g}"):
        check_training_rows(compiled, adapter, train.X, "CE-OCL")
    # the same model, its probabilities untouched: accepted
    check_training_rows(compiled, as_adapter(model, train.schema), train.X, "CE-OCL")


def test_a_faithful_model_is_trusted(fitted) -> None:
    train, model = fitted
    method = cf.MACE(random_state=0).fit(model, train)
    assert method.exact_.rows is not None and len(method.exact_.rows) == len(train.X)


def test_many_rows_are_sampled_with_a_seed() -> None:
    frame = pd.DataFrame({"a": np.arange(5000)})
    first, again = training_rows(frame, 100), training_rows(frame, 100)
    assert len(first) == 100 and first.index.equals(again.index)
    assert first.index.is_monotonic_increasing and first["a"].max() > 4000
