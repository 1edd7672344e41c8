"""Two `db_worker` processes on one run, the second joining mid-run, against a loopback server
that enforces the endpoint's limits with 429s and counts the calls it serves at once: never
more calls in flight than the endpoint allows, and not one request or token per minute over
(no 429), on SQLite and on PostgreSQL (the suite's database decides)."""

import pytest

from judging.dispatch import run_enqueue
from judging.models import JudgeRun, JudgeShard
from judging.runs.creation import run_create
from judging.runs.spec import RunSpec
from llm.models import BudgetLease, Endpoint
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory
from tests.judging.rate_limits import ProviderLimits
from tests.processes import shared_database, start_worker, stop, wait_for  # noqa: F401 - a fixture

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]

IN_FLIGHT = 4
# A short "minute" for the test (the workers read it from their environment): the limits bind
# several times within one run.
WINDOW_SECONDS = 1.0
RPM = 20
ITEMS = 160
MAX_TOKENS = 40


def holders(run) -> int:
    return len(set(run.shards.exclude(worker_id="").values_list("worker_id", flat=True)))


def run_status(run) -> str:
    return JudgeRun.objects.values_list("status", flat=True).get(pk=run.pk)


def test_two_workers_one_joining_mid_run_keep_together_to_every_limit(fake_llm, fast_retries, shared_database):
    fake_llm.latency = 0.2
    # Tokens bind before requests: sixteen calls' worth per minute (a judge prompt here is about
    # 900 tokens with its max_tokens).
    tpm = 16 * 950
    fake_llm.limits = ProviderLimits(rpm=RPM, tpm=tpm, window=WINDOW_SECONDS)
    endpoint = Endpoint.objects.create(
        name="limited",
        base_url=fake_llm.base_url,
        max_in_flight=IN_FLIGHT,
        requests_per_minute=RPM,
        tokens_per_minute=tpm,
        max_retries=2,
    )
    dataset = DatasetFactory(name="limited")
    model = CandidateModelFactory(name="m1")
    for n in range(ITEMS):
        item = ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"q{n}")
        AnswerFactory(item=item, model=model, text=f"<<{n}>>")
    run = run_create(
        spec=RunSpec(
            dataset=dataset,
            mode="pointwise",
            judge_model="j",
            candidates=[model],
            endpoint=endpoint,
            concurrency=8,
            shard_size=4,
            max_tokens=MAX_TOKENS,
        ),
    )
    run_enqueue(run=run)
    env = {"LLM_RATE_WINDOW_SECONDS": str(WINDOW_SECONDS), "FAKE_LLM_KEY": "k"}
    workers = [start_worker(shared_database, "first", **env)]
    try:
        wait_for(lambda: run.judgments.count() >= 8, processes=workers, what="the first worker's replies")
        # The first worker's calls are held at the server until the second worker holds a shard:
        # it joins with the first worker's slots all out, whatever the machine's speed.
        fake_llm.open.clear()
        workers.append(start_worker(shared_database, "second", **env))
        wait_for(lambda: holders(run) == 2, processes=workers, what="the second worker to take a shard")
        fake_llm.open.set()
        wait_for(lambda: run_status(run) == JudgeRun.Status.FINISHED, processes=workers, what="the run to finish")
    finally:
        fake_llm.open.set()
        for worker in workers:
            stop(worker)
    assert run.judgments.filter(call_error="").count() == ITEMS
    assert fake_llm.peak_busy <= IN_FLIGHT
    assert fake_llm.limits.refused == 0
    assert fake_llm.count == ITEMS
    # The second worker took part: it held shards of the run.
    assert holders(run) == 2
    assert not run.shards.exclude(status=JudgeShard.Status.DONE).exists()
    assert BudgetLease.objects.filter(slots__gt=0).count() == 0
