"""Answers files too large to read inside a web request: a file over UPLOAD_BACKGROUND_BYTES from
the answers page or the API is stored in the database (judging.models.AnswerUpload) and read by a
worker on the `default` queue (judging/tasks.py). How such an upload is kept, claimed, resumed,
discarded and finished is core/uploads.py's, shared with dataset imports; this module says what
reading and storing answers is: the same two steps as an upload read in the request
(judging/answers/imports.py), every line checked and matched as it is read, writing nothing,
then the answers stored in one transaction together with the upload's finished status.
"""

from __future__ import annotations

from django.core.files.uploadedfile import UploadedFile
from django.utils.translation import gettext as _

from core import uploads as stored
from core.archiving import refuse_if_archived
from core.uploads import upload_can_discard, upload_can_resume, upload_in_background, upload_is_stale
from curation.datasets.importers import DataImportError, checked_name
from curation.models import Dataset
from judging.answers.imports import answer_format, answers_check, answers_store
from judging.dispatch import answers_upload_enqueue
from judging.models import AnswerUpload, CandidateModel

__all__ = [
    "UploadError",
    "upload_can_discard",
    "upload_can_resume",
    "upload_discard",
    "upload_execute",
    "upload_in_background",
    "upload_is_stale",
    "upload_queue",
    "upload_resume",
]


class UploadError(DataImportError, stored.UploadError):
    """An upload that cannot be queued or resumed, in words for the researcher."""


def upload_queue(
    *, dataset: Dataset, model_name: str, file: UploadedFile, actor=None, replace: bool = False
) -> AnswerUpload:
    """Store the file and queue its reading; the model's name is checked at once (UploadError).
    With `replace`, the file becomes the model's next version of answers. An archived dataset:
    ArchivedError, before anything is stored (as an upload read at once is refused)."""
    refuse_if_archived(dataset)
    name = model_name.strip()
    if not name:
        raise UploadError(_("Name the model whose answers these are."))
    name = checked_name(name, "model name", CandidateModel, "name")
    upload = stored.upload_file_store(
        AnswerUpload,
        file=file,
        dataset=dataset,
        model_name=name,
        file_format=answer_format(file.name or ""),
        replace=replace,
        created_by=actor,
    )
    # The database backend's task row is written beside it, in the same transaction if any.
    answers_upload_enqueue(upload)
    return upload


def upload_resume(*, upload: AnswerUpload) -> AnswerUpload:
    """Queue again an upload whose worker died; it is read again from its first line. Its dataset
    archived: ArchivedError."""
    refuse_if_archived(upload.dataset)
    try:
        return stored.upload_resume(upload=upload, enqueue=answers_upload_enqueue)
    except stored.UploadError as error:
        raise UploadError(str(error)) from None


def upload_discard(*, upload: AnswerUpload, actor) -> None:
    """Remove a refused or stopped upload and its stored file, audited on its dataset. Its dataset
    archived: ArchivedError (the upload goes when the dataset is purged)."""
    refuse_if_archived(upload.dataset)
    try:
        stored.upload_discard(
            upload=upload,
            actor=actor,
            target=f"dataset:{upload.dataset.name}",
            workspace=upload.dataset.workspace_id,
            what={"upload": upload.pk, "model": upload.model_name, "replace": upload.replace},
        )
    except stored.UploadError as error:
        raise UploadError(str(error)) from None


def _check(upload: AnswerUpload, stream, progress):
    return answers_check(
        dataset_name=upload.dataset.name,
        workspace_id=upload.dataset.workspace_id,
        model_name=upload.model_name,
        stream=stream,
        file_format=upload.file_format,
        on_progress=progress,
        replace=upload.replace,
    )


def upload_execute(*, upload_id: int) -> str:
    """A worker's reading of one stored answers upload (the task judging/tasks.py queues). Returns
    its final status, or "not queued" when another worker has it or it is done."""
    return stored.upload_execute(
        AnswerUpload,
        upload_id=upload_id,
        check=_check,
        store=lambda upload, checked: answers_store(checked, actor=upload.created_by),
        refused=DataImportError,
    )
