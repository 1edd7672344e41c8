"""A large dataset file read by real `db_worker` processes on SQLite and PostgreSQL, on the queue
large answers uploads use: the worker is killed with SIGKILL while it reads the file, nothing is
stored, and the upload resumed is read by another worker and stored once, whole. The same logic
in-process: test_dataset_uploads.py."""

from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from curation.datasets.uploads import dataset_upload_queue, dataset_upload_resume
from curation.models import Dataset, DatasetUpload, Item
from tests.factories import UserFactory
from tests.processes import kill, shared_database, start_worker, stop, wait_for  # noqa: F401 - a fixture

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]
# Enough lines that the worker is still reading when its first progress is seen (every 10,000).
LINES = 40_000


def test_a_worker_killed_mid_file_stores_nothing_and_the_upload_resumed_stores_it_once(shared_database):
    content = "".join(f'{{"uid":"u{n}","prompt":"question {n}"}}\n' for n in range(LINES)).encode()
    upload = dataset_upload_queue(
        fmt="arena_hard",
        name="large",
        file=SimpleUploadedFile("question.jsonl", content),
        actor=UserFactory(username="r", roles=["researcher"]),
    )
    rows = DatasetUpload.objects.filter(pk=upload.pk)

    worker = start_worker(shared_database, "first", queue="default")
    try:
        wait_for(lambda: rows.filter(status="running", lines_read__gt=0).exists(), processes=[worker], what="progress")
        kill(worker)  # SIGKILL in the middle of the file: no cleanup, the upload left "reading"
    finally:
        stop(worker)
    upload.refresh_from_db()
    assert upload.status == "running" and 0 < upload.bytes_read < upload.size
    assert not Dataset.objects.exists() and not Item.objects.exists()  # nothing of the half that was read

    rows.update(beat_at=timezone.now() - timedelta(hours=1))  # silent long enough: its worker is gone
    dataset_upload_resume(upload=upload)
    worker = start_worker(shared_database, "second", queue="default")
    try:
        wait_for(lambda: rows.filter(status="finished").exists(), processes=[worker], what="the upload to finish")
    finally:
        stop(worker)
    upload.refresh_from_db()
    assert (upload.imported, upload.attempt, bytes(upload.content)) == (LINES, 2, b"")
    assert Dataset.objects.get(name="large").items.count() == LINES
