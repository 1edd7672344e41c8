"""Reads of studies, submissions, cases and datasets for pages, the API and exports."""

from django.db.models import Count, Q, QuerySet

from curation.models import Case, Dataset, Study, Submission


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


def review_queue_counts() -> dict[str, int]:
    """How many cases wait in the quality and PII queue, and how many were decided."""
    counts = Case.objects.filter(
        submission__status=Submission.Status.SUBMITTED, submission__excluded=False
    ).aggregate(
        pending=Count("id", filter=Q(review_status=Case.ReviewStatus.PENDING)),
        accepted=Count("id", filter=Q(review_status=Case.ReviewStatus.ACCEPTED)),
        rejected=Count("id", filter=Q(review_status=Case.ReviewStatus.REJECTED)),
    )
    return counts
