"""Judge runs through the provider's Batch API, against a loopback server that serves it."""

from io import StringIO

import pytest
from django.core.management import call_command

from judging.models import BatchJob, JudgeRun
from llm.models import Endpoint
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory
from tests.judging.fake_batch import FakeBatchLLM

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def batch_server(fast_retries, settings):
    settings.LLM_BATCH_POLL_SECONDS = 0.01
    server = FakeBatchLLM().start()
    yield server
    server.stop()


def make_dataset(server, items=4):
    Endpoint.objects.create(name="fake", base_url=server.base_url, api_key_env="FAKE_LLM_KEY", max_retries=1)
    dataset = DatasetFactory(name="many")
    model = CandidateModelFactory(name="m")
    for n in range(items):
        AnswerFactory(
            item=ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"question {n}"),
            model=model,
            text=f"<<answer {n}>>",
        )
    return dataset, model


def judge(*args):
    out = StringIO()
    call_command(
        "judge",
        "--dataset",
        "many",
        "--mode",
        "pointwise",
        "--judge-model",
        "j",
        "--models",
        "m",
        "--endpoint",
        "fake",
        *args,
        stdout=out,
        stderr=StringIO(),
    )
    return out.getvalue()


def test_smoke(batch_server):
    make_dataset(batch_server)
    batch_server.complete_after = 0.0
    out = judge("--batch", "--inline")
    print(out)
    run = JudgeRun.objects.get()
    assert run.status == "finished", run.error
    assert batch_server.count == 0
    assert len(batch_server.uploads) == 1 and len(batch_server.creates) == 1
    assert BatchJob.objects.get().status == "collected"


def test_generate_smoke(batch_server):
    dataset = DatasetFactory(name="gen")
    for n in range(3):
        ItemFactory(dataset=dataset, external_id=f"g{n}", question=f"ask {n}")
    Endpoint.objects.create(name="fake", base_url=batch_server.base_url, api_key_env="FAKE_LLM_KEY", max_retries=1)
    batch_server.complete_after = 0.0
    batch_server.reply = lambda body: "answer to " + body["messages"][-1]["content"]
    out = StringIO()
    call_command("generate", "--dataset", "gen", "--model", "g1", "--endpoint", "fake", "--batch", stdout=out, stderr=StringIO())
    print(out.getvalue())
    from judging.models import Answer
    assert sorted(Answer.objects.values_list("text", flat=True)) == ["answer to ask 0", "answer to ask 1", "answer to ask 2"]
    assert batch_server.count == 0
