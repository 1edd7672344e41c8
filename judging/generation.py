"""Generating candidate answers from an endpoint (`generate`), temperature by category.

Answers are saved as they arrive, so an interrupted generation resumes where it stopped:
items that already have an answer from the model are skipped, and the response cache
makes a re-sent identical prompt free. A reply cut off by max_tokens is never stored as an
answer: it is counted, and sent again (with a larger --max-tokens) next time.
"""

from __future__ import annotations

from collections.abc import Callable

from curation.models import Dataset
from judging.models import Answer, CandidateModel
from judging.prompts import ALIGNBENCH_TEMPERATURE
from llm.client import CallKind, ChatRequest, EndpointConfig, LLMCallError, max_tokens_for, window_for
from llm.delivery import deliver_batched_sync

DEFAULT_TEMPERATURE = 0.7


def generation_temperature(category: str, default: float = DEFAULT_TEMPERATURE) -> float:
    """AlignBench's reply temperature for the category (0.1 for fixed answers, 0.7 for creative)."""
    return ALIGNBENCH_TEMPERATURE.get(category, default)


def answers_generate(
    *,
    dataset: Dataset,
    model_name: str,
    endpoint: EndpointConfig,
    concurrency: int | str | None = None,
    max_tokens: int | None = None,
    default_temperature: float = DEFAULT_TEMPERATURE,
    on_progress: Callable[[dict], None] | None = None,
    interruptible: bool = False,
) -> dict:
    """Answer every item of the dataset that `model_name` has not answered yet.

    Returns {"total", "generated", "failed", "cut_off", "skipped", "errors", "interrupted",
    "stopped"}: failures and cut-off replies keep their reasons in "errors"; "interrupted" is
    True after Ctrl-C (what came back is saved); "stopped" names the error that stopped the
    calls when every call failed the same way. `on_progress(counts)` is called as batches are
    saved. `concurrency`: calls in flight, "auto", or None (the endpoint's limit, else auto)."""
    model, _ = CandidateModel.objects.get_or_create(name=model_name)
    answered = set(Answer.objects.filter(item__dataset=dataset, model=model).values_list("item_id", flat=True))
    items = [item for item in dataset.items.order_by("id") if item.pk not in answered]
    limit = max_tokens_for(CallKind.GENERATION, endpoint=endpoint, override=max_tokens)
    requests = [
        ChatRequest(
            model=model_name,
            messages=(("user", item.question),),
            temperature=generation_temperature(item.category, default_temperature),
            max_tokens=limit,
        )
        for item in items
    ]
    counts = {
        "total": len(items),
        "generated": 0,
        "failed": 0,
        "cut_off": 0,
        "skipped": len(answered),
        "errors": [],
        "interrupted": False,
        "stopped": "",
    }

    def save(batch) -> None:
        answers = []
        for index, outcome in batch:
            if isinstance(outcome, LLMCallError):
                counts["failed"] += 1
                counts["errors"].append(f"{items[index].external_id}: {outcome.reason}")
                continue
            if outcome.cut_off:
                counts["cut_off"] += 1
                counts["errors"].append(f"{items[index].external_id}: cut off at max_tokens ({limit})")
                continue
            request = requests[index]
            answers.append(
                Answer(
                    item=items[index],
                    model=model,
                    text=outcome.text,
                    origin=Answer.Origin.GENERATED,
                    parameters={
                        "temperature": request.temperature,
                        "max_tokens": request.max_tokens,
                        "endpoint": endpoint.name,
                        "cached": outcome.cached,
                        "reported_model": outcome.model,
                    },
                    prompt_tokens=outcome.prompt_tokens,
                    completion_tokens=outcome.completion_tokens,
                    latency_ms=outcome.latency_ms,
                )
            )
        Answer.objects.bulk_create(answers, ignore_conflicts=True)
        counts["generated"] += len(answers)
        if on_progress is not None:
            on_progress(counts)

    delivered = deliver_batched_sync(
        endpoint, requests, save=save, window=window_for(endpoint, concurrency), interruptible=interruptible
    )
    counts["interrupted"] = delivered.stopped == "signal"
    counts["stopped"] = str(delivered.unusable) if delivered.unusable else ""
    return counts
