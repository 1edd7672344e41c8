"""Candidate answers in the browser and the API (`/datasets/<name>/answers/`,
`/api/datasets/<name>/answers/`, `/api/datasets/<name>/generations/`): an upload in the formats
`import_answers` reads, whole or nothing, and a generation from a real loopback endpoint with
its preview, progress, cancel and resume."""

import html
import io
import threading
from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from core.models import AuditEvent
from judging.answers.generation import GenerationError
from judging.answers.generation_jobs import generation_cancel, generation_execute, generation_resume
from judging.models import Answer, AnswerGeneration
from llm.models import Endpoint
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db
IMMEDIATE = {
    "default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend", "QUEUES": ["default", "judging"]}
}
DUMMY = {"default": {"BACKEND": "django.tasks.backends.dummy.DummyBackend", "QUEUES": ["default", "judging"]}}


@pytest.fixture
def dataset():
    dataset = DatasetFactory(name="d3")
    for n in range(3):
        ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"Question {n}?")
    return dataset


@pytest.fixture
def fake_endpoint(fake_llm, fast_retries):
    fake_llm.reply = lambda body: "answer to " + body["messages"][-1]["content"]
    return Endpoint.objects.create(
        name="fake",
        base_url=fake_llm.base_url,
        default_model="gen-m",
        max_in_flight=1,
        input_price_per_million=Decimal("2"),
        output_price_per_million=Decimal("8"),
    )


def page(dataset):
    return reverse("judging:dataset-answers", args=[dataset.name])


def upload(client, dataset, content: bytes, name="answers.jsonl", model="alpha"):
    return client.post(
        page(dataset), {"action": "upload", "model": model, "file": SimpleUploadedFile(name, content)}, follow=True
    )


# ---------------------------------------------------------------- upload (page)


def test_a_jsonl_upload_stores_the_answers_and_is_audited(client_as, researcher, dataset):
    client = client_as(researcher)
    content = b"".join(f'{{"question_id": "q{n}", "response": "A{n}"}}\n'.encode() for n in range(3))
    response = upload(client, dataset, content)
    assert "Imported 3 answers of alpha." in response.text
    assert sorted(Answer.objects.filter(model__name="alpha").values_list("text", flat=True)) == ["A0", "A1", "A2"]
    event = AuditEvent.objects.get(action="answers_imported")
    assert (event.actor, event.target, event.details["answers"]) == (researcher, "dataset:d3", 3)
    assert ">alpha</td>" in client.get(page(dataset)).text


def test_a_csv_upload_reads_the_same_columns(client_as, researcher, dataset):
    content = b'question,response\n"Question 0?","A, with a comma"\nQuestion 1?,B\n'
    response = upload(client_as(researcher), dataset, content, name="answers.CSV")
    assert "Imported 2 answers of alpha." in response.text
    assert Answer.objects.get(item__external_id="q0").text == "A, with a comma"


@pytest.mark.parametrize(
    "name,content,message",
    [
        (
            "a.jsonl",
            b'{"question_id": "q0", "response": "ok"}\n{"question_id": "q1", "response": 5}\n',
            "line 2: expected a text field 'response', found the number 5",
        ),
        (
            "a.jsonl",
            b'{"question_id": "q0", "response": "ok"}\n{"question_id": "nope", "response": "x"}\n',
            "line 2: no item of 'd3' matches question_id nope.",
        ),
        ("a.csv", b"question_id,response\nq0,ok\nq1\n", "line 3: expected 2 columns"),
        ("a.csv", b"question_id,answer\nq0,ok\n", "line 1: expected a header with response"),
        ("a.jsonl", b'{"question_id": "q0", "response": "ok"}\n\xff\n', "line 2: not UTF-8"),
    ],
)
def test_a_bad_file_names_its_line_and_stores_nothing(client_as, researcher, dataset, name, content, message):
    response = upload(client_as(researcher), dataset, content, name=name)
    assert response.status_code == 400
    assert message in html.unescape(response.text) and "Nothing imported." in response.text
    assert not Answer.objects.exists() and not AuditEvent.objects.filter(action="answers_imported").exists()


def test_only_researchers_open_the_answers_page(client_as, reviewer, annotator, dataset):
    for person in (reviewer, annotator):
        assert client_as(person).get(page(dataset)).status_code == 403
    assert client_as(UserFactory(username="r2", roles=["researcher"])).get("/datasets/nope/answers/").status_code == 404


def test_a_dataset_name_with_a_slash_has_its_answers_page(client_as, researcher):
    dataset = DatasetFactory(name="team/v1")
    response = client_as(researcher).get(page(dataset))
    assert response.status_code == 200 and "Candidate answers" in response.text
    # The dataset's own page is still its own.
    assert client_as(researcher).get(reverse("curation:dataset-detail", args=["team/v1"])).status_code == 200


def test_runs_new_links_to_the_answers_page_when_nothing_is_answered(client_as, researcher, dataset):
    text = client_as(researcher).get(reverse("judging:run-new"), {"dataset": "d3"}).text
    assert f'href="{page(dataset)}"' in text and "import_answers" not in text


# ---------------------------------------------------------------- generation (page)


def generation_form(**changes):
    data = {"action": "preview", "model": "gen-m", "endpoint": "fake", "preset": "", "max_tokens": "100"}
    data.update(changes)
    return data


def test_the_preview_counts_calls_tokens_and_cost_before_anything_is_sent(
    client_as, researcher, dataset, fake_endpoint, fake_llm, settings
):
    settings.TASKS = DUMMY
    AnswerFactory(item=dataset.items.get(external_id="q0"), model=CandidateModelFactory(name="gen-m"))
    client = client_as(researcher)
    response = client.post(page(dataset), generation_form())
    assert response.status_code == 200
    assert "This generation makes 2 calls; 1 item(s) already have an answer of this model." in response.text
    # 2 calls x "Question n?" (11 characters, 4 a token: 3 tokens each); 100 tokens at most each.
    assert "about 6 sent and 200 received" in response.text
    assert "<strong>0.0016</strong>" in response.text  # (6 x 2 + 200 x 8) / 1e6
    assert fake_llm.count == 0 and not AnswerGeneration.objects.exists()

    fingerprint = response.context["preview"]["fingerprint"]
    changed = client.post(page(dataset), generation_form(action="start", previewed=fingerprint, max_tokens="50"))
    assert "The settings changed since the preview" in changed.text and not AnswerGeneration.objects.exists()

    started = client.post(page(dataset), generation_form(action="start", previewed=fingerprint))
    generation = AnswerGeneration.objects.get()
    assert started.status_code == 302 and started["Location"].endswith(f"#generation-{generation.pk}")
    assert (generation.status, generation.total, generation.model.name, generation.endpoint.name) == (
        "queued",
        2,
        "gen-m",
        "fake",
    )
    assert AuditEvent.objects.get(action="generation_started").actor == researcher

    assert generation_execute(generation_id=generation.pk) == "finished"
    generation.refresh_from_db()
    assert (generation.status, generation.generated, generation.failed) == ("finished", 2, 0)
    assert sorted(fake_llm.prompts()) == ["Question 1?", "Question 2?"]
    assert Answer.objects.get(item__external_id="q1").text == "answer to Question 1?"
    status = client.get(reverse("api-dataset-generation", args=["d3", generation.pk])).json()
    assert (status["status"], status["generated"], status["total"], status["resumable"]) == ("finished", 2, 2, False)


def test_a_model_with_every_answer_cannot_be_generated_again(client_as, researcher, dataset, fake_endpoint, settings):
    settings.TASKS = DUMMY
    model = CandidateModelFactory(name="gen-m")
    for item in dataset.items.all():
        AnswerFactory(item=item, model=model)
    client = client_as(researcher)
    response = client.post(page(dataset), generation_form())
    assert "This generation makes 0 calls" in response.text and 'value="start"' not in response.text


# Transactional: the loopback server's thread cancels through its own database connection.
@pytest.mark.django_db(transaction=True)
def test_cancel_keeps_what_came_back_and_resume_sends_only_the_rest(
    dataset, fake_endpoint, fake_llm, researcher, settings
):
    settings.TASKS = DUMMY
    release = threading.Event()
    generation_holder: list[AnswerGeneration] = []

    def reply(body):
        question = body["messages"][-1]["content"]
        if question == "Question 1?" and not release.is_set():
            # The researcher cancels while this call is out; the call is then never answered.
            generation_cancel(generation=generation_holder[0], actor=researcher)
            release.wait(30)
        return "answer to " + question

    fake_llm.reply = reply
    client_generation = AnswerGeneration.objects.create(
        dataset=dataset, model=CandidateModelFactory(name="gen-m"), endpoint=fake_endpoint, total=3
    )
    generation_holder.append(client_generation)
    try:
        assert generation_execute(generation_id=client_generation.pk) == "cancelled"
    finally:
        release.set()
    client_generation.refresh_from_db()
    assert client_generation.status == "cancelled"
    assert list(Answer.objects.values_list("item__external_id", flat=True)) == ["q0"]
    assert AuditEvent.objects.get(action="generation_cancelled").details["was"] == "running"
    sent = fake_llm.count

    settings.TASKS = IMMEDIATE
    generation_resume(generation=client_generation, actor=researcher)
    client_generation.refresh_from_db()
    assert (client_generation.status, client_generation.total, client_generation.generated) == ("finished", 2, 2)
    assert sorted(Answer.objects.values_list("item__external_id", flat=True)) == ["q0", "q1", "q2"]
    # The answer that came back was not asked for again.
    assert "Question 0?" not in fake_llm.prompts()[sent:]


def test_a_queued_generation_cancelled_never_starts(dataset, fake_endpoint, fake_llm, researcher, settings):
    settings.TASKS = DUMMY
    generation = AnswerGeneration.objects.create(
        dataset=dataset, model=CandidateModelFactory(name="gen-m"), endpoint=fake_endpoint, total=3
    )
    generation_cancel(generation=generation, actor=researcher)
    assert generation.status == "cancelled"
    assert generation_execute(generation_id=generation.pk) == "not queued" and fake_llm.count == 0


# ---------------------------------------------------------------- API


def test_the_api_uploads_answers_as_multipart(client_as, researcher, dataset):
    client = client_as(researcher)
    url = reverse("api-dataset-answers", args=["d3"])
    file = io.BytesIO(b'{"question": "Question 2?", "response": "C"}\n')
    file.name = "answers.jsonl"
    response = client.post(url, {"model": "beta", "file": file})
    assert response.status_code == 201 and response.json() == {"model": "beta", "imported": 1, "version": 1}
    assert client.get(url).json() == [{"model": "beta", "answers": 1, "cut_off": 0, "version": 1}]

    bad = io.BytesIO(b"question_id,response\nq0,x\nq0,y\n")
    bad.name = "more.csv"
    response = client.post(url, {"model": "gamma", "file": bad})
    assert response.status_code == 400
    assert response.json()["detail"] == "Nothing imported. line 3: answers the same item as line 2."
    assert not Answer.objects.filter(model__name="gamma").exists()


def test_the_api_refuses_other_roles_and_unknown_datasets(client_as, annotator, researcher, dataset):
    url = reverse("api-dataset-answers", args=["d3"])
    assert client_as(annotator).post(url, {"model": "x"}).status_code == 403
    assert client_as(researcher).get(reverse("api-dataset-answers", args=["nope"])).status_code == 404


def test_the_api_starts_follows_cancels_and_resumes_a_generation(
    client_as, researcher, dataset, fake_endpoint, fake_llm, settings
):
    settings.TASKS = DUMMY
    client = client_as(researcher)
    url = reverse("api-dataset-generations", args=["d3"])
    response = client.post(
        url, {"model": "gen-m", "endpoint": "fake", "preset": "urs"}, content_type="application/json"
    )
    assert response.status_code == 201
    body = response.json()
    assert (body["status"], body["total"], body["preset"], body["endpoint"]) == ("queued", 3, "urs", "fake")
    again = client.post(url, {"model": "gen-m", "endpoint": "fake"}, content_type="application/json")
    assert again.status_code == 400 and "already being generated" in again.json()["detail"]

    detail = reverse("api-dataset-generation", args=["d3", body["id"]])
    cancelled = client.post(detail + "cancel/").json()
    assert (cancelled["status"], cancelled["resumable"]) == ("cancelled", True)
    assert client.post(detail + "cancel/").status_code == 400

    settings.TASKS = IMMEDIATE
    resumed = client.post(detail + "resume/").json()
    assert resumed["status"] == "queued"  # as it was queued; the immediate backend has run it since
    final = client.get(detail).json()
    assert (final["status"], final["generated"], final["resumable"]) == ("finished", 3, False)
    assert [row["id"] for row in client.get(url).json()] == [body["id"]]
    assert client.post(detail + "resume/").status_code == 400
    assert client.get(reverse("api-dataset-generation", args=["d3", 999])).status_code == 404


def test_the_answers_page_speaks_chinese(client_as, researcher, dataset, settings):
    client = client_as(researcher)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    text = client.get(page(dataset)).text
    assert all(words in text for words in ("候选回答", "上传回答", "生成回答", "提问方式")), text


def test_a_generation_whose_worker_died_can_be_resumed(dataset, fake_endpoint, fake_llm, researcher, settings):
    settings.TASKS = DUMMY
    generation = AnswerGeneration.objects.create(
        dataset=dataset,
        model=CandidateModelFactory(name="gen-m"),
        endpoint=fake_endpoint,
        total=3,
        status="running",
        beat_at=timezone.now(),
    )
    with pytest.raises(GenerationError, match="Nothing is left to resume"):
        generation_resume(generation=generation, actor=researcher)  # its worker is still beating
    AnswerGeneration.objects.filter(pk=generation.pk).update(
        beat_at=timezone.now() - timedelta(seconds=settings.JUDGING_STALE_SECONDS + 1)
    )
    generation.refresh_from_db()
    assert generation_resume(generation=generation, actor=researcher).status == "queued"
    assert generation_execute(generation_id=generation.pk) == "finished" and Answer.objects.count() == 3


def test_the_api_names_an_unknown_endpoint_and_starts_nothing(client_as, researcher, dataset, settings):
    settings.TASKS = DUMMY
    response = client_as(researcher).post(
        reverse("api-dataset-generations", args=["d3"]),
        {"model": "m", "endpoint": "nope"},
        content_type="application/json",
    )
    assert response.status_code == 400 and "Unknown endpoint 'nope'" in response.json()["detail"]
    assert not AnswerGeneration.objects.exists()
