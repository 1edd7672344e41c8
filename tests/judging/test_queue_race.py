"""No run waits for ever: a worker that picks up a shard's task while the shard's row is locked
for an instant (its task id being recorded right after the task was queued, or its run locked
by another worker closing a shard) waits for the lock and claims the shard, instead of skipping
it and leaving it queued with no task (PostgreSQL, reproduced with a lock held on purpose); and
the run's watchdog gives a queued shard whose task ended a new task (any database)."""

import threading
import time

import psycopg
import pytest
from django.db import connection
from django.tasks import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from judging.dispatch import run_enqueue
from judging.engine.queue import shard_claim
from judging.engine.watchdog import run_watch
from judging.models import JudgeShard
from judging.runs.creation import run_create
from judging.runs.spec import RunSpec
from llm.models import Endpoint
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def queued_run():
    endpoint = Endpoint.objects.create(name="e", base_url="http://127.0.0.1:9/v1")
    dataset = DatasetFactory(name="race")
    model = CandidateModelFactory(name="m")
    for n in range(4):
        AnswerFactory(item=ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"q{n}"), model=model)
    run = run_create(
        spec=RunSpec(
            dataset=dataset, mode="pointwise", judge_model="j", candidates=[model], endpoint=endpoint, shard_size=2
        )
    )
    run_enqueue(run=run)
    return run


def other_connection():
    db = connection.settings_dict
    return psycopg.connect(
        host=db["HOST"] or "127.0.0.1", port=db["PORT"] or 5432, user=db["USER"], dbname=db["NAME"], autocommit=False
    )


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks are PostgreSQL's")
@pytest.mark.parametrize(
    "locked",
    [
        "UPDATE judging_judgeshard SET task_id = task_id WHERE id = %(shard)s",
        "SELECT id FROM judging_judgerun WHERE id = %(run)s FOR UPDATE",
    ],
    ids=["the-shard-while-its-task-id-is-recorded", "its-run-while-another-worker-closes-a-shard"],
)
def test_a_worker_claiming_a_shard_whose_row_is_locked_waits_and_claims_it(queued_run, locked):
    shard = queued_run.shards.order_by("index").first()
    holder = other_connection()
    holder.execute(locked, {"shard": shard.pk, "run": queued_run.pk})
    claimed: list[bool] = []

    def claim():
        try:
            claimed.append(shard_claim(shard_id=shard.pk, worker_id="w"))
        finally:
            connection.close()  # this thread's own connection

    claiming = threading.Thread(target=claim)
    claiming.start()
    try:
        watcher = other_connection()
        deadline = time.monotonic() + 60
        # Until the claim waits on the lock (or has already given up: the bug).
        while claiming.is_alive() and time.monotonic() < deadline:
            waiting = watcher.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
            ).fetchone()[0]
            watcher.rollback()
            if waiting:
                break
            threading.Event().wait(0.01)
        watcher.close()
    finally:
        holder.commit()
        holder.close()
        claiming.join(timeout=60)
    assert claimed == [True]
    shard.refresh_from_db()
    assert (shard.status, shard.worker_id) == (JudgeShard.Status.RUNNING, "w")


def test_the_watchdog_gives_a_queued_shard_whose_task_ended_a_new_task(queued_run):
    shard = queued_run.shards.order_by("index").first()
    old_task = shard.task_id
    # Its task ended without claiming it (it found the shard locked, and skipped it).
    DBTaskResult.objects.filter(pk=old_task).update(status=TaskResultStatus.SUCCESSFUL)
    run_watch(run_id=queued_run.pk)
    shard.refresh_from_db()
    assert shard.status == JudgeShard.Status.QUEUED
    assert shard.task_id and shard.task_id != old_task
    assert DBTaskResult.objects.get(pk=shard.task_id).status == TaskResultStatus.READY
    # The other shard's task still waits: it is left alone.
    other = queued_run.shards.order_by("index").last()
    assert DBTaskResult.objects.filter(pk=other.task_id, status=TaskResultStatus.READY).exists()
