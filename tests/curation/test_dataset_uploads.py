"""A dataset file over UPLOAD_BACKGROUND_BYTES from the import page or `POST /api/datasets/`: stored
in the database and read by a worker (core/uploads.py, curation/datasets/uploads.py), its progress
followed, nothing stored unless every line can be, the stored file emptied once done; a small file
still read in the request, its bad line named at once. The worker's steps are run in-process here;
test_dataset_upload_worker.py kills a real one."""

import io
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from core.import_checks import MAX_LINE_CHARS
from core.models import AuditEvent, Membership, Workspace
from core.uploads import UploadError
from curation.datasets.uploads import dataset_upload_execute, dataset_upload_resume
from curation.models import Dataset, DatasetUpload, Item
from tests.factories import DatasetFactory, UserFactory

pytestmark = pytest.mark.django_db
IMMEDIATE = {
    "default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend", "QUEUES": ["default", "judging"]}
}
DUMMY = {"default": {"BACKEND": "django.tasks.backends.dummy.DummyBackend", "QUEUES": ["default", "judging"]}}
ITEMS = 30
PAGE = "/review/datasets/import/"


@pytest.fixture
def small_threshold(settings):
    settings.UPLOAD_BACKGROUND_BYTES = 200
    settings.TASKS = DUMMY  # queued, not read: each test runs the worker's step itself
    return settings


def questions(count: int = ITEMS, bad: dict[int, str] | None = None) -> bytes:
    """An Arena-Hard question file of `count` lines; `bad` puts other text on some lines (from 1)."""
    rows = [f'{{"uid": "u{n}", "prompt": "Question {n}?"}}' for n in range(count)]
    for number, text in (bad or {}).items():
        rows[number - 1] = text
    return ("\n".join(rows) + "\n").encode()


def post_page(client, content: bytes, name="big"):
    file = SimpleUploadedFile("question.jsonl", content)
    return client.post(PAGE, {"name": name, "format": "arena_hard", "file": file})


def post_api(client, content: bytes, name="big"):
    file = io.BytesIO(content)
    file.name = "question.jsonl"
    return client.post(reverse("api-datasets"), {"name": name, "format": "arena_hard", "file": file})


def status_url(upload_id: int) -> str:
    return reverse("api-dataset-upload", args=[upload_id])


# ---------------------------------------------------------------- in the request


def test_a_small_file_is_still_read_in_the_request(client_as, researcher, small_threshold):
    response = post_page(client_as(researcher), questions(3))
    assert response.status_code == 302 and response.url == "/datasets/big/"
    assert Item.objects.filter(dataset__name="big").count() == 3 and not DatasetUpload.objects.exists()


def test_a_small_files_bad_line_is_named_in_the_request_and_nothing_is_stored(client_as, researcher, small_threshold):
    response = post_page(client_as(researcher), questions(3, bad={2: '{"uid": "u1"}'}))
    assert response.status_code == 400
    assert "line 2: expected the field &#x27;prompt&#x27;" in response.text
    assert not Dataset.objects.exists() and not DatasetUpload.objects.exists()


def test_a_taken_name_is_refused_before_the_file_is_stored(client_as, researcher, small_threshold):
    DatasetFactory(name="big")
    response = post_page(client_as(researcher), questions())
    assert response.status_code == 400 and "exists already" in response.text
    assert not DatasetUpload.objects.exists()


# ---------------------------------------------------------------- read by a worker


def test_a_large_file_goes_to_a_worker_and_the_page_follows_it(client_as, researcher, small_threshold):
    client = client_as(researcher)
    response = post_page(client, questions())
    upload = DatasetUpload.objects.get()
    assert response.status_code == 302 and response.url.endswith(f"#upload-{upload.pk}")
    assert (upload.status, upload.size, upload.name, upload.file_format) == (
        "queued",
        len(questions()),
        "big",
        "arena_hard",
    )
    assert not Dataset.objects.exists()
    shown = client.get(PAGE).text
    assert f'id="upload-{upload.pk}"' in shown and "js/uploads.js" in shown and "Queued" in shown

    assert dataset_upload_execute(upload_id=upload.pk) == "finished"
    upload.refresh_from_db()
    assert (upload.status, upload.imported, upload.bytes_read, bytes(upload.content)) == (
        "finished",
        ITEMS,
        upload.size,
        b"",
    )  # the stored file is emptied once it is stored
    dataset = Dataset.objects.get(name="big")
    assert upload.dataset == dataset and dataset.items.count() == ITEMS and dataset.frozen_at is not None
    event = AuditEvent.objects.get(action="dataset_imported")
    assert (event.actor, event.details["items"]) == (researcher, ITEMS)
    followed = client.get(status_url(upload.pk)).json()
    assert (followed["status"], followed["percent"], followed["imported"]) == ("finished", 100, ITEMS)
    assert (followed["dataset"], followed["dataset_url"]) == ("big", "/datasets/big/")
    assert dataset_upload_execute(upload_id=upload.pk) == "not queued"  # a second task for it does nothing


def test_the_api_answers_202_with_the_upload_to_follow(client_as, researcher, small_threshold):
    small_threshold.TASKS = IMMEDIATE  # the worker runs as the task is queued
    client = client_as(researcher)
    response = post_api(client, questions())
    assert response.status_code == 202
    body = response.json()
    assert body["url"] == status_url(body["id"]) and body["name"] == "big"
    followed = client.get(body["url"]).json()
    assert (followed["status"], followed["imported"], followed["error"]) == ("finished", ITEMS, "")
    assert Item.objects.filter(dataset__name="big").count() == ITEMS


def test_the_api_reads_a_small_file_in_the_request(client_as, researcher, small_threshold):
    response = post_api(client_as(researcher), questions(3))
    assert response.status_code == 201 and response.json()["item_count"] == 3


def test_the_api_names_a_small_files_bad_line_and_stores_nothing(client_as, researcher, small_threshold):
    client = client_as(researcher)
    response = post_api(client, questions(3, bad={3: '{"uid": "u2", "prompt": 7}'}))
    assert response.status_code == 400 and "line 3" in response.json()["detail"]
    assert "prompt" in response.json()["detail"]
    taken = post_api(client, questions(3), name="")
    assert taken.status_code == 400 and "name" in taken.json()
    assert not Dataset.objects.exists() and not DatasetUpload.objects.exists()


def test_the_api_refuses_an_unknown_format_before_storing_anything(client_as, researcher, small_threshold):
    file = io.BytesIO(questions())
    file.name = "question.jsonl"
    response = client_as(researcher).post(reverse("api-datasets"), {"name": "big", "format": "nope", "file": file})
    assert response.status_code == 400 and "format" in response.json()
    assert not DatasetUpload.objects.exists()


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({7: '{"uid": "u6"}'}, "line 7: expected the field 'prompt'"),
        ({9: '{"uid": "u0", "prompt": "again"}'}, "line 9: uid u0 appears twice"),
        ({5: '{"uid": "u4", "prompt": '}, "line 5:"),
        ({4: '{"uid": "u3", "prompt": "' + "x" * (MAX_LINE_CHARS + 10) + '"}'}, "line 4: the line is longer than"),
    ],
    ids=["missing field", "twice", "not JSON", "huge line"],
)
def test_a_large_files_bad_line_is_named_and_nothing_is_stored(client_as, researcher, small_threshold, bad, message):
    client = client_as(researcher)
    upload_id = post_api(client, questions(bad=bad)).json()["id"]
    assert dataset_upload_execute(upload_id=upload_id) == "failed"
    upload = DatasetUpload.objects.get()
    assert message in upload.error and upload.error.startswith("Nothing imported.")
    assert bytes(upload.content) == b"" and not Dataset.objects.exists() and not Item.objects.exists()
    followed = client.get(status_url(upload_id)).json()
    assert (followed["status"], followed["discardable"], followed["resumable"]) == ("failed", True, False)


def test_a_name_taken_while_the_file_waited_refuses_it_and_stores_nothing(client_as, researcher, small_threshold):
    upload_id = post_api(client_as(researcher), questions()).json()["id"]
    DatasetFactory(name="big", description="made meanwhile")
    assert dataset_upload_execute(upload_id=upload_id) == "failed"
    assert "exists already" in DatasetUpload.objects.get().error
    assert Dataset.objects.get(name="big").description == "made meanwhile" and not Item.objects.exists()


def test_an_error_with_markup_is_shown_as_text(client_as, researcher, small_threshold):
    client = client_as(researcher)
    twice = '{"uid": "<script>alert(1)</script>", "prompt": "x"}'
    upload_id = post_api(client, questions(bad={3: twice, 4: twice})).json()["id"]
    assert dataset_upload_execute(upload_id=upload_id) == "failed"
    shown = client.get(PAGE).text
    assert "<script>alert(1)</script>" not in shown and "&lt;script&gt;alert(1)&lt;/script&gt;" in shown


# ---------------------------------------------------------------- a dead worker


def test_a_worker_dead_mid_store_leaves_nothing_and_the_upload_resumes(
    client_as, researcher, small_threshold, monkeypatch
):
    client = client_as(researcher)
    upload_id = post_api(client, questions()).json()["id"]
    real = Item.objects.bulk_create

    def half_then_die(items, **kwargs):
        items = list(items)
        real(items[: len(items) // 2], **kwargs)
        raise SystemExit("killed")

    with monkeypatch.context() as patch:
        patch.setattr(Item.objects, "bulk_create", half_then_die)
        with pytest.raises(SystemExit):
            dataset_upload_execute(upload_id=upload_id)
    upload = DatasetUpload.objects.get()
    assert upload.status == "running" and not Dataset.objects.exists() and not Item.objects.exists()
    assert bytes(upload.content) == questions()  # kept to be read again
    with pytest.raises(UploadError):
        dataset_upload_resume(upload=upload)  # its worker might still be at work
    DatasetUpload.objects.filter(pk=upload.pk).update(beat_at=timezone.now() - timedelta(hours=1))
    assert client.get(status_url(upload_id)).json()["resumable"] is True
    resumed = client.post(status_url(upload_id) + "resume/")
    assert resumed.status_code == 200 and resumed.json()["status"] == "queued"
    assert dataset_upload_execute(upload_id=upload_id) == "finished"
    assert Item.objects.filter(dataset__name="big").count() == ITEMS and DatasetUpload.objects.get().attempt == 2


def test_a_worker_that_comes_back_after_a_resume_stores_nothing(client_as, researcher, small_threshold, monkeypatch):
    upload_id = post_api(client_as(researcher), questions()).json()["id"]
    from curation.datasets import uploads

    real_check = uploads.dataset_check
    late = {}

    def slow_check(**kwargs):
        # While the first worker reads, it is taken for dead and resumed, and a second one claims it.
        if not late:
            late["yes"] = True
            DatasetUpload.objects.filter(pk=upload_id).update(beat_at=timezone.now() - timedelta(hours=1))
            dataset_upload_resume(upload=DatasetUpload.objects.get(pk=upload_id))
            assert dataset_upload_execute(upload_id=upload_id) == "finished"
        return real_check(**kwargs)

    monkeypatch.setattr(uploads, "dataset_check", slow_check)
    assert dataset_upload_execute(upload_id=upload_id) == "taken over"
    assert Dataset.objects.count() == 1 and Item.objects.count() == ITEMS  # stored once, by the latest attempt


# ---------------------------------------------------------------- another workspace


def test_another_workspace_cannot_see_follow_resume_or_discard_an_upload(client_as, researcher, small_threshold):
    upload_id = post_api(client_as(researcher), questions()).json()["id"]
    DatasetUpload.objects.filter(pk=upload_id).update(status="running", beat_at=timezone.now() - timedelta(hours=1))
    other = Workspace.objects.create(slug="other", name="Other")
    mallory = UserFactory(username="mallory", roles=["researcher"], roles__workspace=other)
    Membership.objects.filter(user=mallory).exclude(workspace=other).delete()
    client = client_as(mallory)
    assert client.get(status_url(upload_id)).status_code == 404
    assert client.delete(status_url(upload_id)).status_code == 404
    assert client.post(status_url(upload_id) + "resume/").status_code == 404
    for action in ("resume", "discard"):
        assert client.post(f"{PAGE}uploads/{upload_id}/{action}/").status_code == 404
    assert f'id="upload-{upload_id}"' not in client.get(PAGE).text
    upload = DatasetUpload.objects.get()
    assert upload.status == "running" and bytes(upload.content) == questions()  # not resumed, not discarded
    assert not AuditEvent.objects.filter(action="upload_discarded").exists()
