"""The Batch choice in the browser and the API: `/runs/new/`, the run page, a dataset's answers
page, `POST /api/runs/` and the generations API, in English and Chinese, against a loopback
server with the Batch API (tests/judging/fake_batch.py)."""

import re
from decimal import Decimal

import pytest
from django.urls import reverse

from judging.engine.batch import run_batch_execute
from judging.models import AnswerGeneration, BatchJob, JudgeRun
from llm.models import Endpoint
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory
from tests.judging.fake_batch import FakeBatchLLM

pytestmark = pytest.mark.django_db
IMMEDIATE = {
    "default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend", "QUEUES": ["default", "judging"]}
}


@pytest.fixture
def server(fast_retries, settings):
    settings.TASKS = IMMEDIATE
    fake = FakeBatchLLM().start()
    yield fake
    fake.stop()


@pytest.fixture
def dataset(server):
    """Three items answered by `alpha`, and the endpoint `fake` (2 and 8 per million tokens)."""
    Endpoint.objects.create(
        name="fake",
        base_url=server.base_url,
        default_model="judge-m",
        input_price_per_million=Decimal("2"),
        output_price_per_million=Decimal("8"),
    )
    dataset = DatasetFactory(name="d3")
    model = CandidateModelFactory(name="alpha")
    for n in range(3):
        item = ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"Question {n}?")
        AnswerFactory(item=item, model=model, text=f"alpha answers {n}")
    return dataset


def run_form(dataset, **changes):
    data = {
        "dataset": dataset.name,
        "mode": "pointwise",
        "endpoint": "fake",
        "batch": "batch",
        "judge_model": "judge-m",
        "candidates": [CandidateModelFactory._meta.model.objects.get(name="alpha").pk],
        "template_set": "urs",
        "concurrency": "",
        "temperature": "0",
        "max_tokens": "100",
        "seed": "",
        "action": "preview",
    }
    data.update(changes)
    return data


def cost(page: str) -> Decimal:
    return Decimal(re.search(r"<strong>([0-9.]+)</strong>", page).group(1))


def test_runs_new_offers_batch_prices_it_at_half_and_starts_a_batch_run(client_as, researcher, dataset, server):
    client = client_as(researcher)
    page = client.get(reverse("judging:run-new"), {"dataset": "d3"}).text
    assert "Batch (about half price, results within 24 h)" in page
    live = client.post(reverse("judging:run-new"), run_form(dataset, batch="live")).text
    preview = client.post(reverse("judging:run-new"), run_form(dataset))
    assert preview.status_code == 200
    text = preview.text
    assert "Sent through the endpoint's Batch API" in text
    assert "(at the batch prices of the endpoint fake: half its live prices unless set)" in text
    assert cost(text) == (cost(live) / 2).quantize(Decimal("0.0001"))
    assert JudgeRun.objects.count() == 0 and server.uploads == []

    fingerprint = preview.context["preview"]["fingerprint"]
    started = client.post(reverse("judging:run-new"), run_form(dataset, action="start", previewed=fingerprint))
    run = JudgeRun.objects.get()
    assert started["Location"] == reverse("judging:run-detail", args=[run.pk])
    assert run.batch is True and run.status == "running"
    # The immediate backend ran the first pass: the batch is at the provider, nothing live.
    assert server.creates == ["batch_1"] and server.count == 0
    shown = client.get(started["Location"]).text
    assert "sent through the Batch API" in shown
    assert 'id="batches"' in shown and "batch_1" in shown and "validating" in shown
    assert "In flight" not in shown  # a live run's window means nothing here

    server.complete()
    assert run_batch_execute(run_id=run.pk) == "finished"
    progress = client.get(reverse("api-run-progress", args=[run.pk])).json()
    assert (progress["status"], progress["done"], progress["batch"]) == ("finished", 3, True)
    assert progress["batches"]["batches"][0]["provider_status"] == "completed"
    assert progress["batches"]["completed"] == 3


def test_runs_new_names_an_endpoint_without_the_batch_api_and_starts_nothing(client_as, researcher, fast_retries):
    plain = FakeBatchLLM(batch_api=False).start()
    try:
        Endpoint.objects.create(name="plain", base_url=plain.base_url)
        dataset = DatasetFactory(name="d1")
        AnswerFactory(item=ItemFactory(dataset=dataset), model=CandidateModelFactory(name="alpha"))
        response = client_as(researcher).post(reverse("judging:run-new"), run_form(dataset, endpoint="plain"))
        assert response.status_code == 400
        assert "The endpoint plain (" in response.text and "does not offer the Batch API" in response.text
        assert JudgeRun.objects.count() == 0 and plain.count == 0
    finally:
        plain.stop()


def test_the_run_page_speaks_chinese_about_batches(client_as, researcher, dataset, server, settings):
    client = client_as(researcher)
    preview = client.post(reverse("judging:run-new"), run_form(dataset))
    fingerprint = preview.context["preview"]["fingerprint"]
    client.post(reverse("judging:run-new"), run_form(dataset, action="start", previewed=fingerprint))
    run = JudgeRun.objects.get()
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    page = client.get(reverse("judging:run-new"), {"dataset": "d3"}).text
    assert "批量（约半价，24 小时内出结果）" in page
    shown = client.get(reverse("judging:run-detail", args=[run.pk])).text
    assert "批次" in shown and "通过批量 API 发送" in shown and "校验中" in shown


def test_the_api_starts_a_batch_run_and_refuses_an_endpoint_without_the_batch_api(
    client_as, researcher, dataset, server, fast_retries
):
    client = client_as(researcher)
    body = {"dataset": "d3", "mode": "pointwise", "judge_model": "judge-m", "models": ["alpha"], "endpoint": "fake"}
    made = client.post(reverse("api-runs"), {**body, "batch": True}, content_type="application/json")
    assert made.status_code == 201, made.text
    data = made.json()
    assert data["batch"] is True and data["progress"]["batches"]["open"] == 1
    assert server.creates == ["batch_1"] and server.count == 0
    server.complete()
    run_batch_execute(run_id=data["id"])
    manifest = client.get(reverse("api-run-manifest", args=[data["id"]])).json()
    assert manifest["judge"]["batch"] is True and manifest["batches"][0]["batch_id"] == "batch_1"

    plain = FakeBatchLLM(batch_api=False).start()
    try:
        Endpoint.objects.create(name="plain", base_url=plain.base_url)
        refused = client.post(
            reverse("api-runs"), {**body, "endpoint": "plain", "batch": True}, content_type="application/json"
        )
        assert refused.status_code == 400 and "does not offer the Batch API" in refused.json()["detail"]
        assert JudgeRun.objects.count() == 1
    finally:
        plain.stop()


def test_the_answers_page_generates_through_the_batch_api(client_as, researcher, dataset, server):
    client = client_as(researcher)
    url = reverse("judging:dataset-answers", args=["d3"])
    form = {"action": "preview", "model": "gen-m", "endpoint": "fake", "preset": "", "max_tokens": "100"}
    live = client.post(url, {**form, "batch": "live"}).text
    preview = client.post(url, {**form, "batch": "batch"})
    assert "Batch (about half price, results within 24 h)" in preview.text
    assert cost(preview.text) == (cost(live) / 2).quantize(Decimal("0.0001"))
    fingerprint = preview.context["preview"]["fingerprint"]
    started = client.post(url, {**form, "batch": "batch", "action": "start", "previewed": fingerprint})
    generation = AnswerGeneration.objects.get()
    assert started.status_code == 302 and generation.batch is True
    assert server.creates == ["batch_1"] and server.count == 0
    page = client.get(url).text
    assert "· Batch</h3>" in page and "batch_1" in page
    api = client.get(reverse("api-dataset-generation", args=["d3", generation.pk])).json()
    assert api["batch"] is True and api["batches"]["open"] == 1

    made = client.post(
        reverse("api-dataset-generations", args=["d3"]),
        {"model": "gen-2", "endpoint": "fake", "batch": True},
        content_type="application/json",
    )
    assert made.status_code == 201 and made.json()["batch"] is True
    assert BatchJob.objects.filter(generation__model__name="gen-2").count() == 1
