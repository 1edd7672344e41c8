"""Two judge workers on PostgreSQL, one of them on a host of its own (a network namespace),
cut off from the database mid-run as by a partition: its packets are dropped, nothing resets
its connections. It stops starting calls at once (at most one window more than it had in
flight, llm/delivery.py), the other worker takes its shards over once their heartbeat is stale,
the run finishes with every judgment once, and the provider was paid for at most the cut-off
worker's calls twice. Once the link is back, nothing more is sent, saved or doubled.

Counted at the provider (requests, and the address each came from), never timed: the machine
may be busy."""

from __future__ import annotations

import pytest
from django.db import connection
from django_tasks_db.models import DBTaskResult

from judging.dispatch import run_enqueue
from judging.models import JudgeRun, RunWorker
from llm.models import Endpoint
from tests.factories import two_model_judge_run
from tests.judging.fake_llm import FakeLLM
from tests.nethosts import DB_LINK, HTTP_LINK, PARTITION_SETTINGS, Forwarder, net_host  # noqa: F401 - a fixture
from tests.processes import log_tail, shared_database, start_worker, stop, wait_for  # noqa: F401 - a fixture

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.processes,
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="needs PostgreSQL (set DATABASE_URL): the partition is of its socket"
    ),
]

ITEMS = 100  # two candidates each: 200 calls
CONCURRENCY = 16  # the run's calls in flight, shared by the two workers (8 each)


def status(run) -> str:
    return JudgeRun.objects.values_list("status", flat=True).get(pk=run.pk)


def holders(run) -> set[str]:
    return set(run.shards.filter(status="running").values_list("worker_id", flat=True))


def sharing(run) -> bool:
    """Two workers each with its share of the run's concurrency, and replies saved."""
    ceilings = list(RunWorker.objects.filter(run=run).values_list("ceiling", flat=True))
    return len(ceilings) == 2 and max(ceilings) <= CONCURRENCY // 2 and run.judgments.count() >= CONCURRENCY


def test_a_worker_cut_off_from_postgresql_pays_for_at_most_its_calls_in_flight_twice(shared_database, net_host):
    provider = FakeLLM(latency=1.0, host=HTTP_LINK[0]).start()
    forwarder = Forwarder(int(connection.settings_dict["PORT"] or 5432))
    db = connection.settings_dict
    far_database = f"postgres://{db['USER']}@{DB_LINK[0]}:{forwarder.port}/{db['NAME']}"
    endpoint = Endpoint.objects.create(name="provider", base_url=provider.base_url, max_in_flight=CONCURRENCY)
    run = two_model_judge_run(endpoint, dataset_name="partitioned", items=ITEMS, shard_size=10, concurrency=CONCURRENCY)
    total = 2 * ITEMS
    run_enqueue(run=run)
    near = start_worker(shared_database, "near", **PARTITION_SETTINGS)
    far = start_worker(far_database, "far", namespace=net_host.namespace, **PARTITION_SETTINGS)
    workers = [near, far]
    far_marker = f":{far.pid}:"  # `ip netns exec` runs the worker in its own process: the same pid
    try:
        # Both hold shards and the far one has calls out.
        wait_for(
            lambda: any(far_marker in holder for holder in holders(run)) and len(holders(run)) == 2,
            processes=workers,
            what="both workers to hold shards",
        )
        # ... and share the run's concurrency, each with calls out and replies saved.
        wait_for(
            lambda: sharing(run) and set(provider.senders[-CONCURRENCY:]) == {HTTP_LINK[0], HTTP_LINK[1]},
            processes=workers,
            what="both workers to share the run's calls",
        )
        far_row = RunWorker.objects.filter(run=run, worker_id__contains=far_marker).get()
        net_host.cut_database(True)
        cut_at = provider.count
        far_window = max(far_row.ceiling, far_row.window)
        assert run.judgments.count() < total, "the run finished before the cut: nothing is tested"

        # The near worker takes the far one's shards over once their heartbeat is stale, and finishes.
        wait_for(lambda: status(run) == JudgeRun.Status.FINISHED, processes=[near], what="the run to finish")
        sent = provider.count
        far_after_cut = provider.senders[cut_at:].count(HTTP_LINK[1])

        # Back: the far worker's task ends with its connection's error (its replies could not be
        # saved); the shards it held were finished by the other worker and stay done.
        net_host.cut_database(False)
        far_tasks = DBTaskResult.objects.filter(worker_ids__contains=["far"], task_path__endswith="judge_shard_task")
        wait_for(
            lambda: far_tasks.exists() and not far_tasks.filter(status="RUNNING").exists(),
            processes=workers,
            what="the far worker to record its task's end once its database answers again",
        )
        far_alive = far.poll() is None
        judgments = list(run.judgments.values_list("item__external_id", "model__name", "final_score", "call_error"))
        logs = log_tail(near) + log_tail(far)
    finally:
        for worker in workers:
            stop(worker)
        forwarder.close()
        provider.stop()

    # Every unit judged once, scored: nothing lost, nothing doubled.
    assert len(judgments) == total, logs
    assert len({(item, model) for item, model, _score, _error in judgments}) == total
    assert {(score, error) for _item, _model, score, error in judgments} == {(7, "")}
    assert status(run) == JudgeRun.Status.FINISHED
    # The far worker, cut off, started at most one window beyond what it had in flight (some of
    # those may reach the provider just after the cut): 2 x its window at the provider after the cut.
    assert far_after_cut <= 2 * far_window, (far_after_cut, far_window, logs)
    # Paid twice: at most the cut-off worker's calls (in flight and one window more, each at most
    # its share of the run's concurrency); 1,200 calls at 64 in flight: at most 1,264.
    assert total <= sent <= total + CONCURRENCY, (sent, far_after_cut, far_window, logs)
    # The far worker outlived its database's absence: it records its task's end and polls on.
    assert far_alive, logs
    # Nothing was sent after the run finished, the link back or not.
    assert provider.count == sent
    # The shards the far worker held were taken over and judged by the near one.
    assert set(run.shards.values_list("status", flat=True)) == {"done"}
    assert run.shards.filter(attempts__gt=1).exists()
