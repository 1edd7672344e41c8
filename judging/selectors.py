"""Reads of judge runs for pages and the API."""

from django.db.models import Count, Q, QuerySet

from judging.models import JudgeRun


def run_list_with_progress() -> QuerySet[JudgeRun]:
    """Runs with their judgment counts: done, parse failures."""
    return (
        JudgeRun.objects.select_related("dataset", "reference_model")
        .annotate(
            judgment_count=Count("judgments"),
            failure_count=Count("judgments", filter=~Q(judgments__parse_error="")),
        )
        .order_by("-created_at")
    )
