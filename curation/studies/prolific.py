"""Reads of a study's submissions as a researcher reviews them for Prolific: one row per
submission (Prolific ID, status, start, time taken, the code it was given, the attention
check), speeders and shared Prolific IDs flagged, and the IDs to approve and to reject in the
form Prolific's bulk actions take (IDs one per line, or separated by commas).

A fixed number of queries whatever the number of submissions: the median and the shared IDs
come from two aggregate reads, the rows from one, and the filters run in the database."""

import re
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Count, DurationField, ExpressionWrapper, F, Q, QuerySet
from django.db.models.functions import Coalesce
from django.utils.translation import gettext_lazy as _

from core.audit import AuditAction, audit_record
from curation.models import Study, Submission
from curation.studies.maths import median_seconds

# What the table's status filter offers: how a submission stands for Prolific.
STATUSES = ("completed", "screened_out", "in_progress", "excluded")
STATUS_LABELS = {
    "completed": _("Completed"),
    "screened_out": _("Screened out"),
    "in_progress": _("In progress"),
    "excluded": _("Excluded"),
}
# What an ID must look like to be pasted into a list for Prolific: a typed one with a comma, a
# space or a line break in it would split into several (Prolific's own are 24 hex digits).
PROLIFIC_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
# The two lists for Prolific's bulk actions (and a researcher's decision on a flagged row).
DECISIONS = ("approve", "reject")
# Rows the page shows at once; the filters and the ID lists cover every submission.
PAGE_ROWS = 500

_SUBMITTED = Submission.Status.SUBMITTED
_STATUS_FILTERS = {
    # Finished and kept: given the completion code.
    "completed": Q(status=_SUBMITTED, excluded=False),
    # Finished and excluded (the attention check, or a researcher): given the screen-out code.
    "screened_out": Q(status=_SUBMITTED, excluded=True),
    "in_progress": Q(status=Submission.Status.IN_PROGRESS, excluded=False),
    # Closed unfinished, e.g. the other browser of a shared Prolific ID.
    "excluded": Q(status=Submission.Status.IN_PROGRESS, excluded=True),
}


@dataclass(frozen=True)
class Review:
    """The study-wide figures the flags are measured against."""

    median_seconds: float | None
    fraction: float
    shared_pids: frozenset[str]

    @property
    def speeder_below_seconds(self) -> float | None:
        return self.median_seconds * self.fraction if self.median_seconds is not None else None


def _taken():
    """Time from consent (or the start, for older rows) to submission."""
    return ExpressionWrapper(F("submitted_at") - Coalesce("consented_at", "started_at"), output_field=DurationField())


def study_review(*, study: Study, fraction: float | None = None) -> Review:
    """The study's median time over finished submissions (as on the study page), the speeder
    fraction (STUDY_SPEEDER_FRACTION unless given) and the Prolific IDs used by more than one
    submission; two queries."""
    finished = Submission.objects.filter(study=study, status=_SUBMITTED, submitted_at__isnull=False)
    durations = [taken.total_seconds() for taken in finished.annotate(taken=_taken()).values_list("taken", flat=True)]
    # As on the study page: an ID stays flagged until a researcher keeps one of its submissions.
    shared = (
        Submission.objects.filter(study=study)
        .exclude(prolific_pid="")
        .values("prolific_pid")
        .annotate(n=Count("pk"), open=Count("pk", filter=Q(duplicate_resolved=False)))
        .filter(n__gt=1, open__gt=0)
        .values_list("prolific_pid", flat=True)
    )
    return Review(
        median_seconds=median_seconds(durations),
        fraction=settings.STUDY_SPEEDER_FRACTION if fraction is None else fraction,
        shared_pids=frozenset(shared),
    )


def _flag_filters(review: Review) -> tuple[Q, Q]:
    """(speeder, shared ID) as database conditions."""
    below = review.speeder_below_seconds
    speeder = (
        Q(status=_SUBMITTED, submitted_at__isnull=False, taken__lt=timedelta(seconds=below))
        if below is not None
        else Q(pk__in=[])
    )
    return speeder, Q(prolific_pid__in=list(review.shared_pids))


def study_submissions(*, study: Study, review: Review, status: str = "", flagged: bool = False) -> QuerySet:
    """The study's submissions, oldest first, with `taken` (a timedelta; None unfinished), as the
    table filters them: `status` one of STATUSES (else all), `flagged` only speeders and shared
    Prolific IDs."""
    rows = Submission.objects.filter(study=study).annotate(taken=_taken())
    if status in _STATUS_FILTERS:
        rows = rows.filter(_STATUS_FILTERS[status])
    if flagged:
        speeder, shared = _flag_filters(review)
        rows = rows.filter(speeder | shared)
    return rows.order_by("started_at", "pk").only(
        "pk", "study_id", "prolific_pid", "status", "excluded", "started_at", "consented_at", "submitted_at",
        "attention_passed", "prolific_decision",
    )  # fmt: skip


def submission_row(*, submission: Submission, study: Study, review: Review) -> dict:
    """What the table shows of one submission (never anything the participant typed beyond their
    Prolific ID)."""
    standing = next(key for key, condition in _STATUS_ROWS.items() if condition(submission))
    taken = getattr(submission, "taken", None)
    seconds = taken.total_seconds() if taken is not None and submission.status == _SUBMITTED else None
    below = review.speeder_below_seconds
    code = ""
    if submission.status == _SUBMITTED:
        code = study.screenout_code if submission.excluded else study.completion_code
    speeder = seconds is not None and below is not None and seconds < below
    shared = submission.prolific_pid in review.shared_pids
    return {
        "id": submission.pk,
        "prolific_pid": submission.prolific_pid,
        "status": standing,
        "status_label": STATUS_LABELS[standing],
        "started_at": submission.started_at,
        "seconds": seconds,
        "minutes": seconds / 60 if seconds is not None else None,
        "code": code,
        "attention_passed": submission.attention_passed,
        "speeder": speeder,
        "shared_pid": shared,
        # A finished submission that waits for (or got) the researcher's decision for Prolific.
        "decidable": submission.status == _SUBMITTED
        and bool(PROLIFIC_ID.fullmatch(submission.prolific_pid))
        and (speeder or shared),
        "decision": submission.prolific_decision,
    }


_STATUS_ROWS = {
    "completed": lambda s: s.status == _SUBMITTED and not s.excluded,
    "screened_out": lambda s: s.status == _SUBMITTED and s.excluded,
    "in_progress": lambda s: s.status != _SUBMITTED and not s.excluded,
    "excluded": lambda s: True,
}


def prolific_decisions(*, study: Study, review: Review) -> dict[str, list[str]]:
    """The Prolific IDs to approve and to reject, sorted, each once; one query.

    A flagged submission (a speeder, or its Prolific ID used by another submission too) goes
    where the researcher decided it (`prolific_decision`), and until then is in neither list
    (`flagged`), whether it was kept or screened out. Otherwise: approve what finished and was
    kept (given the completion code), reject what finished and was screened out (given the
    screen-out code). An ID that is not one word (it would split in a list) is always flagged:
    it is handled by hand."""
    below = review.speeder_below_seconds
    finished = (
        Submission.objects.filter(study=study, status=_SUBMITTED)
        .exclude(prolific_pid="")
        .annotate(taken=_taken())
        .values_list("prolific_pid", "excluded", "taken", "prolific_decision")
    )
    decisions: dict[str, set[str]] = {"approve": set(), "reject": set(), "flagged": set()}
    for pid, excluded, taken, decided in finished:
        speeder = taken is not None and below is not None and taken.total_seconds() < below
        if not PROLIFIC_ID.fullmatch(pid):
            decisions["flagged"].add(pid)
        elif speeder or pid in review.shared_pids:
            decisions[decided if decided in DECISIONS else "flagged"].add(pid)
        else:
            decisions["reject" if excluded else "approve"].add(pid)
    return {key: sorted(values) for key, values in decisions.items()}


@transaction.atomic
def prolific_ids_export(*, study: Study, decision: str, actor) -> list[str]:
    """The Prolific IDs to `decision` ("approve" or "reject"), with the export recorded in the
    audit log as every export of participant data is (the one write of this module)."""
    if decision not in DECISIONS:
        raise ValueError(decision)
    ids = prolific_decisions(study=study, review=study_review(study=study))[decision]
    audit_record(
        actor=actor,
        action=AuditAction.EXPORT,
        target=f"export:prolific-{decision}",
        details={"study": study.slug, "ids": len(ids), "via": "page"},
        workspace=study.workspace_id,
    )
    return ids
