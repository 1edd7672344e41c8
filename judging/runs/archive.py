"""What may stop a judge run from being archived or restored (the change itself is
core/archiving.py's `archive_set`), and what of judging stops a dataset from being archived."""

from __future__ import annotations

from django.utils.translation import gettext as _

from core.archiving import ArchivedError, archive_users
from curation.models import Dataset
from judging.models import AnswerGeneration, AnswerUpload, JudgeRun


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


@archive_users("dataset")
def dataset_judging_users(dataset: Dataset) -> list[str]:
    """Its runs not archived (one at work cannot be), and its answer generations and stored
    answers uploads still queued or being read: their workers would meet an archived dataset."""
    runs = JudgeRun.objects.active().filter(dataset=dataset).order_by("pk").values_list("pk", flat=True)
    users = [_("run #%(id)d") % {"id": pk} for pk in runs]
    generations = AnswerGeneration.objects.filter(dataset=dataset, status__in=AnswerGeneration.ACTIVE)
    users += [
        _("the generation of %(model)s's answers") % {"model": name}
        for name in generations.order_by("pk").values_list("model__name", flat=True)
    ]
    uploads = AnswerUpload.objects.filter(dataset=dataset, status__in=AnswerUpload.ACTIVE)
    users += [
        _("the upload of %(model)s's answers") % {"model": name}
        for name in uploads.order_by("pk").values_list("model_name", flat=True)
    ]
    return users
