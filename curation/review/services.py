"""Writes of the curation pipeline: automatic steps on cases, review leases and decisions.

Every decision records a ReviewEvent with who, when, and the values before and after;
nothing a participant wrote is ever overwritten (the reviewed question lives beside the case).
"""

from collections.abc import Iterable
from dataclasses import asdict
from datetime import datetime, timedelta
from typing import cast

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from core.archiving import ArchivedError, refuse_if_archived
from core.errors import UserbenchError
from curation import conversation
from curation.datasets.llm_steps import reference_job_enqueue
from curation.events import review_event_record
from curation.models import Case, CaseCuration, Item, ReviewEvent, ReviewQueue, ReviewTask, StepStatus, Submission
from curation.pii.entities import entity_label
from curation.pii.hints import pii_hints, unresolved_hints

DUPLICATE_THRESHOLD = 0.8


class ReviewError(UserbenchError):
    """A review action that cannot be done; the message says why, and nothing changed."""


def lease_duration() -> timedelta:
    return timedelta(seconds=settings.CURATION_LEASE_SECONDS)


# --------------------------------------------------------------------------- automatic steps


@transaction.atomic
def case_process(*, case: Case) -> CaseCuration:
    """Run the automatic steps on one submitted case and store what they found.

    Parses the turns, extracts the first valid question, detects the language, looks for
    duplicates among earlier cases (same participant: a duplicate; another participant:
    flagged), collects PII hints, carries the submission's exclusion, and puts the case in
    the quality queue unless the submission is excluded. Running it again refreshes the
    findings but keeps a reviewer's edited question and decisions.
    """
    submission = case.submission
    parsed = conversation.parse_turns(case.conversation)
    first = conversation.first_valid_question(parsed)
    language = conversation.detect_language(first or case.conversation) or submission.language
    duplicate, similar = _duplicates_of(case, first or case.conversation or case.share_link)
    hints = pii_hints(case.conversation, language) if case.conversation else []
    excluded = submission.excluded
    values = {
        "turns": [asdict(turn) for turn in parsed.turns],
        "format_error": parsed.format_error,
        "first_question": first,
        "language": language,
        "duplicate_of": duplicate.of_key if duplicate else None,
        "duplicate_kind": duplicate.kind if duplicate else "",
        "duplicate_similarity": duplicate.similarity if duplicate else None,
        "similar_case": similar.of_key if similar else None,
        "similar_similarity": similar.similarity if similar else None,
        "pii_hints": [{"entity": h.entity, "start": h.start, "end": h.end, "score": h.score} for h in hints],
        "pii_hint_count": len(hints),
        "excluded": excluded,
        "exclusion_reason": submission.exclusion_reason if excluded else "",
        "processed_at": timezone.now(),
    }
    curation = CaseCuration.objects.filter(case=case).first()
    if curation is None:
        curation = CaseCuration(case=case, question=first, conversation=case.conversation)
    else:
        # A reviewer's redactions are kept when the steps run again.
        curation.question = curation.question or first
        if case.review_status == Case.ReviewStatus.PENDING:
            curation.conversation = curation.conversation or case.conversation
    for field, value in values.items():
        setattr(curation, field + ("_id" if field in {"duplicate_of", "similar_case"} else ""), value)
    curation.save()
    review_event_record(
        action=ReviewEvent.Action.PROCESSED,
        case=case,
        after={
            "format_error": parsed.format_error,
            "first_question": first,
            "language": language,
            "duplicate_of": values["duplicate_of"],
            "duplicate_kind": values["duplicate_kind"],
            "similar_case": values["similar_case"],
            "pii_hints": len(hints),
            "excluded": excluded,
        },
    )
    if not excluded:
        # The author never reviews it: whoever entered the case, or the signed-in person who
        # filled the questionnaire themselves.
        ReviewTask.objects.get_or_create(
            queue=ReviewQueue.QUALITY,
            case=case,
            defaults={"author_id": case.entered_by_id or submission.filled_by_id},
        )
    return curation


def _duplicates_of(case: Case, text: str):
    """The best earlier match in the same submission and the best in other submissions."""
    earlier = (
        Case.objects.filter(
            submission__study_id=case.submission.study_id, submission__status=Submission.Status.SUBMITTED
        )
        .filter(
            Q(submission_id__lt=case.submission_id) | Q(submission_id=case.submission_id, position__lt=case.position)
        )
        .order_by("submission_id", "position")
        .values_list("pk", "submission_id", "curation__first_question", "conversation", "share_link")
    )
    entries = []
    for pk, submission_id, first_question, conversation_text, share_link in earlier.iterator(chunk_size=2000):
        if first_question is None:  # not processed yet: extract on the fly
            first_question = (
                conversation.first_valid_question(conversation.parse_turns(conversation_text)) or share_link
            )
        entries.append((pk, submission_id, first_question or conversation_text or share_link))
    entries.append((case.pk, case.submission_id, text))
    same = conversation.best_match(entries, threshold=DUPLICATE_THRESHOLD, same_group=True)
    other = conversation.best_match(entries, threshold=DUPLICATE_THRESHOLD, same_group=False)
    return same, other


def submission_process(*, submission: Submission) -> int:
    """The automatic steps for every case of a just-submitted submission (call on submit,
    e.g. in transaction.on_commit, so a failure here never loses the submission)."""
    return cases_process(cases=submission.cases.order_by("position"))


def cases_process(*, cases, on_progress=None) -> int:
    """case_process over many cases, each in its own transaction (an interrupt loses nothing)."""
    done = 0
    for case in cases:
        case_process(case=case)
        done += 1
        if on_progress:
            on_progress(done)
    return done


# --------------------------------------------------------------------------- leases


def _available(queue: str, reviewer: User, now):
    return (
        ReviewTask.objects.filter(queue=queue, status=ReviewTask.Status.OPEN)
        .filter(Q(leased_to__isnull=True) | Q(lease_expires_at__lt=now) | Q(leased_to=reviewer))
        .reviewable_by(reviewer)
    )


@transaction.atomic
def review_task_lease(*, queue: str, reviewer: User, now: datetime | None = None) -> ReviewTask | None:
    """Lease the next task of a queue to the reviewer, or return None when none is free.

    A reviewer's own unexpired lease comes back first. On PostgreSQL the row lock with
    SKIP LOCKED lets many reviewers take tasks at once without ever getting the same one;
    SQLite runs this in an IMMEDIATE transaction, which serialises writers.
    """
    now = now or timezone.now()
    # of=("self",): the exclusions join nullable relations, which PostgreSQL cannot lock.
    mine = (
        _available(queue, reviewer, now)
        .filter(leased_to=reviewer)
        .select_for_update(skip_locked=True, of=("self",))
        .first()
    )
    task = mine or (
        _available(queue, reviewer, now).order_by("id").select_for_update(skip_locked=True, of=("self",)).first()
    )
    if task is None:
        return None
    # A lock taken after another transaction committed may see a task leased meanwhile.
    task.refresh_from_db()
    if task.status != ReviewTask.Status.OPEN or (
        task.leased_to_id not in (None, reviewer.pk) and task.lease_expires_at >= now
    ):
        return None
    task.leased_to = reviewer
    task.lease_expires_at = now + lease_duration()
    task.save(update_fields=["leased_to", "lease_expires_at"])
    return task


@transaction.atomic
def review_task_release(*, task: ReviewTask, reviewer: User) -> None:
    """Give a leased task back to the queue untouched."""
    task = ReviewTask.objects.select_for_update().get(pk=task.pk)
    if task.leased_to_id != reviewer.pk:
        raise ReviewError(_("This item is not leased to you."))
    task.leased_to = None
    task.lease_expires_at = None
    task.save(update_fields=["leased_to", "lease_expires_at"])
    review_event_record(
        action=ReviewEvent.Action.RELEASED, case=task.case, item=task.item, actor=reviewer, queue=task.queue
    )


def review_task_live_check(task: ReviewTask) -> None:
    """ReviewError when the task's dataset or study was archived after it was leased: archived
    work is read-only until restored, and left out of the queues (ReviewTask.objects.in_workspaces_of)."""
    # A task is about an item or a case, never both (review_task_target_matches_queue).
    owner = task.item.dataset if task.item is not None else cast(Case, task.case).submission.study
    try:
        refuse_if_archived(owner)
    except ArchivedError as error:
        raise ReviewError(error.message) from None


def _locked_task(task: ReviewTask, reviewer: User, queue: str) -> ReviewTask:
    task = ReviewTask.objects.select_for_update(of=("self",)).select_related("case", "item").get(pk=task.pk)
    review_task_live_check(task)
    if task.queue != queue:
        raise ReviewError(_("This item belongs to another queue."))
    if task.status != ReviewTask.Status.OPEN:
        raise ReviewError(_("This item has already been decided."))
    # An expired lease still counts while nobody else has taken the item.
    if task.leased_to_id != reviewer.pk:
        raise ReviewError(_("Your lease on this item expired and another reviewer took it."))
    return task


def _close(task: ReviewTask, reviewer: User, decision: str, status=ReviewTask.Status.DONE) -> None:
    task.status = status
    task.decision = decision
    task.decided_by = reviewer
    task.decided_at = timezone.now()
    task.leased_to = None
    task.lease_expires_at = None
    task.save(update_fields=["status", "decision", "decided_by", "decided_at", "leased_to", "lease_expires_at"])


# --------------------------------------------------------------------------- decisions

QUALITY_DECISIONS = ("accept", "edit", "reject")
REFERENCE_DECISIONS = ("accept", "correct", "regenerate")
TRANSLATION_DECISIONS = ("keep", "edit", "revert", "exclude")
TRANSLATION_TAGS = ("coherence", "diversity", "factual_illusion", "excessive_localisation")


@transaction.atomic
def quality_review_decide(
    *,
    task: ReviewTask,
    reviewer: User,
    decision: str,
    question: str = "",
    reason: str = "",
    conversation: str | None = None,
    pii_confirmed: bool = False,
) -> Case:
    """Accept a case, accept it with an edited question and conversation, or reject it with a reason.

    What is accepted is the reviewed text: the question and the conversation as the reviewer
    left them (`edit` saves both; `conversation=None` keeps the stored one). Accepting while a
    PII hint's text is still there in either needs `pii_confirmed` (the reviewer ticked that the
    highlights are not personal information); otherwise ReviewError lists what is left.
    """
    if decision not in QUALITY_DECISIONS:
        raise ReviewError(_("Unknown decision: %(decision)s.") % {"decision": decision})
    task = _locked_task(task, reviewer, ReviewQueue.QUALITY)
    # A quality task is about a case (the review_task_target_matches_queue constraint).
    case = cast(Case, task.case)
    curation = CaseCuration.objects.select_for_update().get(case=case)
    before = {"review_status": case.review_status, "question": curation.question}
    question = _typed(question)
    if decision == "accept":
        _refuse_accept_over_typing(reason=reason, question=question, stored=curation.question)
    if decision == "edit":
        if not question:
            raise ReviewError(_("An edited question cannot be empty."))
        curation.question = question
        if conversation is not None:
            curation.conversation = conversation.strip()
        curation.save(update_fields=["question", "conversation"])
    if decision == "reject" and not reason.strip():
        raise ReviewError(_("Give a reason for rejecting."))
    if decision != "reject" and not curation.question:
        raise ReviewError(_("This case has no question to accept: edit it first."))
    left = []
    if decision != "reject":
        left = unresolved_hints(curation.pii_hints, case.conversation, [curation.question, curation.conversation])
        if left and not pii_confirmed:
            kinds = ", ".join(sorted({entity_label(hint["entity"]) for hint in left}))
            raise ReviewError(
                _(
                    "%(count)d highlighted piece(s) of possible personal information (%(kinds)s) are still in the "
                    "question or the conversation. Remove them, or tick the box to confirm they are not personal "
                    "information, and accept again."
                )
                % {"count": len(left), "kinds": kinds}
            )
    case.review_status = Case.ReviewStatus.REJECTED if decision == "reject" else Case.ReviewStatus.ACCEPTED
    case.save(update_fields=["review_status"])
    action = {
        "accept": ReviewEvent.Action.ACCEPTED,
        "edit": ReviewEvent.Action.EDITED,
        "reject": ReviewEvent.Action.REJECTED,
    }
    after: dict[str, object] = {"review_status": case.review_status, "question": curation.question}
    if decision == "edit":
        after["conversation_edited"] = curation.conversation != case.conversation
    if left:
        after["pii_confirmed"] = sorted({hint["entity"] for hint in left})
    review_event_record(
        action=action[decision],
        case=case,
        actor=reviewer,
        queue=ReviewQueue.QUALITY,
        before=before,
        after=after,
        reason=reason.strip(),
    )
    _close(task, reviewer, decision)
    return case


@transaction.atomic
def reference_review_decide(*, task: ReviewTask, reviewer: User, decision: str, reference: str = "") -> Item:
    """Accept the latest LLM draft as the reference, correct it, or ask for a new draft.

    The draft stays in ReferenceDraft; the item's reference is the accepted or corrected text.
    """
    if decision not in REFERENCE_DECISIONS:
        raise ReviewError(_("Unknown decision: %(decision)s.") % {"decision": decision})
    task = _locked_task(task, reviewer, ReviewQueue.REFERENCE)
    # Reference and translation tasks are about an item (review_task_target_matches_queue).
    item = Item.objects.select_for_update().get(pk=cast(int, task.item_id))
    _refuse_frozen(item)
    draft = item.reference_drafts.filter(status=StepStatus.DONE).order_by("-finished_at", "-id").first()
    before = {"reference": item.reference}
    if decision == "regenerate":
        _close(task, reviewer, decision, status=ReviewTask.Status.WAITING)
        review_event_record(
            action=ReviewEvent.Action.REGENERATE,
            item=item,
            actor=reviewer,
            queue=ReviewQueue.REFERENCE,
            before={"draft": draft.text if draft else ""},
        )
        job_model = draft.job.model if draft else settings.CURATION_REFERENCE_MODEL
        endpoint = draft.job.endpoint_name if draft else ""
        # The job's rows are written with the decision (the queues page lists the item as
        # waiting for the model at once); the worker is started once this commits.
        reference_job_enqueue(
            dataset=item.dataset,
            items=[item],
            model=job_model,
            endpoint_name=endpoint,
            created_by=reviewer,
            reopen=True,
        )
        return item
    if decision == "accept":
        if draft is None:
            raise ReviewError(_("There is no draft to accept: correct it or ask for a new one."))
        if _typed(reference) and _typed(reference) != _typed(draft.text):
            raise ReviewError(
                _("You changed the draft: save the correction, or undo your change to accept the draft as it is.")
            )
        item.reference = draft.text
        action = ReviewEvent.Action.ACCEPTED
    else:
        if not _typed(reference):
            raise ReviewError(_("A corrected reference cannot be empty."))
        item.reference = _typed(reference)
        action = ReviewEvent.Action.CORRECTED
    item.save(update_fields=["reference"])
    review_event_record(
        action=action,
        item=item,
        actor=reviewer,
        queue=ReviewQueue.REFERENCE,
        before=before,
        after={"reference": item.reference, "draft": draft.text if draft else ""},
    )
    _close(task, reviewer, decision)
    return item


@transaction.atomic
def translation_review_decide(
    *,
    task: ReviewTask,
    reviewer: User,
    decision: str,
    text: str = "",
    tags: Iterable[str] = (),
    reason: str = "",
) -> Item:
    """Calibrate a translated item (ChineseAlpacaEval 2.3): keep the localised version, edit it,
    revert to the plain translation, or exclude the item with a reason; tag what was wrong.

    `text` is the instruction as the reviewer left it: keeping or reverting over an edit is
    refused, so an edit is never thrown away."""
    if decision not in TRANSLATION_DECISIONS:
        raise ReviewError(_("Unknown decision: %(decision)s.") % {"decision": decision})
    unknown = sorted(set(tags) - set(TRANSLATION_TAGS))
    if unknown:
        raise ReviewError(_("Unknown tags: %(tags)s.") % {"tags": ", ".join(unknown)})
    reason = _typed(reason)
    if decision == "exclude" and not reason:
        raise ReviewError(_("Give a reason for excluding."))
    limit = cast(int, Item._meta.get_field("exclusion_reason").max_length)  # a CharField's max_length
    if len(reason) > limit:
        raise ReviewError(
            _("The reason has %(length)d characters; keep it to %(limit)d.") % {"length": len(reason), "limit": limit}
        )
    task = _locked_task(task, reviewer, ReviewQueue.TRANSLATION)
    # Reference and translation tasks are about an item (review_task_target_matches_queue).
    item = Item.objects.select_for_update().get(pk=cast(int, task.item_id))
    _refuse_frozen(item)
    translation = item.translations.filter(status=StepStatus.DONE).order_by("-finished_at", "-id").first()
    if translation is None:
        raise ReviewError(_("This item has no finished translation yet."))
    before = {"question": item.question, "language": item.language, "excluded": item.excluded}
    if decision in ("keep", "revert"):
        if reason:
            raise ReviewError(_("You wrote a reason: exclude the item, or clear the reason first."))
        if _typed(text) and _typed(text) != _typed(translation.localised):
            raise ReviewError(_("You edited the instruction: save the edit, or undo your change first."))
    if decision == "keep":
        item.question = translation.localised
    elif decision == "revert":
        item.question = translation.translation
    elif decision == "edit":
        if not _typed(text):
            raise ReviewError(_("An edited instruction cannot be empty."))
        item.question = _typed(text)
    if decision == "exclude":
        item.excluded = True
        item.exclusion_reason = reason
    else:
        item.language = "zh"
        item.metadata = {**item.metadata, "source_question": translation.source_text}
    item.save(update_fields=["question", "language", "excluded", "exclusion_reason", "metadata"])
    action = {
        "keep": ReviewEvent.Action.KEPT,
        "edit": ReviewEvent.Action.EDITED,
        "revert": ReviewEvent.Action.REVERTED,
        "exclude": ReviewEvent.Action.EXCLUDED,
    }
    review_event_record(
        action=action[decision],
        item=item,
        actor=reviewer,
        queue=ReviewQueue.TRANSLATION,
        before=before,
        after={"question": item.question, "language": item.language, "excluded": item.excluded},
        reason=reason,
        tags=sorted(tags),
    )
    _close(task, reviewer, decision)
    return item


def _typed(text: str) -> str:
    """A text field as typed, without surrounding space; browsers send a textarea's line ends as CRLF."""
    return (text or "").replace("\r\n", "\n").strip()


def _refuse_accept_over_typing(*, reason: str, question: str, stored: str) -> None:
    """Accepting never throws away what the reviewer typed: a reason means reject, a changed
    question means save the edit (pressing Enter in a field submits the form's first button)."""
    if _typed(reason):
        raise ReviewError(_("You wrote a reason: reject the case, or clear the reason to accept it."))
    if question and question != _typed(stored):
        raise ReviewError(
            _("You changed the question: save the edit, or undo your change to accept the case as it was.")
        )


def _refuse_frozen(item: Item) -> None:
    if item.dataset.frozen_at is not None:
        raise ReviewError(_("This item belongs to a frozen dataset version and cannot change."))
