"""Feature and schema definitions: the single source of truth about features.

Every method reads the schema instead of guessing feature types.  A feature has

* a **kind**: ``real`` | ``integer`` | ``binary`` | ``categorical`` | ``ordinal``;
* a **domain**: numeric bounds (``lower``/``upper``) for real and integer features,
  the categories for binary, categorical and ordinal features (in order for
  ordinal ones);
* an **actionability**: ``free`` | ``immutable`` | ``increasing`` | ``decreasing``.

``increasing``/``decreasing`` apply to numeric and ordinal features (by rank).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from .._utils._values import _numeric_block, _numeric_column, _py, _py_array
from ..exceptions import SchemaError, ValidationError
from ._feature import ACTIONABILITY as ACTIONABILITY
from ._feature import DISCRETE_KINDS as DISCRETE_KINDS
from ._feature import KINDS as KINDS
from ._feature import NUMERIC_KINDS as NUMERIC_KINDS
from ._feature import Actionability as Actionability
from ._feature import Feature
from ._feature import Kind as Kind
from ._format import format_value
from ._infer import check_unique_columns, infer_features
from ._numbers import MAX_INTEGER, integer_out_of_range, show_number
from ._resolution import infer_resolution, snap_array
from ._table import WholeTable


@dataclass(frozen=True)
class Schema:
    """Ordered features plus the target column.

    Build one by hand, or with :meth:`Schema.infer` and override what inference
    got wrong.  Schemas are immutable; ``with_feature`` and friends return copies.
    """

    features: tuple[Feature, ...]
    target: str | None = None
    classes: tuple[Any, ...] | None = None
    _index: dict[str, int] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        feats = tuple(self.features)
        if not feats:
            raise SchemaError("A schema needs at least one feature.")
        for f in feats:
            if not isinstance(f, Feature):
                raise SchemaError(
                    f"Schema features must be Feature objects. Got {type(f).__name__}."
                )
        names = [f.name for f in feats]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise SchemaError(f"Duplicate feature names in schema: {dup}.")
        if self.target is not None and self.target in names:
            raise SchemaError(f"The target '{self.target}' cannot also be a feature.")
        object.__setattr__(self, "features", feats)
        if self.classes is not None:
            object.__setattr__(self, "classes", tuple(_py(c) for c in self.classes))
        object.__setattr__(self, "_index", {n: i for i, n in enumerate(names)})

    # --------------------------------------------------------------- access
    def __len__(self) -> int:
        return len(self.features)

    def __iter__(self) -> Iterator[Feature]:
        return iter(self.features)

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def __getitem__(self, name: str) -> Feature:
        try:
            return self.features[self._index[name]]
        except KeyError:
            raise SchemaError(f"Unknown feature '{name}'. Known features: {self.names}.") from None

    def index(self, name: str) -> int:
        """Position of a feature."""
        self[name]
        return self._index[name]

    @property
    def names(self) -> list[str]:
        """Feature names in order."""
        return [f.name for f in self.features]

    @property
    def numeric(self) -> list[str]:
        """Names of real and integer features."""
        return [f.name for f in self.features if f.is_numeric]

    @property
    def categorical(self) -> list[str]:
        """Names of binary and categorical features."""
        return [f.name for f in self.features if f.is_categorical]

    @property
    def ordinal(self) -> list[str]:
        """Names of ordinal features."""
        return [f.name for f in self.features if f.kind == "ordinal"]

    @property
    def immutable(self) -> list[str]:
        """Names of features the schema marks immutable."""
        return [f.name for f in self.features if f.actionability == "immutable"]

    def ranges(self) -> np.ndarray:
        """Per-feature range used to normalise distances (see :attr:`Feature.range`)."""
        return np.array([f.range for f in self.features], dtype=float)

    # ------------------------------------------------------------- overrides
    def with_feature(self, name: str, **changes: Any) -> Schema:
        """A copy in which feature ``name`` has ``changes`` applied."""
        feats = list(self.features)
        i = self.index(name)
        feats[i] = feats[i].with_(**changes)
        return replace(self, features=tuple(feats))

    def with_actionability(self, **actionability: str) -> Schema:
        """A copy with actionability overridden: ``schema.with_actionability(age="increasing")``."""
        out = self
        for name, act in actionability.items():
            out = out.with_feature(name, actionability=act)
        return out

    def with_units(self, **units: str) -> Schema:
        """A copy with units for some numeric features.

        ``schema.with_units(duration="months")``.
        """
        out = self
        for name, unit in units.items():
            out = out.with_feature(name, unit=unit)
        return out

    def with_immutable(self, names: Iterable[str]) -> Schema:
        """A copy with the named features immutable."""
        return self.with_actionability(**{n: "immutable" for n in names})

    def with_resolution(self, frame: pd.DataFrame | None = None, **resolution: float) -> Schema:
        """A copy with resolutions set: ``schema.with_resolution(income=0.01)``.

        With ``frame``, every real feature still without a resolution gets the
        one inferred from its column (see :class:`Feature`); explicit keyword
        values win.
        """
        unknown = [n for n in resolution if n not in self._index]
        if unknown:
            raise SchemaError(
                f"resolution names unknown features {unknown}. Known features: {self.names}."
            )
        feats = []
        for f in self.features:
            res = resolution.get(f.name)
            if (
                res is None
                and frame is not None
                and f.kind == "real"
                and f.resolution is None
                and f.name in frame
            ):
                res = infer_resolution(
                    pd.to_numeric(frame[f.name], errors="coerce").to_numpy(dtype=float)
                )
            feats.append(f if res is None else f.with_(resolution=res))
        return replace(self, features=tuple(feats))

    def snap(
        self, X: pd.DataFrame, toward: pd.DataFrame | pd.Series | None = None, *, away: bool = False
    ) -> pd.DataFrame:
        """A copy of ``X`` with every numeric column on its feature's grid and
        inside its domain (vectorised :meth:`Feature.snap`).

        ``toward`` is a reference row (Series) or one reference row per row of
        ``X`` (DataFrame, same length); ``away`` as in :meth:`Feature.snap`.
        Columns of discrete features, and of real features without a
        resolution (clipped only), are otherwise left as they are.
        """
        return _snap_frame(self, X, toward, away=away)

    # ------------------------------------------------------------ validation
    def validate_frame(self, X: Any, *, what: str = "X", allow_extra: bool = True) -> pd.DataFrame:
        """Check that ``X`` has the schema's columns with in-domain, non-missing values.

        Returns a new DataFrame with exactly the schema's columns, in order (the
        input is never modified).  Raises :class:`ValidationError` naming what is
        wrong otherwise.  Numeric values outside the observed bounds are allowed
        in queries (they are real people); unknown categories are not.
        """
        out = self._schema_columns(X, what, allow_extra)
        fast = self._validated_blocks(out)
        if fast is not None:
            return fast
        for f in self.features:  # column by column: finds and names the first problem
            col = out[f.name]
            _check_no_missing(col, f, what)
            if f.is_numeric:
                out[f.name] = _checked_numeric(col, f, what)
            else:
                out[f.name] = _checked_categorical(col, f, what)
        return out

    def _schema_columns(self, X: Any, what: str, allow_extra: bool) -> pd.DataFrame:
        """A copy of ``X``'s rows with the schema's columns in order (a Series is one row)."""
        if isinstance(X, pd.Series):
            X = X.to_frame().T
        if not isinstance(X, pd.DataFrame):
            raise ValidationError(
                f"{what} must be a pandas DataFrame (or Series for one row) with columns "
                f"{self.names}. Got {type(X).__name__}."
            )
        check_unique_columns(X, what)
        missing = [n for n in self.names if n not in X.columns]
        if missing:
            raise ValidationError(
                f"{what} lacks the columns {missing}. Expected the schema's columns {self.names}."
            )
        if not allow_extra:
            extra = [c for c in X.columns if c not in self._index]
            if extra:
                raise ValidationError(f"{what} has unknown columns {extra}.")
        out = X.loc[:, self.names].copy()
        if len(out) == 0:
            raise ValidationError(f"{what} has no rows.")
        return out

    def _validated_blocks(self, out: pd.DataFrame) -> pd.DataFrame | None:
        """:meth:`validate_frame`'s result for ``out`` (the schema's columns, in
        order) computed on one matrix per kind of column, or None when some
        column needs the column-by-column path (a problem to report, text or
        extension dtypes among the numeric columns, duplicated names)."""
        if out.columns.has_duplicates:
            return None
        num = [f for f in self.features if f.is_numeric]
        cat = [f for f in self.features if not f.is_numeric]
        arrays: dict[str, Any] = {}
        if num:
            sub = out[[f.name for f in num]]
            if not all(isinstance(dt, np.dtype) and dt.kind in "biuf" for dt in sub.dtypes):
                return None
            V = sub.to_numpy(dtype=float)
            if not np.isfinite(V).all():
                return None  # missing or infinite values: reported column by column
            for k, f in enumerate(num):
                v = V[:, k]
                if f.kind == "integer":
                    r = np.round(v)
                    if (np.abs(v - r) > 1e-9).any() or integer_out_of_range(v).size:
                        return None
                    arrays[f.name] = r.astype(np.int64)
                else:
                    arrays[f.name] = v.copy()
        if cat:
            sub = out[[f.name for f in cat]]
            C = sub.to_numpy(dtype=object)
            if pd.isna(C).any():
                return None
            for k, f in enumerate(cat):
                cats = set(f.categories)  # type: ignore[arg-type]
                vals_list = [_py(v) for v in C[:, k].tolist()]
                if any(v not in cats for v in vals_list):
                    return None
                arrays[f.name] = pd.Series(vals_list, index=out.index, dtype=object)
        res = pd.DataFrame({f.name: arrays[f.name] for f in self.features}, index=out.index)
        res.columns = out.columns
        return res

    def coerce(self, X: pd.DataFrame) -> pd.DataFrame:
        """Cast columns to their canonical dtypes (int64 for integer, float for
        real, object for discrete) without validating domains.

        A value an integer column cannot hold (missing, infinite, beyond
        ``2**53`` in magnitude) raises :class:`ValidationError` naming it, never
        a cast to ``-9223372036854775808``.
        """
        num_names = [f.name for f in self.features if f.kind in ("integer", "real")]
        num_block = _numeric_block(X, num_names)
        arrays: dict[str, Any] = {}
        k = 0
        for f in self.features:
            if f.kind in ("integer", "real"):
                num = num_block[:, k] if num_block is not None else _coerce_column(X[f.name])
                k += 1
                if f.kind == "integer":
                    _check_castable(X, f.name, num)
                    num = np.round(num).astype(np.int64)
                arrays[f.name] = num
            else:
                arr = X[f.name].to_numpy()
                # numpy casts its own scalars to Python ones; object arrays need a pass
                arr = arr.astype(object) if arr.dtype != object else _py_array(arr)
                arrays[f.name] = pd.Series(
                    arr, index=X.index, dtype=object
                )  # never inferred as str
        return pd.DataFrame(arrays, index=X.index)

    # --------------------------------------------------------------- (de)ser
    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly description."""
        return {
            "features": [f.to_dict() for f in self.features],
            "target": self.target,
            "classes": None if self.classes is None else list(self.classes),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Schema:
        """Inverse of :meth:`to_dict`."""
        return cls(
            features=tuple(Feature.from_dict(f) for f in d["features"]),
            target=d.get("target"),
            classes=None if d.get("classes") is None else tuple(d["classes"]),
        )

    # ------------------------------------------------------------- inference
    @classmethod
    def infer(
        cls,
        frame: pd.DataFrame,
        target: str | None = None,
        *,
        kinds: Mapping[str, str] | None = None,
        categories: Mapping[str, Sequence[Any]] | None = None,
        bounds: Mapping[str, tuple[float, float]] | None = None,
        immutable: Iterable[str] = (),
        increasing: Iterable[str] = (),
        decreasing: Iterable[str] = (),
        max_categories: int = 20,
        resolution: Mapping[str, float] | None = None,
    ) -> Schema:
        """Infer a schema from a DataFrame; every guess can be overridden.

        Rules: bool columns are binary; object, string and category columns are
        categorical (an ordered pandas Categorical becomes ordinal; a column of
        numbers written as text is categorical too, with a warning); numeric
        columns whose values are all integral are ``integer`` unless they take
        only the values {0, 1} (then ``binary``); other numeric columns are
        ``real``.  Numeric bounds are the observed min and max.

        Parameters
        ----------
        frame : DataFrame
            Training data (features, and the target if ``target`` is given).
        target : str, optional
            Target column, excluded from the features; its sorted unique values
            become ``classes``.
        kinds, categories, bounds : mapping, optional
            Per-feature overrides.  ``categories`` fixes the order of ordinal levels.
        immutable, increasing, decreasing : iterable of str
            Actionability overrides.
        max_categories : int
            A non-numeric column with more distinct values is rejected (it is
            probably an identifier or free text); pass ``kinds`` to force it.
        resolution : mapping, optional
            Per-feature grid steps (``{"income": 0.01}``); real features not
            named get theirs inferred from the data, integer ones 1 (see
            :class:`Feature`).
        """
        feats, classes = infer_features(
            frame,
            target,
            kinds=kinds,
            categories=categories,
            bounds=bounds,
            immutable=immutable,
            increasing=increasing,
            decreasing=decreasing,
            max_categories=max_categories,
            resolution=resolution,
        )
        return cls(features=tuple(feats), target=target, classes=classes)

    def describe(self) -> pd.DataFrame:
        """One row per feature: kind, domain, resolution, actionability, unit.

        Numeric domains print at the feature's resolution; categories are listed
        in order (the order of an ordinal's levels), long lists cut to their first
        levels and a count (``schema[name].categories`` has them all).  The table
        prints whole: ``print(schema.describe())`` shows every column, whatever the
        terminal's width (a DataFrame in every other respect).
        """
        rows = []
        for f in self.features:
            if f.is_numeric:
                dom = f"[{format_value(f, f.lower)}, {format_value(f, f.upper)}]"
            else:
                dom = _short_levels([str(c) for c in f.categories or ()], ", ")
            res = "" if f.resolution is None else f"{f.resolution:g}"
            rows.append(
                {
                    "feature": f.name,
                    "kind": f.kind,
                    "domain": dom,
                    "resolution": res,
                    "actionability": f.actionability,
                    "unit": f.unit,
                }
            )
        return WholeTable(pd.DataFrame(rows).set_index("feature"))


def _numeric_values(col: pd.Series, f: Feature, what: str) -> pd.Series:
    """A numeric feature's column as floats: finite, and for an integer feature
    within ``MAX_INTEGER``; else a ValidationError quoting the value as written."""
    try:
        vals = pd.to_numeric(col).astype(float)
    except OverflowError:  # a Python int beyond float64 (10**400)
        vals = pd.Series([_as_float(v) for v in col.tolist()], index=col.index, dtype=float)
    except (TypeError, ValueError):
        raise ValidationError(
            f"{what}: column '{f.name}' is {f.kind} but has non-numeric values such as "
            f"{col.iloc[0]!r}."
        ) from None
    arr = vals.to_numpy()
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        k = int(bad[0])
        raise ValidationError(
            f"{what}: column '{f.name}' holds {show_number(col.iloc[k])} at row "
            f"{_py(col.index[k])!r}, which is not a finite float64 number (about +-1.8e308 "
            "at most). Send a finite value."
        )
    if f.kind == "integer":
        big = integer_out_of_range(arr)
        if big.size:
            k = int(big[0])
            raise ValidationError(
                f"{what}: column '{f.name}' is integer but holds {show_number(col.iloc[k])} "
                f"at row {_py(col.index[k])!r}; an integer feature holds whole numbers of "
                f"magnitude at most 2**53 = {MAX_INTEGER} (the largest every model and "
                "solver computes exactly). Check the value."
            )
    return vals


def _as_float(v: Any) -> float:
    try:
        return float(v)
    except OverflowError:
        return math.inf if v > 0 else -math.inf
    except (TypeError, ValueError):
        return math.nan


def _check_no_missing(col: pd.Series, f: Feature, what: str) -> None:
    if col.isna().any():
        rows = list(col.index[col.isna().to_numpy()][:5])
        raise ValidationError(
            f"{what} has missing values (NaN) in column '{f.name}' at rows {rows}. "
            "Impute or drop them first."
        )


def _checked_numeric(col: pd.Series, f: Feature, what: str) -> np.ndarray:
    """The column as floats (integer features: as int64); text and fractions refused."""
    if not (pd.api.types.is_numeric_dtype(col.dtype) or pd.api.types.is_bool_dtype(col.dtype)):
        texts = [v for v in col.tolist() if isinstance(v, (str, bytes))]
        if texts:
            raise ValidationError(
                f"{what}: column '{f.name}' is {f.kind} but holds text values such as "
                f"{texts[0]!r}. Convert the column to numbers first, e.g. "
                f"X['{f.name}'] = pd.to_numeric(X['{f.name}'])."
            )
    vals = _numeric_values(col, f, what)
    if f.kind != "integer":
        return vals
    frac = np.flatnonzero(np.abs(vals - np.round(vals)) > 1e-9)
    if frac.size:
        k = int(frac[0])
        raise ValidationError(
            f"{what}: column '{f.name}' is integer but has fractional "
            f"values, such as {show_number(col.iloc[k])} at row "
            f"{_py(col.index[k])!r}."
        )
    return np.round(vals).astype(np.int64)


def _checked_categorical(col: pd.Series, f: Feature, what: str) -> pd.Series:
    """The column as plain Python values; values outside the categories refused."""
    cats = set(f.categories)  # type: ignore[arg-type]
    vals_list = [_py(v) for v in col.tolist()]
    bad = sorted({repr(v) for v in vals_list if v not in cats})
    if bad:
        raise ValidationError(
            f"{what}: column '{f.name}' has values {', '.join(bad[:5])}"
            f"{' (and more)' if len(bad) > 5 else ''} that are not among its "
            f"categories {list(f.categories or ())}. Map them to known categories, or "
            "extend the schema (schema.with_feature(name, categories=...))."
        )
    return pd.Series(vals_list, index=col.index, dtype=object)


def _coerce_column(col: pd.Series) -> np.ndarray:
    """:func:`_numeric_column`, with Python ints beyond float64 as infinities.

    The caller refuses them.
    """
    try:
        return _numeric_column(col)
    except OverflowError:
        return np.array([_as_float(v) for v in col.tolist()], dtype=float)


def _check_castable(X: pd.DataFrame, name: str, values: np.ndarray) -> None:
    """Raise unless every value of integer column ``name`` can be cast to int64 exactly."""
    bad = integer_out_of_range(values)
    if bad.size:
        k = int(bad[0])
        raise ValidationError(
            f"column '{name}' is integer but holds {show_number(X[name].iloc[k])} at row "
            f"{_py(X.index[k])!r}: a missing, infinite or too large value (an integer "
            f"feature holds at most 2**53 = {MAX_INTEGER} in magnitude), which no integer "
            "column can hold."
        )


def _short_levels(levels: list[str], sep: str, width: int = 48) -> str:
    """``levels`` joined by ``sep``, cut after the ones that fit in ``width`` characters."""
    text = sep.join(levels)
    if len(text) <= width:
        return text
    shown: list[str] = []
    for lev in levels:
        if shown and len(sep.join([*shown, lev])) > width:
            break
        shown.append(lev)
    return f"{sep.join(shown)}{sep}... ({len(levels)} levels)"


def _snap_frame(
    schema: Schema,
    X: pd.DataFrame,
    toward: pd.DataFrame | pd.Series | None = None,
    *,
    away: bool = False,
) -> pd.DataFrame:
    """:meth:`Schema.snap`: a copy of ``X`` with every numeric
    column on its feature's grid and inside its domain."""
    out = X.copy()
    for f in schema.features:
        if not f.is_numeric or f.name not in out.columns:
            continue
        vals = pd.to_numeric(out[f.name]).to_numpy(dtype=float)
        lo, hi = float(f.lower), float(f.upper)  # type: ignore[arg-type]
        if f.resolution is None:
            out[f.name] = np.clip(vals, lo, hi)
            continue
        ref = None
        if toward is not None:
            if isinstance(toward, pd.Series):
                ref = np.full(len(vals), float(_py(toward[f.name])))
            else:
                ref = pd.to_numeric(toward[f.name]).to_numpy(dtype=float)
        snapped = snap_array(vals, f.resolution, lo, hi, toward=ref, away=away)
        out[f.name] = np.round(snapped).astype(np.int64) if f.kind == "integer" else snapped
    return out
