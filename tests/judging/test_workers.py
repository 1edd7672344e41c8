"""Real `db_worker` processes on SQLite and PostgreSQL: a worker killed with SIGKILL in the
middle of a judge run, restarted and resumed with `judge_resume --force`, finishes the run
repeating no finished call (counted at the loopback server); two workers never judge the same
item twice.

The crash-and-resume logic itself is also covered in-process in test_runs.py.
"""

import io

import pytest
from django.core.management import call_command

from judging.dispatch import run_enqueue
from judging.models import JudgeRun, Judgment
from llm.models import Endpoint
from tests.factories import two_model_judge_run
from tests.processes import kill, shared_database, start_worker, stop, wait_for  # noqa: F401 - a fixture

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]


@pytest.fixture
def big_run(fake_llm, fast_retries, shared_database):
    def make(items=150, shard_size=500, concurrency=8):
        endpoint = Endpoint.objects.create(name="fake", base_url=fake_llm.base_url, max_in_flight=concurrency)
        return two_model_judge_run(
            endpoint, dataset_name="many", items=items, shard_size=shard_size, concurrency=concurrency
        )

    return make


def unit_marker(judgment: Judgment) -> str:
    return f"<<{judgment.model.name}:{judgment.item.external_id[1:]}>>"


def run_status(run) -> str:
    return JudgeRun.objects.values_list("status", flat=True).get(pk=run.pk)


def test_a_killed_worker_resumes_without_repeating_a_finished_call(big_run, fake_llm, shared_database):
    fake_llm.latency = 0.05
    run = big_run(items=150)
    run_enqueue(run=run)
    # Its share of the endpoint's calls in flight comes back when its lease lapses: in seconds
    # here, rather than the 30 a deployment waits (the slots are not what this test is about).
    worker = start_worker(shared_database, "first", LLM_BUDGET_LEASE_SECONDS="2")
    try:
        wait_for(lambda: run.judgments.count() >= 80, processes=[worker], what="80 judgments")
    finally:
        kill(worker)  # SIGKILL: no cleanup, no last flush, the shard left "running"
    sent_before = fake_llm.count
    finished = {unit_marker(j) for j in run.judgments.select_related("item", "model")}
    assert 80 <= len(finished) < 300
    assert run_status(run) == JudgeRun.Status.RUNNING
    assert run.shards.get().status == "running"  # the dead worker's shard, its heartbeat still fresh

    # Right after the crash: --force takes the shard without waiting for its heartbeat to expire.
    out = io.StringIO()
    call_command("judge_resume", str(run.pk), "--force", "--no-wait", stdout=out)
    assert f"Run {run.pk}: 1 shard(s) queued again." in out.getvalue()
    worker = start_worker(shared_database, "second")
    try:
        wait_for(lambda: run_status(run) == JudgeRun.Status.FINISHED, processes=[worker], what="the run to finish")
    finally:
        stop(worker)
    after = fake_llm.prompts()[sent_before:]
    repeated = [marker for marker in finished if any(marker in prompt for prompt in after)]
    assert repeated == []
    assert run.judgments.count() == 300
    # What was sent after the crash is at most what was missing (replies paid for but not yet
    # saved at the kill are in the cache and free).
    assert len(after) <= 300 - len(finished)
    # Every unit has exactly one judgment, scored.
    assert run.judgments.filter(final_score=7, call_error="", parse_error="").count() == 300
    shard = run.shards.get()
    assert (shard.attempts, shard.status) == (2, "done")


def test_two_workers_never_judge_the_same_item_twice(big_run, fake_llm, shared_database):
    fake_llm.latency = 0.01
    run = big_run(items=200, shard_size=50, concurrency=8)
    run_enqueue(run=run)
    # A duplicate task for every shard: the shard claim must still let only one worker through.
    from judging.tasks import judge_shard_task

    for shard_id in run.shards.values_list("pk", flat=True):
        judge_shard_task.enqueue(shard_id)
    workers = [start_worker(shared_database, "w1"), start_worker(shared_database, "w2")]
    try:
        wait_for(lambda: run_status(run) == JudgeRun.Status.FINISHED, processes=workers, what="the run to finish")
    finally:
        for worker in workers:
            stop(worker)
    prompts = fake_llm.prompts()
    assert len(prompts) == 400 == len(set(prompts))
    assert run.judgments.count() == 400
    assert set(run.shards.values_list("attempts", flat=True)) == {1}
    assert 1 <= len(set(run.shards.values_list("worker_id", flat=True))) <= 2
