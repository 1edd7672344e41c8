"""Answers files too large to read inside a web request: a file over UPLOAD_BACKGROUND_BYTES from
the answers page or the API is stored in the database (judging.models.AnswerUpload) and read by a
worker on the `default` queue (judging/tasks.py), which any worker host can run; the page and the
API follow its progress as they follow a generation's.

The worker goes through the same two steps as an upload read in the request
(judging/answers/imports.py): every line checked and matched as it is read, writing nothing, then
the answers stored in one transaction together with the upload's finished status. A worker killed
at any point leaves either nothing or everything; its upload, silent for JUDGING_STALE_SECONDS,
can be resumed and is read again from its first line. Each claim counts an attempt, and only the
latest attempt may store, so a worker that comes back late stores nothing.

The stored file is emptied as soon as the upload finishes or is refused: nobody needs it then, and
it is never served, to anyone. An upload whose worker died keeps it until it is resumed.
"""

from __future__ import annotations

import io

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _

from curation.datasets.importers import DataImportError, checked_name
from curation.models import Dataset
from judging.answers.imports import answer_format, answers_check, answers_store
from judging.dispatch import answers_upload_enqueue
from judging.models import AnswerUpload, CandidateModel, stale_after


class UploadError(DataImportError):
    """An upload that cannot be queued or resumed, in words for the researcher."""


def upload_in_background(size: int | None) -> bool:
    """Whether a file of `size` bytes is read by a worker rather than in the request."""
    return (size or 0) > settings.UPLOAD_BACKGROUND_BYTES


def upload_is_stale(upload: AnswerUpload) -> bool:
    """A reading upload whose worker has not been heard of for JUDGING_STALE_SECONDS."""
    beat = upload.beat_at or upload.created_at
    return upload.status == AnswerUpload.Status.RUNNING and timezone.now() - beat > stale_after()


def upload_can_resume(upload: AnswerUpload) -> bool:
    return upload_is_stale(upload)


def upload_queue(
    *, dataset: Dataset, model_name: str, file: UploadedFile, actor=None, replace: bool = False
) -> AnswerUpload:
    """Store the file and queue its reading; the model's name is checked at once (UploadError).
    With `replace`, the file becomes the model's next version of answers."""
    name = model_name.strip()
    if not name:
        raise UploadError(_("Name the model whose answers these are."))
    name = checked_name(name, "model name", CandidateModel, "name")
    content = b"".join(file.chunks())
    upload = AnswerUpload.objects.create(
        dataset=dataset,
        model_name=name,
        file_name=(file.name or "")[:255],
        file_format=answer_format(file.name or ""),
        replace=replace,
        content=content,
        size=len(content),
        created_by=actor,
    )
    # The database backend's task row is written beside it, in the same transaction if any.
    answers_upload_enqueue(upload)
    return upload


def upload_resume(*, upload: AnswerUpload) -> AnswerUpload:
    """Queue again an upload whose worker died; it is read again from its first line."""
    with transaction.atomic():
        locked = AnswerUpload.objects.select_for_update().get(pk=upload.pk)
        if not upload_can_resume(locked):
            raise UploadError(_("Only an upload whose worker stopped can be resumed; this one is at work or done."))
        # Only the stale attempt seen above: one that finished meanwhile stays finished.
        if not AnswerUpload.objects.filter(
            pk=locked.pk, status=AnswerUpload.Status.RUNNING, attempt=locked.attempt
        ).update(status=AnswerUpload.Status.QUEUED, beat_at=None):
            raise UploadError(_("Only an upload whose worker stopped can be resumed; this one is at work or done."))
    answers_upload_enqueue(upload)
    upload.refresh_from_db()
    return upload


def upload_execute(*, upload_id: int) -> str:
    """A worker's reading of one stored upload (the task judging/tasks.py queues). Returns its
    final status, or "not queued" when another worker has it or it is done."""
    claimed = AnswerUpload.objects.filter(pk=upload_id, status=AnswerUpload.Status.QUEUED).update(
        status=AnswerUpload.Status.RUNNING,
        attempt=F("attempt") + 1,
        beat_at=timezone.now(),
        lines_read=0,
        bytes_read=0,
        error="",
    )
    if not claimed:
        return "not queued"
    upload = AnswerUpload.objects.select_related("dataset", "created_by").get(pk=upload_id)
    mine = AnswerUpload.objects.filter(pk=upload_id, attempt=upload.attempt, status=AnswerUpload.Status.RUNNING)
    stream = io.BytesIO(bytes(upload.content))

    def progress(lines: int) -> None:
        mine.update(lines_read=lines, bytes_read=stream.tell(), beat_at=timezone.now())

    try:
        checked = answers_check(
            dataset_name=upload.dataset.name,
            workspace_id=upload.dataset.workspace_id,
            model_name=upload.model_name,
            stream=stream,
            file_format=upload.file_format,
            on_progress=progress,
            replace=upload.replace,
        )
        with transaction.atomic():
            # Taken first in the transaction: a resume waits for it, and a later attempt's claim
            # makes it match nothing, so only the latest attempt stores.
            if not mine.update(beat_at=timezone.now()):
                return "taken over"
            count = answers_store(checked, actor=upload.created_by)
            mine.update(
                status=AnswerUpload.Status.FINISHED,
                imported=count,
                bytes_read=upload.size,
                content=b"",
                finished_at=timezone.now(),
            )
    except DataImportError as refused:
        if not mine.update(
            status=AnswerUpload.Status.FAILED, error=str(refused)[:2000], content=b"", finished_at=timezone.now()
        ):
            return "taken over"  # a later attempt has it: its outcome stands
        return AnswerUpload.Status.FAILED
    return AnswerUpload.Status.FINISHED
