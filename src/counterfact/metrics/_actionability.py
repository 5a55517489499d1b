"""UFCE's actionability and feasibility (Suffian et al., Sec. 3.3, eq. 9)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

import numpy as np
import pandas as pd

from ..constraints import Constraints
from ..exceptions import ValidationError
from ..schema import Schema
from ._common import as_frame, as_row, is_result, mean_or_nan, need_schema, per_query
from ._distances import DistanceEncoder
from ._plausibility import LOFPlausibility, _detector_for
from ._validity import is_valid, valid_rows

__all__ = ["actionability", "actionable_share", "feasibility", "user_features"]


def user_features(
    schema: Schema,
    constraints: Constraints | None = None,
    features_to_vary: Iterable[str] | None = None,
) -> list[str]:
    """The user's list of features to change: ``features_to_vary`` if given, else
    ``constraints.features_to_vary``, else every feature that is not immutable
    (in the schema or the constraints) -- UFCE's experiments take "all the
    features" as the user's list."""
    if features_to_vary is not None:
        names = list(features_to_vary)
        unknown = sorted(set(names) - set(schema.names))
        if unknown:
            raise ValidationError(
                f"features_to_vary names unknown features {unknown}. Known features: "
                f"{schema.names}."
            )
        return names
    resolved = (constraints or Constraints()).resolve(schema)
    return [n for n in schema.names if n not in resolved.immutable]


def _allowed_for(res: Any, features_to_vary: Iterable[str] | None) -> Any:
    """Query id -> mask of the user's features under that query's own constraints."""
    cache: dict[int, np.ndarray] = {}

    def allowed(q: Any) -> np.ndarray:
        c = res.constraints_for(q)
        key = id(c)
        if key not in cache:
            cache[key] = np.isin(res.schema.names, user_features(res.schema, c, features_to_vary))
        return cache[key]

    return allowed


def _share(enc: DistanceEncoder, M: np.ndarray, q: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    ch = enc.changed(M, q)
    total = ch.sum(axis=1)
    inside = ch[:, allowed].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, inside / np.maximum(total, 1), np.nan)


def actionable_share(
    query: Any,
    counterfactuals: pd.DataFrame,
    schema: Schema,
    *,
    constraints: Constraints | None = None,
    features_to_vary: Iterable[str] | None = None,
) -> np.ndarray:
    """Per counterfactual: the share of its changed features that lie in the user's
    list (:func:`user_features`); NaN for a row that changes nothing."""
    schema = need_schema(schema, "actionable_share")
    enc = DistanceEncoder(schema)
    allowed = np.isin(schema.names, user_features(schema, constraints, features_to_vary))
    return _share(
        enc,
        enc.transform(as_frame(counterfactuals, schema)),
        enc.transform(as_row(query))[0],
        allowed,
    )


def actionability(
    query: Any,
    counterfactuals: pd.DataFrame | None = None,
    schema: Schema | None = None,
    *,
    constraints: Constraints | None = None,
    features_to_vary: Iterable[str] | None = None,
) -> float | pd.Series:
    """UFCE's actionability (Suffian et al., Sec. 3.3).

    "The percentage of feature changes included within the user-specified list
    of features": per counterfactual ``|changed & U| / |changed|`` with ``U``
    the user's list (:func:`user_features`), averaged over the query's
    counterfactuals.  In [0, 1], higher is better.  A counterfactual that
    changes nothing has no share (NaN, skipped in the mean); NaN without
    counterfactuals.  A result uses its own constraints.
    """
    if is_result(query):
        res = query
        enc = DistanceEncoder(res.schema)
        allowed_for = _allowed_for(res, features_to_vary)
        return per_query(
            res,
            lambda q, x, cf: (
                mean_or_nan(_share(enc, enc.transform(cf), enc.transform(x)[0], allowed_for(q)))
                if len(cf)
                else float("nan")
            ),
            "actionability",
        )
    schema = need_schema(schema, "actionability")
    share = actionable_share(
        query, counterfactuals, schema, constraints=constraints, features_to_vary=features_to_vary
    )  # type: ignore[arg-type]
    return mean_or_nan(share)


def _feasible_rows(
    valid: np.ndarray, plausible: np.ndarray, share: np.ndarray, threshold: float
) -> np.ndarray:
    ok = valid.astype(bool) & (plausible == 1.0) & (share >= threshold)
    undetermined = np.isnan(plausible) | np.isnan(share)
    return np.where(undetermined & valid.astype(bool), np.nan, ok.astype(float))


def feasibility(
    query: Any,
    counterfactuals: pd.DataFrame | None = None,
    schema: Schema | None = None,
    *,
    model: Any = None,
    target: Any = None,
    train: Any = None,
    constraints: Constraints | None = None,
    features_to_vary: Iterable[str] | None = None,
    threshold: float = 0.3,
    lof: LOFPlausibility | None = None,
    n_neighbors: int = 20,
    reference: Literal["target", "all"] = "target",
) -> float | pd.Series:
    """UFCE's feasibility (Suffian et al., eq. 9), as a fraction of the counterfactuals.

    ``z_feasible = (z_valid = 1) & (z_plausible = 1) & (z_actionable >= threshold)``
    with validity by the model, plausibility by LOF (:func:`plausibility`) and
    the actionable share of :func:`actionability`; ``threshold`` defaults to
    0.3, the 30 % UFCE's experiments use (Sec. 5.2).  Averaged over the
    query's counterfactuals; higher is better.  A valid row whose plausibility
    or share is undetermined counts as NaN (skipped); NaN without
    counterfactuals, and for a result without a model.
    """
    if not 0.0 <= float(threshold) <= 1.0:
        raise ValidationError(f"threshold must be in [0, 1]. Got {threshold!r}.")
    if is_result(query):
        res = query
        if res.model is None:
            return pd.Series(np.nan, index=res.queries.index, name="feasibility", dtype=float)
        det = _detector_for(res.schema, train, lof, n_neighbors, reference)
        enc = DistanceEncoder(res.schema)
        allowed_for = _allowed_for(res, features_to_vary)
        valid = valid_rows(res)

        def one(q: Any, x: pd.Series, cf: pd.DataFrame) -> float:
            if len(cf) == 0:
                return float("nan")
            share = _share(enc, enc.transform(cf), enc.transform(x)[0], allowed_for(q))
            pl = det.plausible(cf, res.target.loc[q])
            return mean_or_nan(_feasible_rows(valid.loc[cf.index].to_numpy(), pl, share, threshold))

        return per_query(res, one, "feasibility")
    schema = need_schema(schema, "feasibility")
    if model is None:
        raise ValidationError(
            "feasibility needs the model (validity is part of it) and the target class."
        )
    cf = as_frame(counterfactuals, schema)
    if len(cf) == 0:
        return float("nan")
    det = _detector_for(schema, train, lof, n_neighbors, reference)
    share = actionable_share(
        query, cf, schema, constraints=constraints, features_to_vary=features_to_vary
    )
    valid = np.asarray(is_valid(cf, model, target))
    return mean_or_nan(_feasible_rows(valid, det.plausible(cf, target), share, threshold))
