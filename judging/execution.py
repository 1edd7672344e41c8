"""Executing one shard of a judge run: many calls in flight, judgments saved as they arrive.

A shard task is synchronous (django-tasks-db runs one task at a time per worker); inside
it an event loop keeps up to `run.concurrency` calls in flight through `llm.delivery`,
which hands replies back to the task's own thread in batches every `FLUSH_SECONDS`
(keeping SQLite correct and PostgreSQL cheap). A heartbeat marks the shard alive and
notices a cancel.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings

from curation.models import Item
from judging.models import Answer, JudgeMode, JudgeRun, JudgeShard, JudgeTemplate, Judgment
from judging.prompts import chat_messages, criteria_for_template, fill, intent_label, suspicious_flags
from judging.services import (
    item_template_name,
    judgment_fields_from_reply,
    run_template_family,
    shard_claim,
    shard_finish,
    shard_heartbeat,
)
from llm.client import ChatRequest, ChatResult, EndpointConfig, LLMCallError, endpoint_config
from llm.delivery import deliver_batched_sync

FLUSH_SECONDS = 0.25


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def endpoint_for_run(run: JudgeRun) -> EndpointConfig:
    return endpoint_config(run.endpoint.name if run.endpoint_id else None)


def build_prompt(
    run: JudgeRun, template: JudgeTemplate | None, item: Item, answer: str, reference_answer: str, order: int
) -> tuple[str, str]:
    """The judge prompt for one unit and the side ("model_1"/"model_2") the candidate sits on."""
    text = template.text if template else ""
    # `{instruction}` is ChineseAlpacaEval's name for the question.
    values = {
        "question": item.question,
        "instruction": item.question,
        "category": item.category,
        "intent": intent_label(item.intent, template.language if template else item.language),
    }
    if run.mode == JudgeMode.PAIRWISE:
        first, second = (answer, reference_answer) if order == 0 else (reference_answer, answer)
        side = "model_1" if order == 0 else "model_2"
        return fill(text, {**values, "output_1": first, "output_2": second}), side
    # A pointwise run with a reference model uses that model's answers as the 8-point references
    # (the cross-validation of URS 4.4); otherwise the dataset's curated reference.
    values["reference"] = reference_answer if run.reference_model_id else item.reference
    values["answer"] = answer
    return fill(text, values), ""


@dataclass(frozen=True)
class Unit:
    item_id: int
    model_id: int
    order: int
    template_id: int | None
    prompt: str
    template_text: str
    side: str
    answer: str
    criteria: tuple[str, ...]
    flags: tuple[str, ...]


def shard_plan(shard: JudgeShard) -> list[Unit]:
    """What the shard still has to send: its units without a judgment. Failed calls are retried."""
    run = shard.run
    units = [tuple(unit) for unit in shard.units]
    item_ids = {unit[0] for unit in units}
    # A failed call has no reply worth keeping: drop it so it is sent again.
    run.judgments.filter(item_id__in=item_ids).exclude(call_error="").delete()
    done = set(run.judgments.filter(item_id__in=item_ids).values_list("item_id", "model_id", "order"))
    todo = [unit for unit in units if unit not in done]
    if not todo:
        return []
    items = Item.objects.in_bulk({unit[0] for unit in todo})
    model_ids = {unit[1] for unit in todo} | ({run.reference_model_id} if run.reference_model_id else set())
    answers = {
        (a["item_id"], a["model_id"]): a["text"]
        for a in Answer.objects.filter(item_id__in=items.keys(), model_id__in=model_ids).values(
            "item_id", "model_id", "text"
        )
    }
    templates = {t.name: t for t in run.templates.all()}
    family = run_template_family(run, templates.values())
    plan = []
    for item_id, model_id, order in todo:
        item = items[item_id]
        template = templates.get(item_template_name(run, item, family))
        answer = answers.get((item_id, model_id), "")
        reference_answer = answers.get((item_id, run.reference_model_id), "") if run.reference_model_id else ""
        prompt, side = build_prompt(run, template, item, answer, reference_answer, order)
        plan.append(
            Unit(
                item_id=item_id,
                model_id=model_id,
                order=order,
                template_id=template.pk if template else None,
                prompt=prompt,
                template_text=template.text if template else "",
                side=side,
                answer=answer,
                criteria=tuple(criteria_for_template(template.name)) if template else (),
                flags=tuple(suspicious_flags(answer)),
            )
        )
    return plan


def _judgment(run: JudgeRun, unit: Unit, outcome: ChatResult | LLMCallError) -> Judgment:
    base = dict(
        run_id=run.pk,
        item_id=unit.item_id,
        model_id=unit.model_id,
        order=unit.order,
        template_id=unit.template_id,
        flags=list(unit.flags),
    )
    if isinstance(outcome, LLMCallError):
        return Judgment(**base, call_error=outcome.reason[:300])
    fields = judgment_fields_from_reply(
        mode=run.mode,
        text=outcome.text,
        candidate_side=unit.side,
        criteria=list(unit.criteria),
        template=unit.template_text,
        answer=unit.answer,
    )
    return Judgment(
        **base,
        **fields,
        raw_text=outcome.text,
        prompt_tokens=outcome.prompt_tokens,
        completion_tokens=outcome.completion_tokens,
        latency_ms=outcome.latency_ms,
        cached=outcome.cached,
        reported_model=outcome.model,
    )


def _save(judgments: list[Judgment]) -> None:
    # ignore_conflicts: the unique (run, item, model, order) constraint makes a duplicate a no-op.
    Judgment.objects.bulk_create(judgments, ignore_conflicts=True, batch_size=500)


def _execute(
    shard_id: int, run: JudgeRun, plan: list[Unit], endpoint: EndpointConfig, on_progress: Callable[[], None] | None
) -> str:
    requests = [
        ChatRequest(
            model=run.judge_model,
            messages=chat_messages(unit.prompt, system_prompt=run.system_prompt),
            temperature=run.temperature,
            max_tokens=run.max_tokens,
        )
        for unit in plan
    ]

    def save(batch) -> None:
        # On the database thread: replies are parsed here, off the event loop.
        _save([_judgment(run, plan[index], outcome) for index, outcome in batch])
        if on_progress is not None:
            on_progress()

    def tick(delivered: int) -> bool:
        in_flight = min(run.concurrency, len(plan) - delivered)
        return shard_heartbeat(shard_id=shard_id, in_flight=in_flight) == JudgeRun.Status.CANCELLED

    cancelled = deliver_batched_sync(
        endpoint,
        requests,
        save=save,
        in_flight=run.concurrency,
        flush_seconds=FLUSH_SECONDS,
        tick=tick,
        tick_seconds=float(settings.JUDGING_HEARTBEAT_SECONDS),
        use_cache=not run.fresh_calls,
    )
    return JudgeShard.Status.CANCELLED if cancelled else JudgeShard.Status.DONE


def shard_execute(*, shard_id: int, worker_id: str | None = None, on_progress: Callable[[], None] | None = None) -> str:
    """Claim the shard and send what it still misses; returns the shard's final status,
    or "skipped" when another worker holds it or it is finished."""
    if not shard_claim(shard_id=shard_id, worker_id=worker_id or worker_name()):
        return "skipped"
    shard = JudgeShard.objects.select_related("run__dataset", "run__endpoint").get(pk=shard_id)
    try:
        plan = shard_plan(shard)
        endpoint = endpoint_for_run(shard.run)
        status = _execute(shard_id, shard.run, plan, endpoint, on_progress) if plan else JudgeShard.Status.DONE
    except KeyboardInterrupt:
        # Ctrl-C in `judge --inline`: free the shard at once so `judge_resume` need not wait for staleness.
        shard_finish(shard_id=shard_id, status=JudgeShard.Status.FAILED, error="interrupted")
        raise
    except Exception as error:
        shard_finish(shard_id=shard_id, status=JudgeShard.Status.FAILED, error=f"{type(error).__name__}: {error}")
        raise
    shard_finish(shard_id=shard_id, status=status)
    return status


def run_execute_inline(*, run: JudgeRun, on_progress: Callable[[], None] | None = None) -> None:
    """Run every queued shard of a run in this process, one after another (`judge --inline`)."""
    for shard_id in list(run.shards.filter(status=JudgeShard.Status.QUEUED).values_list("pk", flat=True)):
        if JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.Status.CANCELLED).exists():
            return
        shard_execute(shard_id=shard_id, on_progress=on_progress)
