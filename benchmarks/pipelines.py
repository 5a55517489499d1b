"""Cost of preprocessing variants for the exact methods (issue: pipelines as users have them).

For every preprocessing variant and estimator (logistic regression, random forest,
MLP) on German Credit: the compile time and MACE's median seconds per query, beside
the same estimator behind the default preprocessing (``counterfact.models.preprocessor``)
measured in the same run.  Ratios are the figures that matter (target: <= 2x);
absolute seconds are context.

Run::

    python benchmarks/pipelines.py                 # 5 queries per model, ~3-6 minutes
    python benchmarks/pipelines.py --queries 10 --models lr rf

Writes ``benchmarks/out/pipelines.md`` (and ``.csv``).

Scorecards and EBMs (GitHub issue 28), ``--scorecards``: on German Credit, Adult and
HELOC (the user's copy; skipped with a message when absent), a KBinsDiscretizer +
one-hot + logistic-regression scorecard, an optbinning ``Scorecard`` and an
interpret ``ExplainableBoostingClassifier`` (each skipped with a message when its
package is missing), beside the same data's plain logistic regression
(``cf.models.fit(train, "lr")``): for MACE and CE-OCL, the coverage (queries with a
counterfactual), the share proven optimal and the median seconds per query as a
ratio to the plain logistic regression measured in the same run, with the
nearest observed counterfactual (``cf.NearestObservable``) alongside::

    python benchmarks/pipelines.py --scorecards --queries 10      # ~15-30 minutes

Writes ``benchmarks/out/scorecards.md`` (and ``.csv``).

PyTorch networks (GitHub issue 39), ``--torch``: on German Credit and Adult, a
``cf.models.TorchModel`` of an ``nn.Sequential`` (Linear, ReLU, Linear; 16 hidden
units) trained on the ``cf.Encoder`` rows, beside a scikit-learn ``MLPClassifier``
of the same size: for MACE and CE-OCL (and the nearest observed counterfactual),
the coverage, the share proven optimal, the share of answers the torch module
itself assigns to the favourable class, and the median seconds per query as a
ratio to the torch network's, same run::

    python benchmarks/pipelines.py --torch --queries 5 --max-train 1000   # ~5 minutes

Writes ``benchmarks/out/torch_networks.md`` (and ``.csv``).

ONNX files (GitHub issue 39), ``--onnx``: every pipeline cell above converted with skl2onnx
(and an XGBoost and a LightGBM model on the numeric features, through onnxmltools, where
installed), explained from the ``.onnx`` file (``cf.models.OnnxModel``) by MACE and CE-OCL
beside the original: every answer verified with onnxruntime, and its cost (the
range-normalised distance) compared with the original's answer for the same query::

    python benchmarks/pipelines.py --onnx --queries 3      # ~5-10 minutes

Writes ``benchmarks/out/onnx_files.md`` (and ``.csv``).

CatBoost (GitHub issue 39), ``--catboost``: on Adult and German Credit, a
``CatBoostClassifier`` (50 trees, depth 4) on the numeric features and on every feature
(text columns as CatBoost's native categorical features, one-hot encoded by CatBoost:
``one_hot_max_size`` above every category count, so no CTRs), explained by MACE and
CE-OCL: coverage, the share proven optimal, the share of answers CatBoost's own
``predict`` assigns to the favourable class, and the median seconds per query::

    python benchmarks/pipelines.py --catboost --queries 5 --max-train 2000   # ~2 minutes

Writes ``benchmarks/out/catboost_models.md`` (and ``.csv``).

A torch network through ``torch.onnx.export`` (GitHub issue 39), ``--torch-onnx``: on
German Credit and Adult's numeric features, an ``nn.Sequential`` (Linear, ReLU, Linear)
explained as a ``cf.models.TorchModel`` and from the ``.onnx`` file the exporter writes
(``cf.models.OnnxModel``), by MACE and CE-OCL, for the same queries: the file's answers
verified with onnxruntime, and their cost compared with the module's::

    python benchmarks/pipelines.py --torch-onnx --queries 5 --max-train 1000   # ~2 minutes

Writes ``benchmarks/out/torch_onnx.md`` (and ``.csv``).
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from typing import Any

import numpy as np
from _common import timed, write_table
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import RandomForestClassifier
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    KBinsDiscretizer,
    OneHotEncoder,
    OrdinalEncoder,
    QuantileTransformer,
    StandardScaler,
    TargetEncoder,
)

import counterfact as cf
from counterfact.exceptions import UnsupportedModelError
from counterfact.models import compile_model
from counterfact.models._adapter import as_adapter

#: each method's own objective (MACE's eq. (3) under its norm, CE-OCL's): what this measures
OWN = cf.Requirements(costs="own")

TREES = {"rf"}


def variants(s: cf.Schema, linear: bool) -> dict[str, Any]:
    disc, num = s.categorical + s.ordinal, s.numeric
    ints = [n for n in num if s[n].kind == "integer"]
    real = [n for n in num if s[n].kind == "real"]
    scale = StandardScaler() if linear else "passthrough"

    def ct(parts: list[Any]) -> ColumnTransformer:
        return ColumnTransformer(parts, sparse_threshold=0.0)

    oh = OneHotEncoder(handle_unknown="ignore")
    return {
        "default": cf.models.preprocessor(s, scale=linear),
        "onehot_ignore (issue)": ct([("cat", oh, disc), ("num", StandardScaler(), num)]),
        "onehot_drop_first": ct([("cat", OneHotEncoder(drop="first"), disc), ("num", scale, num)]),
        "onehot_infrequent": ct(
            [
                (
                    "cat",
                    OneHotEncoder(min_frequency=30, handle_unknown="infrequent_if_exist"),
                    disc,
                ),
                ("num", scale, num),
            ]
        ),
        "ordinal_any_order": ct([("cat", OrdinalEncoder(), disc), ("num", scale, num)]),
        "target": ct([("cat", TargetEncoder(random_state=0), disc), ("num", scale, num)]),
        "kbins_integer": ct(
            [
                ("cat", oh, disc),
                ("bins", KBinsDiscretizer(4, quantile_method="averaged_inverted_cdf"), ints),
                ("num", scale, real),
            ]
        ),
        "impute": ct(
            [
                (
                    "cat",
                    Pipeline([("i", SimpleImputer(strategy="most_frequent")), ("o", oh)]),
                    disc,
                ),
                ("num", Pipeline([("i", SimpleImputer()), ("s", scale)]), num),
            ]
        ),
        "kbins_real_ordinal": ct(
            [
                ("cat", oh, disc),
                (
                    "bins",
                    KBinsDiscretizer(5, encode="ordinal", quantile_method="averaged_inverted_cdf"),
                    num,
                ),
            ]
        ),
        "log1p (trees)": ct([("cat", oh, disc), ("num", FunctionTransformer(np.log1p), num)]),
        "quantile (trees)": ct(
            [("cat", oh, disc), ("num", QuantileTransformer(n_quantiles=50, random_state=0), num)]
        ),
    }


def estimator(kind: str) -> Any:
    if kind == "lr":
        return LogisticRegression(max_iter=2000)
    if kind == "rf":
        return RandomForestClassifier(n_estimators=20, max_depth=6, random_state=0, n_jobs=1)
    return MLPClassifier((10,), max_iter=500, random_state=0)


# ----------------------------------------------------------------------- scorecards and EBMs
SCORECARD_DATASETS = ("german_credit", "adult", "heloc")


def scorecard_models(train: cf.Dataset, notes: list[str]) -> dict[str, Any]:
    """The plain logistic regression and the scorecards / EBM a credit team would fit."""
    s = train.schema
    disc = s.categorical + s.ordinal
    kbins = Pipeline(
        [
            (
                "bins",
                ColumnTransformer(
                    [
                        (
                            "numbers",
                            KBinsDiscretizer(
                                n_bins=5,
                                encode="onehot",
                                strategy="quantile",
                                quantile_method="averaged_inverted_cdf",
                            ),
                            s.numeric,
                        ),
                        ("categories", OneHotEncoder(handle_unknown="ignore"), disc),
                    ]
                ),
            ),
            ("score", LogisticRegression(max_iter=2000)),
        ]
    )
    models: dict[str, Any] = {
        "lr (plain)": cf.models.fit(train, "lr"),
        "kbins + lr": kbins.fit(train.X, train.y),
    }
    try:
        from optbinning import BinningProcess, Scorecard

        sc = Scorecard(
            binning_process=BinningProcess(
                variable_names=list(s.names), categorical_variables=disc
            ),
            estimator=LogisticRegression(max_iter=2000),
            scaling_method="min_max",
            scaling_method_params={"min": 300, "max": 850},
        )
        models["optbinning scorecard"] = sc.fit(train.X, train.y)
    except ImportError as exc:
        notes.append(f'optbinning scorecard: skipped ({exc}; pip install "counterfact[scorecard]")')
    try:
        from interpret.glassbox import ExplainableBoostingClassifier

        models["ebm"] = ExplainableBoostingClassifier(random_state=0, n_jobs=1).fit(
            train.X, train.y
        )
    except ImportError as exc:
        notes.append(f'ebm: skipped ({exc}; pip install "counterfact[ebm]")')
    return models


def _methods(time_limit: float) -> dict[str, Any]:
    return {
        "MACE": lambda: cf.MACE(norm="l1", rel_gap=1e-3, time_limit=time_limit, random_state=0),
        "CE-OCL": lambda: cf.CEOCL(norm="l1", time_limit=time_limit, random_state=0),
        "nearest": lambda: cf.NearestObservable(random_state=0),
    }


def _run_queries(method: Any, queries: Any) -> tuple[list[float], list[str]]:
    seconds, statuses = [], []
    for i in range(len(queries)):
        t0 = time.perf_counter()
        res = method.explain(queries.iloc[i : i + 1], requirements=OWN)
        seconds.append(time.perf_counter() - t0)
        statuses.append(str(res.status.iloc[0]))
    return seconds, statuses


def scorecards(args: argparse.Namespace) -> None:
    """The ``--scorecards`` table (module docstring)."""
    import pandas as pd
    from _common import load_split

    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    for name in SCORECARD_DATASETS:
        split = load_split(name, cf.datasets.load, notes, max_train=args.max_train)
        if split is None:
            continue
        train, test = split
        favourable = cf.datasets.favourable(name)
        base: dict[str, float] = {}
        for model_name, model in scorecard_models(train, notes).items():
            kind = type(compile_model(model, train.schema).estimator).__name__
            adapter = as_adapter(model, train.schema)  # a Scorecard has no classes_ of its own
            queries = cf.rows_to_explain(adapter, test.X, target=favourable).iloc[: args.queries]
            for method_name, make in _methods(args.time_limit).items():
                method = make().fit(model, train)
                seconds, statuses = _run_queries(method, queries)
                med = statistics.median(seconds) if seconds else np.nan
                if model_name == "lr (plain)":
                    base[method_name] = med
                n = max(len(statuses), 1)
                rows.append(
                    {
                        "dataset": name,
                        "model": model_name,
                        "compiled as": kind,
                        "method": method_name,
                        "queries": len(statuses),
                        "coverage": sum(st in ("optimal", "feasible") for st in statuses) / n,
                        "proven optimal": statuses.count("optimal") / n,
                        "median s/query": med,
                        "ratio to plain lr": med / base.get(method_name, np.nan),
                    }
                )
                print(rows[-1], flush=True)
    notes = [
        f"{args.queries} queries per cell (test rows the model does not assign to the "
        f"favourable class), one query per explain call, time_limit={args.time_limit:g} s "
        f"per query; training rows capped at {args.max_train} (seeded subsample).",
        "MACE(norm='l1', rel_gap=1e-3), CE-OCL(norm='l1'); nearest: NearestObservable, the "
        "nearest training row the model assigns to the favourable class (its 'optimal' is "
        "among those rows, not over the domain).",
        "ratio to plain lr: median seconds per query over the same method on the same "
        "data's cf.models.fit(train, 'lr') (StandardScaler + one-hot + LogisticRegression), "
        "measured in the same run.",
        "kbins + lr: KBinsDiscretizer(5, onehot, quantile) on the numbers, OneHotEncoder on "
        "the categories; optbinning scorecard: Scorecard(BinningProcess, "
        "LogisticRegression); ebm: interpret's defaults.",
        *notes,
    ]
    write_table("scorecards", pd.DataFrame(rows), notes)


# --------------------------------------------------------------- torch networks (issue 39)
TORCH_DATASETS = ("german_credit", "adult")


def torch_mlp(train: cf.Dataset, hidden: int, epochs: int = 300) -> Any:
    """A ``cf.models.TorchModel`` of ``nn.Sequential(Linear, ReLU, Linear)`` trained with
    full-batch Adam on the encoded training rows (seeded)."""
    import torch

    encoder = cf.Encoder(train.schema)
    V = torch.as_tensor(encoder.transform(train.X), dtype=torch.float32)
    classes = list(train.classes)
    y = torch.as_tensor([classes.index(v) for v in train.y.tolist()])
    nn = torch.nn
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        net = nn.Sequential(
            nn.Linear(V.shape[1], hidden), nn.ReLU(), nn.Linear(hidden, len(classes))
        )
        optimizer = torch.optim.Adam(net.parameters(), lr=0.01, weight_decay=1e-4)
        for _ in range(epochs):
            optimizer.zero_grad()
            nn.functional.cross_entropy(net(V), y).backward()
            optimizer.step()
    return cf.models.TorchModel(net, encoder, classes=classes)


def _verified_row(
    cell: dict[str, Any], model: Any, method: Any, queries: Any, target: Any
) -> dict[str, Any]:
    """One cell of the torch table: ``method``'s answers to ``queries``, each verified
    with ``model`` itself (its class must be ``target``)."""
    seconds, statuses, valid = [], [], 0
    for i in range(len(queries)):
        t0 = time.perf_counter()
        res = method.explain(queries.iloc[i : i + 1], requirements=OWN)
        seconds.append(time.perf_counter() - t0)
        statuses.append(str(res.status.iloc[0]))
        if len(res.counterfactuals):
            answer = res.counterfactuals.iloc[:1].loc[:, list(queries.columns)]
            valid += int(model.predict(answer)[0] == target)
    n = max(len(statuses), 1)
    return {
        **cell,
        "queries": len(statuses),
        "coverage": sum(st in ("optimal", "feasible") for st in statuses) / n,
        "proven optimal": statuses.count("optimal") / n,
        "valid (model's own predict)": valid / n,
        "median s/query": statistics.median(seconds) if seconds else np.nan,
    }


def torch_networks(args: argparse.Namespace) -> None:
    """The ``--torch`` table (module docstring)."""
    import pandas as pd
    from _common import load_split

    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    for name in TORCH_DATASETS:
        split = load_split(name, cf.datasets.load, notes, max_train=args.max_train)
        if split is None:
            continue
        train, test = split
        models = {
            "torch nn.Sequential (16 ReLU)": torch_mlp(train, 16),
            "sklearn MLPClassifier (16 ReLU)": cf.models.fit(
                train, "mlp", hidden_layer_sizes=(16,), random_state=0
            ),
        }
        base: dict[str, float] = {}
        favourable = cf.datasets.favourable(name)
        for model_name, model in models.items():
            queries = cf.rows_to_explain(model, test.X, target=favourable).iloc[: args.queries]
            for method_name, make in _methods(args.time_limit).items():
                cell = {"dataset": name, "model": model_name, "method": method_name}
                row = _verified_row(cell, model, make().fit(model, train), queries, favourable)
                base.setdefault(method_name, row["median s/query"])
                row["ratio to torch"] = row["median s/query"] / base[method_name]
                rows.append(row)
                print(row, flush=True)
    notes = [
        f"{args.queries} queries per cell (test rows the model does not assign to the "
        f"favourable class), one query per explain call, time_limit={args.time_limit:g} s "
        f"per query; training rows capped at {args.max_train} (seeded subsample).",
        "torch: cf.models.TorchModel(nn.Sequential(Linear, ReLU(16), Linear), cf.Encoder), "
        "300 full-batch Adam steps (lr 0.01, seeded), compiled into the same ReLU network IR "
        "as the MLPClassifier; valid: the answer's class under the model's own predict "
        "(torch, float32) is the favourable class.",
        "ratio to torch: median seconds per query over the torch network's, same method and "
        "data, same run.",
        *notes,
    ]
    write_table("torch_networks", pd.DataFrame(rows), notes)


# ----------------------------------------------------------------------- ONNX files
def _onnx_methods(time_limit: float) -> dict[str, Any]:
    return {
        "MACE": lambda: cf.MACE(norm="l1", rel_gap=1e-3, time_limit=time_limit, random_state=0),
        "CE-OCL": lambda: cf.CEOCL(norm="l1", time_limit=time_limit, random_state=0),
    }


def _to_onnx(model: Any, X: Any) -> Any:
    """The skl2onnx conversion of a pipeline fitted on the DataFrame ``X``."""
    from skl2onnx import to_onnx

    first = X.iloc[:1]
    return to_onnx(model, first.astype({c: "float32" for c in first.select_dtypes("float")}))


def _booster_cells(train: cf.Dataset) -> dict[str, tuple[Any, Any, cf.Dataset]]:
    """XGBoost and LightGBM on the numeric features, converted with onnxmltools."""
    import importlib

    try:
        from onnxmltools import convert_lightgbm, convert_xgboost
        from onnxmltools.convert.common.data_types import FloatTensorType
    except ImportError:
        return {}
    num = train.schema.numeric
    target = train.schema.target
    data = cf.Dataset.from_frame(train.frame[[*num, target]], target=target)
    types = [("X", FloatTensorType([None, len(num)]))]
    cells = {}
    for name, cls, convert, extra in (
        ("xgboost", "XGBClassifier", convert_xgboost, {}),
        ("lightgbm", "LGBMClassifier", convert_lightgbm, {"verbose": -1}),
    ):
        try:
            make = getattr(importlib.import_module(name), cls)
        except ImportError:
            continue
        est = make(n_estimators=30, max_depth=3, random_state=0, **extra)
        est.fit(data.X.to_numpy(np.float32), data.y)  # the converters want unnamed columns
        cells[name] = (est, convert(est, initial_types=types), data)
    return cells


def _onnx_row(
    method: Any, original: Any, onnx_model: Any, data: Any, queries: Any, target: Any = 1
) -> dict:
    """One method on the original and on its ONNX file, for the same queries (answers
    verified with onnxruntime: their class must be ``target``)."""
    out: dict[str, Any] = {}
    results = []
    for key, model in (("original", original), ("onnx", onnx_model)):
        fitted = method().fit(model, data)
        t0 = time.perf_counter()
        res = fitted.explain(queries, requirements=OWN)
        out[f"{key} s/query"] = (time.perf_counter() - t0) / max(len(queries), 1)
        out[f"{key} statuses"] = ", ".join(
            f"{st} x{list(res.status).count(st)}" for st in sorted(set(res.status))
        )
        results.append(res)
    found = results[1].counterfactuals
    ok = int((onnx_model.predict(found) == target).sum()) if len(found) else 0
    out["verified by onnxruntime"] = f"{ok}/{len(found)}"
    costs = [np.asarray(cf.metrics.distance(r), dtype=float) for r in results]
    same = costs[0].shape == costs[1].shape and costs[0].size > 0
    out["max cost diff"] = float(np.max(np.abs(costs[0] - costs[1]))) if same else np.nan
    return out


def _onnx_cells(train: cf.Dataset, kinds: list[str]) -> Any:
    """``(cell, original, its conversion or why it has none, data)`` per cell."""
    for kind in kinds:
        for name, pre in variants(train.schema, kind not in TREES).items():
            model = Pipeline([("pre", clone(pre)), ("clf", estimator(kind))]).fit(train.X, train.y)
            try:
                yield f"{kind} / {name}", model, _to_onnx(model, train.X), train
            except Exception as exc:  # the converter's own limits, reported in the table
                yield f"{kind} / {name}", model, f"skl2onnx: {type(exc).__name__}", train
    for name, (est, proto, data) in _booster_cells(train).items():
        yield f"{name} (numeric)", est, proto, data


def onnx_files(args: argparse.Namespace) -> None:
    """The ``--onnx`` table (module docstring)."""
    import pandas as pd

    from counterfact.models import OnnxModel

    train, test = _german_credit_600()
    rows: list[dict[str, Any]] = []
    for cell, original, proto, cell_data in _onnx_cells(train, args.models):
        if isinstance(proto, str):
            rows.append({"cell": cell, "compiled as": proto})
            continue
        onnx_model = OnnxModel(proto)
        try:
            kind = type(compile_model(onnx_model, cell_data.schema).estimator).__name__
        except UnsupportedModelError as exc:
            rows.append({"cell": cell, "compiled as": "refused: " + str(exc).split(". ")[0]})
            continue
        queries = cf.rows_to_explain(original, test.X[cell_data.schema.names], target=1)
        for method_name, method in _onnx_methods(args.time_limit).items():
            found = _onnx_row(method, original, onnx_model, cell_data, queries.iloc[: args.queries])
            rows.append({"cell": cell, "compiled as": kind, "method": method_name, **found})
            print(rows[-1], flush=True)
    notes = [
        f"German Credit, {len(train)} training rows; {args.queries} queries per cell (test rows "
        f"the original does not assign to class 1), time_limit={args.time_limit:g} s per "
        "query; MACE(norm='l1', rel_gap=1e-3), CE-OCL(norm='l1').",
        "verified by onnxruntime: the answers from the .onnx file that onnxruntime assigns to "
        "class 1; max cost diff: the largest difference of the range-normalised distance "
        "between the original's answer and the .onnx file's, query by query.",
        "skl2onnx: a pipeline the converter does not write; refused: an operator the model "
        "compiler does not support (named); the model-agnostic methods explain those files.",
    ]
    write_table("onnx_files", pd.DataFrame(rows), notes)


# ------------------------------------------------------------------- CatBoost (issue 39)
CATBOOST_DATASETS = ("adult", "german_credit")


def catboost_model(train: cf.Dataset, columns: list[str]) -> Any:
    """A ``CatBoostClassifier`` (50 trees, depth 4, seeded) on ``columns``; its text
    columns (categorical and ordinal) are native categorical features, one-hot encoded
    by CatBoost itself (``one_hot_max_size`` above every feature's category count: no
    CTRs, which the model compiler refuses)."""
    from catboost import CatBoostClassifier
    from pandas.api.types import is_numeric_dtype

    X = train.X[columns]
    cats = [c for c in columns if not is_numeric_dtype(X[c])]
    model = CatBoostClassifier(
        iterations=50,
        depth=4,
        one_hot_max_size=255,
        random_seed=0,
        verbose=0,
        allow_writing_files=False,
        thread_count=1,
        cat_features=cats,
    )
    return model.fit(X, train.y)


def _catboost_cells(train: cf.Dataset) -> dict[str, tuple[Any, cf.Dataset]]:
    """``numeric`` (the numeric features) and ``numeric + one-hot`` (every feature)."""
    s = train.schema
    target = s.target
    numeric = cf.Dataset.from_frame(train.frame[[*s.numeric, target]], target=target)
    return {
        "numeric": (catboost_model(numeric, list(numeric.schema.names)), numeric),
        "numeric + one-hot": (catboost_model(train, list(s.names)), train),
    }


def catboost_models(args: argparse.Namespace) -> None:
    """The ``--catboost`` table (module docstring)."""
    import pandas as pd
    from _common import load_split

    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    for name in CATBOOST_DATASETS:
        split = load_split(name, cf.datasets.load, notes, max_train=args.max_train)
        if split is None:
            continue
        train, test = split
        favourable = cf.datasets.favourable(name)
        for cell, (model, data) in _catboost_cells(train).items():
            X = test.X[list(data.schema.names)]
            queries = cf.rows_to_explain(model, X, target=favourable).iloc[: args.queries]
            for method_name, make in _onnx_methods(args.time_limit).items():
                head = {"dataset": name, "features": cell, "method": method_name}
                rows.append(
                    _verified_row(head, model, make().fit(model, data), queries, favourable)
                )
                print(rows[-1], flush=True)
    notes = [
        f"{args.queries} queries per cell (test rows the model does not assign to the "
        f"favourable class), one query per explain call, time_limit={args.time_limit:g} s "
        f"per query; training rows capped at {args.max_train} (seeded subsample).",
        "CatBoostClassifier(iterations=50, depth=4, one_hot_max_size=255, random_seed=0): "
        "text columns (categorical and ordinal) are CatBoost's native categorical features, "
        "one-hot encoded by CatBoost (no CTRs); numeric: the numeric features only.",
        "MACE(norm='l1', rel_gap=1e-3), CE-OCL(norm='l1'); valid: the answer's class under "
        "CatBoost's own predict is the favourable class.",
        *notes,
    ]
    write_table("catboost_models", pd.DataFrame(rows), notes)


# ------------------------------------------------------- torch.onnx.export (issue 39)
def numeric_torch_mlp(train: cf.Dataset, hidden: int = 16, epochs: int = 300) -> Any:
    """``nn.Sequential(Linear, ReLU, Linear)`` on the raw numeric columns (schema order):
    trained on standardised columns, the standardisation then folded into the first
    layer, so that the network reads the rows as an ONNX file's one input tensor does."""
    import torch

    X = torch.as_tensor(train.X.to_numpy(float), dtype=torch.float32)
    mean, sd = X.mean(dim=0), X.std(dim=0).clamp_min(1e-6)
    classes = list(train.classes)
    y = torch.as_tensor([classes.index(v) for v in train.y.tolist()])
    nn = torch.nn
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        net = nn.Sequential(nn.Linear(X.shape[1], hidden), nn.ReLU(), nn.Linear(hidden, 2))
        optimizer = torch.optim.Adam(net.parameters(), lr=0.01, weight_decay=1e-4)
        for _ in range(epochs):
            optimizer.zero_grad()
            nn.functional.cross_entropy(net((X - mean) / sd), y).backward()
            optimizer.step()
    with torch.no_grad():
        first = net[0]
        first.bias -= first.weight @ (mean / sd)
        first.weight /= sd
    return net


def exported_onnx(net: Any, n_columns: int, path: Any) -> Any:
    """``net`` written by ``torch.onnx.export`` to ``path`` (one input tensor ``X``; the
    TorchScript exporter where onnxscript, which the dynamo exporter needs, is missing)."""
    import importlib.util

    import torch

    legacy = importlib.util.find_spec("onnxscript") is None
    extra = {"dynamo": False} if legacy else {}
    net.eval()
    torch.onnx.export(
        net,
        torch.zeros(1, n_columns),
        str(path),
        input_names=["X"],
        dynamic_axes={"X": {0: "rows"}},
        **extra,
    )
    return path


def _torch_onnx_pair(train: cf.Dataset, folder: Any) -> tuple[Any, Any, cf.Dataset]:
    """The numeric features' network as a TorchModel and as its exported ``.onnx`` file."""
    from counterfact.models import OnnxModel

    target = train.schema.target
    data = cf.Dataset.from_frame(train.frame[[*train.schema.numeric, target]], target=target)
    net = numeric_torch_mlp(data)
    classes = list(data.classes)
    encoder = cf.Encoder(data.schema, scaling="none")
    torch_model = cf.models.TorchModel(net, encoder, classes=classes)
    folder.mkdir(parents=True, exist_ok=True)
    path = exported_onnx(net, len(data.schema.names), folder / "mlp.onnx")
    return torch_model, OnnxModel(path, classes=classes), data


def torch_onnx_files(args: argparse.Namespace) -> None:
    """The ``--torch-onnx`` table (module docstring)."""
    import tempfile
    from pathlib import Path

    import pandas as pd
    from _common import load_split

    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        for name in TORCH_DATASETS:
            split = load_split(name, cf.datasets.load, notes, max_train=args.max_train)
            if split is None:
                continue
            train, test = split
            torch_model, onnx_model, data = _torch_onnx_pair(train, Path(folder) / name)
            favourable = cf.datasets.favourable(name)
            X = test.X[list(data.schema.names)]
            queries = cf.rows_to_explain(torch_model, X, target=favourable).iloc[: args.queries]
            for method_name, method in _onnx_methods(args.time_limit).items():
                found = _onnx_row(method, torch_model, onnx_model, data, queries, favourable)
                rows.append({"dataset": name, "method": method_name, **found})
                print(rows[-1], flush=True)
    notes = [
        f"{args.queries} queries per dataset (test rows the network does not assign to the "
        f"favourable class), time_limit={args.time_limit:g} s per query; training rows capped "
        f"at {args.max_train} (seeded subsample); the numeric features only.",
        "original: cf.models.TorchModel(nn.Sequential(Linear, ReLU(16), Linear), "
        "cf.Encoder(scaling='none')); onnx: the same module written by torch.onnx.export, "
        "explained from the file (cf.models.OnnxModel).",
        "verified by onnxruntime: the .onnx file's answers onnxruntime assigns to the "
        "favourable class; max cost diff: the largest difference of the range-normalised "
        "distance between the torch module's answer and the .onnx file's, query by query.",
        *notes,
    ]
    write_table("torch_onnx", pd.DataFrame(rows), notes)


# ------------------------------------------------------------ the preprocessing variants
def _compile_seconds(model: Any, schema: cf.Schema) -> float:
    """The median of three compile times (raises UnsupportedModelError)."""
    return statistics.median(timed(lambda: compile_model(model, schema))[1] for _ in range(3))


def _mace_seconds(model: Any, train: cf.Dataset, queries: Any, time_limit: float) -> tuple:
    """MACE's median seconds per query (one query per explain call) and its statuses."""
    mace = cf.MACE(norm="l1", rel_gap=1e-3, time_limit=time_limit, random_state=0)
    seconds, statuses = _run_queries(mace.fit(model, train), queries)
    return (statistics.median(seconds) if seconds else np.nan), statuses


def _unsupported_row(kind: str, name: str) -> dict[str, Any]:
    nan = np.nan
    return {
        "model": kind,
        "variant": name,
        "compile_s": nan,
        "compile_ratio": nan,
        "mace_median_s": nan,
        "mace_ratio": nan,
        "statuses": "unsupported (trees only)",
    }


def _variant_rows(kind: str, train: cf.Dataset, test: cf.Dataset, args: Any) -> list[dict]:
    """One estimator behind every preprocessing variant, each against the default's."""
    rows: list[dict[str, Any]] = []
    base: dict[str, float] = {}
    for name, pre in variants(train.schema, kind not in TREES).items():
        model = Pipeline([("pre", clone(pre)), ("clf", estimator(kind))]).fit(train.X, train.y)
        try:
            compile_s = _compile_seconds(model, train.schema)
        except UnsupportedModelError:
            rows.append(_unsupported_row(kind, name))
            continue
        queries = cf.rows_to_explain(model, test.X, target=1).iloc[: args.queries]
        mace_s, statuses = _mace_seconds(model, train, queries, args.time_limit)
        if name == "default":
            base = {"compile": compile_s, "mace": mace_s}
        rows.append(
            {
                "model": kind,
                "variant": name,
                "compile_s": compile_s,
                "compile_ratio": compile_s / base["compile"],
                "mace_median_s": mace_s,
                "mace_ratio": mace_s / base["mace"],
                "statuses": ", ".join(f"{s} x{statuses.count(s)}" for s in sorted(set(statuses))),
            }
        )
        print(rows[-1], flush=True)
    return rows


def _variant_notes(table: Any, n_train: int, queries: int) -> list[str]:
    slow = table[(table.variant != "default") & (table.mace_ratio > 2.0)]
    listed = "; ".join(f"{r.model}/{r.variant} {r.mace_ratio:.2f}x" for r in slow.itertuples())
    return [
        f"German Credit, {n_train} training rows; {queries} queries per model (rows "
        "the model does not assign to class 1); MACE(norm='l1', rel_gap=1e-3), one query "
        "per explain call.",
        "compile_ratio / mace_ratio: against the same estimator behind "
        "counterfact.models.preprocessor, same run.",
        "Linear models and MLPs over one-hot ordinals / target-encoded ordinals / integer "
        "bins are compiled as exact ReLU networks (MIP oracle); behind the default "
        "preprocessing a linear model uses the Z3 oracle.",
        f"variants above the 2x target for MACE: {len(slow)}" + (f" ({listed})" if listed else ""),
    ]


def preprocessing_variants(args: argparse.Namespace) -> None:
    """The default table (module docstring)."""
    import pandas as pd

    train, test = _german_credit_600()
    rows = [row for kind in args.models for row in _variant_rows(kind, train, test, args)]
    table = pd.DataFrame(rows)
    write_table("pipelines", table, _variant_notes(table, len(train), args.queries))


def _german_credit_600() -> tuple[cf.Dataset, cf.Dataset]:
    """German Credit split 80/20 (seed 0), the first 600 training rows kept."""
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    return train.subset(train.frame.index[:600]), test


# ------------------------------------------------------------------------------- main
def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=5)
    ap.add_argument("--models", nargs="+", default=["lr", "rf", "mlp"])
    ap.add_argument("--time-limit", type=float, default=30.0)
    ap.add_argument(
        "--scorecards", action="store_true", help="the scorecards and EBMs table (issue 28)"
    )
    ap.add_argument(
        "--max-train",
        type=int,
        default=2000,
        help="--scorecards / --torch / --catboost / --torch-onnx: training rows",
    )
    ap.add_argument("--torch", action="store_true", help="the PyTorch networks table (issue 39)")
    ap.add_argument("--onnx", action="store_true", help="the ONNX files table (issue 39)")
    ap.add_argument("--catboost", action="store_true", help="the CatBoost table (issue 39)")
    ap.add_argument(
        "--torch-onnx",
        action="store_true",
        help="a torch network beside its torch.onnx.export file (issue 39)",
    )
    return ap.parse_args()


def main() -> None:
    args = parse_args()
    warnings.simplefilter("ignore")
    tables = {
        "onnx": onnx_files,
        "torch": torch_networks,
        "scorecards": scorecards,
        "catboost": catboost_models,
        "torch_onnx": torch_onnx_files,
    }
    chosen = [table for flag, table in tables.items() if getattr(args, flag)]
    for table in chosen or [preprocessing_variants]:
        table(args)


if __name__ == "__main__":
    main()
