"""Large answers files (`UPLOAD_BACKGROUND_BYTES`): stored and read by a worker, followed on the page
and through the API, refused whole with the line named, resumed after a dead worker without ever
storing half, emptied when done, and invisible from another workspace. A file's first bad line
stops the reading there, whatever its size. The threshold is made small so the files stay small."""

import html
import io
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from core.models import AuditEvent, Membership, Workspace
from curation.datasets.importers import DataImportError
from judging.answers.imports import answers_import
from judging.answers.uploads import UploadError, upload_execute, upload_resume
from judging.models import Answer, AnswerSet, AnswerUpload
from tests.factories import DatasetFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db
IMMEDIATE = {
    "default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend", "QUEUES": ["default", "judging"]}
}
DUMMY = {"default": {"BACKEND": "django.tasks.backends.dummy.DummyBackend", "QUEUES": ["default", "judging"]}}
ITEMS = 30


@pytest.fixture
def dataset():
    dataset = DatasetFactory(name="big")
    for n in range(ITEMS):
        ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"Question {n}?")
    return dataset


@pytest.fixture
def small_threshold(settings):
    settings.UPLOAD_BACKGROUND_BYTES = 200
    return settings


def lines(count: int = ITEMS, bad: dict[int, str] | None = None) -> bytes:
    """An answers file of `count` lines; `bad` puts other text on some line numbers (from 1)."""
    rows = [f'{{"question_id": "q{n}", "response": "answer {n}"}}' for n in range(count)]
    for number, text in (bad or {}).items():
        rows[number - 1] = text
    return ("\n".join(rows) + "\n").encode()


def page(dataset):
    return reverse("judging:dataset-answers", args=[dataset.name])


def post_page(client, dataset, content: bytes, model="big-model"):
    file = SimpleUploadedFile("answers.jsonl", content)
    return client.post(page(dataset), {"action": "upload", "model": model, "file": file})


def post_api(client, dataset, content: bytes, model="big-model"):
    file = io.BytesIO(content)
    file.name = "answers.jsonl"
    return client.post(reverse("api-dataset-answers", args=[dataset.name]), {"model": model, "file": file})


# ---------------------------------------------------------------- reading stops at the first bad line


class Endless(io.RawIOBase):
    """A file whose second line is bad and which never ends: a reader that looked past the bad line
    would read forever (it fails the test after 1,000 lines instead)."""

    def __init__(self, second: bytes):
        self.served = 0
        self.second = second

    def readline(self, size=-1):
        self.served += 1
        if self.served > 1000:
            raise AssertionError("read past the bad line")
        if self.served == 2:
            return self.second
        return b'{"question_id": "q0", "response": "x"}\n' if self.served == 1 else b'{"question_id": "q1"}\n'


@pytest.mark.parametrize(
    "second,message",
    [
        (b'{"question_id": "nope", "response": "x"}\n', "line 2: no item of 'big' matches question_id nope."),
        (b'{"question_id": "q0", "response": "y"}\n', "line 2: answers the same item as line 1."),
        (b'{"question_id": "q1", "response": \n', "line 2: expected one JSON object per line"),
    ],
)
def test_the_first_bad_line_stops_the_reading(dataset, second, message):
    stream = Endless(second)
    with pytest.raises(DataImportError, match="Nothing imported") as refused:
        answers_import(dataset_name="big", model_name="m", stream=stream)
    assert message in str(refused.value)
    assert stream.served == 2 and not Answer.objects.exists()


# ---------------------------------------------------------------- page and API


def test_a_small_file_is_still_read_in_the_request(client_as, researcher, dataset, small_threshold):
    small_threshold.TASKS = DUMMY
    response = post_page(client_as(researcher), dataset, lines(3))
    assert response.status_code == 302 and Answer.objects.count() == 3 and not AnswerUpload.objects.exists()


def test_a_large_file_goes_to_a_worker_and_the_page_follows_it(client_as, researcher, dataset, small_threshold):
    small_threshold.TASKS = DUMMY  # queued, not read: the page shows it waiting
    client = client_as(researcher)
    response = post_page(client, dataset, lines())
    upload = AnswerUpload.objects.get()
    assert response.status_code == 302 and response.url.endswith(f"#upload-{upload.pk}")
    assert (upload.status, upload.size, upload.model_name) == ("queued", len(lines()), "big-model")
    assert not Answer.objects.exists()
    shown = client.get(page(dataset)).text
    assert f'id="upload-{upload.pk}"' in shown and "js/uploads.js" in shown and "Queued" in shown

    assert upload_execute(upload_id=upload.pk) == "finished"
    upload.refresh_from_db()
    assert (upload.status, upload.imported, upload.bytes_read, bytes(upload.content)) == (
        "finished",
        ITEMS,
        upload.size,
        b"",
    )  # the stored file is emptied once it is stored
    assert Answer.objects.filter(model__name="big-model").count() == ITEMS
    event = AuditEvent.objects.get(action="answers_imported")
    assert (event.actor, event.details["answers"]) == (researcher, ITEMS)
    followed = client.get(reverse("api-dataset-answers-upload", args=["big", upload.pk])).json()
    assert (followed["status"], followed["percent"], followed["imported"]) == ("finished", 100, ITEMS)
    assert upload_execute(upload_id=upload.pk) == "not queued"  # a second task for it does nothing


def test_the_api_answers_202_with_the_upload_to_follow(client_as, researcher, dataset, small_threshold):
    small_threshold.TASKS = IMMEDIATE  # the worker runs as the task is queued
    client = client_as(researcher)
    response = post_api(client, dataset, lines())
    assert response.status_code == 202
    accepted = response.json()
    assert accepted["url"] == reverse("api-dataset-answers-upload", args=["big", accepted["id"]])
    followed = client.get(accepted["url"]).json()
    assert (followed["status"], followed["imported"], followed["error"]) == ("finished", ITEMS, "")
    assert Answer.objects.count() == ITEMS


def test_a_bad_line_refuses_the_whole_file_and_names_it(client_as, researcher, dataset, small_threshold):
    small_threshold.TASKS = IMMEDIATE
    client = client_as(researcher)
    content = lines(bad={17: '{"question_id": "q16", "response": 5}'})
    accepted = post_api(client, dataset, content).json()
    followed = client.get(accepted["url"]).json()
    assert followed["status"] == "failed" and followed["status_label"] == "Refused"
    assert followed["error"] == "Nothing imported. line 17: expected a text field 'response', found the number 5"
    assert not Answer.objects.exists() and not AuditEvent.objects.filter(action="answers_imported").exists()
    assert bytes(AnswerUpload.objects.get().content) == b""  # not kept: the file is fixed and sent again
    shown = html.unescape(client.get(page(dataset)).text)
    assert "line 17: expected a text field" in shown


def test_the_model_name_is_checked_before_the_file_is_stored(client_as, researcher, dataset, small_threshold):
    small_threshold.TASKS = DUMMY
    response = post_api(client_as(researcher), dataset, lines(), model="   ")
    assert response.status_code == 400 and not AnswerUpload.objects.exists()


def test_the_page_speaks_chinese_about_a_large_upload(client_as, researcher, dataset, small_threshold):
    small_threshold.TASKS = DUMMY
    client = client_as(researcher)
    post_page(client, dataset, lines())
    client.cookies["django_language"] = "zh-hans"
    shown = client.get(page(dataset), HTTP_ACCEPT_LANGUAGE="zh-hans").text
    assert "大文件上传" in shown and "已排队" in shown and "由工作进程在后台读取" in shown


# ---------------------------------------------------------------- a dead worker


def _crash_while_storing(monkeypatch):
    """The worker dies in the store step, after some answers were written in its transaction."""
    import judging.answers.imports as imports

    real = Answer.objects.bulk_create

    def half_then_die(answers, **kwargs):
        answers = list(answers)
        real(answers[: len(answers) // 2], **kwargs)
        raise SystemExit("killed")

    monkeypatch.setattr(imports.Answer.objects, "bulk_create", half_then_die)


def test_a_worker_dead_mid_store_leaves_nothing_and_the_upload_resumes(
    client_as, researcher, dataset, small_threshold, monkeypatch
):
    small_threshold.TASKS = DUMMY
    client = client_as(researcher)
    upload_id = post_api(client, dataset, lines()).json()["id"]
    with monkeypatch.context() as patch:
        _crash_while_storing(patch)
        with pytest.raises(SystemExit):
            upload_execute(upload_id=upload_id)
    upload = AnswerUpload.objects.get()
    assert upload.status == "running" and not Answer.objects.exists()  # the half was rolled back
    assert bytes(upload.content) == lines()  # kept to be read again
    with pytest.raises(UploadError):
        upload_resume(upload=upload)  # its worker might still be at work
    AnswerUpload.objects.filter(pk=upload.pk).update(beat_at=timezone.now() - timedelta(hours=1))
    url = reverse("api-dataset-answers-upload", args=["big", upload_id])
    assert client.get(url).json()["resumable"] is True
    resumed = client.post(url + "resume/")
    assert resumed.status_code == 200 and resumed.json()["status"] == "queued"
    assert upload_execute(upload_id=upload_id) == "finished"
    assert Answer.objects.count() == ITEMS and AnswerUpload.objects.get().attempt == 2


def test_a_worker_that_comes_back_after_a_resume_stores_nothing(client_as, researcher, dataset, small_threshold):
    small_threshold.TASKS = DUMMY
    upload_id = post_api(client_as(researcher), dataset, lines()).json()["id"]
    from judging.answers import uploads

    late = {}

    def slow_check(**kwargs):
        # While the first worker reads, it is taken for dead and resumed, and a second one claims it.
        if not late:
            late["yes"] = True
            AnswerUpload.objects.filter(pk=upload_id).update(beat_at=timezone.now() - timedelta(hours=1))
            upload_resume(upload=AnswerUpload.objects.get(pk=upload_id))
            assert upload_execute(upload_id=upload_id) == "finished"
        return real_check(**kwargs)

    real_check = uploads.answers_check
    uploads.answers_check = slow_check
    try:
        assert upload_execute(upload_id=upload_id) == "taken over"
    finally:
        uploads.answers_check = real_check
    assert Answer.objects.count() == ITEMS  # stored once, by the latest attempt


# ---------------------------------------------------------------- another workspace


def test_another_workspace_cannot_see_follow_or_resume_an_upload(client_as, researcher, dataset, small_threshold):
    small_threshold.TASKS = DUMMY
    upload_id = post_api(client_as(researcher), dataset, lines()).json()["id"]
    AnswerUpload.objects.filter(pk=upload_id).update(status="running", beat_at=timezone.now() - timedelta(hours=1))
    other = Workspace.objects.create(slug="other", name="Other")
    mallory = UserFactory(username="mallory", roles=["researcher"], roles__workspace=other)
    Membership.objects.filter(user=mallory).exclude(workspace=other).delete()
    client = client_as(mallory)
    for url in (
        reverse("api-dataset-answers-upload", args=["big", upload_id]),
        reverse("api-dataset-answers-upload-resume", args=["big", upload_id]),
    ):
        assert client.get(url).status_code in (404, 405) and client.post(url).status_code in (404, 405)
        assert 404 in (client.get(url).status_code, client.post(url).status_code)
    assert client.post(reverse("judging:answers-upload-resume", args=["big", upload_id])).status_code == 404
    assert AnswerUpload.objects.get().status == "running"  # not resumed by them


def test_a_large_replacement_becomes_the_next_version_through_the_worker(
    client_as, researcher, dataset, small_threshold
):
    """replace=true on a file over the threshold: the worker stores it as version 2 and retires
    version 1 (kept for the runs that judged it), exactly as a small replacement does."""
    small_threshold.TASKS = IMMEDIATE
    client = client_as(researcher)
    assert post_api(client, dataset, lines()).status_code == 202
    file = io.BytesIO(lines().replace(b"answer ", b"better answer "))
    file.name = "answers.jsonl"
    url = reverse("api-dataset-answers", args=[dataset.name])
    response = client.post(url, {"model": "big-model", "file": file, "replace": "true"})
    assert response.status_code == 202
    followed = client.get(response.json()["url"]).json()
    assert (followed["status"], followed["imported"], followed["error"]) == ("finished", ITEMS, "")
    current = Answer.objects.filter(item__dataset=dataset)
    assert current.count() == ITEMS and all(
        text.startswith("better ") for text in current.values_list("text", flat=True)
    )
    versions = dict(AnswerSet.objects.filter(dataset=dataset).values_list("version", "is_current"))
    assert versions == {1: False, 2: True}
    assert Answer.all_versions.filter(item__dataset=dataset).count() == 2 * ITEMS
