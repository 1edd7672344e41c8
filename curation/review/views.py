"""Reviewer pages: queues with leases, the three decision pages, and histories.

Thin: parse the request, call one service or selector, render. User text reaches templates
as plain strings and is escaped there; PII highlights are built from offsets, never as HTML.
"""

from typing import cast

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from core.roles import AuthenticatedHttpRequest
from curation.access import can_manage_studies, history_viewer_required, reviewer_required
from curation.models import Case, Item, ReviewQueue, ReviewTask, StepStatus, Submission
from curation.pii.entities import entity_label
from curation.pii.hints import highlight_segments, unresolved_hints
from curation.review.history import TAG_LABELS, history_rows
from curation.review.selectors import (
    case_history,
    case_with_context,
    item_difficulty,
    item_history,
    item_with_context,
    latest_draft_attempt,
    queue_progress,
    reference_redrafts,
    task_for_reviewer,
)
from curation.review.services import (
    TRANSLATION_TAGS,
    ReviewError,
    quality_review_decide,
    reference_review_decide,
    review_task_lease,
    review_task_live_check,
    review_task_release,
    translation_review_decide,
)


def _error_text(error: ReviewError) -> str:
    return " ".join(error.messages)


@reviewer_required
def review_index(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The reviewer's queues: what waits, what they hold, and progress."""
    return render(
        request,
        "curation/review/index.html",
        {
            "queues": queue_progress(reviewer=request.user),
            "redrafts": reference_redrafts(),
            "is_researcher_user": can_manage_studies(request.user),
        },
    )


@reviewer_required
@require_POST
def review_take(request: AuthenticatedHttpRequest, queue: str) -> HttpResponse:
    """Lease the next item of a queue and open it."""
    if queue not in ReviewQueue.values:
        raise Http404
    task = review_task_lease(queue=queue, reviewer=request.user)
    if task is None:
        messages.info(request, _("Nothing is waiting in this queue for you."))
        return redirect("curation:review")
    return redirect("curation:review-task", task_id=task.pk)


@reviewer_required
def review_task(request: AuthenticatedHttpRequest, task_id: int) -> HttpResponse:
    """One leased item: show it (GET) or record a decision (POST), then take the next one."""
    task = task_for_reviewer(task_id=task_id, reviewer=request.user)
    if task is None:
        messages.error(request, _("This item is not leased to you any more."))
        return redirect("curation:review")
    try:
        review_task_live_check(task)
    except ReviewError as archived:
        messages.error(request, archived.message)
        return redirect("curation:review")
    error = ""
    if request.method == "POST":
        decision = request.POST.get("decision", "")
        try:
            if task.queue == ReviewQueue.QUALITY:
                quality_review_decide(
                    task=task,
                    reviewer=request.user,
                    decision=decision,
                    question=request.POST.get("question", ""),
                    reason=request.POST.get("reason", ""),
                    conversation=request.POST.get("conversation"),
                    pii_confirmed=request.POST.get("pii_confirmed") == "1",
                )
            elif task.queue == ReviewQueue.REFERENCE:
                reference_review_decide(
                    task=task, reviewer=request.user, decision=decision, reference=request.POST.get("reference", "")
                )
            else:
                translation_review_decide(
                    task=task,
                    reviewer=request.user,
                    decision=decision,
                    text=request.POST.get("text", ""),
                    tags=request.POST.getlist("tags"),
                    reason=request.POST.get("reason", ""),
                )
        except ReviewError as exc:
            error = _error_text(exc)
        else:
            if task.queue == ReviewQueue.REFERENCE and decision == "regenerate":
                messages.success(
                    request,
                    _(
                        "A new draft was asked for. The item comes back to this queue when it arrives; "
                        "the queues page shows how it is going."
                    ),
                )
            else:
                messages.success(request, _("Saved."))
            following = review_task_lease(queue=task.queue, reviewer=request.user)
            if following is None:
                messages.info(request, _("This queue is empty for now."))
                return redirect("curation:review")
            return redirect("curation:review-task", task_id=following.pk)
    return render(request, f"curation/review/task_{task.queue}.html", _task_context(request, task, error))


def _task_context(request: HttpRequest, task: ReviewTask, error: str) -> dict:
    context = {"task": task, "error": error, "post": request.POST if request.method == "POST" else {}}
    # A quality task is about a case, the others about an item (review_task_target_matches_queue).
    if task.queue == ReviewQueue.QUALITY:
        case = cast(Case, task.case)
        curation = case.curation
        context["curation"] = curation
        context["segments"] = _labelled(highlight_segments(case.conversation, curation.pii_hints))
        context["pii_entities"] = sorted({entity_label(hint["entity"]) for hint in curation.pii_hints})
        context["pii_left"] = len(
            unresolved_hints(curation.pii_hints, case.conversation, [curation.question, curation.conversation])
        )
    elif task.queue == ReviewQueue.REFERENCE:
        item = cast(Item, task.item)
        context["draft"] = item.reference_drafts.filter(status=StepStatus.DONE).order_by("-finished_at", "-id").first()
        attempt = latest_draft_attempt(item=item)
        context["failed_attempt"] = attempt if attempt and attempt["state"] == "failed" else None
    else:
        item = cast(Item, task.item)
        context["translation"] = (
            item.translations.filter(status=StepStatus.DONE).order_by("-finished_at", "-id").first()
        )
        context["tags"] = [(tag, TAG_LABELS[tag]) for tag in TRANSLATION_TAGS]
        context["checked_tags"] = request.POST.getlist("tags") if request.method == "POST" else []
    return context


@reviewer_required
@require_POST
def review_release(request: AuthenticatedHttpRequest, task_id: int) -> HttpResponse:
    """Give the item back to its queue."""
    task = get_object_or_404(ReviewTask.objects.in_workspaces_of(request.user), pk=task_id)
    try:
        review_task_release(task=task, reviewer=request.user)
    except ReviewError as exc:
        messages.error(request, _error_text(exc))
    return redirect("curation:review")


def _labelled(segments):
    """Highlighted segments with their entity named in the reader's language."""
    return [(text, entity_label(entity) if entity else "") for text, entity in segments]


@history_viewer_required
def item_page(request: HttpRequest, item_id: int) -> HttpResponse:
    """An item with its drafts, translations, difficulty scores and whole history."""
    item = item_with_context(item_id=item_id, user=request.user)
    if item is None:
        raise Http404
    return render(
        request,
        "curation/review/item.html",
        {
            "item": item,
            "history": history_rows(item_history(item=item)),
            "difficulty": item_difficulty(item=item),
        },
    )


@history_viewer_required
def case_page(request: AuthenticatedHttpRequest, case_id: int) -> HttpResponse:
    """A case's automatic findings and its whole history."""
    case = case_with_context(case_id=case_id, user=request.user)
    if case is None:
        raise Http404
    # An unfinished submission is still the participant's alone: reviewers never read it.
    if case.submission.status != Submission.Status.SUBMITTED and not can_manage_studies(
        request.user, workspace_id=case.submission.study.workspace_id
    ):
        raise Http404
    curation = getattr(case, "curation", None)
    return render(
        request,
        "curation/review/case.html",
        {
            "case": case,
            "curation": curation,
            "segments": _labelled(highlight_segments(case.conversation, curation.pii_hints if curation else [])),
            "history": history_rows(case_history(case=case)),
        },
    )
