"""What may stop a judge run from being archived or restored (the change itself is
core/archiving.py's `archive_set`)."""

from __future__ import annotations

from django.utils.translation import gettext as _

from core.archiving import ArchivedError
from judging.models import JudgeRun


def run_archive_check(run: JudgeRun, archived: bool) -> None:
    """A run at work is not archived (its workers would go on spending); a run is not restored
    while its dataset is archived (it would come back into the lists without it)."""
    if archived and run.status in (JudgeRun.Status.PENDING, JudgeRun.Status.RUNNING):
        raise ArchivedError(
            _("Run #%(id)d is still at work; cancel it or let it finish before archiving it.") % {"id": run.pk}
        )
    if not archived and run.dataset.archived_at is not None:
        raise ArchivedError(
            _("Run #%(id)d's dataset %(dataset)s is archived; restore the dataset first.")
            % {"id": run.pk, "dataset": run.dataset.name}
        )
