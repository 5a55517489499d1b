"""Faithfulness matrix: every supported preprocessing variant x every estimator.

For each combination the IR's prediction equals the real ``predict`` on thousands
of random in-domain raw rows (German Credit: ordinal, categorical, binary, integer
and real features), plus, for tree models, rows placed exactly at every raw cut and
its float neighbours.  Combinations the compiler cannot encode exactly raise
``UnsupportedModelError`` at compile time, naming the element.  ``SUPPORT`` is the
source of truth for ``docs/models.md`` (checked by ``test_docs_table_matches``).
"""

from __future__ import annotations

import re
import warnings
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sklearn import ensemble, linear_model, neural_network, svm, tree
from sklearn.calibration import CalibratedClassifierCV
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.impute import MissingIndicator, SimpleImputer
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    KBinsDiscretizer,
    OneHotEncoder,
    OrdinalEncoder,
    PowerTransformer,
    QuantileTransformer,
    StandardScaler,
    TargetEncoder,
)
from threadpoolctl import threadpool_limits

import counterfact as cf
from counterfact.exceptions import UnsupportedModelError
from counterfact.models._compile import TreeEnsemble, compile_model, interval_bounds

pytestmark = pytest.mark.filterwarnings("ignore")

N_TRAIN = 300
N_RANDOM = 1500
MODELS = ["lr", "linear_svm", "tree", "rf", "gb", "hgb", "mlp", "xgb", "lgbm"]
TREES = {"tree", "rf", "gb", "hgb", "xgb", "lgbm"}

# variant -> (what it is, model kinds it is exact for: "all" or "trees", element named when
# unsupported)
SUPPORT: dict[str, tuple[str, str, str]] = {
    "default": ("counterfact.models.preprocessor (scaler + one-hot + ordinal codes)", "all", ""),
    "onehot_ignore": (
        "OneHotEncoder(handle_unknown='ignore') on categorical + ordinal, StandardScaler",
        "all",
        "",
    ),
    "onehot_drop_first_sparse": (
        "OneHotEncoder(drop='first', sparse_output=True), sparse ColumnTransformer output",
        "all except xgb",
        "XGBClassifier receives a sparse matrix",
    ),
    "onehot_if_binary": ("OneHotEncoder(drop='if_binary', sparse_output=False)", "all", ""),
    "onehot_drop_array": ("OneHotEncoder(drop=[a category per feature])", "all", ""),
    "onehot_infrequent": (
        "OneHotEncoder(min_frequency=30, handle_unknown='infrequent_if_exist')",
        "all",
        "",
    ),
    "onehot_max_categories": ("OneHotEncoder(max_categories=3)", "all", ""),
    "onehot_categories": (
        "OneHotEncoder(categories=[explicit, reversed, one left out], handle_unknown='ignore')",
        "all",
        "",
    ),
    "onehot_integer": (
        "OneHotEncoder(handle_unknown='ignore') on small integer features",
        "all",
        "",
    ),
    "ordinal_any_order": (
        "OrdinalEncoder (alphabetical order, unknown_value=-1) on categorical + ordinal",
        "all",
        "",
    ),
    "target": ("TargetEncoder on categorical + ordinal", "all", ""),
    "kbins_integer": ("KBinsDiscretizer(encode='onehot') on integer features", "all", ""),
    "kbins_real_onehot": (
        "KBinsDiscretizer(encode='onehot-dense') on every numeric feature",
        "all",
        "",
    ),
    "kbins_real_ordinal": (
        "KBinsDiscretizer(encode='ordinal') on every numeric feature",
        "all",
        "",
    ),
    "impute": (
        "SimpleImputer (+ MissingIndicator(features='all')) before the encoders / scaler",
        "all",
        "",
    ),
    "log1p": ("FunctionTransformer(np.log1p) on numeric features", "trees", "np.log1p"),
    "sqrt": ("FunctionTransformer(np.sqrt) on numeric features", "trees", "np.sqrt"),
    "quantile": ("QuantileTransformer on numeric features", "trees", "QuantileTransformer"),
    "power": ("PowerTransformer on numeric features", "trees", "PowerTransformer"),
    "selectors_pandas": (
        "make_column_selector / positions, remainder='passthrough', nested Pipeline, "
        "set_output(pandas)",
        "all",
        "",
    ),
    "numpy_fit": ("the whole pipeline fitted on a numpy array (columns by position)", "all", ""),
}


@pytest.fixture(scope="module")
def german() -> cf.Dataset:
    d = cf.datasets.load("german_credit")
    return d.subset(d.frame.index[:N_TRAIN])


def random_frame(schema: cf.Schema, n: int, rng: np.random.Generator) -> pd.DataFrame:
    cols: dict[str, Any] = {}
    for f in schema.features:
        if f.kind == "real":
            v = rng.uniform(f.lower, f.upper, n)
            v[: n // 10] = rng.integers(int(f.lower), int(f.upper) + 1, n // 10)  # round values too
            v[0], v[1] = f.lower, f.upper
            cols[f.name] = v
        elif f.kind == "integer":
            v = rng.integers(int(f.lower), int(f.upper) + 1, n)
            v[0], v[1] = int(f.lower), int(f.upper)
            cols[f.name] = v
        else:
            cats = np.empty(len(f.categories), dtype=object)
            cats[:] = list(f.categories)
            cols[f.name] = cats[rng.integers(0, len(cats), n)]
    return pd.DataFrame(cols)


def boundary_frame(
    compiled: Any, base: pd.DataFrame, rng: np.random.Generator, cap: int = 1500
) -> pd.DataFrame:
    """Rows with one numeric feature exactly at a tree's raw cut or a float neighbour of it."""
    rows = []
    for s in compiled.estimator.splits:
        if s.raw_le is None or not np.isfinite(s.raw_le):
            continue
        f = compiled.schema[s.feature]
        if f.kind == "integer":
            rows += [(s.feature, s.raw_le), (s.feature, s.raw_ge)]
        elif f.kind == "real":
            rows += [
                (s.feature, v)
                for v in (
                    s.raw_le,
                    s.raw_ge,
                    np.nextafter(s.raw_le, -np.inf),
                    float(np.float32(s.raw_le)),
                )
            ]
    if len(rows) > cap:
        rows = [rows[i] for i in rng.choice(len(rows), cap, replace=False)]
    out = base.iloc[rng.integers(0, len(base), len(rows))].reset_index(drop=True).copy()
    for f in compiled.schema.features:
        if f.is_numeric:
            out[f.name] = out[f.name].astype(float)
    for i, (name, v) in enumerate(rows):
        f = compiled.schema[name]
        out.loc[i, name] = float(np.clip(v, f.lower, f.upper))
    return out


# --------------------------------------------------------------------------- variants
def _ct(parts: list[Any], **kw: Any) -> ColumnTransformer:
    return ColumnTransformer(parts, **{"sparse_threshold": 0.0, **kw})


def preprocessing(
    variant: str, s: cf.Schema, linear: bool, dense: bool = False
) -> list[tuple[str, Any]]:
    """Pipeline steps before the estimator (linear: scale numerics)."""
    disc = s.categorical + s.ordinal
    num = s.numeric
    ints = [n for n in num if s[n].kind == "integer"]
    real = [n for n in num if s[n].kind == "real"]
    scale = StandardScaler() if linear else "passthrough"
    if variant == "default":
        return [("pre", cf.models.preprocessor(s, scale=linear))]
    if variant == "onehot_ignore":
        return [
            (
                "pre",
                _ct(
                    [
                        ("cat", OneHotEncoder(handle_unknown="ignore"), disc),
                        ("num", StandardScaler(), num),
                    ]
                ),
            )
        ]
    if variant == "onehot_drop_first_sparse":
        return [
            (
                "pre",
                ColumnTransformer(
                    [
                        ("cat", OneHotEncoder(drop="first", sparse_output=True), disc),
                        ("num", scale, num),
                    ],
                    sparse_threshold=0.0 if dense else 1.0,
                ),
            )
        ]
    if variant == "onehot_if_binary":
        return [
            (
                "pre",
                _ct(
                    [
                        ("cat", OneHotEncoder(drop="if_binary", sparse_output=False), disc),
                        ("num", scale, num),
                    ]
                ),
            )
        ]
    if variant == "onehot_drop_array":
        drop = [s[n].categories[1] for n in disc]
        return [
            (
                "pre",
                _ct(
                    [
                        (
                            "cat",
                            OneHotEncoder(
                                drop=drop, categories=[list(s[n].categories) for n in disc]
                            ),
                            disc,
                        ),
                        ("num", scale, num),
                    ]
                ),
            )
        ]
    if variant == "onehot_infrequent":
        return [
            (
                "pre",
                _ct(
                    [
                        (
                            "cat",
                            OneHotEncoder(min_frequency=30, handle_unknown="infrequent_if_exist"),
                            disc,
                        ),
                        ("num", scale, num),
                    ]
                ),
            )
        ]
    if variant == "onehot_max_categories":
        return [
            (
                "pre",
                _ct(
                    [
                        (
                            "cat",
                            OneHotEncoder(max_categories=3, handle_unknown="infrequent_if_exist"),
                            disc,
                        ),
                        ("num", scale, num),
                    ]
                ),
            )
        ]
    if variant == "onehot_categories":
        cats = [list(reversed(s[n].categories))[: max(2, len(s[n].categories) - 1)] for n in disc]
        return [
            (
                "pre",
                _ct(
                    [
                        ("cat", OneHotEncoder(categories=cats, handle_unknown="ignore"), disc),
                        ("num", scale, num),
                    ]
                ),
            )
        ]
    if variant == "onehot_integer":
        small = [n for n in ints if s[n].upper - s[n].lower <= 5]
        rest = [n for n in num if n not in small]
        return [
            (
                "pre",
                _ct(
                    [
                        ("cat", OneHotEncoder(handle_unknown="ignore"), disc + small),
                        ("num", scale, rest),
                    ]
                ),
            )
        ]
    if variant == "ordinal_any_order":
        return [
            (
                "pre",
                _ct(
                    [
                        (
                            "cat",
                            OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1),
                            disc,
                        ),
                        ("num", scale, num),
                    ]
                ),
            ),
            ("sc", StandardScaler() if linear else "passthrough"),
        ]
    if variant == "target":
        return [("pre", _ct([("cat", TargetEncoder(random_state=0), disc), ("num", scale, num)]))]
    if variant == "kbins_integer":
        return [
            (
                "pre",
                _ct(
                    [
                        ("cat", OneHotEncoder(handle_unknown="ignore"), disc),
                        (
                            "bins",
                            KBinsDiscretizer(
                                n_bins=4, encode="onehot", quantile_method="averaged_inverted_cdf"
                            ),
                            ints,
                        ),
                        ("num", scale, real),
                    ]
                ),
            )
        ]
    if variant in ("kbins_real_onehot", "kbins_real_ordinal"):
        enc = "onehot-dense" if variant == "kbins_real_onehot" else "ordinal"
        return [
            (
                "pre",
                _ct(
                    [
                        ("cat", OneHotEncoder(handle_unknown="ignore"), disc),
                        (
                            "bins",
                            KBinsDiscretizer(
                                n_bins=5, encode=enc, quantile_method="averaged_inverted_cdf"
                            ),
                            num,
                        ),
                    ]
                ),
            )
        ]
    if variant == "impute":
        cat = Pipeline(
            [
                ("imp", SimpleImputer(strategy="most_frequent")),
                ("oh", OneHotEncoder(handle_unknown="ignore")),
            ]
        )
        numeric = Pipeline([("imp", SimpleImputer(add_indicator=True)), ("sc", scale)])
        return [
            (
                "pre",
                _ct(
                    [
                        ("cat", cat, disc),
                        ("num", numeric, num),
                        ("miss", MissingIndicator(features="all"), num),
                    ]
                ),
            )
        ]
    if variant in ("log1p", "sqrt"):
        fn = np.log1p if variant == "log1p" else np.sqrt
        return [
            (
                "pre",
                _ct(
                    [
                        ("cat", OneHotEncoder(handle_unknown="ignore"), disc),
                        (
                            "num",
                            Pipeline([("f", FunctionTransformer(fn)), ("sc", StandardScaler())]),
                            num,
                        ),
                    ]
                ),
            )
        ]
    if variant in ("quantile", "power"):
        t = (
            QuantileTransformer(n_quantiles=50, random_state=0)
            if variant == "quantile"
            else PowerTransformer()
        )
        return [
            ("pre", _ct([("cat", OneHotEncoder(handle_unknown="ignore"), disc), ("num", t, num)]))
        ]
    if variant == "selectors_pandas":
        # feature names without the characters XGBoost / LightGBM refuse ('<', '[', ...)
        oh = OneHotEncoder(
            sparse_output=False,
            handle_unknown="ignore",
            feature_name_combiner=lambda f, c: f"{f}_{zlib.crc32(str(c).encode())}",
        )
        inner = Pipeline([("imp", SimpleImputer(strategy="most_frequent")), ("oh", oh)])
        positions = [s.names.index(n) for n in num[:3]]
        ct = ColumnTransformer(
            [("cat", inner, make_column_selector(dtype_include=object)), ("num", scale, positions)],
            remainder=StandardScaler() if linear else "passthrough",
        )
        return [("pre", Pipeline([("ct", ct)]).set_output(transform="pandas"))]
    if variant == "numpy_fit":
        pos = {n: i for i, n in enumerate(s.names)}
        return [
            (
                "pre",
                _ct(
                    [
                        ("cat", OneHotEncoder(handle_unknown="ignore"), [pos[n] for n in disc]),
                        ("num", scale, [pos[n] for n in num]),
                    ]
                ),
            )
        ]
    raise AssertionError(variant)


def estimator(kind: str) -> Any:
    if kind == "lr":
        return linear_model.LogisticRegression(max_iter=500)
    if kind == "linear_svm":
        return svm.LinearSVC(max_iter=2000, random_state=0)
    if kind == "tree":
        return tree.DecisionTreeClassifier(max_depth=6, random_state=0)
    if kind == "rf":
        return ensemble.RandomForestClassifier(n_estimators=8, max_depth=5, random_state=0)
    if kind == "gb":
        return ensemble.GradientBoostingClassifier(n_estimators=8, max_depth=3, random_state=0)
    if kind == "hgb":
        return ensemble.HistGradientBoostingClassifier(max_iter=8, random_state=0)
    if kind == "mlp":
        return neural_network.MLPClassifier((6,), max_iter=150, random_state=0)
    if kind == "xgb":
        xgb = pytest.importorskip("xgboost")
        return xgb.XGBClassifier(n_estimators=8, max_depth=3, random_state=0, n_jobs=1)
    lgb = pytest.importorskip("lightgbm")
    return lgb.LGBMClassifier(
        n_estimators=8, num_leaves=8, min_child_samples=5, random_state=0, n_jobs=1, verbose=-1
    )


def _fit(variant: str, kind: str, ds: cf.Dataset) -> Any:
    steps = preprocessing(
        variant, ds.schema, kind not in TREES, dense=kind == "hgb"
    )  # hgb needs dense input
    model = Pipeline([*steps, ("clf", estimator(kind))])
    with warnings.catch_warnings(), threadpool_limits(1):
        warnings.simplefilter("ignore")
        X = ds.X.to_numpy(dtype=object) if variant == "numpy_fit" else ds.X
        return model.fit(X, ds.y)


def supported(variant: str, kind: str) -> bool:
    where = SUPPORT[variant][1]
    if where.startswith("all except "):
        return kind not in where.removeprefix("all except ").split(", ")
    return where == "all" or kind in TREES


@pytest.mark.parametrize("kind", MODELS)
@pytest.mark.parametrize("variant", list(SUPPORT))
def test_faithful_or_rejected(variant: str, kind: str, german: cf.Dataset) -> None:
    model = _fit(variant, kind, german)
    if not supported(variant, kind):
        needle = re.escape(SUPPORT[variant][2]) + (
            "" if SUPPORT[variant][1].startswith("all") else ".*tree models"
        )
        with pytest.raises(UnsupportedModelError, match=f"(?s){needle}"):
            compile_model(model, german.schema)
        return
    compiled = compile_model(model, german.schema)
    rng = np.random.default_rng(11)
    X = pd.concat(
        [random_frame(german.schema, N_RANDOM, rng), german.X.reset_index(drop=True)],
        ignore_index=True,
    )
    if isinstance(compiled.estimator, TreeEnsemble):
        X = pd.concat([X, boundary_frame(compiled, X, rng)], ignore_index=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = np.asarray(
            model.predict(X.to_numpy(dtype=object) if variant == "numpy_fit" else X)
        )
    got = compiled.predict(X)
    bad = np.flatnonzero(got != expected)
    assert bad.size == 0, (
        f"{variant}/{kind}: {bad.size} of {len(X)} rows differ, e.g. "
        f"{X.iloc[bad[:3]].to_dict('records')}"
    )
    assert len(np.unique(expected)) > 1  # not vacuous
    b = interval_bounds(compiled)  # valid bounds for every column, non-affine ones included
    x = compiled.transform_raw(compiled.encode(X))
    assert (x >= b.x_lo).all() and (x <= b.x_hi).all()


# --------------------------------------------------------------------------- calibration
CALIBRATED_BASES = ["lr", "linear_svm", "tree", "rf", "gb", "hgb", "mlp", "xgb", "lgbm"]


@pytest.mark.parametrize("method", ["sigmoid", "isotonic"])
@pytest.mark.parametrize("kind", CALIBRATED_BASES)
def test_calibrated_threshold_is_exact(kind: str, method: str, german: cf.Dataset) -> None:
    pre = preprocessing("onehot_ignore", german.schema, True)
    model = Pipeline(
        [
            *pre,
            ("clf", CalibratedClassifierCV(estimator(kind), method=method, ensemble=False, cv=3)),
        ]
    )
    with warnings.catch_warnings(), threadpool_limits(1):
        warnings.simplefilter("ignore")
        model.fit(german.X, german.y)
    compiled = compile_model(model, german.schema)
    assert compiled.rule.kind == "threshold" and compiled.n_outputs == 1
    rng = np.random.default_rng(3)
    X = pd.concat(
        [random_frame(german.schema, N_RANDOM, rng), german.X.reset_index(drop=True)],
        ignore_index=True,
    )
    expected = model.predict(X)
    got = compiled.predict(X)
    assert (got == expected).all(), f"{(got != expected).sum()} rows differ"


def test_calibrated_ensemble_is_rejected_naming_the_fix(german: cf.Dataset) -> None:
    model = Pipeline(
        [
            *preprocessing("onehot_ignore", german.schema, True),
            ("clf", CalibratedClassifierCV(linear_model.LogisticRegression(max_iter=500), cv=3)),
        ]
    )
    model.fit(german.X, german.y)
    with pytest.raises(UnsupportedModelError, match="ensemble=False"):
        compile_model(model, german.schema)
    with pytest.raises(UnsupportedModelError, match="ensemble=False"):
        cf.MACE().fit(model, german)


def test_calibrated_whole_pipeline_and_frozen(german: cf.Dataset) -> None:
    from sklearn.frozen import FrozenEstimator

    base = Pipeline(
        [
            *preprocessing("onehot_ignore", german.schema, True),
            ("clf", linear_model.LogisticRegression(max_iter=500)),
        ]
    )
    base.fit(german.X, german.y)
    for model in (
        CalibratedClassifierCV(FrozenEstimator(base), method="isotonic"),
        CalibratedClassifierCV(base, method="sigmoid", ensemble=False, cv=3),
    ):
        model.fit(german.X, german.y)
        compiled = compile_model(model, german.schema)
        X = random_frame(german.schema, N_RANDOM, np.random.default_rng(5))
        assert (compiled.predict(X) == model.predict(X)).all()


# --------------------------------------------------------------------------- errors
def test_unsupported_elements_are_named_with_their_position(german: cf.Dataset) -> None:
    from sklearn.decomposition import PCA

    s = german.schema
    cases = [
        (
            Pipeline(
                [
                    (
                        "pre",
                        _ct(
                            [
                                ("cat", OneHotEncoder(handle_unknown="ignore"), s.categorical),
                                (
                                    "num",
                                    Pipeline([("sc", StandardScaler()), ("pca", PCA(2))]),
                                    s.numeric,
                                ),
                            ]
                        ),
                    ),
                    ("clf", linear_model.LogisticRegression()),
                ]
            ),
            r"PCA at step 0 \('pre'\) of the pipeline > ColumnTransformer part 'num' > "
            r"step 1 \('pca'\)",
        ),
        (
            Pipeline(
                [
                    ("pre", FeatureUnion([("a", StandardScaler())])),
                    ("clf", linear_model.LogisticRegression()),
                ]
            ),
            r"FeatureUnion at step 0 \('pre'\)",
        ),
        (
            Pipeline(
                [
                    (
                        "pre",
                        _ct([("oh", OneHotEncoder(handle_unknown="ignore"), ["credit_amount"])]),
                    ),
                    ("clf", tree.DecisionTreeClassifier()),
                ]
            ),
            "real feature 'credit_amount'.*KBinsDiscretizer",
        ),
    ]
    for model, needle in cases:
        X = german.X[s.numeric] if "FeatureUnion" in needle else german.X
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X, german.y)
        with pytest.raises(UnsupportedModelError, match="(?s)" + needle):
            compile_model(
                model,
                german.schema
                if "FeatureUnion" not in needle
                else cf.Schema(tuple(s[n] for n in s.numeric)),
            )


# --------------------------------------------------------------------------- docs
def test_docs_table_matches() -> None:
    """docs/models.md's preprocessing table is the SUPPORT matrix above."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "models.md").read_text()
    rows = re.findall(
        r"^\| `(\w+)` \| (.+?) \| (all models(?: except [\w, ]+)?|tree models only) \|$",
        doc,
        flags=re.M,
    )
    table = {
        name: where.replace("all models", "all").replace("tree models only", "trees")
        for name, _, where in rows
    }
    assert table == {k: v[1] for k, v in SUPPORT.items()}


# --------------------------------------------------------------------------- native categoricals
def _as_categories(X: pd.DataFrame, schema: cf.Schema, order: dict[str, list[Any]]) -> pd.DataFrame:
    X = X.copy()
    for n, cats in order.items():
        X[n] = pd.Categorical(X[n], categories=cats)
    return X


@pytest.mark.parametrize(
    "case", ["xgb", "xgb_onehot_style", "xgb_multiclass_base_score", "lgbm", "lgbm_multiclass"]
)
def test_native_categorical_splits(case: str, german: cf.Dataset) -> None:
    """XGBoost / LightGBM on pandas 'category' columns: set-valued splits, exact."""
    s = german.schema
    disc = s.categorical + s.ordinal
    order = {n: sorted(s[n].categories) for n in disc}  # not the schema order
    X, y, schema = german.X, german.y, s
    if "multiclass" in case:  # predict 'housing' (3 classes)
        levels = sorted(german.X["housing"].unique())
        y = pd.Series(np.searchsorted(levels, german.X["housing"]))
        X = german.X.drop(columns=["housing"])
        schema = cf.Schema(tuple(f for f in s.features if f.name != "housing"))
        order.pop("housing")
    if case.startswith("xgb"):
        xgb = pytest.importorskip("xgboost")
        params: dict[str, Any] = {"max_cat_to_onehot": 8} if case == "xgb_onehot_style" else {}
        if case == "xgb_multiclass_base_score":
            params = {"objective": "multi:softprob", "base_score": [0.2, 0.3, 0.5]}
        model = xgb.XGBClassifier(
            n_estimators=8, max_depth=4, enable_categorical=True, random_state=0, n_jobs=1, **params
        )
    else:
        lgb = pytest.importorskip("lightgbm")
        model = lgb.LGBMClassifier(
            n_estimators=8,
            num_leaves=8,
            min_child_samples=5,
            min_data_per_group=5,
            cat_smooth=1,
            random_state=0,
            n_jobs=1,
            verbose=-1,
        )
    try:
        model.fit(_as_categories(X, schema, order), y)
    except (
        TypeError,
        ValueError,
    ) as exc:  # pragma: no cover - older XGBoost without vector base_score
        pytest.skip(str(exc))
    compiled = compile_model(model, schema)
    splits = compiled.estimator.splits
    assert any(sp.left_values is not None for sp in splits)
    rng = np.random.default_rng(2)
    R = random_frame(schema, N_RANDOM, rng)
    R = pd.concat([R, boundary_frame(compiled, R, rng)], ignore_index=True)
    expected = model.predict(_as_categories(R, schema, order))
    got = compiled.predict(R)
    assert (np.asarray(expected) == got).all(), f"{(np.asarray(expected) != got).sum()} rows differ"
    assert len(np.unique(expected)) > 1


def test_boosted_base_and_init_scores(german: cf.Dataset) -> None:
    """XGBoost's base_score and a LightGBM fitted with init_score (not used by predict)."""
    xgb = pytest.importorskip("xgboost")
    lgb = pytest.importorskip("lightgbm")
    pre = preprocessing("onehot_ignore", german.schema, False)
    rng = np.random.default_rng(4)
    init = rng.normal(0, 0.5, len(german.y))
    cases = [
        (
            Pipeline(
                [
                    *pre,
                    (
                        "clf",
                        xgb.XGBClassifier(n_estimators=8, max_depth=3, base_score=0.3, n_jobs=1),
                    ),
                ]
            ),
            {},
        ),
        (
            Pipeline(
                [
                    *preprocessing("onehot_ignore", german.schema, False),
                    ("clf", lgb.LGBMClassifier(n_estimators=8, num_leaves=8, verbose=-1, n_jobs=1)),
                ]
            ),
            {"clf__init_score": init},
        ),
    ]
    X = random_frame(german.schema, N_RANDOM, rng)
    for model, fit_params in cases:
        model.fit(german.X, german.y, **fit_params)
        compiled = compile_model(model, german.schema)
        assert (compiled.predict(X) == model.predict(X)).all()


def test_compiled_models_pickle(german: cf.Dataset) -> None:
    """Compiled models with non-affine columns pickle (methods run queries in worker processes)."""
    import pickle

    X = random_frame(german.schema, 500, np.random.default_rng(8))
    for variant, kind in (
        ("quantile", "rf"),
        ("power", "gb"),
        ("kbins_real_onehot", "tree"),
        ("log1p", "hgb"),
        ("onehot_ignore", "lr"),
        ("target", "mlp"),
    ):
        compiled = compile_model(_fit(variant, kind, german), german.schema)
        again = pickle.loads(pickle.dumps(compiled))
        np.testing.assert_array_equal(again.predict(X), compiled.predict(X))
