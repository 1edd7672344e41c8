"""Files too large to read inside a web request, whatever they hold (a model's answers:
judging/answers/uploads.py; a dataset: curation/datasets/uploads.py). A file over
UPLOAD_BACKGROUND_BYTES from a page or the API is stored in the database (a `BackgroundUpload`)
and read by a worker on the `default` queue, which any worker host can run; the page and the API
follow its progress as they follow a generation's.

The worker goes through the same two steps as a file read in the request: every line checked as
it is read, writing nothing, then everything stored in one transaction together with the
upload's finished status. A worker killed at any point leaves either nothing or everything; its
upload, silent for JUDGING_STALE_SECONDS, can be resumed and is read again from its first line.
Each claim counts an attempt, and only the latest attempt may store, so a worker that comes back
late stores nothing.

The stored file is emptied as soon as the upload finishes or is refused: nobody needs it then, and
it is never served, to anyone. An upload whose worker died keeps it until it is resumed or
discarded; a discarded upload is gone, its file with it.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import models, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from core.audit import AuditAction, audit_record
from core.errors import UserbenchError


class BackgroundUpload(models.Model):
    """An abstract model: a stored file, its reading's progress and outcome. Each kind adds what
    it is for (the dataset and model of answers; the new dataset's name and format)."""

    class Status(models.TextChoices):
        QUEUED = "queued", gettext_lazy("Queued")
        RUNNING = "running", gettext_lazy("Reading")
        FINISHED = "finished", gettext_lazy("Finished")
        FAILED = "failed", gettext_lazy("Refused")

    ACTIVE = (Status.QUEUED, Status.RUNNING)

    file_name = models.CharField(max_length=255, blank=True)
    content = models.BinaryField(default=b"")
    size = models.PositiveBigIntegerField(default=0)
    lines_read = models.PositiveIntegerField(default=0)
    bytes_read = models.PositiveBigIntegerField(default=0)
    imported = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    # Each claim by a worker counts one: only the latest attempt may store or finish the upload.
    attempt = models.PositiveIntegerField(default=0)
    error = models.CharField(max_length=2000, blank=True)
    task_id = models.CharField(max_length=64, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # The worker's last sign of life: silent for JUDGING_STALE_SECONDS, it is gone and the upload
    # may be resumed.
    beat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["-created_at", "-id"]


class UploadError(UserbenchError):
    """An upload that cannot be queued, resumed or discarded, in words for the researcher."""


def upload_in_background(size: int | None) -> bool:
    """Whether a file of `size` bytes is read by a worker rather than in the request."""
    return (size or 0) > settings.UPLOAD_BACKGROUND_BYTES


def _stale_after() -> timedelta:
    return timedelta(seconds=float(settings.JUDGING_STALE_SECONDS))


def upload_is_stale(upload: BackgroundUpload) -> bool:
    """A reading upload whose worker has not been heard of for JUDGING_STALE_SECONDS."""
    beat = upload.beat_at or upload.created_at
    return upload.status == BackgroundUpload.Status.RUNNING and timezone.now() - beat > _stale_after()


def upload_can_resume(upload: BackgroundUpload) -> bool:
    return upload_is_stale(upload)


def upload_can_discard(upload: BackgroundUpload) -> bool:
    """Refused, or its worker gone and not resumed: nothing of it was stored, and nothing will be."""
    return upload.status == BackgroundUpload.Status.FAILED or upload_is_stale(upload)


def upload_percent(upload: BackgroundUpload) -> int:
    """How much of the file has been read, 100 only once it is stored."""
    if upload.status == BackgroundUpload.Status.FINISHED:
        return 100
    return min(99, upload.bytes_read * 100 // max(upload.size, 1))


def upload_file_store[U: BackgroundUpload](model: type[U], *, file: UploadedFile, **fields: Any) -> U:
    """The file kept in a new upload of `model`, to be read by a worker."""
    content = b"".join(file.chunks())
    return model._default_manager.create(
        file_name=(file.name or "")[:255], content=content, size=len(content), **fields
    )


def upload_resume[U: BackgroundUpload](*, upload: U, enqueue: Callable[[U], None]) -> U:
    """Queue again an upload whose worker died; it is read again from its first line."""
    rows = type(upload)._default_manager
    with transaction.atomic():
        locked = rows.select_for_update().get(pk=upload.pk)
        if not upload_can_resume(locked):
            raise UploadError(_("Only an upload whose worker stopped can be resumed; this one is at work or done."))
        # Only the stale attempt seen above: one that finished meanwhile stays finished.
        if not rows.filter(pk=locked.pk, status=BackgroundUpload.Status.RUNNING, attempt=locked.attempt).update(
            status=BackgroundUpload.Status.QUEUED, beat_at=None
        ):
            raise UploadError(_("Only an upload whose worker stopped can be resumed; this one is at work or done."))
    enqueue(upload)
    upload.refresh_from_db()
    return upload


def upload_discard(*, upload: BackgroundUpload, actor, target: str, workspace: int | None, what: dict) -> None:
    """Remove a refused upload, or one whose worker stopped and was not resumed, with its stored
    file; audited with what it was before (`what`: what the upload was for) and nothing after.
    UploadError when it is at work or done: a worker may still store it, or has."""
    rows = type(upload)._default_manager
    with transaction.atomic():
        locked = rows.select_for_update().filter(pk=upload.pk).first()
        if locked is None or not upload_can_discard(locked):
            raise UploadError(
                _("Only a refused upload, or one whose worker stopped, can be discarded; this one is at work or done.")
            )
        # The attempt seen above: a resume in between makes this match nothing.
        if not rows.filter(pk=locked.pk, status=locked.status, attempt=locked.attempt).delete()[0]:
            raise UploadError(
                _("Only a refused upload, or one whose worker stopped, can be discarded; this one is at work or done.")
            )
        before = {
            **what,
            "file_name": locked.file_name,
            "size": locked.size,
            "status": locked.status,
            "lines_read": locked.lines_read,
            "error": locked.error[:200],
        }
        audit_record(
            actor=actor,
            action=AuditAction.UPLOAD_DISCARDED,
            target=target,
            details={"before": before, "after": None},
            workspace=workspace,
        )


def upload_execute(
    model: type[BackgroundUpload],
    *,
    upload_id: int,
    check: Callable[[Any, io.BytesIO, Callable[[int], None]], Any],
    store: Callable[[Any, Any], int],
    refused: type[Exception],
) -> str:
    """A worker's reading of one stored upload: `check(upload, stream, progress)` reads every line
    and writes nothing (raising `refused` at the first bad one), then `store(upload, checked)`
    writes everything and returns how many it stored, in one transaction with the finished
    status. Returns the final status, or "not queued" when another worker has it or it is done
    (or discarded), "taken over" when a later attempt has it."""
    rows = model._default_manager
    claimed = rows.filter(pk=upload_id, status=BackgroundUpload.Status.QUEUED).update(
        status=BackgroundUpload.Status.RUNNING,
        attempt=F("attempt") + 1,
        beat_at=timezone.now(),
        lines_read=0,
        bytes_read=0,
        error="",
    )
    if not claimed:
        return "not queued"
    upload = rows.get(pk=upload_id)
    mine = rows.filter(pk=upload_id, attempt=upload.attempt, status=BackgroundUpload.Status.RUNNING)
    stream = io.BytesIO(bytes(upload.content))

    def progress(lines: int) -> None:
        mine.update(lines_read=lines, bytes_read=stream.tell(), beat_at=timezone.now())

    try:
        checked = check(upload, stream, progress)
        with transaction.atomic():
            # Taken first in the transaction: a resume or a discard waits for it, and a later
            # attempt's claim makes it match nothing, so only the latest attempt stores.
            if not mine.update(beat_at=timezone.now()):
                return "taken over"
            count = store(upload, checked)
            mine.update(
                status=BackgroundUpload.Status.FINISHED,
                imported=count,
                bytes_read=upload.size,
                content=b"",
                finished_at=timezone.now(),
            )
    except refused as error:
        if not mine.update(
            status=BackgroundUpload.Status.FAILED, error=str(error)[:2000], content=b"", finished_at=timezone.now()
        ):
            return "taken over"  # a later attempt has it: its outcome stands
        return BackgroundUpload.Status.FAILED
    return BackgroundUpload.Status.FINISHED
