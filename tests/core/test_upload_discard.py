"""A large upload that was refused, or whose worker stopped and was not resumed, is discarded by
the researcher from its page (after a confirmation) or through the API: it is gone with its stored
file, and the audit says what it was. One at work or done is kept; another workspace's is not
found. Both kinds: a model's answers (the dataset's answers page) and a dataset (the import page)."""

import io
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from core.models import AuditEvent, Membership, Workspace
from curation.datasets.uploads import dataset_upload_execute
from curation.models import DatasetUpload
from judging.answers.uploads import upload_execute
from judging.models import AnswerUpload
from tests.factories import DatasetFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db
DUMMY = {"default": {"BACKEND": "django.tasks.backends.dummy.DummyBackend", "QUEUES": ["default", "judging"]}}
ITEMS = 20


@pytest.fixture(autouse=True)
def small_threshold(settings):
    settings.UPLOAD_BACKGROUND_BYTES = 100
    settings.TASKS = DUMMY


def _file(content: bytes, name: str) -> io.BytesIO:
    file = io.BytesIO(content)
    file.name = name
    return file


class Answers:
    """A model's answers to dataset "big"."""

    model = AnswerUpload

    @staticmethod
    def queue(client, bad_line: int | None = None) -> int:
        if not DatasetUpload.objects.exists() and not AnswerUpload.objects.exists():
            dataset = DatasetFactory(name="big")
            for n in range(ITEMS):
                ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"Question {n}?")
        rows = [f'{{"question_id": "q{n}", "response": "answer {n}"}}' for n in range(ITEMS)]
        if bad_line:
            rows[bad_line - 1] = '{"question_id": "nope", "response": "x"}'
        file = _file(("\n".join(rows) + "\n").encode(), "answers.jsonl")
        response = client.post(reverse("api-dataset-answers", args=["big"]), {"model": "m", "file": file})
        assert response.status_code == 202
        return response.json()["id"]

    execute = staticmethod(upload_execute)

    @staticmethod
    def api(upload_id: int) -> str:
        return reverse("api-dataset-answers-upload", args=["big", upload_id])

    @staticmethod
    def page(upload_id: int) -> str:
        return reverse("judging:answers-upload-discard", args=["big", upload_id])

    shown_on = "/datasets/big/answers/"


class Datasets:
    """A dataset "big" imported from a file."""

    model = DatasetUpload

    @staticmethod
    def queue(client, bad_line: int | None = None) -> int:
        rows = [f'{{"uid": "u{n}", "prompt": "Question {n}?"}}' for n in range(ITEMS)]
        if bad_line:
            rows[bad_line - 1] = '{"uid": "u404"}'
        file = _file(("\n".join(rows) + "\n").encode(), "question.jsonl")
        response = client.post(reverse("api-datasets"), {"name": "big", "format": "arena_hard", "file": file})
        assert response.status_code == 202
        return response.json()["id"]

    execute = staticmethod(dataset_upload_execute)

    @staticmethod
    def api(upload_id: int) -> str:
        return reverse("api-dataset-upload", args=[upload_id])

    @staticmethod
    def page(upload_id: int) -> str:
        return reverse("curation:review-import-discard", args=[upload_id])

    shown_on = "/review/datasets/import/"


KINDS = pytest.mark.parametrize("kind", [Answers, Datasets], ids=["answers", "dataset"])


@KINDS
def test_a_refused_upload_is_discarded_from_its_page_after_a_confirmation(client_as, researcher, kind):
    client = client_as(researcher)
    upload_id = kind.queue(client, bad_line=3)
    assert kind.execute(upload_id=upload_id) == "failed"
    shown = client.get(kind.shown_on).text
    article = shown.split(f'id="upload-{upload_id}"')[1].split("</article>")[0]
    # The button is inside a closed <details>: a first click only opens the question.
    assert '<details class="archive-confirm" data-when="discardable">' in article and "Yes, discard it" in article
    response = client.post(kind.page(upload_id))
    assert response.status_code == 302 and not kind.model.objects.exists()
    event = AuditEvent.objects.get(action="upload_discarded")
    before = event.details["before"]
    assert (event.actor, event.details["after"], before["upload"], before["status"]) == (
        researcher,
        None,
        upload_id,
        "failed",
    )
    assert "line 3" in before["error"] and before["file_name"] and event.workspace_id is not None
    assert f'id="upload-{upload_id}"' not in client.get(kind.shown_on).text


@KINDS
def test_a_stopped_upload_is_discarded_through_the_api_and_its_stored_file_with_it(client_as, researcher, kind):
    client = client_as(researcher)
    upload_id = kind.queue(client)
    rows = kind.model.objects.filter(pk=upload_id)
    rows.update(status="running", attempt=1, beat_at=timezone.now() - timedelta(hours=1))
    assert len(bytes(rows.get().content)) > 0
    assert client.get(kind.api(upload_id)).json()["discardable"] is True
    assert client.delete(kind.api(upload_id)).status_code == 204
    assert not rows.exists()  # the row and the file it kept
    assert AuditEvent.objects.get(action="upload_discarded").details["before"]["status"] == "running"
    # A worker that comes back late finds nothing to store.
    assert kind.execute(upload_id=upload_id) == "not queued"


@KINDS
@pytest.mark.parametrize("state", ["queued", "running", "finished"])
def test_an_upload_at_work_or_done_is_not_discarded(client_as, researcher, kind, state):
    client = client_as(researcher)
    upload_id = kind.queue(client)
    if state == "running":
        kind.model.objects.filter(pk=upload_id).update(status="running", beat_at=timezone.now())
    elif state == "finished":
        assert kind.execute(upload_id=upload_id) == "finished"
    response = client.delete(kind.api(upload_id))
    assert response.status_code == 400 and "can be discarded" in response.json()["detail"]
    page = client.post(kind.page(upload_id), follow=True)
    assert "can be discarded" in page.text
    assert kind.model.objects.get().status == state and not AuditEvent.objects.filter(action="upload_discarded")


@KINDS
def test_another_workspaces_researcher_cannot_discard_an_upload(client_as, researcher, kind):
    upload_id = kind.queue(client_as(researcher), bad_line=2)
    assert kind.execute(upload_id=upload_id) == "failed"
    other = Workspace.objects.create(slug="other", name="Other")
    mallory = UserFactory(username="mallory", roles=["researcher"], roles__workspace=other)
    Membership.objects.filter(user=mallory).exclude(workspace=other).delete()
    client = client_as(mallory)
    assert client.delete(kind.api(upload_id)).status_code == 404
    assert client.post(kind.page(upload_id)).status_code == 404
    assert kind.model.objects.filter(pk=upload_id).exists()
    assert not AuditEvent.objects.filter(action="upload_discarded").exists()


@KINDS
def test_a_discard_is_a_post(client_as, researcher, kind):
    client = client_as(researcher)
    upload_id = kind.queue(client, bad_line=2)
    assert kind.execute(upload_id=upload_id) == "failed"
    assert client.get(kind.page(upload_id)).status_code == 405
    assert kind.model.objects.filter(pk=upload_id).exists()
