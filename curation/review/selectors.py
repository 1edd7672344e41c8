"""Reads for the review queues and item and case histories."""

from collections.abc import Mapping
from typing import Any, cast

from django.contrib.auth.models import User
from django.db.models import Count, OuterRef, Q, Subquery
from django.utils import timezone

from core.models import Workspace
from core.workspaces import workspace_ids
from curation.models import (
    Case,
    CurationJob,
    DifficultyScore,
    Item,
    ReferenceDraft,
    ReviewEvent,
    ReviewQueue,
    ReviewTask,
    StepStatus,
)

# How many items the queues page lists under "drafting again"; the count covers them all.
REDRAFTS_LISTED = 50


def queue_progress(*, reviewer: User) -> list[dict]:
    """Per queue: waiting (free for this reviewer), leased by others, leased to this
    reviewer, waiting for a new draft, done, total, and the percentage done."""
    now = timezone.now()
    free = Q(leased_to__isnull=True) | Q(lease_expires_at__lt=now)
    own = ReviewTask.objects.own_material(reviewer)
    rows = {
        row["queue"]: row
        for row in ReviewTask.objects.in_workspaces_of(reviewer)
        .values("queue")
        .annotate(
            waiting=Count("id", filter=Q(status=ReviewTask.Status.OPEN) & free & ~own),
            own_material=Count("id", filter=Q(status=ReviewTask.Status.OPEN) & own),
            leased_by_others=Count(
                "id", filter=Q(status=ReviewTask.Status.OPEN, lease_expires_at__gte=now) & ~Q(leased_to=reviewer)
            ),
            mine=Count("id", filter=Q(status=ReviewTask.Status.OPEN, leased_to=reviewer)),
            regenerating=Count("id", filter=Q(status=ReviewTask.Status.WAITING)),
            done=Count("id", filter=Q(status=ReviewTask.Status.DONE)),
            total=Count("id"),
        )
    }
    result = []
    for queue in ReviewQueue:
        row: Mapping[str, Any] = rows.get(queue.value, {})
        total = row.get("total", 0)
        done = row.get("done", 0)
        result.append(
            {
                "queue": queue.value,
                "label": queue.label,
                "waiting": row.get("waiting", 0),
                "leased_by_others": row.get("leased_by_others", 0),
                "mine": row.get("mine", 0),
                "regenerating": row.get("regenerating", 0),
                "done": done,
                "total": total,
                "percent": round(100 * done / total) if total else 0,
            }
        )
    return result


def task_for_reviewer(*, task_id: int, reviewer: User) -> ReviewTask | None:
    """A task leased to this reviewer, with what its page shows; None if it is not theirs."""
    return (
        ReviewTask.objects.filter(pk=task_id, leased_to=reviewer, status=ReviewTask.Status.OPEN)
        .select_related("case__submission", "case__curation", "item__dataset", "item__source_case")
        .first()
    )


def item_history(*, item: Item) -> list[ReviewEvent]:
    """Every event of an item and of the case it came from, oldest first."""
    filters = Q(item=item)
    if item.source_case_id:
        filters |= Q(case_id=item.source_case_id)
    working = item.metadata.get("working_item") if isinstance(item.metadata, dict) else None
    if working:
        filters |= Q(item_id=working)
    return list(ReviewEvent.objects.filter(filters).select_related("actor").order_by("created_at", "id"))


def case_history(*, case: Case) -> list[ReviewEvent]:
    """Every event of a case, oldest first."""
    return list(ReviewEvent.objects.filter(case=case).select_related("actor").order_by("created_at", "id"))


def item_with_context(*, item_id: int, user=None) -> Item | None:
    """The item with its drafts and translations; with a `user`, only if its dataset is in a
    workspace where they review or research."""
    items = Item.objects.all() if user is None else Item.objects.filter(dataset__workspace_id__in=_history_places(user))
    return (
        items.filter(pk=item_id)
        .select_related("dataset", "source_case__submission", "source_case__curation")
        .prefetch_related("reference_drafts", "translations")
        .first()
    )


def item_difficulty(*, item: Item) -> list[DifficultyScore]:
    return list(DifficultyScore.objects.filter(item=item).select_related("filter"))


def _redraft_state(status: str, job_status: str, attempts: int) -> str:
    """pending (not sent yet), retrying (a call failed, more attempts to come), failed, or done."""
    if status == StepStatus.FAILED or (status == StepStatus.PENDING and job_status == CurationJob.Status.FAILED):
        return "failed"
    if status == StepStatus.PENDING:
        return "retrying" if attempts else "pending"
    return "done"


def latest_draft_attempt(*, item: Item) -> dict | None:
    """The item's newest reference draft, whatever its state, as {"state", "attempts", "error",
    "model"}: "failed" when it (or its job) failed for good, so a page can say why."""
    draft = item.reference_drafts.select_related("job").order_by("-id").first()
    if draft is None:
        return None
    return {
        "state": _redraft_state(draft.status, draft.job.status, draft.attempts),
        "attempts": draft.attempts,
        "error": draft.error or (draft.job.last_error if draft.job.status == CurationJob.Status.FAILED else ""),
        "model": draft.job.model,
    }


def reference_redrafts(*, limit: int = REDRAFTS_LISTED) -> dict:
    """Items sent back with "draft again": those waiting for the new draft, and those whose new
    draft failed and that are back in the queue. {"count", "rows": [{"item_id", "external_id",
    "question", "state", "attempts", "error"}]}, oldest request first, at most `limit` rows."""
    latest = ReferenceDraft.objects.filter(item=OuterRef("item_id")).order_by("-id")
    tasks = (
        ReviewTask.objects.filter(queue=ReviewQueue.REFERENCE, item__isnull=False)
        .annotate(
            draft_status=Subquery(latest.values("status")[:1]),
            draft_attempts=Subquery(latest.values("attempts")[:1]),
            draft_error=Subquery(latest.values("error")[:1]),
            job_status=Subquery(latest.values("job__status")[:1]),
            job_error=Subquery(latest.values("job__last_error")[:1]),
        )
        .filter(
            Q(status=ReviewTask.Status.WAITING)
            | Q(status=ReviewTask.Status.OPEN, draft_status=StepStatus.FAILED)
            | Q(status=ReviewTask.Status.OPEN, draft_status=StepStatus.PENDING, job_status=CurationJob.Status.FAILED)
        )
        .order_by("decided_at", "id")
    )
    listed = list(tasks.select_related("item")[:limit])
    rows = []
    for task in listed:
        item = cast(Item, task.item)  # filtered on item__isnull=False
        state = _redraft_state(task.draft_status, task.job_status, task.draft_attempts or 0)
        rows.append(
            {
                "item_id": task.item_id,
                "external_id": item.external_id,
                "question": item.question,
                "state": state,
                "attempts": task.draft_attempts or 0,
                "error": task.draft_error or (task.job_error if task.job_status == CurationJob.Status.FAILED else ""),
            }
        )
    # One query unless the list is cut short.
    return {"count": tasks.count() if len(listed) == limit else len(listed), "rows": rows}


def _history_places(user):
    """Workspaces whose histories the person reads: where they review or research (a subquery of
    ids; every workspace for a superuser)."""
    reviewing, researching = workspace_ids(user, "reviewer"), workspace_ids(user, "researcher")
    if reviewing is None or researching is None:
        return Workspace.objects.values("pk")
    return Workspace.objects.filter(pk__in=reviewing | researching).values("pk")


def case_with_context(*, case_id: int, user) -> Case | None:
    """The case with its submission and findings, if its study is in a workspace where the person
    reviews or researches."""
    return (
        Case.objects.filter(pk=case_id, submission__study__workspace_id__in=_history_places(user))
        .select_related("submission", "curation")
        .first()
    )
