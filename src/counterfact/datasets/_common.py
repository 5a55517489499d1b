"""Shared machinery of the dataset loaders: options, bundled files, user paths,
and turning a decoded DataFrame plus a per-column spec into a :class:`Dataset`."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..constraints import Timeline
from ..constraints._timeline import DEFAULT_WAIT_COST
from ..data import Dataset
from ..exceptions import DatasetNotFoundError, ValidationError
from ..schema import Feature, Schema

if TYPE_CHECKING:  # pandas is imported by the loaders, on use
    import pandas as pd

    from ..data import Dataset

#: a folder with one sub-folder per dataset, holding the source files
#: (see ``cf.datasets.info(name)``)
DATA_DIR_ENV = "COUNTERFACT_DATA_DIR"


@dataclass(frozen=True)
class Option:
    """A keyword option of a loader."""

    name: str
    default: Any
    doc: str
    choices: tuple[Any, ...] | None = None

    def check(self, value: Any, dataset: str) -> Any:
        if self.choices is not None and value not in self.choices:
            raise ValidationError(
                f"Option {self.name}={value!r} of dataset '{dataset}' must be one of "
                f"{list(self.choices)}. Got {value!r}."
            )
        return value


@dataclass(frozen=True)
class DatasetInfo:
    """What is known about a dataset without loading it."""

    name: str
    title: str
    description: str
    citation: str
    licence: str
    source: str
    bundled: bool
    n_rows: int
    n_features: int
    target: str
    positive: str
    favourable_class: int | None
    papers: tuple[str, ...]
    loader: str
    files: tuple[str, ...]
    options: tuple[Option, ...] = ()
    env_var: str | None = None
    obtain: str = ""
    aliases: tuple[str, ...] = field(default=())

    def resolve_options(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Defaults filled in; unknown names and values outside the choices rejected."""
        known = {o.name: o for o in self.options}
        unknown = sorted(set(given) - set(known))
        if unknown:
            raise ValidationError(
                f"Dataset '{self.name}' has no option(s) {unknown}. "
                f"Its options are {sorted(known) or 'none'}; see cf.datasets.info('{self.name}')."
            )
        return {n: o.check(given.get(n, o.default), self.name) for n, o in known.items()}

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "citation": self.citation,
            "licence": self.licence,
            "source": self.source,
            "bundled": self.bundled,
            "n_rows": self.n_rows,
            "n_features": self.n_features,
            "target": self.target,
            "positive_class": self.positive,
            "favourable_class": self.favourable_class,
            "papers": list(self.papers),
            "options": {
                o.name: {
                    "default": o.default,
                    "choices": None if o.choices is None else list(o.choices),
                    "doc": o.doc,
                }
                for o in self.options
            },
            "files": list(self.files),
        }
        if not self.bundled:
            out["env_var"] = self.env_var
            out["obtain"] = self.obtain
        return out


# ------------------------------------------------------------------ files
def read_bundled(fname: str, **read_csv: Any) -> pd.DataFrame:
    """Read a gzipped file shipped in ``counterfact/datasets/data`` with pandas."""
    import pandas as pd

    ref = resources.files("counterfact.datasets").joinpath("data").joinpath(fname)
    with ref.open("rb") as fh:
        return pd.read_csv(fh, compression="gzip", **read_csv)


def find_external(
    info: DatasetInfo, path: str | os.PathLike[str] | None, candidates: Sequence[str]
) -> Path:
    """Locate the user's copy of a dataset that is not bundled.

    Looks at ``path`` (a file, or a folder holding one of ``candidates`` directly
    or in a sub-folder named after the dataset), then the dataset's environment
    variable (same rules), then ``$COUNTERFACT_DATA_DIR/<name>/``.
    """
    tried: list[str] = []

    def probe(base: Path) -> Path | None:
        if base.is_file():
            return base
        for folder in (base, base / info.name):
            for cand in candidates:
                p = folder / cand
                tried.append(str(p))
                if p.is_file():
                    return p
        return None

    if path is not None:
        base = Path(path).expanduser()
        tried.append(str(base))
        hit = probe(base)
        if hit is not None:
            return hit
        raise DatasetNotFoundError(
            (
                f"Dataset '{info.name}': no file at {str(base)!r} (looked for {list(candidates)} "
                "there). "
            )
            + _how_to(info)
        )
    for var in (info.env_var, DATA_DIR_ENV):
        value = os.environ.get(var) if var else None
        if value:
            hit = probe(Path(value).expanduser())
            if hit is not None:
                return hit
    raise DatasetNotFoundError(
        f"Dataset '{info.name}' is not bundled with counterfact (licence: {info.licence}) "
        "and no copy was found (tried: "
        f"{tried or 'nothing: no path and no environment variable set'}). " + _how_to(info)
    )


def _how_to(info: DatasetInfo) -> str:
    return (
        f"Obtain it from {info.obtain} and pass it with "
        f"cf.datasets.load('{info.name}', path='.../{info.files[0]}') (a file or its folder), "
        f"or set {info.env_var}=/path/to/{info.files[0]}, or set {DATA_DIR_ENV} to a folder "
        f"holding {info.name}/{info.files[0]}."
    )


# -------------------------------------------------------------- timelines
#: one month of waiting in the default timelines: a timeline's own default
WAIT_COST = DEFAULT_WAIT_COST
#: the default horizon, in months
HORIZON = 24
#: one year per month, for a feature counted in years (age, years at an address)
YEARLY = 1 / 12


def default_timeline(**rates: tuple[float, float]) -> dict[str, Any]:
    """The JSON form of a loader's default timeline: :data:`HORIZON`, :data:`WAIT_COST` and
    the given ``(up, down)`` rates per month (the advancing features are the schema's)."""
    out: dict[str, Any] = {"horizon": HORIZON, "wait_cost": WAIT_COST}
    if rates:
        out["rates"] = {name: list(pair) for name, pair in rates.items()}
    return out


# ---------------------------------------------------------------- schema
@dataclass(frozen=True)
class Col:
    """How one column becomes a :class:`~counterfact.schema.Feature`.

    ``categories`` gives the order of the levels (ordinal features) or the display
    order (categorical ones); only levels present in the loaded rows are kept.
    Numeric bounds are the observed minimum and maximum.
    """

    kind: str
    description: str = ""
    actionability: str = "free"
    categories: tuple[Any, ...] | None = None
    #: the unit a person reads a numeric value in ("months", "DM")
    unit: str = ""
    #: a feature only time changes (actionability "time"): its advance per month, in its
    #: unit (age in years: 1/12), and for an ordinal band the upper edge of each level
    per_month: float | None = None
    edges: tuple[float, ...] | None = None
    #: a numeric time feature whose largest value is an open-ended top level ("4 or more")
    top_coded: bool = False


def make_dataset(
    frame: pd.DataFrame,
    cols: Mapping[str, Col],
    target: str,
    y: Any,
    info: DatasetInfo,
    options: Mapping[str, Any],
    *,
    target_labels: Mapping[int, str],
    splits: Mapping[str, pd.Series] | None = None,
    notes: Sequence[str] = (),
    timeline: Mapping[str, Any] | None = None,
) -> Dataset:
    """A :class:`Dataset` with the features ``cols`` of ``frame`` (in order) and
    the 0/1 target ``y`` (aligned with the rows of ``frame``) named ``target``;
    ``timeline``: its default timeline's JSON form (``metadata["timeline"]``), for a
    dataset with features only time changes."""
    import numpy as np
    import pandas as pd

    frame = frame.reset_index(drop=True)
    feats = []
    data: dict[str, Any] = {}
    for name, c in cols.items():
        if c.kind in ("integer", "real"):
            data[name], feature = _numeric_column(name, c, frame[name])
        else:
            data[name], feature = _categorical_column(name, c, frame[name], info)
        feats.append(feature)
    data[target] = np.asarray(y, dtype=np.int64)
    out = pd.DataFrame(data)
    schema = Schema(tuple(feats), target=target, classes=(0, 1))
    metadata = _metadata(info, options, target_labels, splits, notes, out.index)
    if timeline is not None:
        Timeline.from_dict(timeline).rules(schema)  # a loader's own mistake fails here
        metadata["timeline"] = dict(timeline)
    return Dataset(out, schema, name=info.name, description=info.description, metadata=metadata)


def _numeric_column(name: str, c: Col, s: pd.Series) -> tuple[Any, Feature]:
    """The values (int64 or float) and the feature, bounded by the observed range."""
    import numpy as np
    import pandas as pd

    v = pd.to_numeric(s).to_numpy(dtype=float)
    values = np.round(v).astype(np.int64) if c.kind == "integer" else v
    feature = Feature(
        name,
        c.kind,  # type: ignore[arg-type]
        lower=float(v.min()),
        upper=float(v.max()),
        actionability=c.actionability,  # type: ignore[arg-type]
        description=c.description,
        unit=c.unit,
        per_month=c.per_month,
        top_coded=c.top_coded,
    )
    return values, feature


def _categorical_column(
    name: str, c: Col, s: pd.Series, info: DatasetInfo
) -> tuple[pd.Series, Feature]:
    """The values (plain Python scalars) and the feature, with the levels present in order."""
    import pandas as pd

    vals = s.tolist()
    seen = set(vals)
    if c.categories is None:
        cats = sorted(seen)
    else:
        extra = seen - set(c.categories)
        if extra:  # a decoding table missed a code: a bug in the loader, not user input
            raise ValidationError(
                f"{info.name}: column '{name}' has undocumented values {sorted(map(str, extra))}."
            )
        cats = [v for v in c.categories if v in seen]
    kind = c.kind if not (c.kind == "binary" and len(cats) != 2) else "categorical"
    feature = Feature(
        name,
        kind,  # type: ignore[arg-type]
        categories=tuple(cats),
        actionability=c.actionability,  # type: ignore[arg-type]
        description=c.description,
        per_month=c.per_month,
        edges=c.edges,
    )
    return pd.Series(vals, dtype=object), feature


def _metadata(
    info: DatasetInfo,
    options: Mapping[str, Any],
    target_labels: Mapping[int, str],
    splits: Mapping[str, Any] | None,
    notes: Sequence[str],
    index: pd.Index,
) -> dict[str, Any]:
    """A loaded dataset's ``metadata``: options, labels, provenance and splits."""
    import numpy as np
    import pandas as pd

    return {
        "options": dict(options),
        "target_labels": dict(target_labels),
        "favourable_class": info.favourable_class,
        "favourable": info.favourable_class,
        "citation": info.citation,
        "licence": info.licence,
        "source": info.source,
        "papers": list(info.papers),
        "splits": {
            k: pd.Series(
                pd.Categorical(np.asarray(v), categories=["train", "test"]), index=index, name=k
            )
            for k, v in (splits or {}).items()
        },
        "notes": list(notes),
    }
