"""Known answers on scorecards and EBMs: MACE and CE-OCL find the brute-force optimum.

A small domain -- two integer features (10 and 15 values), a categorical and an
ordinal feature (3 levels each) and a real feature -- where the nearest
counterfactual can be enumerated: the model is a step function of the real
feature with cuts at its own bin edges, so the optimum puts that feature at the
query's value, at a domain end, or on either side of an edge (the edge, or the
float below it).  Every candidate point is scored by the model itself
(``decision_function`` with the solvers' decision margin), and the nearest one
under MACE's normalised l1 distance is the known answer.  MACE must prove it
within its epsilon and CE-OCL (``distance_scale="range"``: J times the same
distance) must reach it, for

* a KBins + one-hot + logistic-regression scorecard (a tree ensemble), and the
  same with the two integer features scaled instead of binned (one cell per
  value: still a tree ensemble),
* an MLP over the bins (a ``StepMLP``: MACE's MIP oracle),
* an EBM with pairwise interactions (interpret), and an optbinning ``Scorecard``.
"""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import KBinsDiscretizer, OneHotEncoder, StandardScaler

import counterfact as cf
from counterfact.models._compile import StepMLP, TreeEnsemble, compile_model

pytest.importorskip("z3")
pytest.importorskip("highspy")
pytestmark = pytest.mark.filterwarnings("ignore")

EPS = 1e-3  # MACE's optimality tolerance (normalised distance)
TOL = 1e-5  # CE-OCL: exact up to solver tolerances and the safety distance kept from a real cut
N_QUERIES = 4
LEVELS = ["lo", "mid", "hi"]


@pytest.fixture(scope="module")
def data() -> tuple[cf.Dataset, cf.Dataset]:
    rng = np.random.default_rng(5)
    n = 500
    X = pd.DataFrame(
        {
            "k1": rng.integers(0, 10, n),
            "k2": rng.integers(0, 15, n),
            "r": rng.uniform(0, 10, n),
            "c": rng.choice(["x", "y", "z"], n),
            "o": rng.choice(LEVELS, n),
        }
    )
    score = (
        0.5 * X["k1"]
        - 0.3 * X["k2"]
        + np.where(X["r"] > 6, 2.5, 0.0)
        - np.abs(X["r"] - 3) * 0.4
        + (X["c"] == "y") * 1.5
        + X["o"].map({"lo": 0, "mid": 1, "hi": 2}) * 0.8
        - 1.0
    )
    y = (score + rng.normal(0, 0.8, n) > 0).astype(int)
    ds = cf.Dataset.from_frame(
        X.assign(y=y),
        target="y",
        name="small",
        kinds={"o": "ordinal"},
        categories={"o": LEVELS},
        bounds={"k1": (0, 9), "k2": (0, 14), "r": (0, 10)},
    )
    return ds.split(test_size=0.2, random_state=0)


def _fit(kind: str, train: cf.Dataset) -> tuple[Any, np.ndarray]:
    """The model and the raw edges of its bins of 'r' (where its value may change)."""
    X, y = train.X, train.y
    cats = ["c", "o"]
    kb = KBinsDiscretizer(
        n_bins=4, encode="onehot", strategy="quantile", quantile_method="averaged_inverted_cdf"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind in ("scorecard", "scaled", "mlp"):
            binned = ["k1", "k2", "r"] if kind != "scaled" else ["r"]
            parts = [("bins", kb, binned), ("cat", OneHotEncoder(handle_unknown="ignore"), cats)]
            if kind == "scaled":
                parts.append(("num", StandardScaler(), ["k1", "k2"]))
            est = (
                MLPClassifier((4,), max_iter=2000, random_state=0)
                if kind == "mlp"
                else LogisticRegression(max_iter=2000)
            )
            model = Pipeline([("pre", ColumnTransformer(parts)), ("clf", est)]).fit(X, y)
            edges = (
                model.named_steps["pre"].named_transformers_["bins"].bin_edges_[binned.index("r")]
            )
            return model, np.asarray(edges, dtype=float)
        if kind == "ebm":
            interpret = pytest.importorskip("interpret.glassbox")
            model = interpret.ExplainableBoostingClassifier(
                interactions=2,
                max_bins=12,
                max_interaction_bins=6,
                outer_bags=2,
                max_rounds=300,
                random_state=0,
                n_jobs=1,
            ).fit(X, y)
            j = list(model.feature_names_in_).index("r")
            return model, np.concatenate([np.asarray(b, dtype=float) for b in model.bins_[j]])
        optbinning = pytest.importorskip("optbinning")
        bp = optbinning.BinningProcess(variable_names=list(X.columns), categorical_variables=cats)
        model = optbinning.Scorecard(
            binning_process=bp,
            estimator=LogisticRegression(max_iter=2000),
            scaling_method="min_max",
            scaling_method_params={"min": 300, "max": 850},
        ).fit(X, y)
        return model, np.asarray(
            model.binning_process_.get_binned_variable("r").splits, dtype=float
        )


def _score(model: Any, X: pd.DataFrame) -> np.ndarray:
    """The model's own logit (class 1 iff > 0)."""
    if hasattr(model, "decision_function"):
        try:
            return np.asarray(model.decision_function(X), dtype=float).reshape(-1)
        except AttributeError:
            pass
    p = np.clip(np.asarray(model.predict_proba(X), dtype=float)[:, 1], 1e-300, 1.0)
    return np.log(p) - np.log1p(-p)


def _brute_force(
    model: Any, schema: cf.Schema, edges: np.ndarray, q: pd.Series, target: int, margin: float
) -> float:
    f = schema["r"]
    inner = edges[(edges > f.lower) & (edges <= f.upper)]
    r = np.unique(
        np.concatenate([[float(q["r"]), f.lower, f.upper], inner, np.nextafter(inner, -np.inf)])
    )
    r = r[(r >= f.lower) & (r <= f.upper)]
    grid = list(itertools.product(range(10), range(15), r, ["x", "y", "z"], LEVELS))
    cand = pd.DataFrame(grid, columns=["k1", "k2", "r", "c", "o"])
    s = _score(model, cand)
    valid = s >= margin if target == 1 else s <= -margin
    d = np.asarray(
        cf.metrics.distance(q, cand[valid].reset_index(drop=True), schema, norm="l1"), dtype=float
    )
    return float(d.min()) if d.size else np.inf


@pytest.mark.parametrize("kind", ["scorecard", "scaled", "mlp", "ebm", "optbinning"])
def test_mace_and_ceocl_find_the_brute_force_optimum(
    kind: str, data: tuple[cf.Dataset, cf.Dataset]
) -> None:
    train, test = data
    schema = train.schema
    J = len(schema)
    model, edges = _fit(kind, train)
    compiled = compile_model(model, schema)
    # scaled small integers are step functions too (one cell per value): still a tree ensemble
    assert isinstance(compiled.estimator, StepMLP if kind == "mlp" else TreeEnsemble)
    queries = test.X.iloc[:N_QUERIES]
    ceocl = cf.CEOCL(
        norm="l1", distance_scale="range", solution_pool=False, time_limit=60, random_state=0
    ).fit(model, train)
    res = ceocl.explain(queries, requirements=cf.Requirements(costs="own"))
    mace = cf.MACE(norm="l1", rel_gap=EPS, margin=ceocl.margin, time_limit=60, random_state=0).fit(
        model, train
    )
    resm = mace.explain(queries, requirements=cf.Requirements(costs="own"))
    for qid, q in queries.iterrows():
        target = int(res.target[qid])
        opt = _brute_force(model, schema, edges, q, target, ceocl.margin)
        assert np.isfinite(opt)
        # CE-OCL: its objective and its answer's own distance are the optimum
        assert res.status[qid] == "optimal", (kind, qid, res.reason[qid])
        got = float(res.diagnostics.loc[qid, "objective"]) / J
        assert got == pytest.approx(opt, abs=TOL), (kind, qid)
        row = res.for_query(qid).iloc[[0]]
        assert float(cf.metrics.distance(q, row, schema, norm="l1")[0]) == pytest.approx(
            opt, abs=TOL
        )
        # MACE: proven within epsilon, its bounds bracket the optimum
        assert resm.status[qid] == "optimal", (kind, qid, resm.reason[qid])
        dm = resm.diagnostics.loc[qid]
        assert dm["delta_min"] - TOL <= opt <= dm["delta_max"] + TOL, (
            kind,
            qid,
            dm["delta_min"],
            opt,
            dm["delta_max"],
        )
        assert dm["delta_max"] - opt <= EPS + TOL
        xm = resm.for_query(qid).iloc[[0]][schema.names]
        assert int(model.predict(xm)[0]) == target


def test_z3_and_cpsat_oracles_agree_on_the_scorecard(data: tuple[cf.Dataset, cf.Dataset]) -> None:
    """The scorecard is a tree ensemble: MACE's Z3 and CP-SAT oracles prove the same optimum."""
    pytest.importorskip("ortools")
    train, test = data
    model, _ = _fit("scorecard", train)
    queries = test.X.iloc[:N_QUERIES]
    out = {}
    for oracle in ("z3", "cpsat"):
        res = (
            cf.MACE(norm="l1", rel_gap=EPS, solver=oracle, time_limit=60, random_state=0)
            .fit(model, train)
            .explain(queries, requirements=cf.Requirements(costs="own"))
        )
        assert (res.status == "optimal").all(), (oracle, res.status.tolist())
        out[oracle] = res.diagnostics["delta_max"].to_numpy(dtype=float)
    np.testing.assert_allclose(out["z3"], out["cpsat"], atol=EPS)
