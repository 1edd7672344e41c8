"""Writes of the questionnaire and the study set-up.

Every write locks the submission row first, so two tabs of one participant (or a
double click) cannot push a case past the maximum or finish a submission twice.
"""

from datetime import datetime, timedelta
from typing import cast

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Count
from django.utils import timezone
from django.utils.translation import gettext as _

from core.archiving import refuse_if_archived
from core.audit import AuditAction, audit_record, audit_value
from core.constraints import constraint_answered
from core.errors import UserbenchError
from core.models import Workspace
from core.slugs import slug_asked, slug_check_free
from core.workspaces import in_workspace
from curation import reasons
from curation.datasets.services import items_withdraw
from curation.models import Case, Item, Study, StudyStep, Submission
from curation.studies.maths import attention_passed
from llm.models import LLMResponse

STEP_ORDER = list(StudyStep.values)
# A draft is a page's unsaved input kept across a language switch; bigger is not typing.
MAX_DRAFT_CHARS = 50_000
# All drafts of one submission together, and the values one field may hold (a multiple choice).
MAX_DRAFTS_CHARS = 100_000
MAX_DRAFT_VALUES = 50


class StudyError(UserbenchError):
    """A questionnaire step or a study set-up that cannot be done as asked; nothing was changed.

    `fields` maps a form field to its messages when the error is about one (a study's slug),
    so the researcher's form shows them beside the field."""

    def __init__(self, message="", *args, fields: dict[str, list[str]] | None = None):
        super().__init__(message, *args)
        self.fields = fields or {}


class AlreadyFinished(UserbenchError):
    """This Prolific participant has already finished this study."""


class DuplicateError(UserbenchError):
    """A resolution of submissions sharing a Prolific ID that cannot be made; nothing changed."""


def language_of(code: str) -> str:
    """The stored language (en or zh) of a Django language code such as zh-hans."""
    return "zh" if (code or "").lower().startswith("zh") else "en"


def _advance(submission: Submission, step: StudyStep) -> None:
    if STEP_ORDER.index(step) > STEP_ORDER.index(submission.current_step):
        submission.current_step = step


def _locked_in_progress(submission: Submission) -> Submission:
    """The submission row, locked, still in progress; its last activity becomes now (every
    caller saves it with `last_activity_at` among the fields)."""
    locked = Submission.objects.select_for_update().get(pk=submission.pk)
    if locked.status != Submission.Status.IN_PROGRESS:
        raise StudyError(_("This questionnaire has already been submitted."))
    if locked.excluded:
        # Closed by a researcher who kept another submission under the same Prolific ID.
        raise StudyError(_("This questionnaire has been closed."))
    locked.last_activity_at = timezone.now()
    return locked


@transaction.atomic
def submission_start(
    *,
    study: Study,
    language: str,
    prolific_pid: str = "",
    prolific_study_id: str = "",
    prolific_session_id: str = "",
    country_hint: str = "",
    filled_by: User | AnonymousUser | None = None,
) -> Submission:
    """Start a new submission after consent; the browser that started it holds it.

    A Prolific ID is no credential (anyone may type one into the link), so a second start
    under the same ID never opens the first submission: it gets a submission of its own, and
    the study page flags the two until a researcher keeps one. Raises AlreadyFinished when
    this PROLIFIC_PID has finished the study, and StudyError when the study is closed to
    newcomers. `country_hint` (from GeoIP, never the address) pre-fills the country the
    participant may change or decline. `filled_by`: the signed-in person filling it, if any.
    """
    study = Study.objects.select_for_update().get(pk=study.pk)
    if (
        prolific_pid
        and Submission.objects.filter(
            study=study, prolific_pid=prolific_pid, status=Submission.Status.SUBMITTED
        ).exists()
    ):
        raise AlreadyFinished
    if not study.is_open:
        raise StudyError(_("This study is closed and takes no new participants."))
    now = timezone.now()
    return Submission.objects.create(
        study=study,
        prolific_pid=prolific_pid,
        prolific_study_id=prolific_study_id,
        prolific_session_id=prolific_session_id,
        language=language_of(language),
        consented_at=now,
        last_activity_at=now,
        current_step=StudyStep.CASES,
        country=country_hint,
        filled_by=filled_by if filled_by is not None and filled_by.is_authenticated else None,
    )


@transaction.atomic
def case_save(*, submission: Submission, values: dict, position: int | None = None) -> Case:
    """Add a case at the end (position None) or replace the answers of the case at `position`."""
    submission = _locked_in_progress(submission)
    study = submission.study
    drafts = submission.drafts
    if position is None:
        count = submission.cases.count()
        if count >= study.max_cases:
            raise StudyError(
                _("You have already reported %(count)d cases, the most this study takes.") % {"count": count}
            )
        case = Case.objects.create(submission=submission, position=count + 1, **values)
        drafts.pop("case-new", None)
    else:
        case = submission.cases.get(position=position)
        for name, value in values.items():
            setattr(case, name, value)
        case.save(update_fields=list(values))
        drafts.pop(f"case-{position}", None)
    submission.drafts = drafts
    submission.save(update_fields=["drafts", "last_activity_at"])
    return case


@transaction.atomic
def case_remove(*, submission: Submission, position: int) -> None:
    """Remove a case; the ones after it move up so positions stay 1..n."""
    submission = _locked_in_progress(submission)
    deleted, _detail = submission.cases.filter(position=position).delete()
    if not deleted:
        return
    # Ascending order: each row moves into the gap the previous one left, never onto a taken one.
    for case in submission.cases.filter(position__gt=position).order_by("position"):
        case.position -= 1
        case.save(update_fields=["position"])
    submission.drafts = {key: value for key, value in submission.drafts.items() if not key.startswith("case-")}
    submission.save(update_fields=["drafts", "last_activity_at"])


@transaction.atomic
def submission_cases_confirm(*, submission: Submission) -> Submission:
    """Move on from the cases page once the study's minimum is reached."""
    submission = _locked_in_progress(submission)
    count = submission.cases.count()
    if count < submission.study.min_cases:
        raise StudyError(
            _("Please report at least %(minimum)d cases; you have %(count)d so far.")
            % {"minimum": submission.study.min_cases, "count": count}
        )
    _advance(submission, StudyStep.ABOUT)
    submission.save(update_fields=["current_step", "last_activity_at"])
    return submission


@transaction.atomic
def submission_about_save(*, submission: Submission, values: dict) -> Submission:
    """Store the voluntary demographics (age group, occupation, country)."""
    submission = _locked_in_progress(submission)
    for name in ("age_group", "occupation", "country"):
        setattr(submission, name, values[name])
    submission.drafts.pop(StudyStep.ABOUT, None)
    _advance(submission, StudyStep.USAGE)
    submission.save(update_fields=["age_group", "occupation", "country", "drafts", "current_step", "last_activity_at"])
    return submission


@transaction.atomic
def submission_usage_save(*, submission: Submission, values: dict) -> Submission:
    """Store usage and satisfaction and grade the instructed item (never stopping anyone)."""
    submission = _locked_in_progress(submission)
    submission.usage = values
    submission.attention_passed = attention_passed(values.get("attention_check"), submission.study.attention_answer)
    submission.drafts.pop(StudyStep.USAGE, None)
    _advance(submission, StudyStep.REVIEW)
    submission.save(update_fields=["usage", "attention_passed", "drafts", "current_step", "last_activity_at"])
    return submission


def _draft_size(data: dict) -> int:
    return sum(len(name) + sum(len(value) for value in values) for name, values in data.items())


@transaction.atomic
def submission_draft_save(
    *, submission: Submission, page: str, data: dict, language: str, fields: dict[str, int] | None = None
) -> Submission:
    """Keep a page's unsaved input (unvalidated) and the new language, e.g. on a language switch.

    Anyone can post here, so only what the page's form has is kept: `fields` maps each field
    name to its longest value (None: the page takes no draft, only the language is kept);
    other names are dropped, values are cut to that length, at most MAX_DRAFT_VALUES per field.
    A page over MAX_DRAFT_CHARS, or drafts over MAX_DRAFTS_CHARS in all, are not kept.
    """
    submission = _locked_in_progress(submission)
    if fields is not None:
        kept = {
            name: [str(value)[: fields[name]] for value in list(values)[:MAX_DRAFT_VALUES]]
            for name, values in data.items()
            if name in fields
        }
        others = sum(_draft_size(draft) for key, draft in submission.drafts.items() if key != page)
        size = _draft_size(kept)
        if size <= MAX_DRAFT_CHARS and others + size <= MAX_DRAFTS_CHARS:
            submission.drafts[page] = kept
    submission.language = language_of(language)
    submission.save(update_fields=["drafts", "language", "last_activity_at"])
    return submission


@transaction.atomic
def submission_finish(*, submission: Submission, language: str) -> Submission:
    """Submit the questionnaire. A failed attention check keeps it but excludes it with the reason.

    Raises StudyError when a required page is incomplete and AlreadyFinished
    when the same PROLIFIC_PID finished meanwhile (e.g. in another browser).
    """
    submission = _locked_in_progress(submission)
    study = submission.study
    if submission.cases.count() < study.min_cases:
        raise StudyError(_("Please report at least %(minimum)d cases.") % {"minimum": study.min_cases})
    if not submission.usage or submission.attention_passed is None:
        raise StudyError(_("Please answer the questions about your use of AI assistants."))
    submission.status = Submission.Status.SUBMITTED
    submission.submitted_at = timezone.now()
    submission.language = language_of(language)
    submission.current_step = StudyStep.DONE
    submission.drafts = {}
    if not submission.attention_passed:
        submission.excluded = True
        # Stored in English for the record; pages show it translated (curation/reasons.py).
        submission.exclusion_reason = reasons.ATTENTION_FAILED.text(
            chosen=submission.usage.get("attention_check"), asked=study.attention_answer
        )
    try:
        with transaction.atomic():
            submission.save()
    except IntegrityError as error:
        raise AlreadyFinished from error
    # Curation (parsing, dedup, PII hints) runs in the worker once the submission is safely
    # stored. Imported here so the participant pages never load presidio and openai.
    from curation.tasks import submission_process_task

    submission_id = submission.pk
    transaction.on_commit(lambda: submission_process_task.enqueue(submission_id))
    return submission


# The participant link's slug field's length (Django's SlugField).
STUDY_SLUG_LENGTH = 50
# Words the researcher's pages use after /studies/: a study with such a slug could not be opened.
RESERVED_STUDY_SLUGS = frozenset({"new", "edit"})


def _codes_check(study: Study, values: dict) -> None:
    """A study open to participants has both Prolific codes: the completion code for those who
    finish, the screen-out code for those who fail the attention check (every study has one).
    A study saved before this rule keeps its codes as they are, but cannot stay or become open
    until both are set. Raises StudyError naming each missing field."""
    final = {name: values.get(name, getattr(study, name)) for name in ("is_open", "completion_code", "screenout_code")}
    if not final["is_open"]:
        return
    missing = {
        "completion_code": _("Set a completion code before opening the study to participants."),
        "screenout_code": _(
            "Set a screen-out code before opening the study to participants: those who fail the attention check get it."
        ),
    }
    fields = {name: [str(message)] for name, message in missing.items() if not str(final[name] or "").strip()}
    if fields:
        raise StudyError(" ".join(message for messages in fields.values() for message in messages), fields=fields)


def _title_taken(title: str) -> StudyError:
    taken = _("A study titled %(title)s exists already in this workspace; choose another title.") % {
        "title": repr(title)
    }
    return StudyError(taken, fields={"title_en": [taken]})


@transaction.atomic
def study_save(
    *, values: dict, study: Study | None = None, user: User | None = None, workspace: Workspace | None = None
) -> Study:
    """Create a study or update its set-up from the researcher's form values (audited, with each
    changed field's value before and after). A new study goes to `workspace` (the default one
    when None); a study never moves to another. An archived study: ArchivedError.
    A slug (the participant link) taken by any study: SlugTaken with a free proposal, worded the
    same whoever holds it; a title another study of this workspace has: StudyError."""
    refuse_if_archived(study)
    if values.get("slug") in RESERVED_STUDY_SLUGS:
        reserved = _("“%(slug)s” is reserved for a page; choose another slug.") % {"slug": values["slug"]}
        raise StudyError(reserved, fields={"slug": [reserved]})
    created = study is None
    if study is None:
        study = Study(created_by=user if user and user.is_authenticated else None)
        if workspace is not None:
            study.workspace = workspace
    if "slug" in values and values["slug"] != study.slug:
        values = {**values, "slug": slug_asked(Study, values["slug"], max_length=STUDY_SLUG_LENGTH)}
        slug_check_free(Study, values["slug"], max_length=STUDY_SLUG_LENGTH, exclude_pk=study.pk)
    title = values.get("title_en", study.title_en)
    # Titles are unique within the workspace only: what other workspaces hold is never consulted.
    if in_workspace(Study.objects.all(), study.workspace_id).filter(title_en=title).exclude(pk=study.pk).exists():
        raise _title_taken(title)
    _codes_check(study, values)
    changed = sorted(name for name, value in values.items() if created or getattr(study, name) != value)
    before = {name: audit_value(getattr(study, name)) for name in changed} if not created else {}
    for name, value in values.items():
        setattr(study, name, value)
    try:
        study.full_clean()
    except ValidationError as error:
        # The model's own checks (Django's error class) become the house one, field by field.
        raise StudyError(" ".join(error.messages), fields=error.message_dict) from None
    # Taken meanwhile by another request: the same words as the check above.
    with constraint_answered(Study, "study_title_unique_per_workspace", lambda: _title_taken(title)):
        study.save()
    audit_record(
        actor=user,
        action=AuditAction.STUDY_CHANGED,
        target=f"study:{study.slug}",
        workspace=study.workspace_id,
        details={"created": created, "fields": changed}
        | (
            {"changes": {name: [before[name], audit_value(getattr(study, name))] for name in changed}} if before else {}
        ),
    )
    return study


@transaction.atomic
def prolific_duplicates_resolve(
    *, study: Study, prolific_pid: str, keep_id: int, actor: User | None = None
) -> Submission:
    """Keep one of the submissions that share a Prolific ID; the others are excluded with the
    reason, and unfinished ones are closed (their browser can no longer write to them).

    A finished submission must be the one kept: a Prolific ID finishes a study once. Raises
    DuplicateError when the ID has fewer than two submissions or `keep_id` is not among them.
    """
    refuse_if_archived(study)
    group = list(Submission.objects.select_for_update().filter(study=study, prolific_pid=prolific_pid).order_by("pk"))
    if not prolific_pid or len(group) < 2:
        raise DuplicateError(_("Only one submission has this Prolific ID: there is nothing to resolve."))
    keep = next((submission for submission in group if submission.pk == keep_id), None)
    if keep is None:
        raise DuplicateError(_("Submission #%(id)s does not have this Prolific ID.") % {"id": keep_id})
    finished = next((submission for submission in group if submission.status == Submission.Status.SUBMITTED), None)
    if finished is not None and finished.pk != keep.pk:
        raise DuplicateError(
            _("Submission #%(id)s is already finished under this Prolific ID: keep that one.") % {"id": finished.pk}
        )
    excluded = []
    for submission in group:
        submission.duplicate_resolved = True
        if submission.pk != keep.pk and not submission.excluded:
            submission.excluded = True
            submission.exclusion_reason = reasons.ANOTHER_SUBMISSION_KEPT.text(kept=keep.pk)
            excluded.append(submission.pk)
        submission.save(update_fields=["duplicate_resolved", "excluded", "exclusion_reason"])
    audit_record(
        actor=actor,
        action=AuditAction.DUPLICATE_RESOLVED,
        target=f"study:{study.slug}",
        details={"kept": keep.pk, "excluded": excluded},
        workspace=study.workspace_id,
    )
    return keep


@transaction.atomic
def prolific_decision_set(*, study: Study, submission_id: int, decision: str, actor: User | None = None) -> Submission:
    """Decide a flagged finished submission for Prolific: "approve", "reject", or "" to take the
    decision back (it waits in neither list again). Audited with the decision before and after.
    Raises DuplicateError when the submission is not a finished one of this study with a
    Prolific ID, or the decision is not one of those."""
    refuse_if_archived(study)
    if decision not in ("approve", "reject", ""):
        raise DuplicateError(_("Choose approve or reject."))
    submission = (
        Submission.objects.select_for_update()
        .filter(study=study, pk=submission_id, status=Submission.Status.SUBMITTED)
        .exclude(prolific_pid="")
        .first()
    )
    if submission is None:
        raise DuplicateError(
            _("Submission #%(id)s is not a finished submission of this study with a Prolific ID.")
            % {"id": submission_id}
        )
    before = submission.prolific_decision
    if before != decision:
        submission.prolific_decision = decision
        submission.save(update_fields=["prolific_decision"])
        audit_record(
            actor=actor,
            action=AuditAction.PROLIFIC_DECIDED,
            target=f"study:{study.slug}",
            details={"submission": submission.pk, "changes": {"prolific_decision": [before, decision]}},
            workspace=study.workspace_id,
        )
    return submission


@transaction.atomic
def submissions_expire(*, idle_for: timedelta, now: datetime | None = None, actor: User | None = None) -> int:
    """Erase unfinished submissions with no activity for `idle_for`: their cases and drafts go
    with them. Finished submissions are never touched. Returns how many were erased; the
    audit log records the counts (never who they were) in each workspace concerned, one entry
    per workspace holding only its own studies, so that each team reads its own on /audit/."""
    now = now or timezone.now()
    abandoned = Submission.objects.filter(status=Submission.Status.IN_PROGRESS, last_activity_at__lt=now - idle_for)
    ids = list(abandoned.select_for_update().values_list("pk", flat=True))
    if not ids:
        return 0
    per_study = (
        Submission.objects.filter(pk__in=ids)
        .values_list("study__workspace_id", "study__slug")
        .annotate(count=Count("pk"))
        .order_by("study__workspace_id", "study__slug")
    )
    studies_of: dict[int, dict[str, int]] = {}
    for workspace_id, slug, count in per_study:
        studies_of.setdefault(workspace_id, {})[slug] = count
    Case.objects.filter(submission_id__in=ids).delete()
    Submission.objects.filter(pk__in=ids).delete()
    for workspace_id, studies in studies_of.items():
        audit_record(
            actor=actor,
            action=AuditAction.SUBMISSIONS_EXPIRED,
            target="submissions",
            details={
                "count": sum(studies.values()),
                "idle_days": round(idle_for.total_seconds() / 86400, 2),
                "studies": studies,
            },
            workspace=workspace_id,
        )
    return len(ids)


class WithdrawalError(UserbenchError):
    """A withdrawal that cannot be done as asked; nothing was erased."""


@transaction.atomic
def participant_withdraw(
    *, study: Study, prolific_pid: str = "", submission_id: int | None = None, actor: User | None = None
) -> dict:
    """Withdraw a participant and erase their data wherever it was copied.

    The participant is named by their Prolific ID (every submission under it) or by one
    submission's number. Their submissions go, with cases, drafts, review findings, queue tasks
    and case history; the items made from their cases are deleted from working datasets and
    become tombstones in frozen versions (curation.datasets.services.items_withdraw), and the
    LLM response cache loses the replies made from them. The audit log records who withdrew
    whom by submission number and counts, never the Prolific ID. Returns the counts.
    """
    prolific_pid = (prolific_pid or "").strip()
    if bool(prolific_pid) == (submission_id is not None):
        raise WithdrawalError(_("Name the participant by a Prolific ID or by a submission number, not both."))
    submissions = Submission.objects.select_for_update().filter(study=study)
    submissions = (
        submissions.filter(prolific_pid=prolific_pid)
        if prolific_pid
        # Without a Prolific ID there is a submission number: checked above.
        else submissions.filter(pk=cast(int, submission_id))
    )
    submission_ids = list(submissions.values_list("pk", flat=True))
    if not submission_ids:
        raise WithdrawalError(_("No submission of this study matches; nothing was erased."))
    case_ids = list(Case.objects.filter(submission_id__in=submission_ids).values_list("pk", flat=True))
    items = list(Item.objects.filter(source_case_id__in=case_ids).select_related("dataset"))
    report = items_withdraw(items=items)
    removed = report.pop("removed_texts")
    Submission.objects.filter(pk__in=submission_ids).delete()
    cache_rows = 0
    for start in range(0, len(removed), 500):
        cache_rows += LLMResponse.objects.filter(text__in=removed[start : start + 500]).delete()[0]
    report = {"submissions": submission_ids, "cases": len(case_ids), **report, "cached_replies": cache_rows}
    audit_record(
        actor=actor,
        action=AuditAction.PARTICIPANT_WITHDRAWN,
        target=f"study:{study.slug}",
        details=report,
        workspace=study.workspace_id,
    )
    return report
