"""A judge run's parameters as one frozen value, checked once when it is made.

The page (`/runs/new/`), the API (`POST /api/runs/`), `judge`, `rerun` and `reproduce` each
build a `RunSpec` and hand it to `run_plan` (judging/runs/planning.py) or `run_create`
(judging/runs/creation.py). Every parameter a server or the database would refuse is refused
here, with one message per mistake; what needs the database (answers, items, templates) is
checked by the plan.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from django.conf import settings
from django.utils.translation import gettext as _

from core.archiving import refuse_if_archived
from core.import_checks import unstorable
from curation.models import Dataset
from judging.errors import RunError
from judging.models import AnswerSet, CandidateModel, JudgeMode, JudgeTemplate
from judging.prompts.templates import template_set_check
from llm.config import default_endpoint_limits, max_tokens_problem
from llm.errors import EndpointError
from llm.models import Endpoint
from llm.window import in_flight_resolve

# A shard is what a worker claims, heartbeats and gives back, not a unit of waiting (calls flow
# on across shards): small shards let the workers sharing a run finish together.
DEFAULT_SHARD_SIZE = 200
# A judge's temperature as OpenAI-compatible servers accept it, and the longest system prompt taken.
TEMPERATURE_RANGE = (0.0, 2.0)
MAX_SYSTEM_PROMPT_CHARS = 20_000
# The largest concurrency a run records (a small integer column).
MAX_CONCURRENCY = 32767
# A judge's max_tokens per reply: the one range the page's form, the API and the commands take.
MAX_TOKENS_RANGE = (1, 1_000_000)


@dataclass(frozen=True)
class RunSpec:
    """What a researcher asks of a judge run, before anything is counted or written.

    Pairwise runs judge each candidate against `reference_model` on every item both answered,
    the side randomised per item with `seed` (a new one when None, recorded), or both sides with
    `both_orders`. Pointwise runs take the dataset's template set unless `template_set` names
    another (e.g. `urs-code`); a pointwise `reference_model` replaces the dataset's references.
    `templates`: the exact versions to judge with (a re-run); None takes the newest of each name.
    `concurrency` is the run's total of calls in flight across all workers: a number, "auto"
    (the window finds the server's capacity), or None (the endpoint's stated limit, else auto).
    `temperature` None sends none (the server's default); `max_tokens` None takes the
    endpoint's, else judging's default; `timeout_seconds` None the endpoint's. `system_prompt`
    is sent before each judge prompt when set. `judge_provider` and `judge_family` say where the
    judge comes from (self-preference diagnostic). `injection_probe` also judges the probe's
    constant adversarial answers (judging/answers/probe.py), reported apart and never ranked.
    `exclude_missing_references`: leave out the items a `{reference}` template would judge
    against an empty reference (recorded in the manifest); without it such items refuse the run.
    `include_cut_off`: judge answers cut off at max_tokens too (left out by default; recorded in
    the manifest).
    `batch`: send the calls through the provider's Batch API (judging/engine/batch.py).
    Made with a parameter a run cannot take, it raises RunError naming it (`parameter`)."""

    dataset: Dataset
    mode: str
    judge_model: str
    candidates: tuple[CandidateModel, ...]
    reference_model: CandidateModel | None = None
    endpoint: Endpoint | None = None
    concurrency: int | str | None = None
    both_orders: bool = False
    seed: int | None = None
    shard_size: int = DEFAULT_SHARD_SIZE
    temperature: float | None = 0.0
    max_tokens: int | None = None
    timeout_seconds: float | None = None
    system_prompt: str = ""
    template_set: str | None = None
    templates: tuple[JudgeTemplate, ...] | None = None
    judge_provider: str = ""
    judge_family: str = ""
    injection_probe: bool = False
    exclude_missing_references: bool = False
    include_cut_off: bool = False
    batch: bool = False
    # The exact answer versions to judge (a re-run); None takes each model's current one.
    answer_sets: tuple[AnswerSet, ...] | None = None

    def __post_init__(self):
        # Lists are taken as given and kept as tuples: the spec stays hashable and unchanged.
        object.__setattr__(self, "candidates", tuple(self.candidates))
        if self.templates is not None:
            object.__setattr__(self, "templates", tuple(self.templates))
        run_spec_check(self)


def run_spec_from(values: Mapping[str, Any], **given: Any) -> RunSpec:
    """A RunSpec from a form's cleaned data: every RunSpec field `values` holds (anything else,
    such as a button's name, is left out), with `given` over them. The page builds its spec this
    way, so a field added to RunSpec and to the form reaches the run without a third list."""
    names = {field.name for field in fields(RunSpec)}
    return RunSpec(**{**{key: value for key, value in values.items() if key in names}, **given})


def run_spec_values(spec: RunSpec) -> dict[str, Any]:
    """Every field of the spec by name (model rows kept as they are)."""
    return {field.name: getattr(spec, field.name) for field in fields(spec)}


def run_spec_check(spec: RunSpec) -> None:
    """Refuse the first parameter a run cannot take (RunError naming it in `parameter`; an
    archived dataset, ArchivedError)."""
    refuse_if_archived(spec.dataset)
    if spec.mode not in JudgeMode.values:
        raise RunError(
            _("Unknown mode %(mode)s; use pointwise or pairwise.") % {"mode": repr(spec.mode)}, parameter="mode"
        )
    if not spec.judge_model:
        raise RunError(_("Name the judge model."), parameter="judge_model")
    temperature_check(spec.temperature)
    max_tokens_check(spec.max_tokens)
    system_prompt_check(spec.system_prompt)
    concurrency_check(spec.concurrency)
    timeout_check(spec.timeout_seconds)
    if spec.shard_size < 1:
        raise RunError(_("Shard size must be at least 1."), parameter="shard_size")
    if spec.mode == JudgeMode.PAIRWISE and spec.reference_model is None:
        raise RunError(_("A pairwise run needs a reference model."), parameter="reference_model")
    if not spec.candidates:
        raise RunError(_("Name at least one candidate model."), parameter="candidates")
    if all(candidate.is_probe for candidate in spec.candidates):
        raise RunError(_("Name at least one candidate model besides the probe's."), parameter="candidates")
    if spec.template_set is not None:
        template_set_check(spec.template_set)
    if spec.endpoint is not None and spec.endpoint.workspace_id != spec.dataset.workspace_id:
        # Another workspace's endpoint is unknown to this run, whoever asks: named as given, nothing more.
        raise RunError(_("Unknown endpoint %(name)s.") % {"name": repr(spec.endpoint.name)}, parameter="endpoint")
    # The same for models and templates handed over as objects (by code, not only by the pages,
    # which look names up in the dataset's workspace): a built-in template (no workspace) is everyone's.
    models = [("candidates", model) for model in spec.candidates]
    for parameter, model in [*models, *([("reference_model", spec.reference_model)] if spec.reference_model else [])]:
        if model.workspace_id != spec.dataset.workspace_id:
            raise RunError(_("Unknown candidate model %(name)s.") % {"name": repr(model.name)}, parameter=parameter)
    for template in spec.templates or ():
        if template.workspace_id not in (None, spec.dataset.workspace_id):
            raise RunError(_("Unknown judge template %(name)s.") % {"name": repr(template.name)}, parameter="templates")


def temperature_check(temperature: float | None) -> None:
    """None sends no temperature (the server's default)."""
    low, high = TEMPERATURE_RANGE
    if temperature is not None and not low <= temperature <= high:
        raise RunError(
            _("The temperature must be between %(low)s and %(high)s, or unset to send none; got %(value)s.")
            % {"low": f"{low:g}", "high": f"{high:g}", "value": repr(temperature)},
            parameter="temperature",
        )


def max_tokens_check(max_tokens: int | None) -> None:
    """None sends the endpoint's max_tokens, else judging's default."""
    if problem := max_tokens_problem(max_tokens):
        raise RunError(problem, parameter="max_tokens")
    if max_tokens is not None and max_tokens > MAX_TOKENS_RANGE[1]:
        raise RunError(
            _("Max tokens must be at most %(limit)s; got %(value)s.")
            % {"limit": f"{MAX_TOKENS_RANGE[1]:,}", "value": f"{max_tokens:,}"},
            parameter="max_tokens",
        )


def timeout_check(timeout_seconds: float | None) -> None:
    """None keeps the endpoint's timeout."""
    if timeout_seconds is not None and timeout_seconds <= 0:
        raise RunError(_("The timeout must be more than 0 seconds."), parameter="timeout_seconds")


def system_prompt_check(system_prompt: str) -> None:
    if len(system_prompt) > MAX_SYSTEM_PROMPT_CHARS:
        raise RunError(
            _("The system prompt is %(length)s characters; the limit is %(limit)s.")
            % {"length": f"{len(system_prompt):,}", "limit": f"{MAX_SYSTEM_PROMPT_CHARS:,}"},
            parameter="system_prompt",
        )
    match = unstorable(system_prompt)
    if match is not None:
        raise RunError(
            _(
                "The system prompt holds a character a database cannot store (NUL or a lone surrogate) "
                "at character %(position)s."
            )
            % {"position": match.start() + 1},
            parameter="system_prompt",
        )


def concurrency_check(concurrency: int | str | None) -> int | None:
    """A number of calls in flight (returned), "auto" or None (None returned)."""
    if concurrency is None or concurrency == "auto":
        return None
    try:
        limit = int(concurrency)
    except (TypeError, ValueError):
        raise RunError(
            _("Concurrency must be a whole number or auto, not %(value)s.") % {"value": repr(concurrency)},
            parameter="concurrency",
        ) from None
    if limit < 1:
        raise RunError(_("Concurrency must be at least 1."), parameter="concurrency")
    if limit > MAX_CONCURRENCY:
        raise RunError(
            _("Concurrency must be at most %(limit)s.") % {"limit": MAX_CONCURRENCY}, parameter="concurrency"
        )
    return limit


def concurrency_resolve(concurrency: int | str | None, *, endpoint: Endpoint | None = None) -> tuple[int, bool]:
    """(calls in flight across the run, auto?) from a number, "auto", or None (the endpoint's
    stated limit, else auto; no endpoint: OPENAI_MAX_IN_FLIGHT, else auto). Auto runs are
    bounded by LLM_AUTO_MAX_IN_FLIGHT. The one place a run's "auto" is decided: the run records
    the answer, and its workers' windows read it from the run."""
    limit = concurrency_check(concurrency)
    stated = None
    if concurrency is None:
        if endpoint is not None:
            stated = endpoint.max_in_flight
        else:
            try:
                stated = default_endpoint_limits().get("max_in_flight")
            except EndpointError:
                stated = None  # the run cannot call anyway; it says so when it starts
    return in_flight_resolve(
        limit if limit is not None else concurrency,
        stated=int(stated) if stated else None,
        auto_ceiling=int(settings.LLM_AUTO_MAX_IN_FLIGHT),
    )
