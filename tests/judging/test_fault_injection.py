"""A judge run against an endpoint that answers 20 % of requests with a fault: 429, 500, a hang
past the timeout, a body that is not JSON, or a well-formed reply with hostile content. Every
unit ends with a result: scored, or failed with its reason. A resume sends again only the
calls that failed, never one that was scored or whose reply could not be parsed."""

import re

import pytest

from judging.engine.execution import run_execute_inline
from judging.models import JudgeRun, Judgment
from judging.runs.creation import run_create
from judging.runs.resume import run_resume
from judging.runs.spec import RunSpec
from llm.errors import LLMCallError
from llm.models import Endpoint, LLMResponse
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory
from tests.judging.fake_llm import FakeLLM

pytestmark = pytest.mark.django_db(transaction=True)

FAULTS = {"429": 0.05, "500": 0.05, "hang": 0.05, "garbage": 0.03, "junk": 0.02}
ITEMS = 100
MODELS = ("m1", "m2")
# What a call that failed for good says, by the fault that ended it.
CALL_ERRORS = re.compile(
    r"^(HTTP 429: rate limited|HTTP 500: server exploded|timeout \(no reply within [\d.]+ s\)"
    r"|unreadable response: (JSONDecodeError|ValueError)) after 2 attempts$"
)


@pytest.fixture
def flaky(fast_retries):
    server = FakeLLM(seed=12)
    # Each kind once at the start, whatever the draws, then a fifth of all requests at random.
    server.script = list(FAULTS)
    server.random_faults = dict(FAULTS)
    server.hang_seconds = 1.5
    yield server
    server.stop()


@pytest.fixture
def run(flaky):
    server = flaky.start()
    endpoint = Endpoint.objects.create(
        name="flaky", base_url=server.base_url, max_in_flight=8, timeout_seconds=0.5, max_retries=1
    )
    dataset = DatasetFactory(name="faults")
    models = [CandidateModelFactory(name=name) for name in MODELS]
    for n in range(ITEMS):
        item = ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"question {n}")
        for model in models:
            AnswerFactory(item=item, model=model, text=f"<<{model.name}:{n}>>")
    return run_create(
        spec=RunSpec(
            dataset=dataset,
            mode="pointwise",
            judge_model="j",
            candidates=models,
            endpoint=endpoint,
            concurrency=8,
            shard_size=50,
        ),
    )


def marker(judgment: Judgment) -> str:
    return f"<<{judgment.model.name}:{judgment.item.external_id[1:]}>>"


def outcomes(run: JudgeRun) -> dict[str, list[Judgment]]:
    judgments = list(run.judgments.select_related("item", "model"))
    return {
        "scored": [j for j in judgments if j.final_score is not None and not j.call_error and not j.parse_error],
        "call": [j for j in judgments if j.call_error and j.final_score is None],
        "parse": [j for j in judgments if j.parse_error and not j.call_error and j.final_score is None],
        "all": judgments,
    }


def test_every_unit_is_scored_or_failed_with_its_reason(run, flaky):
    total = ITEMS * len(MODELS)
    run_execute_inline(run=run)
    run.refresh_from_db()
    assert run.status in (JudgeRun.Status.FINISHED, JudgeRun.Status.FAILED)
    assert set(run.shards.values_list("status", flat=True)) == {"done"}

    found = outcomes(run)
    units = {(j.item_id, j.model_id) for j in found["all"]}
    assert len(found["all"]) == len(units) == total  # one result per unit, none missing
    assert len(found["scored"]) + len(found["call"]) + len(found["parse"]) == total
    assert {j.final_score for j in found["scored"]} == {7}
    assert [j.call_error for j in found["call"] if not CALL_ERRORS.match(j.call_error)] == []
    assert all(j.raw_text == "" for j in found["call"])
    assert all(j.parse_error.strip() for j in found["parse"])
    # Faults were injected (about a fifth of the calls), and some calls failed for good.
    assert sum(flaky.injected.values()) >= 20 and flaky.statuses[429] and flaky.statuses[500]
    assert found["scored"] and found["call"]

    # A resume sends again the calls that failed, and nothing else: a scored unit or one whose
    # reply was kept (parse failures are the judge's answer) is never paid twice.
    before = flaky.count
    failed_calls = {marker(j) for j in found["call"]}
    kept = {marker(j) for j in found["scored"] + found["parse"]}
    flaky.random_faults = {}
    # The endpoint is healthy again, and a slow reply on a loaded machine must not count as a fault.
    Endpoint.objects.filter(name="flaky").update(timeout_seconds=60)
    run_resume(run=run, enqueue=False)
    run_execute_inline(run=run)
    resent = flaky.prompts()[before:]
    assert [prompt for prompt in resent if any(m in prompt for m in kept)] == []
    assert sorted(m for m in failed_calls if any(m in prompt for prompt in resent)) == sorted(failed_calls)
    assert len(resent) == len(failed_calls)
    after = outcomes(run)
    assert len(after["all"]) == total
    assert len(after["scored"]) == len(found["scored"]) + len(found["call"])
    assert len(after["parse"]) == len(found["parse"]) and after["call"] == []


def test_nul_bytes_in_replies_and_errors_are_stored_on_every_database(fast_retries):
    """PostgreSQL refuses NUL in text: a reply, a model name or an error carrying one is kept
    with U+FFFD in its place, instead of failing the batch it came in."""
    server = FakeLLM(reply=lambda body: "Fine.\x00\n{'Factuality': 8, 'Final Score': 8}").start()
    try:
        server.reported_model = "judge\x00model"
        endpoint = Endpoint.objects.create(name="nul", base_url=server.base_url, max_retries=0)
        dataset = DatasetFactory(name="nul")
        model = CandidateModelFactory(name="m1")
        for n in range(3):
            AnswerFactory(item=ItemFactory(dataset=dataset, external_id=f"q{n}"), model=model, text=f"answer {n}")
        run = run_create(
            spec=RunSpec(dataset=dataset, mode="pointwise", judge_model="j", candidates=[model], endpoint=endpoint)
        )
        run_execute_inline(run=run)
        judgments = list(run.judgments.select_related("response"))
        assert [(j.final_score, j.reply, j.reported_model) for j in judgments] == [
            (8, "Fine.\ufffd\n{'Factuality': 8, 'Final Score': 8}", "judge\ufffdmodel")
        ] * 3
        # The response cache kept them too: a resume would not pay for them again.
        assert list(LLMResponse.objects.values_list("text", flat=True)) == [judgments[0].reply] * 3
        # An upstream error quoting a NUL becomes a call error that can be stored as well.
        assert LLMCallError("HTTP 500: bad\x00news").reason == "HTTP 500: bad\ufffdnews"
    finally:
        server.stop()
