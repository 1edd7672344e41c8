"""Reads of studies, submissions, cases and datasets for pages, the API and exports."""

from django.db.models import Count, Q, QuerySet

from curation.models import Dataset, Study, Submission


def study_list_with_counts() -> QuerySet[Study]:
    """Studies with how many submissions are finished, in progress and excluded."""
    return Study.objects.annotate(
        submitted_count=Count("submissions", filter=Q(submissions__status=Submission.Status.SUBMITTED)),
        in_progress_count=Count("submissions", filter=Q(submissions__status=Submission.Status.IN_PROGRESS)),
        excluded_count=Count("submissions", filter=Q(submissions__excluded=True)),
    ).order_by("-created_at")


def dataset_list_with_counts() -> QuerySet[Dataset]:
    """Datasets with their item count, newest first."""
    return Dataset.objects.annotate(item_count=Count("items")).order_by("-created_at")


def export_scope_resolve(*, dataset_name: str | None, study_slug: str | None, run_id: int | None) -> dict:
    """Turn the names given on a command line or in a query string into the objects an export
    needs; an unknown name raises ExportError saying which one."""
    from curation.exports import ExportError
    from judging.models import JudgeRun

    scope = {"dataset": None, "study": None, "run": None}
    if dataset_name:
        scope["dataset"] = Dataset.objects.filter(name=dataset_name).first()
        if scope["dataset"] is None:
            raise ExportError(f"No dataset named {dataset_name!r}.")
    if study_slug:
        scope["study"] = Study.objects.filter(slug=study_slug).first()
        if scope["study"] is None:
            raise ExportError(f"No study with slug {study_slug!r}.")
    if run_id is not None:
        scope["run"] = JudgeRun.objects.filter(pk=run_id).select_related("dataset").first()
        if scope["run"] is None:
            raise ExportError(f"No judge run {run_id}.")
    return scope
