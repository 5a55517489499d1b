"""The conformance suite: the checks every method passes, the library's own and yours.

:func:`check_method` runs every check against a method class (built with its
``tags.fast_params``), an instance or a factory, on a small slice of a bundled
dataset, and raises one ``AssertionError`` naming each failed check::

    from counterfact.testing import check_method

    def test_my_method_conforms():
        check_method(MyMethod)

The project's own ``tests/methods/test_common.py`` runs every registered method
(:func:`counterfact.methods.names`) through the same function, check by check
(``checks=[...]``) and on two settings (:func:`make_setting` with a linear model
and a tree).  Each check on its own is one of :func:`conformance_checks`: a
function ``check(factory, setting)`` that raises ``AssertionError`` with a
readable message on failure.
"""

from __future__ import annotations

import copy
import functools
import itertools
import pickle
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import FunctionType
from typing import Any

import numpy as np
import pandas as pd

from .. import datasets, models
from .._utils._validation import invalid_example
from ..constraints import Causal, Constraints, Costs, violations
from ..constraints._kinds import CONSTRAINT_KINDS
from ..data import Dataset
from ..exceptions import NotFittedError, UnsupportedConstraintError, ValidationError
from ..methods import CounterfactualMethod, MethodTags
from ..methods._base import COMMON_PARAMS, HOOKS
from ..methods._pipeline._diversity import SAME_CHANGE_SHARE
from ..result import STATUSES, CounterfactualResult

__all__ = ["Setting", "check_method", "conformance_checks", "make_setting", "option_faults"]

Factory = Callable[[], Any]


@dataclass
class Setting:
    """Data, model and queries shared by the checks."""

    train: Dataset
    model: Any
    queries: pd.DataFrame
    constraints: Constraints
    n_counterfactuals: int = 2


@functools.lru_cache(maxsize=8)
def make_setting(
    model_kind: str = "lr",
    dataset: str = "german_credit",
    n_rows: int = 400,
    n_queries: int = 4,
    random_state: int = 0,
) -> Setting:
    """A small real setting: ``n_rows`` rows of a bundled dataset, a seeded model
    of ``model_kind`` and ``n_queries`` test rows, plus constraints that touch
    every kind a method is expected to honour (immutable, increasing, range,
    allowed values, max changes)."""
    data = datasets.load(dataset)
    # the dataset's monotone directions (and the features only time moves) are left to the
    # setting's own constraints below, so that a method returning observed rows (nearest)
    # still finds some to check
    moved = ("increasing", "decreasing", "time")
    directed = {f.name: "free" for f in data.schema if f.actionability in moved}
    data = data.with_schema(data.schema.with_actionability(**directed))
    rng = np.random.default_rng(random_state)
    idx = rng.choice(len(data), size=min(n_rows, len(data)), replace=False)
    sub = data.subset(data.frame.index[np.sort(idx)])
    train, test = sub.split(test_size=0.25, random_state=random_state)
    model = models.fit(train, model_kind, random_state=random_state)
    queries = test.X.iloc[:n_queries]
    schema = train.schema
    numeric = [f.name for f in schema if f.is_numeric and f.actionability == "free"]
    cats = [f.name for f in schema if f.is_categorical and f.actionability == "free"]
    imm = [cats[0]] if cats else []
    inc = [numeric[0]] if numeric else []
    rng_feat = numeric[1] if len(numeric) > 1 else None
    ranges = {}
    if rng_feat is not None:
        col = train.frame[rng_feat]
        lo, hi = float(col.min()), float(col.quantile(0.9))
        # the range must contain the queries' own values
        lo = min(lo, float(queries[rng_feat].min()))
        hi = max(hi, float(queries[rng_feat].max()))
        ranges[rng_feat] = (lo, hi)
    constraints = Constraints(
        immutable=imm, increasing=inc, ranges=ranges, max_changes=max(3, len(schema) // 2)
    )
    return Setting(train, model, queries, constraints)


def _fitted(factory: Factory, s: Setting) -> Any:
    return factory().fit(s.model, s.train)


def check_explain_before_fit(factory: Factory, s: Setting) -> None:
    """explain() before fit() raises NotFittedError naming fit."""
    m = factory()
    try:
        m.explain(s.queries.iloc[:1])
    except NotFittedError as exc:
        assert "fit" in str(exc), f"NotFittedError message should mention fit: {exc}"
        return
    raise AssertionError(f"{type(m).__name__}.explain before fit did not raise NotFittedError")


def check_bad_params(factory: Factory, s: Setting) -> None:
    """Each declared parameter rejects an invalid value at fit, naming parameter and class."""
    m = factory()
    specs = {**_common_specs(m), **type(m)._parameter_constraints}
    assert specs, f"{type(m).__name__} declares no parameter constraints"
    for name, spec in specs.items():
        bad = invalid_example(spec)
        m2 = factory()
        m2.set_params(**{name: bad})
        try:
            m2.fit(s.model, s.train)
        except ValidationError as exc:
            msg = str(exc)
            assert name in msg and type(m2).__name__ in msg, (
                f"message should name '{name}' and the class: {msg}"
            )
            continue
        raise AssertionError(f"{type(m2).__name__}(... {name}={bad!r}) was accepted by fit")
    try:
        m.set_params(no_such_parameter=1)
    except ValidationError:
        pass
    else:
        raise AssertionError("set_params accepted an unknown parameter")


def _common_specs(m: Any) -> dict[str, list[Any]]:
    names = m._param_names()
    return {k: v for k, v in COMMON_PARAMS.items() if k in names}


def _explain(factory: Factory, s: Setting, **kw: Any) -> CounterfactualResult:
    m = _fitted(factory, s)
    return m.explain(
        s.queries, n_counterfactuals=s.n_counterfactuals, constraints=s.constraints, **kw
    )


def check_valid_and_constrained(factory: Factory, s: Setting) -> None:
    """Every reported counterfactual flips the real model and violates no constraint
    (nor the schema's domain), and statuses are consistent with what was found."""
    r = _explain(factory, s)
    assert isinstance(r, CounterfactualResult)
    assert set(r.status) <= set(STATUSES), f"unknown statuses {set(r.status)}"
    assert list(r.queries.index) == list(s.queries.index)
    found = r.found
    for q in s.queries.index:
        st = r.status[q]
        if found[q] > 0:
            assert st in ("optimal", "feasible"), (
                f"query {q}: {found[q]} counterfactuals but status {st}"
            )
        else:
            assert st in ("infeasible", "timeout", "failed"), (
                f"query {q}: none found but status {st}"
            )
        assert found[q] <= s.n_counterfactuals
        cfs = r.for_query(q)
        if len(cfs) == 0:
            continue
        pred = s.model.predict(cfs.loc[:, s.train.schema.names])
        assert (pred == r.target[q]).all(), (
            f"query {q}: reported counterfactuals do not flip the model: {pred}"
        )
        v = violations(s.queries.loc[q], cfs, s.train.schema, s.constraints)
        assert v.empty, f"query {q}: constraint violations\n{v}"
        assert not cfs.duplicated().any(), f"query {q}: duplicate counterfactuals"
    ok = sum(found > 0)
    assert ok > 0, "no counterfactual found for any query: the method cannot be checked"


def check_coherent_types(factory: Factory, s: Setting) -> None:
    """Categories are known, integers integral, dtypes those of the schema."""
    r = _explain(factory, s)
    schema = s.train.schema
    for f in schema:
        col = r.counterfactuals[f.name]
        for v in col:
            assert f.contains(v) or f.is_numeric, f"{f.name}: {v!r} outside domain"
        if f.kind == "integer" and len(col):
            assert pd.api.types.is_integer_dtype(col), (
                f"{f.name} should be integer dtype, got {col.dtype}"
            )


def check_reproducible(factory: Factory, s: Setting) -> None:
    """The same random_state gives the same counterfactuals."""
    a = _explain(lambda: factory().set_params(random_state=7), s)
    b = _explain(lambda: factory().set_params(random_state=7), s)
    pd.testing.assert_frame_equal(a.counterfactuals, b.counterfactuals)
    pd.testing.assert_series_equal(a.status, b.status)


def check_global_rng_untouched(factory: Factory, s: Setting) -> None:
    """Neither numpy's nor Python's global RNG is used."""
    np.random.seed(12345)
    random.seed(12345)
    before_np = _np_state()
    before_py = random.getstate()
    _explain(factory, s)
    assert (_np_state() == before_np).all(), "numpy's global RNG was used"
    assert random.getstate() == before_py, "Python's global RNG was used"


def _np_state() -> np.ndarray:
    state: Any = np.random.get_state()
    return np.array(state[1]).copy()


def check_inputs_not_mutated(factory: Factory, s: Setting) -> None:
    """Queries, training frame and constraints are not modified."""
    q = s.queries.copy(deep=True)
    tr = s.train.frame.copy(deep=True)
    c = pickle.dumps(s.constraints)
    _explain(factory, s)
    pd.testing.assert_frame_equal(q, s.queries)
    pd.testing.assert_frame_equal(tr, s.train.frame)
    assert pickle.dumps(s.constraints) == c


def check_bad_input(factory: Factory, s: Setting) -> None:
    """Wrong columns, unknown category, NaN, negative n_counterfactuals, unknown
    feature in constraints and a target the model lacks all raise ValidationError."""
    m = _fitted(factory, s)
    x = s.queries.iloc[:1]
    cases: list[tuple[str, Callable[[], Any]]] = [
        ("missing column", lambda: m.explain(x.drop(columns=x.columns[0]))),
        ("NaN", lambda: m.explain(x.assign(**{x.columns[-1]: np.nan}))),
        ("n_counterfactuals=-1", lambda: m.explain(x, n_counterfactuals=-1)),
        (
            "unknown feature",
            lambda: m.explain(x, constraints=Constraints(immutable=["no_such_feature"])),
        ),
        ("unknown target", lambda: m.explain(x, target="no_such_class")),
    ]
    cats = s.train.schema.categorical
    if cats:
        cases.append(
            ("unknown category", lambda: m.explain(x.assign(**{cats[0]: "no_such_category"})))
        )
    for label, fn in cases:
        try:
            fn()
        except ValidationError:
            continue
        raise AssertionError(f"bad input ({label}) did not raise ValidationError")


def check_unsupported_constraints_raise(factory: Factory, s: Setting) -> None:
    """A constraint kind the method does not declare raises UnsupportedConstraintError."""
    m = _fitted(factory, s)
    missing = set(CONSTRAINT_KINDS) - set(m.supported_constraints)
    rels = relations_for(s)
    if "relations" in missing and rels:
        try:
            m.explain(s.queries.iloc[:1], constraints=Constraints(relations=rels))
        except UnsupportedConstraintError:
            pass
        else:
            raise AssertionError(
                "a relation was silently accepted by a method that does not support relations"
            )
    if "causal" not in missing:
        return
    nums = [f.name for f in s.train.schema if f.is_numeric and f.actionability == "free"]
    if len(nums) < 2:
        return
    c = Constraints(causal=[Causal(child=nums[1], parents=(nums[0],), coef={nums[0]: 1.0})])
    try:
        m.explain(s.queries.iloc[:1], constraints=c)
    except UnsupportedConstraintError:
        return
    raise AssertionError(
        "a causal constraint was silently accepted by a method that does not support it"
    )


def relations_for(s: Setting) -> list[str]:
    """Two relations that bind on a setting's schema and that its queries satisfy: a
    numeric feature may not drop by more than a quarter of its range, and changing
    a (free) categorical feature keeps another numeric feature from growing."""
    schema = s.train.schema
    fixed = set(s.constraints.immutable)
    nums = [f for f in schema if f.is_numeric and f.actionability == "free" and f.name not in fixed]
    cats = [
        f for f in schema if f.is_categorical and f.actionability == "free" and f.name not in fixed
    ]
    out = []
    if nums:
        f = nums[-1]
        out.append(f"{f.name} - {f.name}@ >= -{round(0.25 * f.range, 6)}")
    if cats and nums:
        out.append(f"if {cats[0].name} != {cats[0].name}@ then {nums[0].name} <= {nums[0].name}@")
    return out


def check_relations_honoured(factory: Factory, s: Setting) -> None:
    """Under relations between features, every answer satisfies them (the one
    checker says so); a method that cannot honour them raises
    UnsupportedConstraintError naming one."""
    m = _fitted(factory, s)
    rels = relations_for(s)
    if not rels:
        return
    c = s.constraints.merge(Constraints(relations=rels))
    try:
        r = m.explain(s.queries, n_counterfactuals=s.n_counterfactuals, constraints=c)
    except UnsupportedConstraintError as exc:
        assert "relations" not in m.supported_constraints or any(t in str(exc) for t in rels), (
            f"{type(m).__name__} refused relations without naming one: {exc}"
        )
        return
    assert "relations" in m.supported_constraints, (
        f"{type(m).__name__} accepted relations it does not declare"
    )
    for q in s.queries.index:
        cfs = r.for_query(q)
        if len(cfs):
            v = violations(s.queries.loc[q], cfs, s.train.schema, c)
            assert v.empty, f"query {q}: constraint violations under relations\n{v}"


def check_options_not_copies(factory: Factory, s: Setting) -> None:
    """The answers of a query are options, not copies: none is dominated by another
    (fewer or the same changes, each moved on the same side at most as far, no worse
    probability, no higher cost), two with the same changes are a step of the measure
    apart, and a query with fewer answers than asked says why."""
    n = max(3, s.n_counterfactuals)
    m = _fitted(factory, s)
    r = m.explain(s.queries, n_counterfactuals=n, constraints=s.constraints)
    measure = r.costs if r.costs is not None else Costs().bind(s.train.schema, s.train.X)
    faults = option_faults(r, measure)
    assert not faults, "answers that are not distinct options:\n" + "\n".join(faults[:5])
    for q in s.queries.index:
        if 0 < r.found[q] < n:
            assert r.reason[q], f"query {q}: {r.found[q]} of {n} answers and no reason why"


def option_faults(result: CounterfactualResult, measure: Any) -> list[str]:
    """Each pair of answers of one query where one dominates the other, or which are
    the same option under ``measure`` (a bound cost measure: the same changes in the
    same directions, apart by less than ``SAME_CHANGE_SHARE`` of the cheaper one's
    cost), in words; empty when the answers are distinct options.  Written from the
    definitions, independently of the pipeline's arrays."""
    schema = result.schema
    faults = []
    for q in result.queries.index:
        cfs = result.for_query(q)
        if len(cfs) < 2:
            continue
        x = result.queries.loc[q]
        cost = measure.evaluate(x, cfs.loc[:, schema.names], per_feature=True)
        proba = result.confidence.loc[q].reindex(cfs.index).to_numpy(dtype=float)
        moves = [_moves_of(schema, x, row) for _, row in cfs.iterrows()]
        for a, b in itertools.permutations(range(len(cfs)), 2):
            ca, cb = float(cost[a].sum()), float(cost[b].sum())
            if _dominates(moves[b], moves[a]) and (
                proba[b] >= proba[a] - 1e-9 and cb <= ca + 1e-9 * max(1.0, abs(ca))
            ):
                faults.append(f"query {q}: answer {cfs.index[b]} dominates {cfs.index[a]}")
            elif a < b and moves[a].keys() == moves[b].keys():
                apart = float(np.abs(cost[a] - cost[b]).sum())
                same = all(_same_way(moves[a][k], moves[b][k]) for k in moves[a])
                if same and apart < SAME_CHANGE_SHARE * min(ca, cb) - 1e-9:
                    faults.append(
                        f"query {q}: answers {cfs.index[a]} and {cfs.index[b]} change the same "
                        f"features the same way, only {apart:.3g} apart (costs {ca:.3g}, {cb:.3g})"
                    )
    return faults


def _moves_of(schema: Any, x: pd.Series, row: pd.Series) -> dict[str, tuple[str, Any]]:
    """Each changed feature's move: ``("by", signed move)`` for a numeric (units) or
    ordinal (ranks) feature, ``("to", value)`` for a binary or categorical one."""
    out: dict[str, tuple[str, Any]] = {}
    for f in schema:
        a, v = row[f.name], x[f.name]
        if f.is_numeric:
            if float(a) != float(v):
                out[f.name] = ("by", float(a) - float(v))
        elif a != v:
            by = f.kind == "ordinal"
            out[f.name] = ("by", float(f.rank(a) - f.rank(v))) if by else ("to", a)
    return out


def _same_way(b: tuple[str, Any], a: tuple[str, Any]) -> bool:
    if b[0] != a[0]:
        return False
    return b[1] * a[1] > 0 if b[0] == "by" else b[1] == a[1]


def _dominates(b: dict[str, tuple[str, Any]], a: dict[str, tuple[str, Any]]) -> bool:
    """Whether moves ``b`` change a subset of ``a``'s features, each the same way and
    at most as far."""
    for name, mb in b.items():
        ma = a.get(name)
        if ma is None or not _same_way(mb, ma):
            return False
        if mb[0] == "by" and abs(mb[1]) > abs(ma[1]) * (1 + 1e-9) + 1e-12:
            return False
    return True


def check_serialisation(factory: Factory, s: Setting) -> None:
    """to_json/from_json round-trips the counterfactuals and statuses."""
    r = _explain(factory, s)
    r2 = CounterfactualResult.from_json(r.to_json())
    pd.testing.assert_frame_equal(r.counterfactuals, r2.counterfactuals, check_dtype=False)
    assert list(r.status) == list(r2.status)


def check_tags(factory: Factory, s: Setting) -> None:
    """The class declares its facts (``tags``), overrides only the documented hooks,
    searches the way its tags say, and words its guarantee for every status."""
    cls = type(factory())
    name = cls.__name__
    assert isinstance(cls.__dict__.get("tags"), MethodTags), (
        f"{name} does not declare its own tags = MethodTags(...)"
    )
    tags = cls.tags
    assert tags.display_name and tags.summary, f"{name}.tags needs a display_name and a summary"
    _check_only_hooks(cls)
    _check_search_hook(cls)
    for status in STATUSES:
        text = cls.certificate(status, {})
        assert isinstance(text, str) and text.startswith(tags.display_name), (
            f"{name}.certificate({status!r}) = {text!r}"
        )
    said = cls.guarantee(factory().get_params())
    assert set(said) == {"recourse", "none"} and all(
        isinstance(v, str) and v for v in said.values()
    ), said


def _check_only_hooks(cls: type) -> None:
    """Of the base class's private methods, ``cls`` overrides only the documented hooks."""
    for klass in cls.__mro__:
        if klass is CounterfactualMethod:
            break
        for attr, value in vars(klass).items():
            if not isinstance(value, (FunctionType, classmethod, staticmethod, property)):
                continue  # declarations (_parameter_constraints, ...) are the method's own
            private = attr.startswith("_") and not attr.startswith("__")
            if private and hasattr(CounterfactualMethod, attr):
                assert attr in HOOKS, (
                    f"{klass.__name__} overrides {attr}, which is the pipeline's; "
                    f"override only the hooks {sorted(HOOKS)}"
                )


def _check_search_hook(cls: type) -> None:
    """``_explain_batch`` exactly when ``tags.batch``, else ``_explain_one``."""
    name = cls.__name__
    base = cls.__mro__.index(CounterfactualMethod)
    overrides = {attr for klass in cls.__mro__[:base] for attr in vars(klass)}
    if cls.tags.batch:
        assert "_explain_batch" in overrides, (
            f"{name}.tags.batch is set but it does not implement _explain_batch"
        )
        return
    assert "_explain_one" in overrides, (
        f"{name} implements neither _explain_one nor (with tags.batch) _explain_batch"
    )
    assert "_explain_batch" not in overrides, (
        f"{name} implements _explain_batch but tags.batch is False"
    )


def conformance_checks() -> list[Callable[[Factory, Setting], None]]:
    """Every check, in order."""
    return [
        check_tags,
        check_explain_before_fit,
        check_bad_params,
        check_valid_and_constrained,
        check_coherent_types,
        check_reproducible,
        check_global_rng_untouched,
        check_inputs_not_mutated,
        check_bad_input,
        check_unsupported_constraints_raise,
        check_relations_honoured,
        check_options_not_copies,
        check_serialisation,
    ]


def _factory(method: Any) -> Factory:
    """A function returning a fresh, unfitted instance of ``method``: a class (built
    with its ``tags.fast_params``), an instance (its parameters copied) or a factory."""
    if isinstance(method, type):
        if not issubclass(method, CounterfactualMethod):
            raise TypeError(
                f"check_method needs a cf.CounterfactualMethod subclass; got the class {method!r}."
            )
        tags = method.__dict__.get("tags")
        params = dict(tags.fast_params) if isinstance(tags, MethodTags) else {}
        return lambda: method(**params)
    if isinstance(method, CounterfactualMethod):
        params = method.get_params()
        return lambda: type(method)(**copy.deepcopy(params))
    if callable(method):
        return method
    raise TypeError(
        "check_method needs a method class, an instance, or a function returning a fresh "
        f"instance; got {type(method).__name__}."
    )


def _label(setting: Setting) -> str:
    data = setting.train.name or "the data"
    return f"{data} ({type(setting.model).__name__}, {len(setting.queries)} queries)"


def check_method(
    method: Any,
    *,
    setting: Setting | None = None,
    checks: Sequence[str] | None = None,
) -> list[str]:
    """Run the conformance checks against ``method`` and report every failure at once.

    Parameters
    ----------
    method : class, instance or callable
        A :class:`~counterfact.CounterfactualMethod` subclass (built with its
        ``tags.fast_params``), an unfitted instance (its parameters are copied for
        each check), or a function returning a fresh instance.
    setting : Setting, optional
        Data, model and queries (default: :func:`make_setting`, a small slice of the
        bundled German Credit data and a logistic regression).
    checks : sequence of str, optional
        Names of the checks to run (default: all of :func:`conformance_checks`).

    Returns
    -------
    list of str
        The names of the checks run, all passed.

    Raises
    ------
    AssertionError
        Naming each failed check, what it checks and why it failed.

    Examples
    --------
    >>> from counterfact.testing import check_method
    >>> check_method(MyMethod)  # doctest: +SKIP
    """
    factory = _factory(method)
    s = setting or make_setting()
    failures, passed = [], []
    for check in _selected(checks):
        try:
            check(factory, s)
        except Exception as exc:  # an assertion, or an error the method raised: both reported
            why = str(exc) if isinstance(exc, AssertionError) else f"{type(exc).__name__}: {exc}"
            doc = " ".join((check.__doc__ or "").strip().split("\n\n")[0].split())
            failures.append(f"- {check.__name__}: {doc}\n    {why}")
        else:
            passed.append(check.__name__)
    if failures:
        who = method.__name__ if isinstance(method, type) else type(factory()).__name__
        raise AssertionError(
            f"{who} failed {len(failures)} of {len(failures) + len(passed)} conformance checks "
            f"on {_label(s)}:\n" + "\n".join(failures)
        )
    return passed


def _selected(checks: Sequence[str] | None) -> list[Callable[[Factory, Setting], None]]:
    every = conformance_checks()
    if checks is None:
        return every
    known = {c.__name__: c for c in every}
    unknown = [c for c in checks if c not in known]
    if unknown:
        raise ValueError(f"Unknown conformance checks {unknown}; known: {list(known)}.")
    return [known[c] for c in checks]
