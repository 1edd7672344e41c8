"""What of annotation stops a dataset from being archived (core/archiving.py, `archive_users`)."""

from __future__ import annotations

from django.utils.translation import gettext as _

from annotation.models import Campaign
from core.archiving import archive_users
from curation.models import Dataset


@archive_users("dataset")
def dataset_campaigns(dataset: Dataset) -> list[str]:
    """Its campaigns not archived: left live on an archived dataset, one would stay in the lists
    and the annotators' queues, and take votes, without it."""
    slugs = Campaign.objects.active().filter(dataset=dataset).order_by("pk").values_list("slug", flat=True)
    return [_("campaign %(slug)s") % {"slug": slug} for slug in slugs]
