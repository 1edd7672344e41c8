"""Generating candidate answers from an endpoint (`generate`), with each benchmark's parameters.

Without a preset, the temperature follows the item's category (AlignBench's table) and is 0.7
otherwise. A preset asks the models the way a benchmark's authors did (GENERATION_PRESETS), and
is recorded on every answer it made. Answers are saved as they arrive, so an interrupted
generation resumes where it stopped: items that already have an answer from the model are
skipped, and the response cache makes a re-sent identical prompt free. A reply cut off by max_tokens is
counted and kept, marked `cut_off`: never taken for a complete answer (runs leave it out unless
asked), and asked for again next time (with a larger --max-tokens), the new reply taking its place.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Q

from core.errors import UserbenchError
from core.workspaces import in_workspace
from curation.models import Dataset
from judging.answers.versions import answers_new_version
from judging.benchmarks.registry import DEFAULT_TEMPERATURE, GenerationPreset, generation_presets
from judging.models import Answer, AnswerSet, CandidateModel
from judging.prompts.building import ALIGNBENCH_TEMPERATURE, chat_messages
from judging.prompts.estimate import cost_estimate, text_language, tokens_estimate
from llm.calls import ChatRequest
from llm.config import CallKind, EndpointConfig, max_tokens_for
from llm.delivery import deliver_chunked_sync
from llm.errors import LLMCallError
from llm.stream import window_for

# An answer's length for the estimate shown before a generation starts, when max_tokens allows it.
TYPICAL_ANSWER_TOKENS = 500


class GenerationError(UserbenchError):
    """Generation that cannot start as asked; nothing was sent."""


def generation_temperature(category: str, default: float = DEFAULT_TEMPERATURE) -> float:
    """AlignBench's reply temperature for the category (0.1 for fixed answers, 0.7 for creative)."""
    return ALIGNBENCH_TEMPERATURE.get(category, default)


class _Presets(Mapping[str, GenerationPreset]):
    """{name: preset}: each benchmark's (judging/benchmarks/), read from the registry when asked."""

    def __getitem__(self, name: str) -> GenerationPreset:
        return generation_presets()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(generation_presets())

    def __len__(self) -> int:
        return len(generation_presets())


GENERATION_PRESETS: Mapping[str, GenerationPreset] = _Presets()


def generation_preset(name: str | None, *, default_temperature: float = DEFAULT_TEMPERATURE) -> GenerationPreset:
    """The preset of that name, or without one: temperature by category, `default_temperature`
    otherwise, no system prompt. An unknown name raises GenerationError."""
    if not name:
        return GenerationPreset(
            name="", source="", temperature=default_temperature, temperatures=ALIGNBENCH_TEMPERATURE
        )
    if name not in GENERATION_PRESETS:
        raise GenerationError(f"Unknown generation preset {name!r}; choose among {', '.join(GENERATION_PRESETS)}.")
    return GENERATION_PRESETS[name]


def _unanswered(dataset: Dataset, model_name: str) -> tuple[list, int]:
    """The dataset's items `model_name` has no complete answer to yet (a cut-off one is asked for
    again), in order, and how many it has."""
    answered = set(
        Answer.objects.filter(item__dataset=dataset, model__name=model_name, cut_off=False).values_list(
            "item_id", flat=True
        )
    )
    return [item for item in dataset.items.order_by("id") if item.pk not in answered], len(answered)


@dataclass(frozen=True)
class GenerationPlan:
    """What a generation would send, computed before anything is sent: the calls (one per item
    the model has not answered), the items already answered, and the tokens estimated."""

    calls: int
    answered: int
    prompt_tokens: int
    completion_tokens: int
    max_tokens: int

    def cost(self, *, input_price, output_price):
        """The estimate priced per million tokens; None when the input price is unknown."""
        return cost_estimate(
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            input_price=input_price,
            output_price=output_price,
        )


def generation_plan(
    *, dataset: Dataset, model_name: str, endpoint: EndpointConfig, preset: str | None = None, max_tokens=None
) -> GenerationPlan:
    """The calls `answers_generate` would make with these settings and their tokens, estimated the
    way a judge run's are (judging/prompts/estimate.py). An unknown preset raises GenerationError."""
    chosen = generation_preset(preset)
    limit = max_tokens_for(
        CallKind.GENERATION, endpoint=endpoint, override=max_tokens if max_tokens is not None else chosen.max_tokens
    )
    items, answered = _unanswered(dataset, model_name)
    system = tokens_estimate(len(chosen.system_prompt), text_language(chosen.system_prompt))
    prompt_tokens = sum(
        tokens_estimate(len(item.question), item.language) + (system if chosen.system_prompt else 0) for item in items
    )
    return GenerationPlan(
        calls=len(items),
        answered=answered,
        prompt_tokens=prompt_tokens,
        completion_tokens=len(items) * min(limit, TYPICAL_ANSWER_TOKENS),
        max_tokens=limit,
    )


def cut_off_text(count: int, max_tokens: int | None) -> str:
    """ "6 cut off at max_tokens 2048" ("0 cut off" when none), for progress lines and summaries."""
    return f"{count} cut off at max_tokens {max_tokens}" if count and max_tokens else f"{count} cut off"


def cut_off_way_on(count: int, max_tokens: int | None) -> str:
    """What happened to the cut-off answers and the way on, for the error after a generation."""
    return (
        f"{count} answer(s) were cut off at max_tokens{f' {max_tokens}' if max_tokens else ''}: they are kept, "
        "marked cut off, and runs leave them out; raise max_tokens (--max-tokens, or the generation form) to ask for them again, "
        "or judge them as they are (--include-cut-off, or the run form's “Include answers cut off at max_tokens”)"
    )


def generation_request(item, *, model_name: str, preset: GenerationPreset, max_tokens: int) -> ChatRequest:
    """The call asking `model_name` for its answer to one item, as the preset asks (live or batched)."""
    return ChatRequest(
        model=model_name,
        messages=chat_messages(item.question, system_prompt=preset.system_prompt),
        temperature=preset.temperature_for(item.category),
        max_tokens=max_tokens,
    )


def answers_save(*, model: CandidateModel, preset: GenerationPreset, endpoint_name: str, outcomes, counts: dict) -> int:
    """Store the answers among `outcomes` ((item, request, outcome) each) with the parameters
    they were asked with; a reply cut off by max_tokens is kept too, marked `cut_off`, and
    counted in `counts["cut_off"]`; a failed call is counted in "failed" and kept nowhere (their
    reasons in "errors"). A new reply to an item whose current answer was cut off takes that
    answer's place, in a new version when a run or a campaign used the old one. Returns how many answers were kept. Live and batched generations alike."""
    # What each answer records besides its temperature and max_tokens: only what was set.
    recorded = {
        key: value for key, value in (("preset", preset.name), ("system_prompt", preset.system_prompt)) if value
    }
    answers = []
    for item, request, outcome in outcomes:
        if isinstance(outcome, LLMCallError):
            counts["failed"] += 1
            counts["errors"].append(f"{item.external_id}: {outcome.reason}")
            continue
        if outcome.cut_off:
            counts["cut_off"] += 1
            counts["cut_off_at"] = request.max_tokens
            counts["errors"].append(f"{item.external_id}: cut off at max_tokens ({request.max_tokens})")
        answers.append(
            Answer(
                item=item,
                model=model,
                text=outcome.text,
                origin=Answer.Origin.GENERATED,
                cut_off=bool(outcome.cut_off),
                parameters={
                    "temperature": request.temperature,
                    "max_tokens": request.max_tokens,
                    **recorded,
                    "endpoint": endpoint_name,
                    "cached": outcome.cached,
                    "reported_model": outcome.model,
                },
                prompt_tokens=outcome.prompt_tokens,
                completion_tokens=outcome.completion_tokens,
                latency_ms=outcome.latency_ms,
            )
        )
    _cut_off_replace(model, answers)
    Answer.objects.bulk_create([a for a in answers if a.pk is None], ignore_conflicts=True)
    return len(answers)


_REPLACED_FIELDS = ["text", "cut_off", "parameters", "prompt_tokens", "completion_tokens", "latency_ms"]


def _cut_off_replace(model: CandidateModel, answers: list) -> None:
    """Write the new replies to items whose current answer was cut off into those rows (their
    version has room for one answer per item), marking each new Answer saved (its pk set).

    A version that a run or a campaign already pinned is never written into: it may have judged
    or shown the cut-off text (`--include-cut-off`), and its pages, exports and re-runs must stay
    as they were. The replies then go into a new version, which keeps every other answer."""
    earlier = {
        answer.item_id: answer
        for answer in Answer.objects.filter(model=model, cut_off=True, item_id__in=[a.item_id for a in answers])
    }
    used = AnswerSet.objects.filter(pk__in={row.answer_set_id for row in earlier.values()}).filter(
        Q(runs__isnull=False) | Q(campaigns__isnull=False)
    )
    for answer_set in used.select_related("dataset", "model").distinct():
        _cut_off_new_version(answer_set, replaced={a.item_id for a in answers})
        earlier = {item_id: row for item_id, row in earlier.items() if row.answer_set_id != answer_set.pk}
    replaced = []
    for answer in answers:
        row = earlier.get(answer.item_id)
        if row is None:
            continue
        for name in _REPLACED_FIELDS:
            setattr(row, name, getattr(answer, name))
        answer.pk = row.pk
        replaced.append(row)
    if replaced:
        Answer.objects.bulk_update(replaced, _REPLACED_FIELDS)


@transaction.atomic
def _cut_off_new_version(answer_set: AnswerSet, *, replaced: set[int]) -> None:
    """Retire `answer_set` for a new current version holding a copy of each of its answers
    except those to the items in `replaced` (their new replies are added next)."""
    new, _old = answers_new_version(dataset=answer_set.dataset, model=answer_set.model)
    kept = Answer.all_versions.filter(answer_set=answer_set).exclude(item_id__in=replaced)
    copies = []
    for answer in kept:
        answer.pk = None
        answer.answer_set, answer.is_current = new, True
        copies.append(answer)
    Answer.all_versions.bulk_create(copies)


def answers_generate(
    *,
    dataset: Dataset,
    model_name: str,
    endpoint: EndpointConfig,
    concurrency: int | str | None = None,
    max_tokens: int | None = None,
    default_temperature: float = DEFAULT_TEMPERATURE,
    preset: str | None = None,
    on_progress: Callable[[dict], None] | None = None,
    interruptible: bool = False,
    should_stop: Callable[[], bool] | None = None,
) -> dict:
    """Answer every item of the dataset that `model_name` has not answered yet.

    `preset` names a benchmark's way of asking (GENERATION_PRESETS): its temperature (or none),
    system prompt and max_tokens; an explicit `max_tokens` wins over the preset's. Each answer
    records the parameters it was asked with, the preset's name among them.
    Returns {"total", "generated", "failed", "cut_off", "cut_off_at", "skipped", "errors",
    "interrupted", "stopped"}: "generated" counts the cut-off replies kept among them (stopped at
    max_tokens "cut_off_at"); failures and cut-off replies keep their reasons in "errors"; "interrupted" is
    True after Ctrl-C (what came back is saved); "stopped" names the error that stopped the
    calls when every call failed the same way. `on_progress(counts)` is called as chunks are
    saved. `concurrency`: calls in flight, "auto", or None (the endpoint's limit, else auto).
    `should_stop()` is asked about once a second: True stops the calls (a cancel from the page);
    what came back is saved, and "cancelled" is then True."""
    chosen = generation_preset(preset, default_temperature=default_temperature)
    max_tokens = max_tokens if max_tokens is not None else chosen.max_tokens
    # The model of this name in the dataset's workspace: another team's namesake is another model.
    model, _ = in_workspace(CandidateModel.objects.all(), dataset.workspace_id).get_or_create(
        name=model_name, defaults={"workspace_id": dataset.workspace_id}
    )
    items, answered = _unanswered(dataset, model_name)
    limit = max_tokens_for(CallKind.GENERATION, endpoint=endpoint, override=max_tokens)
    requests = [generation_request(item, model_name=model_name, preset=chosen, max_tokens=limit) for item in items]
    counts: dict[str, Any] = {
        "total": len(items),
        "generated": 0,
        "failed": 0,
        "cut_off": 0,
        # The max_tokens the cut-off replies were stopped at (the last one's), for the messages.
        "cut_off_at": limit,
        "skipped": answered,
        "errors": [],
        "interrupted": False,
        "cancelled": False,
        "stopped": "",
    }

    def save(chunk) -> None:
        kept = answers_save(
            model=model,
            preset=chosen,
            endpoint_name=endpoint.name,
            outcomes=[(items[index], requests[index], outcome) for index, outcome in chunk],
            counts=counts,
        )
        counts["generated"] += kept
        if on_progress is not None:
            on_progress(counts)

    options: dict[str, Any] = {}
    if should_stop is not None:
        options["tick"] = lambda _state: should_stop()
    delivered = deliver_chunked_sync(
        endpoint, requests, save=save, window=window_for(endpoint, concurrency), interruptible=interruptible, **options
    )
    counts["interrupted"] = delivered.stopped == "signal"
    counts["cancelled"] = delivered.stopped == "tick"
    counts["stopped"] = str(delivered.unusable) if delivered.unusable else ""
    return counts
