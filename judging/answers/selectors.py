"""Reads for a dataset's answers page and the API: the candidate models' answer counts and the
generations started from the browser or the API, and the large uploads read by a worker."""

from django.db.models import Count, Max, Q, QuerySet
from django.utils.translation import gettext as _

from core.errors import UserbenchError
from core.workspaces import in_workspace
from curation.models import Dataset
from judging.models import AnswerGeneration, AnswerUpload, CandidateModel


class GenerationNotFound(UserbenchError):
    """No generation of that id on that dataset."""


class UploadNotFound(UserbenchError):
    """No stored upload of that id on that dataset."""


def answer_counts(*, dataset: Dataset) -> QuerySet[CandidateModel]:
    """The candidate models (not the injection probe's) with current answers on the dataset, each
    with `answer_count`, `cut_off_count` (those cut off at max_tokens) and `answer_version` (the
    current version's number), by name."""
    return (
        in_workspace(CandidateModel.objects.filter(is_probe=False), dataset.workspace_id)
        .annotate(
            answer_count=Count(
                "answers", filter=Q(answers__item__dataset=dataset, answers__is_current=True), distinct=True
            ),
            cut_off_count=Count(
                "answers",
                filter=Q(answers__item__dataset=dataset, answers__is_current=True, answers__cut_off=True),
                distinct=True,
            ),
            answer_version=Max(
                "answer_sets__version", filter=Q(answer_sets__dataset=dataset, answer_sets__is_current=True)
            ),
        )
        .filter(answer_count__gt=0)
        .order_by("name")
    )


def generation_list(*, dataset: Dataset) -> QuerySet[AnswerGeneration]:
    """The dataset's generations, newest first."""
    return AnswerGeneration.objects.filter(dataset=dataset).select_related("model", "endpoint", "created_by")


def generation_of_dataset(*, dataset: Dataset, generation_id: int) -> AnswerGeneration:
    """The dataset's generation of that id; GenerationNotFound naming it otherwise."""
    found = generation_list(dataset=dataset).filter(pk=generation_id).first()
    if found is None:
        raise GenerationNotFound(
            _("Dataset %(dataset)s has no generation %(id)s.") % {"dataset": dataset.name, "id": generation_id}
        )
    return found


def upload_list(*, dataset: Dataset) -> QuerySet[AnswerUpload]:
    """The dataset's uploads read by a worker, newest first, without their stored files."""
    return AnswerUpload.objects.filter(dataset=dataset).defer("content")


def upload_of_dataset(*, dataset: Dataset, upload_id: int) -> AnswerUpload:
    """The dataset's upload of that id; UploadNotFound naming it otherwise (so another
    workspace's upload is not found either: its dataset is not the person's)."""
    found = upload_list(dataset=dataset).filter(pk=upload_id).first()
    if found is None:
        raise UploadNotFound(
            _("Dataset %(dataset)s has no upload %(id)s.") % {"dataset": dataset.name, "id": upload_id}
        )
    return found
