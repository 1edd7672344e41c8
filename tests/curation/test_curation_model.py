"""The model the researcher chose: LLM curation steps send the endpoint's default model (or the
one chosen on the form), show it before starting and record it; a judge run whose endpoint
reports another model than the one asked shows a warning, with the counts, on the run page and in
`diagnostics`.

As reported: reference drafting and translation always sent `gpt-4o` whatever the endpoint's
default model or OPENAI_MODEL (a failed job on Ollama, vLLM or llama.cpp, and reviewers read
"Drafted by gpt-4o"); a gateway's fallback model showed only as information on the run.
"""

import io

import pytest
from django.core.management import call_command
from django.urls import reverse

from curation.datasets.llm_steps import curation_job_run, reference_job_create
from curation.datasets.services import VersionError
from curation.models import ReviewEvent
from judging.models import JudgeRun
from llm.models import Endpoint
from tests.factories import DatasetFactory, ItemFactory, JudgeRunFactory, JudgmentFactory
from tests.judging.fake_llm import FakeLLM

pytestmark = pytest.mark.django_db


@pytest.fixture
def server(monkeypatch, settings):
    fake = FakeLLM(reply=lambda body: "A drafted reference.").start()
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_MODEL", raising=False)
    settings.JUDGING_RETRY_BASE_SECONDS = 0.001
    settings.JUDGING_RETRY_CAP_SECONDS = 0.002
    yield fake
    fake.stop()


@pytest.fixture
def working():
    dataset = DatasetFactory(name="needs-refs")
    ItemFactory(dataset=dataset, external_id="e1", question="What is DNS?", reference="", language="en")
    return dataset


def test_the_named_endpoints_default_model_is_sent_and_recorded(server, working):
    Endpoint.objects.create(name="ollama", base_url=server.base_url, default_model="qwen2.5:7b")
    job = reference_job_create(dataset=working, endpoint_name="ollama")
    assert job.model == "qwen2.5:7b"
    curation_job_run(job_id=job.pk)
    assert {body["model"] for body in server.requests} == {"qwen2.5:7b"}
    drafted = ReviewEvent.objects.filter(item__dataset=working).exclude(after__model=None).get()
    assert drafted.after["model"] == "qwen2.5:7b"


def test_openai_model_is_the_default_endpoints_and_the_form_can_choose(server, working, monkeypatch):
    monkeypatch.setenv("OPENAI_MODEL", "llama-3.1-8b")
    assert reference_job_create(dataset=working).model == "llama-3.1-8b"
    assert reference_job_create(dataset=working, model="chosen-m", reopen=True).model == "chosen-m"


def test_no_model_known_refuses_to_start(server, working):
    with pytest.raises(VersionError, match="No model to send"):
        reference_job_create(dataset=working)


def test_the_page_shows_the_model_before_starting_and_the_job_records_it(
    server, working, client, researcher, monkeypatch
):
    monkeypatch.setenv("OPENAI_MODEL", "llama-3.1-8b")
    client.force_login(researcher)
    page = client.get(reverse("curation:review-dataset", args=[working.pk])).content.decode()
    assert "Empty sends <strong>llama-3.1-8b</strong>" in page
    assert "gpt-4o" not in page
    done = client.post(reverse("curation:review-job", args=[working.pk]), {"kind": "reference"}, follow=True)
    assert "with llama-3.1-8b." in done.content.decode()


def test_curation_llm_without_model_uses_the_endpoints_default(server, working, monkeypatch):
    monkeypatch.setenv("OPENAI_MODEL", "mistral-7b")
    out = io.StringIO()
    call_command("curation_llm", "references", "--dataset", "needs-refs", stdout=out)
    assert "model: mistral-7b" in out.getvalue()
    assert {body["model"] for body in server.requests} == {"mistral-7b"}


def test_a_run_answered_by_another_model_warns_with_the_counts(client, researcher):
    run = JudgeRunFactory(judge_model="gpt-4o", status=JudgeRun.Status.FINISHED)
    for n, reported in enumerate(["gpt-4o-2024-08-06"] * 3 + ["gpt-4o-mini"] * 2 + [""]):
        JudgmentFactory(
            run=run, item=ItemFactory(dataset=run.dataset, external_id=f"m{n}"), raw_text="ok", reported_model=reported
        )
    client.force_login(researcher)
    html = client.get(reverse("judging:run-detail", args=[run.pk])).content.decode()
    assert "The run asked for gpt-4o, but the endpoint reported another model in 2 of 6 replies:" in html
    assert "<code>gpt-4o-mini</code> (2)" in html
    out = io.StringIO()
    call_command("diagnostics", "--run", str(run.pk), stdout=out)
    assert (
        "WARNING: the endpoint answered 2 of 6 replies with another model than gpt-4o: gpt-4o-mini (2)"
        in out.getvalue()
    )


def test_no_warning_when_the_model_asked_answered(client, researcher):
    run = JudgeRunFactory(judge_model="qwen2.5", status=JudgeRun.Status.FINISHED)
    JudgmentFactory(run=run, item=ItemFactory(dataset=run.dataset), raw_text="ok", reported_model="qwen2.5")
    client.force_login(researcher)
    assert 'id="model-mismatch"' not in client.get(reverse("judging:run-detail", args=[run.pk])).content.decode()
