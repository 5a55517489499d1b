"""MACE and CE-OCL end to end on the pipeline users write.

``ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"), categorical + ordinal),
("num", StandardScaler(), numeric)])`` in front of a logistic regression, a forest and
an MLP, on German Credit (ordinal, categorical, binary, integer and real features):
both exact methods accept the model, every counterfactual is flipped by the real
model and respects the schema, and MACE's certificate holds: ``delta_max`` is the
counterfactual's own distance, within epsilon of ``delta_min``, and no point sampled
closer than ``delta_min`` is a counterfactual.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

import counterfact as cf

pytest.importorskip("z3")
pytest.importorskip("highspy")
pytestmark = pytest.mark.filterwarnings("ignore")

EPS = 1e-3
N_QUERIES = 2


@pytest.fixture(scope="module")
def data() -> tuple[cf.Dataset, pd.DataFrame]:
    d = cf.datasets.load("german_credit")
    kinds = {f.kind for f in d.schema.features}
    assert kinds == {"ordinal", "categorical", "binary", "integer", "real"}
    train = d.subset(d.frame.index[:500])
    return train, d.X.iloc[600:700]


def _model(kind: str, train: cf.Dataset) -> Any:
    s = train.schema
    pre = ColumnTransformer(
        [
            ("cat", OneHotEncoder(handle_unknown="ignore"), s.categorical + s.ordinal),
            ("num", StandardScaler(), s.numeric),
        ]
    )
    est = {
        "lr": LogisticRegression(max_iter=2000),
        "rf": RandomForestClassifier(n_estimators=10, max_depth=5, random_state=0),
        "mlp": MLPClassifier((8,), max_iter=400, random_state=0),
    }[kind]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Pipeline([("pre", pre), ("clf", est)]).fit(train.X, train.y)


def _distance(schema: cf.Schema, q: pd.Series, x: pd.Series) -> float:
    """MACE's l1 distance (eq. 3 / J), computed independently."""
    total = 0.0
    for f in schema.features:
        if f.is_numeric:
            total += abs(float(x[f.name]) - float(q[f.name])) / f.range
        elif f.kind == "ordinal":
            total += abs(f.rank(x[f.name]) - f.rank(q[f.name])) / (len(f.categories) - 1)
        else:
            total += float(x[f.name] != q[f.name])
    return total / len(schema)


def _check_schema(schema: cf.Schema, q: pd.Series, x: pd.Series) -> None:
    schema.validate_frame(x.to_frame().T, what="counterfactual")
    for f in schema.features:
        if f.kind == "integer":
            assert float(x[f.name]) == round(float(x[f.name]))
        if f.name in schema.immutable:
            assert x[f.name] == q[f.name], f.name


def _allowed(schema: cf.Schema, q: pd.Series, x: pd.Series) -> bool:
    """Every feature moved only in the direction its actionability allows."""
    for f in schema.features:
        if f.actionability not in ("increasing", "decreasing") or x[f.name] == q[f.name]:
            continue
        up = (
            f.rank(x[f.name]) > f.rank(q[f.name])
            if f.kind == "ordinal"
            else float(x[f.name]) > float(q[f.name])
        )
        if up != (f.actionability == "increasing"):
            return False
    return True


def _closer_points(
    schema: cf.Schema, q: pd.Series, radius: float, rng: np.random.Generator, n: int
) -> pd.DataFrame:
    """Random actionable points at distance < radius from q (one or two features moved,
    each in its allowed direction)."""
    mutable = [  # without a timeline, the features only time moves stay as they are
        f for f in schema.features if f.name not in schema.immutable and f.actionability != "time"
    ]
    rows = []
    for _ in range(n):
        x = q.copy()
        for f in rng.choice(
            np.array(mutable, dtype=object), size=rng.integers(1, 3), replace=False
        ):
            if f.is_numeric:
                step = rng.uniform(-1, 1) * f.range * radius * len(schema)
                v = float(np.clip(float(q[f.name]) + step, f.lower, f.upper))
                x[f.name] = round(v) if f.kind == "integer" else v
            else:
                x[f.name] = f.categories[rng.integers(len(f.categories))]
        if _distance(schema, q, x) < radius and _allowed(schema, q, x):
            rows.append(x)
    return pd.DataFrame(rows).reset_index(drop=True)


@pytest.mark.parametrize("kind", ["lr", "rf", "mlp"])
def test_mace_proves_nearest_on_the_quoted_pipeline(
    kind: str, data: tuple[cf.Dataset, pd.DataFrame]
) -> None:
    train, pool = data
    model = _model(kind, train)
    queries = pool.iloc[:N_QUERIES]
    res = (
        cf.MACE(norm="l1", rel_gap=EPS, time_limit=60, random_state=0)
        .fit(model, train)
        .explain(queries, requirements=cf.Requirements(costs="own"))  # eq. (3), l1
    )
    rng = np.random.default_rng(0)
    for qid, q in queries.iterrows():
        assert res.status[qid] == "optimal", res.reason[qid]
        x = res.for_query(qid).iloc[0][train.schema.names]
        target = res.target[qid]
        assert model.predict(x.to_frame().T)[0] == target != model.predict(q.to_frame().T)[0]
        _check_schema(train.schema, q, x)
        d = res.diagnostics.loc[qid]
        assert d["delta_max"] - d["delta_min"] <= EPS + 1e-9
        # the reported point is delta_max away, up to snapping to the features' resolution
        dist = _distance(train.schema, q, x)
        assert dist == pytest.approx(d["delta_max"], abs=1e-4)
        assert d["delta_min"] - 1e-9 <= dist <= d["delta_min"] + EPS + 1e-4
        closer = _closer_points(train.schema, q, float(d["delta_min"]), rng, 1500)
        if len(closer):
            assert (model.predict(closer) != target).all(), (
                "a point closer than delta_min is a counterfactual"
            )


@pytest.mark.parametrize("kind", ["lr", "rf", "mlp"])
def test_ceocl_on_the_quoted_pipeline(kind: str, data: tuple[cf.Dataset, pd.DataFrame]) -> None:
    train, pool = data
    model = _model(kind, train)
    queries = pool.iloc[:N_QUERIES]
    res = cf.CEOCL(time_limit=60, random_state=0).fit(model, train).explain(queries)
    for qid, q in queries.iterrows():
        assert res.status[qid] in ("optimal", "feasible"), res.reason[qid]
        x = res.for_query(qid).iloc[0][train.schema.names]
        assert (
            model.predict(x.to_frame().T)[0] == res.target[qid] != model.predict(q.to_frame().T)[0]
        )
        _check_schema(train.schema, q, x)


def test_missing_value_in_a_query_is_a_clear_error(data: tuple[cf.Dataset, pd.DataFrame]) -> None:
    from sklearn.impute import SimpleImputer

    train, pool = data
    s = train.schema
    pre = ColumnTransformer(
        [
            (
                "cat",
                Pipeline(
                    [
                        ("imp", SimpleImputer(strategy="most_frequent")),
                        ("oh", OneHotEncoder(handle_unknown="ignore")),
                    ]
                ),
                s.categorical + s.ordinal,
            ),
            ("num", Pipeline([("imp", SimpleImputer()), ("sc", StandardScaler())]), s.numeric),
        ]
    )
    model = Pipeline([("pre", pre), ("clf", LogisticRegression(max_iter=2000))]).fit(
        train.X, train.y
    )
    mace = cf.MACE(rel_gap=EPS, time_limit=30).fit(model, train)
    q = pool.iloc[:1].copy()
    assert mace.explain(q).status.iloc[0] in ("optimal", "feasible")
    q.loc[q.index[0], "age"] = np.nan
    with pytest.raises(cf.exceptions.ValidationError, match="missing values"):
        mace.explain(q)


@pytest.mark.parametrize(
    "case",
    ["rf_kbins_real_onehot", "gb_log1p", "lr_target_kbins_integer", "calibrated_isotonic_mlp"],
)
def test_exact_methods_on_other_variants(case: str, data: tuple[cf.Dataset, pd.DataFrame]) -> None:
    """Rewritten bin splits (trees), thresholds mapped through log1p, and a lifted
    linear model over target-encoded ordinals and integer bins, end to end."""
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.preprocessing import FunctionTransformer, KBinsDiscretizer, TargetEncoder

    train, pool = data
    # the papers' actionability (every feature but the protected ones free): the bundled
    # defaults leave some of these models no answer for the query
    train = train.with_schema(
        train.schema.with_actionability(
            **{
                f.name: "free"
                for f in train.schema.features
                if f.actionability != "immutable" or f.name == "credit_history"
            }
        )
    )
    s = train.schema
    disc = s.categorical + s.ordinal
    ints = [n for n in s.numeric if s[n].kind == "integer"]
    real = [n for n in s.numeric if s[n].kind == "real"]
    oh = OneHotEncoder(handle_unknown="ignore")
    bins = KBinsDiscretizer(
        n_bins=4, encode="onehot-dense", quantile_method="averaged_inverted_cdf"
    )
    if case == "rf_kbins_real_onehot":
        pre = ColumnTransformer([("cat", oh, disc), ("bins", bins, s.numeric)])
        est: Any = RandomForestClassifier(n_estimators=5, max_depth=4, random_state=0)
    elif case == "gb_log1p":
        pre = ColumnTransformer(
            [("cat", oh, disc), ("num", FunctionTransformer(np.log1p), s.numeric)]
        )
        est = GradientBoostingClassifier(n_estimators=10, max_depth=2, random_state=0)
    elif case == "lr_target_kbins_integer":
        pre = ColumnTransformer(
            [
                ("cat", TargetEncoder(random_state=0), disc),
                ("bins", bins, ints),
                ("num", StandardScaler(), real),
            ]
        )
        est = LogisticRegression(max_iter=2000)
    else:
        from sklearn.calibration import CalibratedClassifierCV

        pre = ColumnTransformer([("cat", oh, disc), ("num", StandardScaler(), s.numeric)])
        est = CalibratedClassifierCV(
            MLPClassifier((6,), max_iter=300, random_state=0),
            method="isotonic",
            ensemble=False,
            cv=3,
        )
    model = Pipeline([("pre", pre), ("clf", est)]).fit(train.X, train.y)
    queries = pool.iloc[:1]
    for method in (
        cf.MACE(norm="l1", rel_gap=EPS, time_limit=60, random_state=0),
        cf.CEOCL(time_limit=60),
    ):
        res = method.fit(model, train).explain(queries)
        qid = queries.index[0]
        assert res.status[qid] in ("optimal", "feasible"), (type(method).__name__, res.reason[qid])
        x = res.for_query(qid).iloc[0][s.names]
        row = s.coerce(x.to_frame().T)  # numeric dtypes, as the model was fitted on
        assert model.predict(row)[0] == res.target[qid] != model.predict(queries)[0]
        _check_schema(s, queries.iloc[0], x)
