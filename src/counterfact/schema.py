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
from typing import Any, Literal

import numpy as np
import pandas as pd

from .exceptions import SchemaError, ValidationError

Kind = Literal["real", "integer", "binary", "categorical", "ordinal"]
Actionability = Literal["free", "immutable", "increasing", "decreasing"]

KINDS: tuple[str, ...] = ("real", "integer", "binary", "categorical", "ordinal")
ACTIONABILITY: tuple[str, ...] = ("free", "immutable", "increasing", "decreasing")
NUMERIC_KINDS = frozenset({"real", "integer"})
DISCRETE_KINDS = frozenset({"binary", "categorical", "ordinal"})


def _py(value: Any) -> Any:
    """Turn numpy scalars into plain Python scalars (for hashing, JSON, comparisons)."""
    if isinstance(value, np.generic):
        return value.item()
    return value


_py_ufunc = np.frompyfunc(_py, 1, 1)


def _py_array(arr: np.ndarray) -> np.ndarray:
    """:func:`_py` over an object array (fast path when it holds no numpy scalars)."""
    kind = pd.api.types.infer_dtype(arr, skipna=False)
    if kind == "string":  # all str: nothing to convert
        return arr
    if kind in _HOMOGENEOUS:  # one numpy cast, then numpy's own cast to Python scalars
        try:
            return arr.astype(_HOMOGENEOUS[kind]).astype(object)
        except (OverflowError, TypeError, ValueError):  # e.g. Python ints beyond int64
            pass
    return np.asarray(_py_ufunc(arr), dtype=object)


def _numeric_column(col: pd.Series) -> np.ndarray:
    """One column as a float array (``pd.to_numeric`` when it is not numeric)."""
    if pd.api.types.is_numeric_dtype(col.dtype):
        return col.to_numpy(dtype=float)
    return pd.to_numeric(col).to_numpy(dtype=float)


def _numeric_block(X: pd.DataFrame, names: list[str]) -> np.ndarray | None:
    """The columns ``names`` of ``X`` as one float matrix (a copy), or None when
    a column needs :func:`pandas.to_numeric`'s parsing (text, missing markers),
    so that the caller converts column by column with the same results."""
    if not names:
        return np.zeros((len(X), 0))
    if X.columns.has_duplicates:
        return None
    sub = X[names]
    if all(isinstance(dt, np.dtype) and dt.kind in "biuf" for dt in sub.dtypes):
        return np.array(sub.to_numpy(dtype=float), dtype=float, copy=True)
    obj = sub.to_numpy(dtype=object)
    if pd.api.types.infer_dtype(obj.ravel(), skipna=False) not in ("integer", "floating", "mixed-integer-float"):
        return None  # text, booleans, missing markers, decimals...: column by column
    try:
        return np.asarray(obj, dtype=float)
    except (OverflowError, TypeError, ValueError):
        return None


_HOMOGENEOUS: dict[str, type] = {"integer": np.int64, "boolean": np.bool_, "floating": np.float64}


@dataclass(frozen=True)
class Feature:
    """One input feature.

    Parameters
    ----------
    name : str
        Column name in the user's DataFrame.
    kind : {"real", "integer", "binary", "categorical", "ordinal"}
        Data type.  ``binary`` is a categorical feature with exactly two values.
    lower, upper : float, optional
        Numeric domain (inclusive), required for real and integer features.
    categories : tuple, optional
        The values a binary, categorical or ordinal feature takes; for ordinal
        features the order is the order of the levels (lowest first).
    actionability : {"free", "immutable", "increasing", "decreasing"}
        What a counterfactual may do with the feature.  ``increasing`` and
        ``decreasing`` need an order: numeric or ordinal features only.
    description : str, optional
        Human-readable description (used in reports).
    resolution : float, optional
        The step of a numeric feature's grid: counterfactual values are
        multiples of it (grid anchored at 0) and are shown with its decimals.
        Integer features default to 1 (a larger integer step such as 100 is
        allowed).  Real features left at None get it inferred from the data
        by :meth:`Schema.infer` and :class:`~counterfact.Dataset`: the coarsest
        power-of-ten step, between 1e-6 and 1, on whose grid every observed
        value lies (values 1330, 2.5, 0.25 give 0.01).  Discrete features have
        none.
    """

    name: str
    kind: Kind
    lower: float | None = None
    upper: float | None = None
    categories: tuple[Any, ...] | None = None
    actionability: Actionability = "free"
    description: str = ""
    resolution: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise SchemaError(f"Feature names must be non-empty strings. Got {self.name!r}.")
        if self.kind not in KINDS:
            raise SchemaError(
                f"Feature '{self.name}': kind must be one of {list(KINDS)}. Got {self.kind!r}."
            )
        if self.actionability not in ACTIONABILITY:
            raise SchemaError(
                f"Feature '{self.name}': actionability must be one of {list(ACTIONABILITY)}. "
                f"Got {self.actionability!r}."
            )
        if self.kind in NUMERIC_KINDS:
            if self.lower is None or self.upper is None:
                raise SchemaError(
                    f"Feature '{self.name}' ({self.kind}) needs numeric bounds lower and upper."
                )
            lo, hi = float(self.lower), float(self.upper)
            if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
                raise SchemaError(
                    f"Feature '{self.name}': bounds must be finite with lower <= upper. "
                    f"Got lower={self.lower!r}, upper={self.upper!r}."
                )
            if self.kind == "integer":
                lo, hi = float(math.ceil(lo)), float(math.floor(hi))
            object.__setattr__(self, "lower", lo)
            object.__setattr__(self, "upper", hi)
            if self.categories is not None:
                raise SchemaError(f"Feature '{self.name}' is numeric and takes no categories.")
            object.__setattr__(self, "resolution", self._checked_resolution())
        else:
            if self.resolution is not None:
                raise SchemaError(
                    f"Feature '{self.name}' is {self.kind}; only real and integer features "
                    f"take a resolution. Got resolution={self.resolution!r}."
                )
            if self.categories is None or len(self.categories) == 0:
                raise SchemaError(f"Feature '{self.name}' ({self.kind}) needs its categories.")
            cats = tuple(_py(c) for c in self.categories)
            if len(set(cats)) != len(cats):
                raise SchemaError(f"Feature '{self.name}': categories must be distinct. Got {cats}.")
            if self.kind == "binary" and len(cats) != 2:
                raise SchemaError(
                    f"Feature '{self.name}' is binary and needs exactly 2 categories. Got {cats}."
                )
            object.__setattr__(self, "categories", cats)
            object.__setattr__(self, "lower", None)
            object.__setattr__(self, "upper", None)
        if self.actionability in ("increasing", "decreasing") and self.kind in (
            "binary",
            "categorical",
        ):
            raise SchemaError(
                f"Feature '{self.name}' is {self.kind} (unordered); it cannot be "
                f"'{self.actionability}'. Make it ordinal, or use 'free'/'immutable'."
            )

    def _checked_resolution(self) -> float | None:
        res = self.resolution
        if res is None:
            return 1.0 if self.kind == "integer" else None
        try:
            r = float(res)
        except (TypeError, ValueError):
            r = math.nan
        if isinstance(res, bool) or not math.isfinite(r) or r <= 0:
            raise SchemaError(
                f"Feature '{self.name}': resolution must be a positive finite number "
                f"(or None to infer it). Got {res!r}."
            )
        if self.kind == "integer" and abs(r - round(r)) > 1e-9:
            raise SchemaError(
                f"Feature '{self.name}' is integer; its resolution must be a whole number "
                f"such as 1 or 100. Got {res!r}; make the feature real for a finer step."
            )
        return r

    # ------------------------------------------------------------------ kinds
    @property
    def is_numeric(self) -> bool:
        """Real or integer."""
        return self.kind in NUMERIC_KINDS

    @property
    def is_categorical(self) -> bool:
        """Binary or categorical (unordered, one-hot in vector space)."""
        return self.kind in ("binary", "categorical")

    @property
    def is_ordered(self) -> bool:
        """Numeric or ordinal (has a direction)."""
        return self.kind != "binary" and self.kind != "categorical"

    @property
    def range(self) -> float:
        """Width of the domain: ``upper - lower`` for numeric features, the number of
        levels minus one for ordinal ones, 1 for categorical ones.  Zero widths
        are returned as 1 so that normalised distances stay finite."""
        if self.is_numeric:
            width = float(self.upper) - float(self.lower)  # type: ignore[arg-type]
        elif self.kind == "ordinal":
            width = float(len(self.categories) - 1)  # type: ignore[arg-type]
        else:
            width = 1.0
        return width if width > 0 else 1.0

    def rank(self, value: Any) -> int:
        """Position of a category (ordinal rank)."""
        try:
            return self.categories.index(_py(value))  # type: ignore[union-attr]
        except (ValueError, AttributeError):
            raise ValidationError(
                f"Feature '{self.name}': value {value!r} is not one of its categories "
                f"{list(self.categories or ())}."
            ) from None

    def contains(self, value: Any, *, tol: float = 1e-9) -> bool:
        """Whether ``value`` lies in the feature's domain (integers must be integral)."""
        value = _py(value)
        if self.is_numeric:
            try:
                v = float(value)
            except (TypeError, ValueError):
                return False
            if not math.isfinite(v):
                return False
            if v < float(self.lower) - tol or v > float(self.upper) + tol:  # type: ignore[arg-type]
                return False
            return not (self.kind == "integer" and abs(v - round(v)) > tol)
        return value in self.categories  # type: ignore[operator]

    def snap(self, value: Any, toward: Any = None, *, away: bool = False) -> Any:
        """The grid value of ``value`` at this feature's resolution, inside its domain.

        Numeric features: the nearest multiple of :attr:`resolution` within
        ``[lower, upper]`` (a float for real features, an int for integer
        ones).  With ``toward`` (a reference, typically the query's value), a
        value above the reference is rounded down and one below it up, so the
        change from the reference never grows; ``away=True`` rounds the other
        way, so the change never shrinks (a value that just crossed a decision
        boundary stays across it).  A real feature without a resolution is only
        clipped to its domain.  Discrete features return the value unchanged
        (checked against the categories).
        """
        value = _py(value)
        if not self.is_numeric:
            self.rank(value)  # raises ValidationError when not a category
            return value
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise ValidationError(f"Feature '{self.name}': cannot snap non-numeric value {value!r}.") from None
        lo, hi = float(self.lower), float(self.upper)  # type: ignore[arg-type]
        if self.resolution is None:
            return min(max(v, lo), hi)
        from ._resolution import snap_array

        ref = None if toward is None else np.array([float(_py(toward))])
        out = float(snap_array(np.array([v]), self.resolution, lo, hi, toward=ref, away=away)[0])
        return round(out) if self.kind == "integer" else out

    def with_(self, **changes: Any) -> Feature:
        """A copy with some fields changed (``feature.with_(actionability="immutable")``).

        Changing the kind drops the resolution unless one is given (it is
        re-inferred or defaulted for the new kind)."""
        if "kind" in changes and changes["kind"] != self.kind and "resolution" not in changes:
            changes["resolution"] = None
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly description."""
        out: dict[str, Any] = {"name": self.name, "kind": self.kind}
        if self.is_numeric:
            out["lower"], out["upper"] = self.lower, self.upper
        else:
            out["categories"] = list(self.categories)  # type: ignore[arg-type]
        out["actionability"] = self.actionability
        if self.resolution is not None:
            out["resolution"] = self.resolution
        if self.description:
            out["description"] = self.description
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Feature:
        """Inverse of :meth:`to_dict`."""
        d = dict(d)
        if "categories" in d and d["categories"] is not None:
            d["categories"] = tuple(d["categories"])
        return cls(**d)


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
                raise SchemaError(f"Schema features must be Feature objects. Got {type(f).__name__}.")
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
            raise SchemaError(
                f"Unknown feature '{name}'. Known features: {self.names}."
            ) from None

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
            raise SchemaError(f"resolution names unknown features {unknown}. Known features: {self.names}.")
        feats = []
        for f in self.features:
            res = resolution.get(f.name)
            if res is None and frame is not None and f.kind == "real" and f.resolution is None and f.name in frame:
                from ._resolution import infer_resolution

                res = infer_resolution(pd.to_numeric(frame[f.name], errors="coerce").to_numpy(dtype=float))
            feats.append(f if res is None else f.with_(resolution=res))
        return replace(self, features=tuple(feats))

    def snap(self, X: pd.DataFrame, toward: pd.DataFrame | pd.Series | None = None, *, away: bool = False) -> pd.DataFrame:
        """A copy of ``X`` with every numeric column on its feature's grid and
        inside its domain (vectorised :meth:`Feature.snap`).

        ``toward`` is a reference row (Series) or one reference row per row of
        ``X`` (DataFrame, same length); ``away`` as in :meth:`Feature.snap`.
        Columns of discrete features, and of real features without a
        resolution (clipped only), are otherwise left as they are.
        """
        from ._resolution import snap_frame

        return snap_frame(self, X, toward, away=away)

    # ------------------------------------------------------------ validation
    def validate_frame(self, X: Any, *, what: str = "X", allow_extra: bool = True) -> pd.DataFrame:
        """Check that ``X`` has the schema's columns with in-domain, non-missing values.

        Returns a new DataFrame with exactly the schema's columns, in order (the
        input is never modified).  Raises :class:`ValidationError` naming what is
        wrong otherwise.  Numeric values outside the observed bounds are allowed
        in queries (they are real people); unknown categories are not.
        """
        if isinstance(X, pd.Series):
            X = X.to_frame().T
        if not isinstance(X, pd.DataFrame):
            raise ValidationError(
                f"{what} must be a pandas DataFrame (or Series for one row) with columns "
                f"{self.names}. Got {type(X).__name__}."
            )
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
        fast = self._validated_blocks(out)
        if fast is not None:
            return fast
        for f in self.features:  # column by column: finds and names the first problem
            col = out[f.name]
            if col.isna().any():
                rows = list(out.index[col.isna().to_numpy()][:5])
                raise ValidationError(
                    f"{what} has missing values (NaN) in column '{f.name}' at rows {rows}. "
                    "Impute or drop them first."
                )
            if f.is_numeric:
                if not (pd.api.types.is_numeric_dtype(col.dtype) or pd.api.types.is_bool_dtype(col.dtype)):
                    texts = [v for v in col.tolist() if isinstance(v, (str, bytes))]
                    if texts:
                        raise ValidationError(
                            f"{what}: column '{f.name}' is {f.kind} but holds text values such as "
                            f"{texts[0]!r}. Convert the column to numbers first, e.g. "
                            f"X['{f.name}'] = pd.to_numeric(X['{f.name}'])."
                        )
                try:
                    vals = pd.to_numeric(col).astype(float)
                except (TypeError, ValueError):
                    raise ValidationError(
                        f"{what}: column '{f.name}' is {f.kind} but has non-numeric values "
                        f"such as {col.iloc[0]!r}."
                    ) from None
                if not np.isfinite(vals.to_numpy()).all():
                    raise ValidationError(f"{what}: column '{f.name}' has infinite values.")
                if f.kind == "integer":
                    if (np.abs(vals - np.round(vals)) > 1e-9).any():
                        raise ValidationError(
                            f"{what}: column '{f.name}' is integer but has fractional values."
                        )
                    out[f.name] = np.round(vals).astype(np.int64)
                else:
                    out[f.name] = vals
            else:
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
                out[f.name] = pd.Series(vals_list, index=out.index, dtype=object)
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
                    if (np.abs(v - r) > 1e-9).any():
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
        real, object for discrete) without validating domains."""
        num_names = [f.name for f in self.features if f.kind in ("integer", "real")]
        num_block = _numeric_block(X, num_names)
        arrays: dict[str, Any] = {}
        k = 0
        for f in self.features:
            if f.kind in ("integer", "real"):
                num = num_block[:, k] if num_block is not None else _numeric_column(X[f.name])
                k += 1
                arrays[f.name] = np.round(num).astype(np.int64) if f.kind == "integer" else num
            else:
                arr = X[f.name].to_numpy()
                # numpy casts its own scalars to Python ones; object arrays need a pass
                arr = arr.astype(object) if arr.dtype != object else _py_array(arr)
                arrays[f.name] = pd.Series(arr, index=X.index, dtype=object)  # never inferred as str
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

        Rules: bool / object / category columns are categorical (binary when they
        have two values; an ordered pandas Categorical becomes ordinal); numeric
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
        from ._schema_infer import infer_features

        feats, classes = infer_features(
            frame, target, kinds=kinds, categories=categories, bounds=bounds, immutable=immutable,
            increasing=increasing, decreasing=decreasing, max_categories=max_categories, resolution=resolution,
        )
        return cls(features=tuple(feats), target=target, classes=classes)

    def describe(self) -> pd.DataFrame:
        """One row per feature: kind, domain, resolution, actionability.

        Numeric domains print at the feature's resolution; categories are listed
        in order (the order of an ordinal's levels), long lists cut to their first
        levels and a count, so the table prints in a terminal
        (``schema[name].categories`` has them all).
        """
        from .format import format_value

        rows = []
        for f in self.features:
            if f.is_numeric:
                dom = f"[{format_value(f, f.lower)}, {format_value(f, f.upper)}]"
            else:
                dom = _short_levels([str(c) for c in f.categories or ()], ", ")
            res = "" if f.resolution is None else f"{f.resolution:g}"
            rows.append({"feature": f.name, "kind": f.kind, "domain": dom, "resolution": res, "actionability": f.actionability})
        return pd.DataFrame(rows).set_index("feature")


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
