"""Work recovers by itself: a shard whose worker died is taken over with no one resuming it,
and `judge_resume` right after a crash resumes at once.

A worker that is gone is known two ways: its heartbeat is older than JUDGING_STALE_SECONDS
(wherever it ran), or it was a process of this machine that no longer exists (known at once).
Real worker processes killed with SIGKILL are in test_worker_crash.py."""

import socket
import subprocess
import sys
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from core.processes import worker_is_gone, worker_name
from judging.dispatch import run_enqueue, run_watch_schedule
from judging.engine.queue import shard_claim
from judging.engine.watchdog import run_watch
from judging.management.commands import judge_resume as judge_resume_command
from judging.models import JudgeRun, JudgeShard
from judging.runs.creation import run_create
from judging.runs.resume import run_resume
from judging.runs.spec import RunSpec
from llm.models import Endpoint
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory, JudgmentFactory

pytestmark = pytest.mark.django_db(transaction=True)

WATCH_TASK = "judging.tasks.run_watch_task"
SHARD_TASK = "judging.tasks.judge_shard_task"


def dead_worker() -> str:
    """The name a worker of this machine had, once its process is gone (killed and reaped)."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    name = worker_name().rsplit(":", 2)
    process.kill()
    process.wait()
    return f"{name[0]}:{process.pid}:{name[2]}"


def test_a_worker_is_known_gone_only_when_its_process_here_no_longer_exists():
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    host, _pid, namespace = worker_name().split(":")
    try:
        assert worker_is_gone(f"{host}:{alive.pid}:{namespace}") is False
    finally:
        alive.kill()
        alive.wait()
    assert worker_is_gone(f"{host}:{alive.pid}:{namespace}") is True
    assert worker_is_gone(dead_worker()) is True
    assert worker_is_gone(worker_name()) is False  # this very process
    # Another machine, another container, a name that is not ours: only the heartbeat can tell.
    assert worker_is_gone(f"not-{socket.gethostname()}:{alive.pid}:{namespace}") is False
    assert worker_is_gone(f"{host}:{alive.pid}:1{namespace}") is False
    assert worker_is_gone(f"{host}:{alive.pid}") is False
    assert worker_is_gone("w1") is False and worker_is_gone("") is False


@pytest.fixture
def crashed(fake_llm, fast_retries):
    """A run of 6 units in one shard, 3 of them judged, held by a worker whose heartbeat is fresh."""

    def make(holder: str):
        Endpoint.objects.create(name="fake", base_url=fake_llm.base_url, api_key_env="FAKE_LLM_KEY", max_retries=1)
        dataset = DatasetFactory(name="crashed")
        model = CandidateModelFactory(name="m")
        items = [ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"question {n}") for n in range(6)]
        for n, item in enumerate(items):
            AnswerFactory(item=item, model=model, text=f"<<answer {n}>>")
        run = run_create(
            spec=RunSpec(
                dataset=dataset,
                mode="pointwise",
                judge_model="judge-m",
                candidates=[model],
                endpoint=Endpoint.objects.get(name="fake"),
                concurrency=2,
            ),
        )
        JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.RUNNING)
        run.shards.update(status=JudgeShard.Status.RUNNING, worker_id=holder, heartbeat_at=timezone.now(), attempts=1)
        for item in items[:3]:
            JudgmentFactory(run=run, item=item, model=model, final_score=7)
        return run

    return make


def test_judge_resume_right_after_a_crash_takes_the_dead_workers_shard_at_once(crashed, fake_llm):
    run = crashed(dead_worker())
    # Its heartbeat is fresh, but its process is gone: no need to wait for it to go stale.
    assert run_resume(run=run, enqueue=False) == 1
    assert run.shards.get().status == JudgeShard.Status.QUEUED


def test_judge_resume_inline_right_after_a_crash_finishes_and_repeats_no_call(crashed, fake_llm):
    run = crashed(dead_worker())
    out = StringIO()
    call_command("judge_resume", str(run.pk), "--inline", stdout=out)
    assert "1 shard(s) queued again." in out.getvalue()
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.FINISHED and run.judgments.count() == 6
    # Only the three units without a judgment were sent, once each.
    assert fake_llm.count == 3
    assert all(any(f"<<answer {n}>>" in prompt for n in (3, 4, 5)) for prompt in fake_llm.prompts())


def test_a_live_worker_elsewhere_keeps_its_shard_until_its_heartbeat_is_stale(crashed, fake_llm, settings):
    run = crashed(f"not-{socket.gethostname()}:4242:1")
    assert run_resume(run=run, enqueue=False) == 0  # it may well be working: nothing is taken
    shard = run.shards.get()
    assert shard_claim(shard_id=shard.pk, worker_id="other") is False
    JudgeShard.objects.filter(pk=shard.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=60))
    assert run_resume(run=run, enqueue=False) == 1


def test_judge_resume_inline_waits_for_a_shard_held_elsewhere_and_takes_it_over_once_stale(
    crashed, fake_llm, settings, monkeypatch
):
    settings.JUDGING_STALE_SECONDS = 30
    settings.JUDGING_TICK_SECONDS = 0.05
    run = crashed(f"not-{socket.gethostname()}:4242:1")

    def resume_then_the_holder_falls_silent(**kwargs):
        # The other worker's heartbeat goes stale only once the resume has looked at it (fresh),
        # however long a loaded machine takes to get there.
        count = run_resume(**kwargs)
        run.shards.update(heartbeat_at=timezone.now() - timedelta(seconds=60))
        return count

    monkeypatch.setattr(judge_resume_command, "run_resume", resume_then_the_holder_falls_silent)
    out = StringIO()
    # Nothing to re-queue yet; the command follows the run here, and takes the shard over once
    # the other worker's heartbeat is stale: it neither gives up nor hangs.
    call_command("judge_resume", str(run.pk), "--inline", stdout=out)
    assert "0 shard(s) queued again." in out.getvalue()
    run.refresh_from_db()
    assert (run.status, run.judgments.count(), fake_llm.count) == (JudgeRun.Status.FINISHED, 6, 3)
    assert run.shards.get().attempts == 2


def test_the_watchdog_gives_a_dead_workers_shard_back_with_a_task_and_looks_again(crashed, settings):
    settings.JUDGING_STALE_SECONDS = 30
    run = crashed(f"not-{socket.gethostname()}:4242:1")
    shard = run.shards.get()
    assert run_watch(run_id=run.pk) == 0  # fresh heartbeat, another machine: left alone
    assert DBTaskResult.objects.filter(task_path=SHARD_TASK).count() == 0
    [looks_again] = DBTaskResult.objects.filter(task_path=WATCH_TASK)
    assert looks_again.args_kwargs["args"] == [run.pk]
    assert looks_again.run_after > timezone.now() + timedelta(seconds=30)

    # No heartbeat for a minute: the worker died. Any worker running the watchdog takes the shard
    # back to the queue and queues a task for it; no one has to run judge_resume.
    JudgeShard.objects.filter(pk=shard.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=60))
    JudgeRun.objects.filter(pk=run.pk).update(watchdog_at=None)
    assert run_watch(run_id=run.pk) == 1
    shard.refresh_from_db()
    assert shard.status == JudgeShard.Status.QUEUED
    [task] = DBTaskResult.objects.filter(task_path=SHARD_TASK)
    assert task.args_kwargs["args"] == [shard.pk] and shard.task_id == str(task.id)


def test_a_dead_local_workers_shard_is_taken_back_by_the_watchdog_at_once(crashed):
    run = crashed(dead_worker())
    assert run_watch(run_id=run.pk) == 1
    assert run.shards.get().status == JudgeShard.Status.QUEUED


def test_one_watchdog_per_run_and_none_once_it_ended(crashed):
    run = crashed(f"not-{socket.gethostname()}:4242:1")
    run_enqueue(run=run)
    run_enqueue(run=run)
    assert run_watch_schedule(run_id=run.pk) is False
    assert DBTaskResult.objects.filter(task_path=WATCH_TASK).count() == 1
    # A due time long past (its task was lost, or waits behind busy workers) is replaced.
    JudgeRun.objects.filter(pk=run.pk).update(watchdog_at=timezone.now() - timedelta(minutes=5))
    assert run_watch_schedule(run_id=run.pk) is True
    # An ended run needs no watchdog, and its last one does nothing.
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.CANCELLED, watchdog_at=None)
    before = DBTaskResult.objects.count()
    assert run_watch(run_id=run.pk) == 0 and run_watch_schedule(run_id=run.pk) is False
    assert DBTaskResult.objects.count() == before
    assert run.shards.get().status == JudgeShard.Status.RUNNING


def test_the_watchdog_closes_a_run_whose_worker_died_after_its_last_judgment(crashed):
    run = crashed(f"not-{socket.gethostname()}:4242:1")
    for item in run.dataset.items.exclude(judgments__run=run):
        JudgmentFactory(run=run, item=item, model=run.candidates.get(), final_score=7)
    run.shards.update(status=JudgeShard.Status.DONE)  # every shard closed, the run never was
    assert JudgeRun.objects.get(pk=run.pk).status == JudgeRun.Status.RUNNING
    run_watch(run_id=run.pk)
    assert JudgeRun.objects.get(pk=run.pk).status == JudgeRun.Status.FINISHED
