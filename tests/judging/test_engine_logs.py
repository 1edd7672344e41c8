"""An operator reads in the log what the engine did on its own: a dead worker's shard taken
over, the watchdog's re-queues and closes, a stopped or cancelled run, shards given back."""

import logging
from datetime import timedelta

import pytest
from django.utils import timezone

from judging.engine.queue import run_cancel, run_stop, shard_claim, shard_claim_next, shards_release, shards_take_back
from judging.engine.watchdog import run_watch
from judging.models import JudgeRun, JudgeShard
from judging.runs.creation import run_create
from judging.runs.spec import RunSpec
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory

pytestmark = pytest.mark.django_db

ENGINE = "userbench.engine"


@pytest.fixture
def held():
    """A running run of one shard, held by worker `w-dead` whose heartbeat is 10 minutes old."""
    dataset = DatasetFactory(name="logged")
    model = CandidateModelFactory(name="m")
    for n in range(3):
        AnswerFactory(item=ItemFactory(dataset=dataset, external_id=f"q{n}"), model=model)
    run = run_create(spec=RunSpec(dataset=dataset, mode="pointwise", judge_model="j", candidates=[model]))
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.RUNNING)
    run.shards.update(
        status=JudgeShard.Status.RUNNING,
        worker_id="w-dead",
        heartbeat_at=timezone.now() - timedelta(minutes=10),
        attempts=1,
    )
    run.refresh_from_db()
    return run, run.shards.get()


def engine_lines(caplog) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.name == ENGINE]


def test_a_task_taking_over_a_dead_workers_shard_says_so(held, caplog):
    run, shard = held
    with caplog.at_level(logging.INFO, logger=ENGINE):
        assert shard_claim(shard_id=shard.pk, worker_id="w-new") is True
    [line] = engine_lines(caplog)
    assert line.startswith(f"run {run.pk} shard {shard.pk} taken over by worker w-new from worker w-dead: heartbeat ")
    assert line.endswith("s old")


def test_a_worker_claiming_a_dead_workers_shard_next_says_so(held, caplog):
    run, shard = held
    with caplog.at_level(logging.INFO, logger=ENGINE):
        assert shard_claim_next(run_id=run.pk, worker_id="w-new").pk == shard.pk
    [line] = engine_lines(caplog)
    assert line.startswith(f"run {run.pk} shard {shard.pk} taken over by worker w-new from worker w-dead: heartbeat ")


def test_a_claim_of_a_queued_shard_logs_nothing(held, caplog):
    run, shard = held
    run.shards.update(status=JudgeShard.Status.QUEUED)
    with caplog.at_level(logging.INFO, logger=ENGINE):
        assert shard_claim(shard_id=shard.pk, worker_id="w-new") is True
    assert engine_lines(caplog) == []


def test_the_watchdog_requeuing_a_dead_workers_shard_says_so(held, caplog):
    run, shard = held
    with caplog.at_level(logging.INFO, logger=ENGINE):
        assert shards_take_back(run=run) == [shard.pk]
    [line] = engine_lines(caplog)
    assert line.startswith(f"run {run.pk} shard {shard.pk} re-queued by the watchdog from worker w-dead: heartbeat ")
    assert run.shards.get().status == JudgeShard.Status.QUEUED


def test_the_watchdog_closing_a_run_its_last_worker_left_open_says_so(held, caplog):
    run, shard = held
    run.shards.update(status=JudgeShard.Status.DONE)
    with caplog.at_level(logging.INFO, logger=ENGINE):
        assert run_watch(run_id=run.pk) == 0
    [line] = engine_lines(caplog)
    # No judgment was saved: the run closes as failed, and the line says how it closed.
    assert line == (f"run {run.pk} closed by the watchdog as failed: no shard was open and no worker had closed it")


def test_a_stopped_run_names_its_shards_their_workers_and_the_reason(held, caplog):
    run, shard = held
    with caplog.at_level(logging.INFO, logger=ENGINE):
        run_stop(run_id=run.pk, error="401 Unauthorized: check the endpoint's key")
    assert engine_lines(caplog) == [
        f"run {run.pk} stopped, shard {shard.pk} (worker w-dead): 401 Unauthorized: check the endpoint's key"
    ]


def test_a_cancelled_run_names_who_cancelled_it_and_the_shards_that_stop(held, caplog, django_user_model):
    run, shard = held
    person = django_user_model.objects.create_user(username="ada", password="x")
    with caplog.at_level(logging.INFO, logger=ENGINE):
        run_cancel(run=run, actor=person)
    assert engine_lines(caplog) == [
        f"run {run.pk} cancelled by ada (was running); stops at its next heartbeat: shard {shard.pk} (worker w-dead)"
    ]


def test_shards_given_back_by_a_worker_that_shuts_down_are_logged(held, caplog):
    run, shard = held
    with caplog.at_level(logging.INFO, logger=ENGINE):
        assert shards_release(shard_ids=[shard.pk]) == 1
    assert engine_lines(caplog) == [
        f"run {run.pk} shard {shard.pk} given back to the queue by worker w-dead: it shuts down"
    ]
