"""The researcher's study pages: figures of a study and its set-up."""

from typing import cast

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy as _lazy
from django.views.decorators.http import require_POST

from core.archive_views import archive_allowed, archive_page_action
from core.archiving import ArchivedError, refuse_if_archived
from core.params import ParameterError, int_param
from core.roles import AuthenticatedHttpRequest, Role
from core.slugs import SlugTaken
from core.workspaces import workspace_get
from curation.access import researcher_required
from curation.models import Study
from curation.studies import services
from curation.studies.forms import StudyForm, UsageForm
from curation.studies.prolific import (
    DECISIONS,
    PAGE_ROWS,
    STATUS_LABELS,
    STATUSES,
    prolific_decisions,
    prolific_ids_export,
    study_review,
    study_submissions,
    submission_row,
)
from curation.studies.selectors import study_chinese_gaps, study_prolific_duplicates, study_statistics

RESEARCHER = Role.RESEARCHER.value


def _participant_link(request: HttpRequest, study: Study) -> str:
    """The link to paste into Prolific, with its placeholders for the participant's ids (the
    questionnaire reads PROLIFIC_PID, STUDY_ID and SESSION_ID from it)."""
    link = request.build_absolute_uri(reverse("curation:study-start", args=[study.slug]))
    return link + "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"


@researcher_required
def study_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """A study's progress and what participants reported."""
    study = workspace_get(Study.objects.all(), request.user, role=RESEARCHER, slug=slug)
    stats = study_statistics(study=study)
    labels = UsageForm(study=study)
    for row in stats["satisfaction"]:
        row["label"] = labels[f"sat_{row['intent']}"].label
    stats["median_minutes"] = stats["median_seconds"] / 60 if stats["median_seconds"] is not None else None
    link = _participant_link(request, study)
    return render(
        request,
        "curation/study/detail.html",
        {
            "study": study,
            "stats": stats,
            "participant_link": link,
            "duplicates": study_prolific_duplicates(study=study),
            "chinese_gaps": study_chinese_gaps(study=study),
        },
    )


@researcher_required
def study_submissions_table(request: HttpRequest, slug: str) -> HttpResponse:
    """Every submission as Prolific reviews it, speeders and shared IDs flagged, with filters and
    the IDs to approve and to reject."""
    study = workspace_get(Study.objects.all(), request.user, role=RESEARCHER, slug=slug)
    status = request.GET.get("status", "")
    status = status if status in STATUSES else ""
    flagged = request.GET.get("flagged") == "1"
    review = study_review(study=study)
    submissions = study_submissions(study=study, review=review, status=status, flagged=flagged)
    rows = [submission_row(submission=row, study=study, review=review) for row in submissions[: PAGE_ROWS + 1]]
    decisions = prolific_decisions(study=study, review=review)
    return render(
        request,
        "curation/study/submissions.html",
        {
            "study": study,
            "rows": rows[:PAGE_ROWS],
            "more_rows": len(rows) > PAGE_ROWS,
            "status": status,
            "status_choices": [(value, STATUS_LABELS[value]) for value in STATUSES],
            "flagged": flagged,
            "review": review,
            "speeder_percent": round(review.fraction * 100),
            "decisions": decisions,
            "decision_lists": [(decision, decisions[decision]) for decision in DECISIONS],
            "participant_link": _participant_link(request, study),
        },
    )


@researcher_required
def study_prolific_ids(request: AuthenticatedHttpRequest, slug: str, decision: str) -> HttpResponse:
    """The Prolific IDs to approve or to reject, one per line, as Prolific's bulk actions take them."""
    study = workspace_get(Study.objects.all(), request.user, role=RESEARCHER, slug=slug)
    if decision not in DECISIONS:
        raise Http404("No such list.")
    ids = prolific_ids_export(study=study, decision=decision, actor=request.user)
    response = HttpResponse("".join(f"{pid}\n" for pid in ids), content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-{decision}.txt"'
    return response


DECISION_QUESTIONS = {
    "approve": _lazy("Approve this submission on Prolific?"),
    "reject": _lazy("Reject this submission on Prolific?"),
    "": _lazy("Take the decision back? The submission waits for your decision again, in neither list."),
}


@researcher_required
def study_submission_decide(request: AuthenticatedHttpRequest, slug: str, submission_id: int) -> HttpResponse:
    """Decide a flagged submission for Prolific (approve, reject, or take it back): a page asks
    first, and the decision is made by its POST with confirm=yes."""
    study = workspace_get(Study.objects.all(), request.user, role=RESEARCHER, slug=slug)
    decision = request.POST.get("decision", request.GET.get("decision", ""))
    if decision not in DECISION_QUESTIONS:
        raise Http404("No such decision.")
    submission = study.submissions.filter(pk=submission_id, status="submitted").exclude(prolific_pid="").first()
    if submission is None:
        raise Http404("No such finished submission.")
    if request.method == "POST" and request.POST.get("confirm") == "yes":
        try:
            services.prolific_decision_set(
                study=study, submission_id=submission.pk, decision=decision, actor=request.user
            )
        except (services.DuplicateError, ArchivedError) as error:
            messages.error(request, str(error))
        else:
            done = {
                "approve": _("Submission #%(id)s is in the list to approve."),
                "reject": _("Submission #%(id)s is in the list to reject."),
                "": _("Submission #%(id)s waits for your decision again."),
            }[decision]
            messages.success(request, done % {"id": submission.pk})
        return redirect("curation:study-submissions", slug=study.slug)
    return render(
        request,
        "curation/study/submission_decide.html",
        {"study": study, "submission": submission, "decision": decision, "question": DECISION_QUESTIONS[decision]},
    )


@researcher_required
@require_POST
def study_duplicate_resolve(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """Keep one of the submissions that share a Prolific ID (the others are excluded)."""
    study = workspace_get(Study.objects.all(), request.user, role=RESEARCHER, slug=slug)
    try:
        keep = services.prolific_duplicates_resolve(
            study=study,
            prolific_pid=request.POST.get("prolific_pid", ""),
            keep_id=int_param(request.POST.get("keep"), name="keep", default=0),
            actor=request.user,
        )
    except (services.DuplicateError, ArchivedError) as error:
        messages.error(request, str(error))
    except ParameterError:
        messages.error(request, _("Choose a submission."))
    else:
        messages.success(request, _("Submission #%(id)s kept; the others are excluded.") % {"id": keep.pk})
    return redirect("curation:study-detail", slug=study.slug)


@researcher_required
def study_edit(request: AuthenticatedHttpRequest, slug: str | None = None) -> HttpResponse:
    """Create a study or change its set-up."""
    study = workspace_get(Study.objects.all(), request.user, role=RESEARCHER, slug=slug) if slug else None
    try:
        refuse_if_archived(study)
    except ArchivedError as error:
        messages.error(request, error.message)
        return redirect("curation:study-detail", slug=slug)
    # A new study's workspace is chosen on the form (when the person has several); a study never moves.
    form = StudyForm(
        request.POST if request.method == "POST" else None,
        instance=study or Study(),
        creator=None if study else request.user,
    )
    if request.method == "POST" and form.is_valid():
        try:
            saved = services.study_save(
                values=form.study_values(), study=study, user=request.user, workspace=form.workspace_chosen()
            )
        except SlugTaken as error:
            # The free proposal fills the field: saving again takes it.
            form.data = proposed = cast(QueryDict, form.data).copy()
            proposed["slug"] = error.proposal
            form.add_error("slug", error.message)
        except services.StudyError as error:
            for field, errors in error.fields.items() or {None: error.messages}.items():
                form.add_error(field if field in form.fields else None, errors)
        else:
            messages.success(request, _("Study saved."))
            return redirect("curation:study-detail", slug=saved.slug)
    gaps = study_chinese_gaps(study=study) if study else []
    return render(request, "curation/study/edit.html", {"study": study, "form": form, "chinese_gaps": gaps})


@researcher_required
@require_POST
def study_withdraw(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """Withdraw a participant (by Prolific ID or submission number) and erase their data."""
    study = workspace_get(Study.objects.all(), request.user, role=RESEARCHER, slug=slug)
    if request.POST.get("confirm") != "1":
        messages.error(request, _("Tick the box to confirm the erasure; nothing was erased."))
        return redirect("curation:study-detail", slug=study.slug)
    # A submission number that is not a whole number (`²`, 20 digits) is a 400 naming the field
    # (core.middleware turns the ParameterError into it); nothing is erased.
    submission_id = int_param(request.POST.get("submission", "").strip().lstrip("#"), name="submission")
    try:
        report = services.participant_withdraw(
            study=study,
            prolific_pid=request.POST.get("prolific_pid", ""),
            submission_id=submission_id,
            actor=request.user,
        )
    except services.WithdrawalError as error:
        messages.error(request, str(error))
    else:
        messages.success(
            request,
            _(
                "Erased %(submissions)d submission(s) and %(cases)d case(s); %(deleted)d item(s) deleted, "
                "%(tombstoned)d replaced by a tombstone."
            )
            % {
                "submissions": len(report["submissions"]),
                "cases": report["cases"],
                "deleted": report["items_deleted"],
                "tombstoned": report["items_tombstoned"],
            },
        )
    return redirect("curation:study-detail", slug=study.slug)


@researcher_required
@require_POST
def study_archive_view(request: AuthenticatedHttpRequest, slug: str, archived: bool) -> HttpResponse:
    """The study page's Archive (confirmed on the page) and Restore buttons."""
    study = workspace_get(Study.objects.all(), request.user, role=RESEARCHER, slug=slug)
    back = reverse("curation:study-detail", args=[study.slug])
    return archive_page_action(request, obj=study, archived=archived, kind="study", check=archive_allowed, back=back)
