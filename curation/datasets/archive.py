"""What of curation stops a dataset from being archived (core/archiving.py, `archive_users`)."""

from __future__ import annotations

from django.utils.translation import gettext as _

from core.archiving import archive_users
from curation.models import CurationJob, Dataset


@archive_users("dataset")
def dataset_curation_jobs(dataset: Dataset) -> list[str]:
    """Its reference-drafting and translation jobs still pending or running: their worker would
    meet an archived dataset."""
    jobs = CurationJob.objects.filter(
        dataset=dataset, status__in=(CurationJob.Status.PENDING, CurationJob.Status.RUNNING)
    ).order_by("pk")
    return [_("curation job %(id)d (%(kind)s)") % {"id": job.pk, "kind": job.get_kind_display()} for job in jobs]
