"""Reads of the questionnaire: a participant's submission, study statistics, export rows.

Each function runs a fixed number of queries whatever the number of submissions, so
pages and the API stay flat as a study grows (tests pin the counts).
"""

from collections.abc import Iterator

from django.conf import settings
from django.db.models import Count, Q, QuerySet

from core.roles import Role
from core.workspaces import scoped
from curation.choices import SATISFACTION_INTENTS
from curation.models import Case, Study, Submission
from curation.studies.maths import completion_rate, median_seconds, satisfaction_by_intent

# Rows per database round trip when streaming exports: memory stays flat with the row count.
EXPORT_CHUNK = 1000


def study_list_with_counts(*, user=None) -> QuerySet[Study]:
    """Studies (of the workspaces where the person is a researcher; every one for the operator;
    not archived) with how many submissions are finished, in progress and excluded."""
    studies = Study.objects.active()
    studies = studies if user is None else scoped(studies, user, role=Role.RESEARCHER.value)
    return studies.annotate(
        submitted_count=Count("submissions", filter=Q(submissions__status=Submission.Status.SUBMITTED)),
        in_progress_count=Count("submissions", filter=Q(submissions__status=Submission.Status.IN_PROGRESS)),
        excluded_count=Count("submissions", filter=Q(submissions__excluded=True)),
    ).order_by("-created_at")


def study_chinese_gaps(*, study: Study) -> list[str]:
    """The participant texts (consent, title, instructions) that have an English version and no
    Chinese one, consent first. Every study is offered in Chinese whenever the site is: a
    participant reading in Chinese then sees the English text instead."""
    if not any(code.startswith("zh") for code, _name in settings.LANGUAGES):
        return []
    return [
        field
        for field in ("consent", "title", "instructions")
        if getattr(study, f"{field}_en").strip() and not getattr(study, f"{field}_zh").strip()
    ]


def submission_for_session(*, study: Study, submission_id: int | None) -> Submission | None:
    """The submission this browser session holds for the study, if any (one query)."""
    if not submission_id:
        return None
    return Submission.objects.filter(study=study, pk=submission_id).first()


def submission_held_before(*, study: Study, prolific_pid: str, submission_ids: list[int]) -> Submission | None:
    """The unfinished submission under this Prolific ID among those this browser held before
    (`submission_ids`, from its session), if any; one query. This browser started it, so it
    may open it again after another Prolific ID was used in between."""
    if not prolific_pid or not submission_ids:
        return None
    return (
        Submission.objects.filter(
            study=study,
            prolific_pid=prolific_pid,
            pk__in=submission_ids,
            status=Submission.Status.IN_PROGRESS,
            excluded=False,
        )
        .order_by("-pk")
        .first()
    )


def prolific_pid_state(*, study: Study, prolific_pid: str) -> tuple[Submission | None, bool]:
    """(the finished submission under this Prolific ID if there is one, whether an unfinished
    one exists), in one query. For the start page only: a Prolific ID opens no answers."""
    if not prolific_pid:
        return None, False
    rows = list(
        Submission.objects.filter(study=study, prolific_pid=prolific_pid)
        .order_by("-status", "-started_at")  # "submitted" sorts after "in_progress": descending puts it first
        .only("pk", "status", "excluded", "study_id")[:2]
    )
    finished = rows[0] if rows and rows[0].status == Submission.Status.SUBMITTED else None
    unfinished = any(row.status == Submission.Status.IN_PROGRESS for row in rows)
    return finished, unfinished


def study_prolific_duplicates(*, study: Study) -> list[dict]:
    """Prolific IDs with more than one submission that a researcher has not resolved yet, each
    with its submissions (id, status, start, last activity, step, case count), in two queries."""
    groups = (
        Submission.objects.filter(study=study)
        .exclude(prolific_pid="")
        .values("prolific_pid")
        .annotate(total=Count("id"), open=Count("id", filter=Q(duplicate_resolved=False)))
        .filter(total__gt=1, open__gt=0)
        .order_by("prolific_pid")
    )
    pids = [group["prolific_pid"] for group in groups]
    if not pids:
        return []
    submissions = (
        Submission.objects.filter(study=study, prolific_pid__in=pids)
        .annotate(case_count=Count("cases"))
        .order_by("prolific_pid", "started_at", "pk")
    )
    by_pid: dict[str, list[Submission]] = {pid: [] for pid in pids}
    for submission in submissions:
        by_pid[submission.prolific_pid].append(submission)
    return [{"prolific_pid": pid, "submissions": rows} for pid, rows in by_pid.items()]


def submission_for_resume_token(*, study: Study, token: str) -> Submission | None:
    """The submission a private resume link opens."""
    if not token:
        return None
    return Submission.objects.filter(study=study, resume_token=token).first()


def submission_cases(*, submission: Submission) -> list[Case]:
    """The submission's cases in order (one query)."""
    return list(submission.cases.order_by("position"))


def study_statistics(*, study: Study) -> dict:
    """What a researcher reads about a study, in four queries.

    Completion rate is completed (finished with the completion code) over started (consented)
    submissions; those finished with the screen-out code count apart (`screened_out`,
    `screenout_rate`), as Prolific counts them; median time runs
    from consent to submission; intents, services and satisfaction count only finished,
    non-excluded submissions, the ones that enter curation. Submissions sharing a Prolific ID
    count as one participant until a researcher resolves them (study_prolific_duplicates); a
    Prolific ID finishes at most once, so "in progress" is the started ones not finished.
    """
    unresolved = ~Q(prolific_pid="") & Q(duplicate_resolved=False)
    counts = Submission.objects.filter(study=study).aggregate(
        each=Count("id", filter=~unresolved),
        people=Count("prolific_pid", filter=unresolved, distinct=True),
        submitted=Count("id", filter=Q(status=Submission.Status.SUBMITTED)),
        screened_out=Count("id", filter=Q(status=Submission.Status.SUBMITTED, excluded=True)),
        excluded=Count("id", filter=Q(excluded=True)),
    )
    counts = {
        "started": counts["each"] + counts["people"],
        "submitted": counts["submitted"],
        # Finished with the screen-out code: counted apart, never as completions.
        "screened_out": counts["screened_out"],
        "completed": counts["submitted"] - counts["screened_out"],
        "in_progress": counts["each"] + counts["people"] - counts["submitted"],
        "excluded": counts["excluded"],
    }
    finished = list(
        Submission.objects.filter(study=study, status=Submission.Status.SUBMITTED).values_list(
            "pk", "prolific_pid", "consented_at", "started_at", "submitted_at", "usage", "excluded", "exclusion_reason"
        )
    )
    durations = [
        (submitted_at - (consented_at or started_at)).total_seconds()
        for _pk, _pid, consented_at, started_at, submitted_at, _usage, _excluded, _reason in finished
        if submitted_at
    ]
    included_usage = [usage for *_head, usage, excluded, _reason in finished if not excluded]
    exclusions = [
        {"submission": pk, "prolific_pid": pid, "reason": reason}
        for pk, pid, _c, _s, _t, _u, excluded, reason in finished
        if excluded
    ]
    kept_cases = Case.objects.filter(
        submission__study=study, submission__status=Submission.Status.SUBMITTED, submission__excluded=False
    )
    intents = list(kept_cases.values("intent").annotate(count=Count("id")).order_by("-count", "intent"))
    services = list(kept_cases.values("service").annotate(count=Count("id")).order_by("-count", "service"))
    return {
        **counts,
        "completion_rate": completion_rate(counts["started"], counts["completed"]),
        "screenout_rate": completion_rate(counts["started"], counts["screened_out"]),
        "median_seconds": median_seconds(durations),
        "exclusions": exclusions,
        "intents": intents,
        "services": services,
        "case_count": sum(row["count"] for row in intents),
        "satisfaction": satisfaction_by_intent(included_usage, [intent.value for intent in SATISFACTION_INTENTS]),
    }


SUBMISSION_EXPORT_FIELDS = [
    "submission_id", "study", "status", "language", "prolific_pid", "prolific_study_id", "prolific_session_id",
    "consented_at", "started_at", "submitted_at", "age_group", "occupation", "country", "llms_used", "frequency",
    "satisfaction", "attention_check", "attention_passed", "excluded", "exclusion_reason", "case_count",
]  # fmt: skip

CASE_EXPORT_FIELDS = [
    "case_id", "submission_id", "study", "position", "service", "question", "conversation", "intent",
    "intent_other", "review_status", "language", "country", "excluded", "submitted_at",
]  # fmt: skip
# Only when a researcher asks for participants' unreviewed text (audited): the conversation as
# typed and the share link, which opens the whole original conversation.
CASE_RAW_FIELDS = ["raw_conversation", "share_link"]


def _iso(value) -> str:
    return value.isoformat() if value else ""


def study_submission_rows(*, study: Study) -> Iterator[dict]:
    """Export rows of a study's submissions, streamed in chunks. Never the resume token."""
    queryset = (
        Submission.objects.filter(study=study)
        .annotate(case_count=Count("cases"))
        .order_by("pk")
        .values_list(
            "pk",
            "status",
            "language",
            "prolific_pid",
            "prolific_study_id",
            "prolific_session_id",
            "consented_at",
            "started_at",
            "submitted_at",
            "age_group",
            "occupation",
            "country",
            "usage",
            "attention_passed",
            "excluded",
            "exclusion_reason",
            "case_count",
        )  # fmt: skip
    )
    for row in queryset.iterator(chunk_size=EXPORT_CHUNK):
        (pk, status, language, pid, prolific_study, session, consented, started, submitted, age, occupation,
         country, usage, passed, excluded, reason, case_count) = row  # fmt: skip
        usage = usage or {}
        yield {
            "submission_id": pk,
            "study": study.slug,
            "status": status,
            "language": language,
            "prolific_pid": pid,
            "prolific_study_id": prolific_study,
            "prolific_session_id": session,
            "consented_at": _iso(consented),
            "started_at": _iso(started),
            "submitted_at": _iso(submitted),
            "age_group": age,
            "occupation": occupation,
            "country": country,
            "llms_used": list(usage.get("llms_used") or []),
            "frequency": usage.get("frequency", ""),
            "satisfaction": dict(usage.get("satisfaction") or {}),
            "attention_check": usage.get("attention_check", ""),
            "attention_passed": passed,
            "excluded": excluded,
            "exclusion_reason": reason,
            "case_count": case_count,
        }


def study_case_rows(*, study: Study, raw: bool = False) -> Iterator[dict]:
    """Export rows of a study's cases, streamed in chunks, each with its submission's context.

    `question` and `conversation` are the reviewed text of accepted cases (empty until a
    reviewer accepted the case): personal information a reviewer removed stays removed. With
    `raw`, `raw_conversation` and `share_link` carry what the participant gave.
    Only finished submissions' cases: unfinished answers are the participant's alone.
    """
    queryset = (
        Case.objects.filter(submission__study=study, submission__status=Submission.Status.SUBMITTED)
        .order_by("submission_id", "position")
        .values_list(
            "pk",
            "submission_id",
            "position",
            "service",
            "curation__question",
            "curation__conversation",
            "conversation",
            "share_link",
            "intent",
            "intent_other",
            "review_status",
            "submission__language",
            "submission__country",
            "submission__excluded",
            "submission__submitted_at",
        )  # fmt: skip
    )
    for row in queryset.iterator(chunk_size=EXPORT_CHUNK):
        (pk, submission_id, position, service, question, reviewed, conversation, link, intent, intent_other,
         review_status, language, country, excluded, submitted) = row  # fmt: skip
        accepted = review_status == Case.ReviewStatus.ACCEPTED
        extra = {"raw_conversation": conversation, "share_link": link} if raw else {}
        yield {
            "case_id": pk,
            "submission_id": submission_id,
            "study": study.slug,
            "position": position,
            "service": service,
            "question": (question or "") if accepted else "",
            "conversation": (reviewed or "") if accepted else "",
            **extra,
            "intent": intent,
            "intent_other": intent_other,
            "review_status": review_status,
            "language": language,
            "country": country,
            "excluded": excluded,
            "submitted_at": _iso(submitted),
        }


def satisfaction_by_intent_of(*, study_id: int | None = None) -> dict[str, dict]:
    """Mean questionnaire satisfaction (1-5) per intent, {intent: {"mean", "n"}}, over submitted
    and not excluded submissions of one study (or of every study when `study_id` is None).
    Intents nobody rated are left out. The counting is curation.studies.maths's, as on the
    study page."""
    submissions = Submission.objects.filter(status=Submission.Status.SUBMITTED, excluded=False)
    if study_id is not None:
        submissions = submissions.filter(study_id=study_id)
    rows = satisfaction_by_intent(
        submissions.values_list("usage", flat=True), [intent.value for intent in SATISFACTION_INTENTS]
    )
    return {
        row["intent"]: {"mean": row["mean"], "n": row["count"]}
        for row in sorted(rows, key=lambda r: r["intent"])
        if row["count"]
    }
