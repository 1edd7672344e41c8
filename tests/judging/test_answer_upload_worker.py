"""A large answers upload read by real `db_worker` processes on SQLite and PostgreSQL: the worker
is killed with SIGKILL while it reads the file, nothing is stored, and the upload resumed is read
by another worker and stored once, whole. The same logic in-process: test_answer_uploads.py."""

from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from curation.models import Item
from judging.answers.uploads import upload_queue, upload_resume
from judging.models import Answer, AnswerUpload
from tests.factories import DatasetFactory, UserFactory
from tests.processes import kill, shared_database, start_worker, stop, wait_for  # noqa: F401 - a fixture

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]
# Enough lines that the worker is still reading when its first progress is seen (every 10,000).
LINES = 40_000


def test_a_worker_killed_mid_file_stores_nothing_and_the_upload_resumed_stores_it_once(shared_database):
    dataset = DatasetFactory(name="large")
    Item.objects.bulk_create(
        (Item(dataset=dataset, external_id=f"q{n}", question=f"question {n}") for n in range(LINES)), batch_size=5000
    )
    content = "".join(f'{{"question_id":"q{n}","response":"a{n}"}}\n' for n in range(LINES)).encode()
    upload = upload_queue(
        dataset=dataset,
        model_name="big",
        file=SimpleUploadedFile("answers.jsonl", content),
        actor=UserFactory(username="r", roles=["researcher"]),
    )
    rows = AnswerUpload.objects.filter(pk=upload.pk)

    worker = start_worker(shared_database, "first", queue="default")
    try:
        wait_for(lambda: rows.filter(status="running", lines_read__gt=0).exists(), processes=[worker], what="progress")
        kill(worker)  # SIGKILL in the middle of the file: no cleanup, the upload left "reading"
    finally:
        stop(worker)
    upload.refresh_from_db()
    assert upload.status == "running" and 0 < upload.bytes_read < upload.size
    assert not Answer.objects.exists()  # nothing of the half that was read

    rows.update(beat_at=timezone.now() - timedelta(hours=1))  # silent long enough: its worker is gone
    upload_resume(upload=upload)
    worker = start_worker(shared_database, "second", queue="default")
    try:
        wait_for(lambda: rows.filter(status="finished").exists(), processes=[worker], what="the upload to finish")
    finally:
        stop(worker)
    upload.refresh_from_db()
    assert (upload.imported, upload.attempt, bytes(upload.content)) == (LINES, 2, b"")
    assert Answer.objects.filter(model__name="big").count() == LINES
