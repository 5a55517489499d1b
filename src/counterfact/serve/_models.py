"""Pydantic models of every request and response (they make the OpenAPI document)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    create_model,
)

from ..constraints import constraint_kinds

#: one cell of a row: a JSON number, string or boolean (never coerced)
Value = StrictBool | StrictInt | StrictFloat | StrictStr
#: a JSON number (never a string; NaN and infinities are rejected by the models' config)
Number = StrictInt | StrictFloat

_EXAMPLE_ROW = {"duration_months": 24, "credit_amount": 4020.0, "savings": "< 100 DM", "...": "..."}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class CausalIn(_Strict):
    """A linear causal relation ``child = intercept + sum(coef[p] * p)`` (CE-OCL eq. 7)."""

    child: str
    parents: list[str]
    coef: dict[str, Number]
    intercept: Number = 0.0


#: the request field of each shape of constraint kind: its type and its ``Field`` arguments
_FIELD_OF_SHAPE: dict[str, tuple[Any, dict[str, Any]]] = {
    "names": (list[str], {"default_factory": list}),
    "names_or_all": (list[str] | None, {"default": None}),
    "ranges": (dict[str, tuple[Number | None, Number | None]], {"default_factory": dict}),
    "values": (dict[str, list[Value]], {"default_factory": dict}),
    "count": (StrictInt | None, {"default": None}),
    "causal": (list[CausalIn], {"default_factory": list}),
    "relations": (
        list[Annotated[StrictStr, Field(max_length=1000)]],
        {"default_factory": list, "max_length": 50},
    ),
    "timeline": (dict[str, Any] | StrictInt | None, {"default": None}),
}


def _constraints_model() -> type[BaseModel]:
    """The request's ``constraints`` object: one optional field per registered kind."""
    fields: dict[str, Any] = {}
    for kind in constraint_kinds():
        annotation, arguments = _FIELD_OF_SHAPE[kind.shape]
        fields[kind.name] = (annotation, Field(description=kind.help, **arguments))
    return create_model(
        "ConstraintsIn",
        __base__=_Strict,
        __doc__="The user's feedback, as :class:`counterfact.Constraints` (every field optional).",
        **fields,
    )


ConstraintsIn = _constraints_model()


class RowsRequest(_Strict):
    """Rows to predict."""

    rows: list[dict[str, Value]] = Field(
        description="Raw rows: feature -> value.", examples=[[_EXAMPLE_ROW]]
    )


class ExplainRequest(_Strict):
    """Rows to explain, the method and the user's feedback."""

    rows: list[dict[str, Value]] = Field(description="Raw rows: feature -> value.")
    method: str | None = Field(
        default=None, description="A method name from /api/methods (default: the server's)."
    )
    n_counterfactuals: StrictInt = Field(default=1, description="Distinct counterfactuals per row.")
    target: Value | None = Field(
        default=None, description="Desired class (default: the favourable class)."
    )
    constraints: ConstraintsIn | None = None  # type: ignore[valid-type]
    time_limit: Number | None = Field(
        default=None, description="Seconds per row (capped by the server)."
    )
    min_probability: Number | None = Field(
        default=None,
        description="A margin: every answer must give the target at least this probability "
        "(strictly between 0 and 1), checked with the real model; null: crossing the decision "
        "boundary is enough.",
    )
    min_vote_share: Number | None = Field(
        default=None,
        description="For a server whose model is a random forest or extra-trees: every answer "
        "must get at least this share of the trees' votes (in (0, 1], e.g. 0.6), checked with "
        "the real trees; null: no share asked.",
    )
    robustness: Number | None = Field(
        default=None,
        description="The share of retrained models that should still accept each answer "
        "(strictly between 0 and 1, e.g. 0.95); each answer then reports its estimated share "
        "with an interval. Not with robust=true.",
    )
    regions: StrictBool = Field(
        default=False,
        description="Add each answer's certified region: the ranges within which every change "
        "keeps the outcome.",
    )
    measure: str | None = Field(
        default=None,
        description="What 'smaller' means (null: effort, 1 per changed feature plus each move "
        "in MADs): effort, fewest-changes, smallest-moves, range-l1, or own (each method's own "
        "objective, as in its paper).",
    )
    robust: StrictBool = Field(
        default=False,
        description="Answers must also hold for the server's retrained models (started with "
        "--robust-to N).",
    )
    reasons: StrictBool = Field(
        default=False,
        description="Add each answer's principal reasons for a notice, and the notice's text.",
    )
    horizon: StrictInt | None = Field(
        default=None,
        description="Months an answer may take (age, years at an address move with them): "
        "0 for answers today with nothing moved by time, or e.g. 6, 12, 24 (the dataset's "
        "default timeline, its rates and cost of waiting, with this horizon); null: the "
        "dataset's default timeline (SchemaOut.timeline), if it has one.",
    )


class FeatureOut(BaseModel):
    name: str
    kind: str
    lower: float | None
    upper: float | None
    categories: list[Any] | None
    actionability: str
    resolution: float | None = Field(
        description="Step of a numeric feature's values (null: discrete)."
    )
    description: str = Field(default="", description="What the feature is, from the data's schema.")
    unit: str = Field(
        default="", description='The unit a numeric value is read in ("months"), from the schema.'
    )


class LimitsOut(BaseModel):
    max_rows: int
    max_body_bytes: int
    max_counterfactuals: int
    max_time_limit: float
    default_time_limit: float
    requests_per_minute: int | None = Field(
        default=None, description="Per-client quota (null: none)."
    )
    counterfactuals_per_hour: int | None = Field(
        default=None, description="Per-client quota (null: none)."
    )


class SchemaOut(BaseModel):
    dataset: str
    model: str
    target: str | None
    classes: list[Any]
    class_labels: dict[str, str]
    favourable: Any = None
    features: list[FeatureOut]
    n_examples: int
    robust_to: int = Field(
        default=0, description="Retrained models a request may ask answers to hold for."
    )
    limits: LimitsOut
    api_docs: str = Field(
        default="/openapi.json", description="Where the API is documented (/docs when served)."
    )
    measure: str | None = Field(
        default=None,
        description="What 'smaller' means for every answer's cost, in words.",
    )
    timeline: dict[str, Any] | None = Field(
        default=None,
        description="The dataset's default timeline (null: none): its horizon in months "
        "(the default of ExplainRequest.horizon), the horizons the page offers, and the "
        "features only time moves.",
    )


class MethodOut(BaseModel):
    name: str
    class_name: str
    summary: str
    parameters: dict[str, Any]
    supported_constraints: list[str]
    unsupported_constraints: list[str]
    certified: bool = Field(description="Answers carry a proof (optimal / none exists).")
    default: bool
    display_name: str = ""
    proves_optimality: bool = Field(
        default=False, description="Status 'optimal' is a proof: no nearer answer."
    )
    proves_infeasibility: bool = Field(
        default=False, description="Status 'infeasible' is a proof: none exists."
    )
    meaning: dict[str, str] = Field(
        default_factory=dict, description="Per status, what an answer means in plain words."
    )


class MethodsOut(BaseModel):
    methods: list[MethodOut]


class ExampleOut(BaseModel):
    index: int
    total: int
    id: Any
    row: dict[str, Any]


class DecisionOut(BaseModel):
    prediction: Any
    label: str
    probabilities: dict[str, float]
    probability_favourable: float | None


class PredictionOut(DecisionOut):
    row: int


class PredictOut(BaseModel):
    classes: list[Any]
    favourable: Any = None
    predictions: list[PredictionOut]


class ChangeOut(BaseModel):
    feature: str
    before: Any
    after: Any
    before_text: str
    after_text: str
    unit: str = Field(
        default="", description='The feature\'s unit ("months"; empty when it has none).'
    )


class RegionOut(BaseModel):
    bounds: dict[str, Any] = Field(
        description='Per changed feature: [low, high] (numeric) or {"values": [...]} (categories).'
    )
    domain: dict[str, list[float]] = Field(
        description="The numeric features' domains, to read open-ended bounds."
    )
    certified: bool = Field(
        description="Proven for the model by a solver (false: checked on samples only)."
    )
    how: str
    n_checked: int
    text: str = Field(description="The region in words.")


class RobustnessOut(BaseModel):
    estimate: float = Field(
        description="Share of retrained copies (never used to search or choose) that still "
        "accept the answer."
    )
    low: float = Field(description="Lower end of its exact 95 % interval.")
    high: float = Field(description="Upper end of its exact 95 % interval.")
    accepted: int = Field(description="Copies that accept it.")
    copies: int = Field(description="Copies it was estimated on.")
    shortfall: float = Field(description="The share asked for less the estimate (0 at least).")
    reached: bool | None = Field(
        description="Whether the copies that choose let the row reach the share asked for."
    )
    setting: str | None = Field(description="The margin, copies or vote share it came from.")


class ReasonOut(BaseModel):
    feature: str
    current: Any
    needed: Any
    closes: float | None = Field(
        description="P(target) with only this feature changed, minus the case's own."
    )
    sentence: str


class CounterfactualOut(BaseModel):
    rank: int
    row: dict[str, Any]
    cost: float | None = Field(
        default=None,
        description="The answer's value in the page's measure of effort (one scale for every "
        "method: see ExplainOut.measure); smaller is less effort.",
    )
    cost_text: str | None = Field(default=None, description="The value, in words.")
    months: int | None = Field(
        default=None,
        description="Under a timeline: the months the answer takes (null without one).",
    )
    when: str | None = Field(
        default=None,
        description="Under a timeline, the answer with when: 'in 8 months, if ...' or 'no "
        "change needed: wait 12 months' (null without one).",
    )
    changes: list[ChangeOut] = Field(
        description="Only the features that changed, formatted at their resolution."
    )
    description: str
    probability_after: float | None = Field(
        description="Model probability of the target for this counterfactual."
    )
    region: RegionOut | None = Field(
        default=None, description="Its certified region (when regions were asked for)."
    )
    reasons: list[ReasonOut] | None = Field(
        default=None, description="At most four principal reasons (when asked)."
    )
    notice: str | None = Field(
        default=None, description="The reasons as a text to adapt into a notice (when asked)."
    )
    robustness: RobustnessOut | None = Field(
        default=None,
        description="Its estimated share of retrained models that still accept it (when "
        "robustness was asked for).",
    )


class RowResultOut(BaseModel):
    row: int
    status: str = Field(description="optimal | feasible | infeasible | timeout | failed | invalid")
    reason: str | None
    target: Any
    target_label: str
    decision: DecisionOut
    probability_before: float
    counterfactuals: list[CounterfactualOut]
    certificate: str = Field(
        description="The method's guarantee for this answer, as the method words it (with its "
        "raw values and bounds)."
    )
    plain_certificate: str | None = Field(
        default=None,
        description="The same guarantee for a lay reader: the measure named in words, no raw "
        "numbers.",
    )
    meaning: str | None = Field(
        default=None, description="What the status means for this method, in plain words."
    )
    runtime_s: float | None
    diagnostics: dict[str, Any]


class ExplainOut(BaseModel):
    method: str
    n_counterfactuals: int
    time_limit: float
    constraints: dict[str, Any] | None
    min_probability: float | None = None
    min_vote_share: float | None = Field(
        default=None, description="The least share of the trees' votes every answer gets."
    )
    robust_to: int = Field(default=0, description="Retrained models every answer also holds for.")
    robustness: float | None = Field(
        default=None, description="The share of retrained models asked to still accept each answer."
    )
    robustness_words: str = Field(default="", description="That share in words.")
    regions: bool = False
    measure: str | None = Field(
        default=None,
        description="What 'smaller' means for the answers' cost, in words (the same measure "
        "for every method).",
    )
    elapsed_s: float
    results: list[RowResultOut]


class HealthOut(BaseModel):
    status: str
    methods: list[str]
    pending: int


class ErrorOut(BaseModel):
    error: str = Field(
        description="Kind of error (the library's exception class, or the HTTP reason)."
    )
    detail: str = Field(description="What was wrong and how to fix it.")
