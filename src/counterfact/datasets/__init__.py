"""The datasets of the five papers, as :class:`counterfact.Dataset` objects.

>>> import counterfact as cf
>>> cf.datasets.names()                          # every dataset, bundled or not
>>> data = cf.datasets.load("german_credit")     # frame + schema (kinds, domains, actionability)
>>> cf.datasets.info("adult")["options"]         # provenance, licence, size, target, options
>>> print(cf.datasets.describe("compas"))

Bundled (gzip inside the package; licences allow redistribution with
attribution, see ``NOTICE.md`` beside this file): ``german_credit``,
``adult``, ``compas``, ``default_credit_taiwan``, ``student_performance``,
``graduate_admission``, ``wine_quality_red``, ``bupa_liver``,
``hill_valley``, ``arrhythmia``, ``lsvt``, ``sba``.

Not bundled (licence unclear or restrictive): ``heloc``,
``give_me_some_credit``, ``bank_loan``, ``movie_oscar``.  Their loaders read
the user's own copy: ``load(name, path=...)`` (the file or its folder), or the
environment variable ``COUNTERFACT_<NAME>`` (e.g. ``COUNTERFACT_HELOC``), or
``COUNTERFACT_DATA_DIR`` pointing to a folder with one sub-folder per dataset
(``$COUNTERFACT_DATA_DIR/heloc/heloc_dataset_v1.csv``).  Without a copy they
raise :class:`counterfact.DatasetNotFoundError` saying where to get it.

Conventions of every loader: the target is an integer 0/1 column, 1 being
the positive class as the paper using the dataset defines it
(``metadata["target_labels"]`` names both; ``metadata["favourable_class"]``
says which outcome a person would want, ``None`` where neither is);
features carry their kind, observed bounds or ordered categories, readable
labels (coded levels decoded) and the actionability the papers use, all
overridable with ``data.with_schema(data.schema.with_actionability(...))``.
Features only time changes (age, years at an address) have actionability
``"time"``: immutable unless a timeline is given; datasets with such features
carry a default timeline (:func:`timeline`).  Arrhythmia is the exception: its
``age`` (with ``sex`` and ``height``) is immutable, since its rows are
recordings of one visit, not plans over time, and it has no timeline.
Datasets with a split of their own (Adult and Hill-Valley files, the
Student schools, SBA's flags) expose it in ``metadata["splits"]``;
:func:`predefined_split` applies it.
"""

from __future__ import annotations

import difflib
import importlib
from typing import TYPE_CHECKING, Any

from ..exceptions import ValidationError
from ._common import DATA_DIR_ENV, DatasetInfo
from ._registry import ALIASES, INFO

if TYPE_CHECKING:
    from ..constraints import Timeline
    from ..data import Dataset

__all__ = [
    "describe",
    "favourable",
    "info",
    "load",
    "names",
    "predefined_split",
    "timeline",
]


def names(*, bundled: bool | None = None) -> list[str]:
    """Dataset names, in the order of the papers' tables.

    Parameters
    ----------
    bundled : bool, optional
        ``True``: only those shipped with the package; ``False``: only those
        read from the user's copy; ``None`` (default): all.
    """
    return [n for n, i in INFO.items() if bundled is None or i.bundled == bundled]


def _resolve(name: str) -> DatasetInfo:
    if not isinstance(name, str):
        raise ValidationError(
            f"A dataset name must be a string, one of {names()}. Got {type(name).__name__}."
        )
    key = name.strip().lower().replace("-", "_").replace(" ", "_")
    key = ALIASES.get(key, key)
    if key in INFO:
        return INFO[key]
    close = difflib.get_close_matches(key, [*INFO, *ALIASES], n=3)
    hint = f" Did you mean {[ALIASES.get(c, c) for c in close]}?" if close else ""
    raise ValidationError(f"Unknown dataset {name!r}. Known datasets: {names()}.{hint}")


def load(name: str, **options: Any) -> Dataset:
    """Load a dataset as a :class:`~counterfact.Dataset`.

    Parameters
    ----------
    name : str
        One of :func:`names` (a few aliases such as ``"german"`` work too).
    **options
        Dataset-specific options, listed with their defaults and choices in
        ``info(name)["options"]`` (e.g. ``load("adult", part="train")``,
        ``load("graduate_admission", threshold=0.6)``, ``load("heloc", path=...)``).

    Raises
    ------
    ValidationError
        Unknown name, unknown option or a value outside its choices.
    DatasetNotFoundError
        A dataset that is not bundled and whose file was not found.
    """
    ds = _resolve(name)
    opts = ds.resolve_options(options)
    module, func = ds.loader.split(":")
    loader = getattr(importlib.import_module(f"{__name__}.{module}"), func)
    return loader(**opts)  # type: ignore[no-any-return]


def info(name: str) -> dict[str, Any]:
    """Provenance and facts about a dataset, without loading it.

    Keys: ``name``, ``title``, ``description``, ``citation``, ``licence``,
    ``source``, ``bundled``, ``n_rows`` and ``n_features`` (with the default
    options), ``target``, ``positive_class`` (what target 1 means),
    ``favourable_class``, ``papers`` (which of the five papers use it),
    ``options`` (name -> default, choices, doc), ``files``; for datasets that
    are not bundled also ``env_var`` and ``obtain`` (where to get the file).
    """
    return _resolve(name).to_dict()


def favourable(name: str) -> int | None:
    """The class a person would want for dataset ``name``, or ``None`` where neither is.

    German Credit: 1 (good credit risk); Adult: 1 (income above 50K);
    COMPAS: 0 (did not reoffend); Default of credit: 0 (no default); SBA: 0
    (paid in full); Give Me Some Credit: 0 (no delinquency); Hill-Valley:
    ``None``.  Loaded datasets carry it as ``metadata["favourable"]``, and
    :func:`counterfact.rows_to_explain` uses it to pick the rows to explain.
    """
    return _resolve(name).favourable_class


def describe(name: str) -> str:
    """A readable summary of :func:`info` (one dataset)."""
    d = info(name)
    lines = [
        f"{d['name']}: {d['title']}",
        f"  {d['description']}",
        f"  rows {d['n_rows']:,}, features {d['n_features']}, target '{d['target']}' (1 = "
        f"{d['positive_class']})",
        f"  bundled: {'yes' if d['bundled'] else 'no'}; licence: {d['licence']}",
        f"  used by: {', '.join(d['papers'])}",
        f"  cite: {d['citation']}",
        f"  source: {d['source']}",
    ]
    if d["options"]:
        lines.append("  options:")
        for k, o in d["options"].items():
            lines.append(f"    {k}={o['default']!r}: {o['doc']}")
    if not d["bundled"]:
        lines.append(
            f"  obtain: {d['obtain']}; then load(..., path=...) or set {d['env_var']} or "
            f"{DATA_DIR_ENV}"
        )
    return "\n".join(lines)


def predefined_split(data: Dataset, split: str | None = None) -> tuple[Dataset, Dataset]:
    """Train and test sets by a dataset's own split (``metadata["splits"]``).

    Splits: ``adult`` and ``hill_valley``: ``"part"`` (the source's train and
    test files; load with ``part="all"``); ``student_performance``:
    ``"school"`` (Gabriel Pereira = train, Mousinho da Silveira = test, as
    L2C); ``sba``: ``"year"`` (L2C's released split by approval year) and
    ``"selected"`` (Li et al.'s ``Selected`` flag).  ``split`` may be omitted
    when the dataset has exactly one.  Works on subsets of a loaded dataset.
    """
    splits: dict[str, Any] = dict(data.metadata.get("splits") or {})
    if not splits:
        raise ValidationError(
            f"Dataset '{data.name}' has no predefined split; use data.split(test_size=..., "
            "random_state=...)."
        )
    if split is None:
        if len(splits) > 1:
            raise ValidationError(
                f"Dataset '{data.name}' has several splits {sorted(splits)}; pass split=... "
                "to pick one."
            )
        split = next(iter(splits))
    if split not in splits:
        raise ValidationError(
            f"Dataset '{data.name}' has no split {split!r}. Its splits: {sorted(splits)}."
        )
    labels = splits[split].reindex(data.frame.index)
    train_idx = data.frame.index[(labels == "train").to_numpy()]
    test_idx = data.frame.index[(labels == "test").to_numpy()]
    if len(train_idx) == 0 or len(test_idx) == 0:
        raise ValidationError(
            f"Split {split!r} of dataset '{data.name}' leaves an empty train or test set "
            f"({len(train_idx)} / {len(test_idx)} rows); load the full dataset (e.g. part='all')."
        )
    return data.subset(train_idx), data.subset(test_idx)


def timeline(data: Dataset | str, *, horizon: int | None = None) -> Timeline | None:
    """The default timeline of a dataset (a loaded one, or a name to load), or None for
    one without features only time changes.

    The loaders document theirs (``metadata["timeline"]``): a horizon of 24 months,
    a month of waiting costing 1/24 (two years as much as one changed feature in the
    default measure of effort), and for some features a bound on how fast they may
    change (German Credit's savings, Adult's education).  ``horizon`` replaces the
    horizon (months).  Pass it as ``cf.Constraints(timeline=...)``.

    >>> data = load("german_credit")
    >>> constraints = cf.Constraints(timeline=timeline(data, horizon=12))  # doctest: +SKIP
    """
    from ..constraints import Timeline

    if isinstance(data, str):
        data = load(data)
    spec = getattr(data, "metadata", {}).get("timeline")
    if spec is None:
        return None
    spec = dict(spec)
    if horizon is not None:
        spec["horizon"] = horizon
    return Timeline.from_dict(spec)
