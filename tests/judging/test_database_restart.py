"""PostgreSQL restarted in the middle of a judge run (`pg_ctl restart -m fast`: every session
ended at once), on a cluster of the test's own (tests/pgcluster.py), never the suite's server.
Both workers outlive it and reconnect, the shards they held go back to the queue, and the run
finishes by itself with every judgment once; the provider was paid again for at most each
worker's window twice (calls in flight and one window more, llm/delivery.py).

Counted at the provider and in the database, never timed: the machine may be busy."""

from __future__ import annotations

import subprocess
import sys
from contextlib import contextmanager

import psycopg
import pytest
from django.db import DatabaseError, connection
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from judging.dispatch import run_enqueue
from judging.models import JudgeRun, RunWorker
from llm.models import Endpoint
from tests.factories import two_model_judge_run
from tests.pgcluster import private_cluster  # noqa: F401 - a fixture
from tests.processes import ROOT, log_tail, process_env, start_worker, stop, wait_for

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.processes,
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="needs PostgreSQL (set DATABASE_URL): the test restarts a server"
    ),
]

ITEMS = 100  # two candidates each: 200 calls
CONCURRENCY = 16  # the run's calls in flight, shared by the two workers
SETTINGS = {
    # Scaled down from a deployment's 30 s, should a shard be left to the watchdog.
    "JUDGING_STALE_SECONDS": "6",
    "JUDGING_HEARTBEAT_SECONDS": "1",
    "LLM_BUDGET_LEASE_SECONDS": "4",
    "DB_CONNECT_TIMEOUT": "3",
    "DB_NETWORK_TIMEOUT": "3",
}
NAME = "ub_restart"


@contextmanager
def this_process_on(cluster):
    """The test's own ORM reads and writes the private cluster's database meanwhile."""
    db = connection.settings_dict
    saved = {key: db[key] for key in ("NAME", "HOST", "PORT", "USER")}
    connection.close()
    db.update(NAME=NAME, HOST="127.0.0.1", PORT=str(cluster.port), USER="postgres")
    try:
        yield
    finally:
        connection.close()
        db.update(saved)


def read(query, default=None):
    """A query that may meet the connection the restart ended: it is dropped, and asked again later."""
    try:
        return query()
    except DatabaseError:
        connection.close()
        return default


def test_postgresql_restarted_mid_run_every_worker_reconnects_and_the_run_finishes(private_cluster, fake_llm):
    with psycopg.connect(host="127.0.0.1", port=private_cluster.port, user="postgres", autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {NAME}")
    url = private_cluster.url(NAME)
    migrated = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--no-input", "-v", "0"],
        cwd=ROOT,
        env=process_env(url),
        capture_output=True,
        text=True,
    )
    assert migrated.returncode == 0, migrated.stderr[-3000:]
    fake_llm.latency = 1.0
    with this_process_on(private_cluster):
        endpoint = Endpoint.objects.create(name="provider", base_url=fake_llm.base_url, max_in_flight=CONCURRENCY)
        run = two_model_judge_run(
            endpoint, dataset_name="restarted", items=ITEMS, shard_size=10, concurrency=CONCURRENCY
        )
        total = 2 * ITEMS
        run_enqueue(run=run)
        workers = [start_worker(url, name, **SETTINGS) for name in ("a", "b")]
        try:
            # Both workers share the run, with calls out and replies saved.
            wait_for(
                lambda: (
                    RunWorker.objects.filter(run=run).count() == 2
                    and len(set(run.shards.filter(status="running").values_list("worker_id", flat=True))) == 2
                    and run.judgments.count() >= CONCURRENCY
                ),
                processes=workers,
                what="both workers to hold shards of the run",
            )
            assert run.judgments.count() < total, "the run finished before the restart: nothing is tested"
            restarted_at = timezone.now()
            private_cluster.restart()

            wait_for(
                lambda: (
                    read(lambda: JudgeRun.objects.values_list("status", flat=True).get(pk=run.pk))
                    == JudgeRun.Status.FINISHED
                ),
                processes=workers,
                what="the run to finish after the restart",
            )
            shard_tasks = DBTaskResult.objects.filter(task_path__endswith="judge_shard_task")
            # Every task's end is recorded: none is left "running" by the restart.
            wait_for(
                lambda: not shard_tasks.filter(status__in=["RUNNING", "READY"]).exists(),
                processes=workers,
                what="every shard task's end to be recorded",
            )
            reconnected = {
                name: shard_tasks.filter(worker_ids__contains=[name], finished_at__gt=restarted_at).exists()
                for name in ("a", "b")
            }
            alive = [worker.poll() is None for worker in workers]
            judgments = list(run.judgments.values_list("item__external_id", "model__name", "final_score", "call_error"))
            shards = set(run.shards.values_list("status", flat=True))
            logs = "".join(log_tail(worker) for worker in workers)
        finally:
            for worker in workers:
                stop(worker)
    sent = fake_llm.count

    # Both workers outlived the restart and heard from the database again.
    assert alive == [True, True], logs
    assert reconnected == {"a": True, "b": True}, logs
    # Every unit judged once, scored: nothing lost, nothing doubled.
    assert len(judgments) == total, logs
    assert len({(item, model) for item, model, _score, _error in judgments}) == total
    assert {(score, error) for _item, _model, score, error in judgments} == {(7, "")}
    assert shards == {"done"}
    # Paid again: at most what each worker had in flight and one window more (its window twice).
    assert total <= sent <= total + 2 * CONCURRENCY, (sent, logs)
