"""A batch run's command or worker killed with SIGKILL while it waits on its batch, then
`judge_resume`: the batch in flight is picked up, never uploaded or made a second time, and every
item is scored with no live call (counted at the loopback server), on SQLite and PostgreSQL."""

from io import StringIO

import pytest
from django.core.management import call_command

from judging.dispatch import run_enqueue
from judging.models import BatchJob, JudgeRun
from judging.runs.creation import run_create
from judging.runs.spec import RunSpec
from llm.models import Endpoint
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory
from tests.judging.fake_batch import FakeBatchLLM
from tests.processes import kill, shared_database, start_command, start_worker, stop, wait_for  # noqa: F401 - a fixture

pytestmark = pytest.mark.processes


@pytest.fixture
def server():
    fake = FakeBatchLLM().start()
    yield fake
    fake.stop()


def test_a_batch_run_killed_mid_wait_is_resumed_without_a_second_upload(shared_database, server, settings):
    settings.LLM_BATCH_POLL_SECONDS = 0.05
    Endpoint.objects.create(name="fake", base_url=server.base_url, api_key_env="FAKE_LLM_KEY")
    dataset = DatasetFactory(name="crash")
    model = CandidateModelFactory(name="m")
    for n in range(6):
        AnswerFactory(
            item=ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"question {n}"),
            model=model,
            text=f"<<answer {n}>>",
        )
    arguments = ["judge", "--dataset", "crash", "--mode", "pointwise", "--judge-model", "j", "--models", "m"]
    command = start_command(
        shared_database,
        [*arguments, "--endpoint", "fake", "--batch", "--inline"],
        "batch-judge",
        LLM_BATCH_POLL_SECONDS="0.05",
        LLM_KEY_VARIABLES="FAKE_LLM_KEY",
        FAKE_LLM_KEY="k",
    )
    try:
        # Killed while it waits: its batch is at the provider and it has looked at it again since.
        looks: list = []

        def waiting_twice():
            job = BatchJob.objects.filter(status=BatchJob.Status.SUBMITTED, checked_at__isnull=False).first()
            if job is not None and job.checked_at not in looks:
                looks.append(job.checked_at)
            return len(looks) >= 2

        wait_for(waiting_twice, processes=[command], what="the command polling its batch")
    finally:
        kill(command)
    run = JudgeRun.objects.get()
    assert (run.status, server.creates, len(server.uploads)) == ("running", ["batch_1"], 1)
    assert run.judgments.count() == 0

    server.complete()
    call_command("judge_resume", str(run.pk), "--inline", stdout=StringIO(), stderr=StringIO())
    run.refresh_from_db()
    assert (run.status, run.replied, run.judgments.scored().count()) == ("finished", 6, 6)
    # Exactly one upload and one batch for the one batch of the run, and no live call.
    assert len(server.uploads) == 1 and server.creates == ["batch_1"] and server.count == 0
    assert BatchJob.objects.get().status == BatchJob.Status.COLLECTED


def test_a_worker_polls_a_batch_run_by_itself_and_another_finishes_it_after_a_kill(shared_database, server):
    """The worker's pass queues the next one LLM_BATCH_POLL_SECONDS later, as long as the batch is
    out; a worker killed with SIGKILL between two looks loses nothing, and the next one (after
    `judge_resume`) collects the batch without making another."""
    Endpoint.objects.create(name="fake", base_url=server.base_url)
    dataset = DatasetFactory(name="worker")
    model = CandidateModelFactory(name="m")
    for n in range(4):
        AnswerFactory(item=ItemFactory(dataset=dataset, external_id=f"q{n}"), model=model, text=f"<<{n}>>")
    run = run_create(
        spec=RunSpec(
            dataset=dataset,
            mode="pointwise",
            judge_model="j",
            candidates=[model],
            endpoint=Endpoint.objects.get(name="fake"),
            batch=True,
        )
    )
    run_enqueue(run=run)
    worker = start_worker(shared_database, "batch-first", LLM_BATCH_POLL_SECONDS="0.2")
    looks: list = []

    def looked_three_times():
        job = BatchJob.objects.filter(status=BatchJob.Status.SUBMITTED, checked_at__isnull=False).first()
        if job is not None and job.checked_at not in looks:
            looks.append(job.checked_at)
        return len(looks) >= 3

    try:
        wait_for(looked_three_times, processes=[worker], what="the worker looking at the batch again and again")
    finally:
        kill(worker)
    assert server.creates == ["batch_1"] and len(server.uploads) == 1

    server.complete()
    call_command("judge_resume", str(run.pk), "--no-wait", stdout=StringIO(), stderr=StringIO())
    worker = start_worker(shared_database, "batch-second", LLM_BATCH_POLL_SECONDS="0.2")
    try:
        wait_for(
            lambda: JudgeRun.objects.values_list("status", flat=True).get(pk=run.pk) == JudgeRun.Status.FINISHED,
            processes=[worker],
            what="the run to finish",
        )
    finally:
        stop(worker)
    assert run.judgments.scored().count() == 4
    assert server.creates == ["batch_1"] and len(server.uploads) == 1 and server.count == 0
