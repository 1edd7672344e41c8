"""An LLM step's results into the review queues: a finished reference draft or translation is
kept, recorded as a review event and its item's task opened (reopened after a regeneration);
a redraft that could not be had sends its item back to the reference queue. Called per result by
curation/datasets/llm_steps.py, so a crash loses at most the calls in flight."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from curation.events import review_event_record
from curation.models import Item, ReferenceDraft, ReviewEvent, ReviewQueue, ReviewTask, StepStatus, Translation


def reference_draft_store(
    *, draft: ReferenceDraft, text: str, prompt_tokens: int | None = None, completion_tokens: int | None = None
) -> None:
    """Keep a finished draft and put its item in the reference queue (reopening it after a
    regeneration). Called per result, so a crash loses at most the calls in flight."""
    with transaction.atomic():
        draft.text = text
        draft.status = StepStatus.DONE
        draft.error = ""
        draft.prompt_tokens = prompt_tokens
        draft.completion_tokens = completion_tokens
        draft.finished_at = timezone.now()
        draft.save()
        item = draft.item
        review_event_record(
            action=ReviewEvent.Action.DRAFTED,
            item=item,
            queue=ReviewQueue.REFERENCE,
            after={"draft": text, "model": draft.job.model},
        )
        _task_open(queue=ReviewQueue.REFERENCE, item=item)


def reference_redraft_failed(*, item: Item) -> bool:
    """A new draft asked for with "draft again" could not be had: the item goes back to the
    reference queue (its page shows why) instead of waiting for ever. False when no task waited."""
    return bool(
        ReviewTask.objects.filter(queue=ReviewQueue.REFERENCE, item=item, status=ReviewTask.Status.WAITING).update(
            status=ReviewTask.Status.OPEN, decision=""
        )
    )


def translation_store(*, translation: Translation) -> None:
    """Record a translation whose two steps are done and queue it for calibration."""
    with transaction.atomic():
        translation.status = StepStatus.DONE
        translation.error = ""
        translation.finished_at = timezone.now()
        translation.save()
        review_event_record(
            action=ReviewEvent.Action.TRANSLATED,
            item=translation.item,
            queue=ReviewQueue.TRANSLATION,
            after={"translation": translation.translation, "localised": translation.localised},
        )
        _task_open(queue=ReviewQueue.TRANSLATION, item=translation.item)


def _task_open(*, queue: str, item: Item) -> None:
    task, created = ReviewTask.objects.select_for_update().get_or_create(
        queue=queue, item=item, defaults={"author_id": item.created_by_id}
    )
    if not created and task.status != ReviewTask.Status.OPEN:
        task.status = ReviewTask.Status.OPEN
        task.decision = ""
        task.save(update_fields=["status", "decision"])
