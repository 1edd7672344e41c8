"""The judge engine against loopback servers: one window across a run's shards, errors that
stop a run with words a researcher can act on, cut-off replies, Ctrl-C, max_tokens, shares of
the run's concurrency and the progress a researcher sees."""

import os
import signal
import threading
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from judging.engine.execution import run_execute_inline, shard_execute
from judging.engine.workers import concurrency_share, run_worker_beat
from judging.models import JudgeRun, Judgment, RunWorker
from judging.results.leaderboard import PairOutcome, pairwise_table
from judging.results.selectors import run_progress
from judging.runs.creation import run_create
from judging.runs.resume import run_resume
from judging.runs.spec import RunSpec
from llm.models import Endpoint
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def many(fake_llm, fast_retries):
    """A dataset of `items` questions answered by one model, and an endpoint on the fake server."""

    def make(items=8, **endpoint):
        Endpoint.objects.create(
            name="fake",
            base_url=endpoint.pop("base_url", fake_llm.base_url),
            api_key_env="FAKE_LLM_KEY",
            max_retries=endpoint.pop("max_retries", 1),
            **endpoint,
        )
        dataset = DatasetFactory(name="many")
        model = CandidateModelFactory(name="m")
        for n in range(items):
            AnswerFactory(
                item=ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"question {n}"),
                model=model,
                text=f"<<answer {n}>>",
            )
        return dataset, model

    return make


def new_run(dataset, model, **kwargs):
    return run_create(
        spec=RunSpec(
            dataset=dataset,
            mode="pointwise",
            judge_model="judge-m",
            candidates=[model],
            endpoint=Endpoint.objects.get(name="fake"),
            **kwargs,
        ),
    )


def test_a_slow_call_never_holds_back_the_next_shards_calls(many, fake_llm):
    """Shards of 2, 4 in flight, one call slow: every other call of the run (all later shards
    included) reaches the server while the slow one is still out."""
    dataset, model = many(items=8)
    seen_while_slow = []
    slow = threading.Event()

    def reply(body):
        prompt = body["messages"][-1]["content"]
        if "<<answer 0>>" in prompt:
            slow.set()
            # Wait (bounded) for the rest of the run to arrive while this call is out.
            for _ in range(100):
                if fake_llm.count >= 8:
                    break
                threading.Event().wait(0.02)
            seen_while_slow.append(fake_llm.count)
        return "{'Final Score': 6}"

    fake_llm.reply = reply
    run = new_run(dataset, model, concurrency=4, shard_size=2)
    assert run.shards.count() == 4
    run_execute_inline(run=run)
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.FINISHED and run.judgments.count() == 8
    assert seen_while_slow == [8]
    assert set(run.shards.values_list("status", flat=True)) == {"done"}
    assert set(run.shards.values_list("attempts", flat=True)) == {1}
    # The run closed: its figures are asked for at once (they never were computed).
    [figures] = DBTaskResult.objects.filter(task_path="judging.tasks.run_figures_task")
    assert (figures.args_kwargs["args"], figures.run_after.year) == ([run.pk], 9999)


@pytest.mark.parametrize(
    ("fault", "base_url_suffix", "message"),
    [
        ("404", "", "HTTP 404 from {root}: the base URL probably lacks /v1 (the server said: Not Found)"),
        ("404-model", "/v1", "HTTP 404: model 'judge-m' not found at {root}/v1"),
        ("401", "/v1", "HTTP 401 from {root}/v1: Invalid API Key (the key is read from $FAKE_LLM_KEY)"),
    ],
)
def test_errors_retrying_cannot_fix_stop_the_run_with_the_servers_message_and_url(
    many, fake_llm, fault, base_url_suffix, message
):
    root = fake_llm.base_url.removesuffix("/v1")
    dataset, model = many(items=30, base_url=root + base_url_suffix)
    if fault != "404":
        fake_llm.script = [fault] * 100
    out = StringIO()
    with pytest.raises(CommandError) as stopped:
        call_command(
            "judge",
            "--dataset",
            "many",
            "--mode",
            "pointwise",
            "--judge-model",
            "judge-m",
            "--models",
            "m",
            "--endpoint",
            "fake",
            "--inline",
            "--concurrency",
            "2",
            stdout=out,
        )
    run = JudgeRun.objects.get()
    expected = message.format(root=root)
    assert run.status == JudgeRun.Status.FAILED
    assert run.error == f"Stopped after 3 calls failed the same way: {expected}"
    assert str(stopped.value) == f"Run {run.pk}: Failed. {run.error}"
    # Not retried, and the rest of the run was not sent: three failures, plus at most the one
    # call that was already out.
    assert 3 <= fake_llm.statuses[int(fault[:3])] <= 4
    assert run.judgments.filter(call_error_kind="fatal").count() in (3, 4)


def test_a_connection_error_names_the_url_it_could_not_reach(many, fake_llm):
    dataset, model = many(items=2, base_url="http://127.0.0.1:9/v1", max_retries=0)
    run = new_run(dataset, model, concurrency=1)
    run_execute_inline(run=run)
    errors = set(run.judgments.values_list("call_error", flat=True))
    assert len(errors) == 1
    error = errors.pop()
    assert error.startswith("cannot connect to http://127.0.0.1:9/v1 (ConnectionRefusedError: ")
    assert error.endswith("after 1 attempts")


def test_a_reply_cut_off_by_max_tokens_is_recorded_as_cut_off_and_counted(many, fake_llm):
    dataset, model = many(items=4, max_tokens=300)
    fake_llm.faults = {"<<answer 2>>": ["length"]}
    run = new_run(dataset, model, concurrency=2)
    assert run.max_tokens == 300  # the endpoint's, recorded on the run
    run_execute_inline(run=run)
    assert {body["max_tokens"] for body in fake_llm.requests} == {300}
    cut = run.judgments.get(item__external_id="q2")
    assert (cut.finish_reason, cut.final_score, cut.parse_error) == (
        "length",
        None,
        "the reply was cut off at max_tokens (300)",
    )
    assert cut.reply  # kept as it came back, never scored
    progress = run_progress(run=run)
    assert (progress["done"], progress["cut_off"], progress["parse_failures"]) == (4, 1, 0)

    # The same max_tokens would get the same reply: only a new one sends it again.
    assert run_resume(run=run) == 0
    assert run_resume(run=run, max_tokens=800) == 1
    run_execute_inline(run=run)
    assert fake_llm.count == 5 and fake_llm.requests[-1]["max_tokens"] == 800
    assert "<<answer 2>>" in fake_llm.prompts()[-1]
    run.refresh_from_db()
    assert (run.cut_off, run.max_tokens, run.status) == (0, 800, "finished")


def test_every_judge_call_has_a_max_tokens(many, fake_llm, settings):
    settings.LLM_MAX_TOKENS = {**settings.LLM_MAX_TOKENS, "judging": 700}
    dataset, model = many(items=2)
    run = new_run(dataset, model)
    assert run.max_tokens == 700
    run_execute_inline(run=run)
    assert [body["max_tokens"] for body in fake_llm.requests] == [700, 700]
    assert new_run(dataset, model, max_tokens=90).max_tokens == 90


@pytest.fixture
def ctrl_c():
    """Ctrl-C raises KeyboardInterrupt, as in a terminal. A suite started in the background by a
    script (`make test &`) inherits SIGINT ignored, and a test of what Ctrl-C does would then
    wait for ever."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_ctrl_c_stops_judge_at_once_keeps_what_came_back_and_resume_repeats_nothing(many, fake_llm, ctrl_c):
    dataset, model = many(items=40)
    fake_llm.latency = 0.05

    pressed = threading.Lock()

    def interrupt_once(body):
        if fake_llm.count >= 6 and pressed.acquire(blocking=False):
            os.kill(os.getpid(), signal.SIGINT)  # as Ctrl-C in the terminal would, once
        return "{'Final Score': 5}"

    fake_llm.reply = interrupt_once
    out = StringIO()
    with pytest.raises(SystemExit) as exit_code:
        call_command(
            "judge",
            "--dataset",
            "many",
            "--mode",
            "pointwise",
            "--judge-model",
            "judge-m",
            "--models",
            "m",
            "--endpoint",
            "fake",
            "--inline",
            "--concurrency",
            "2",
            stdout=out,
        )
    run = JudgeRun.objects.get()
    assert exit_code.value.code == 130
    kept = run.judgments.count()
    assert 1 <= kept < 40
    assert (
        f"Stopped: {kept} of 40 judged; saved judgments are kept and no call that came back is sent again. "
        f"Continue with: manage.py judge_resume {run.pk} --inline"
    ) in out.getvalue()
    assert fake_llm.count <= kept + 4  # stopped at once: at most the calls that were out
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.CANCELLED

    fake_llm.reply = lambda body: "{'Final Score': 5}"
    judged = {f"<<answer {j.item.external_id[1:]}>>" for j in run.judgments.select_related("item")}
    sent = fake_llm.count
    out = StringIO()
    call_command("judge_resume", str(run.pk), "--inline", stdout=out)
    assert f"Run {run.pk}: Finished." in out.getvalue()
    again = fake_llm.prompts()[sent:]
    assert len(again) == 40 - kept
    assert not [marker for marker in judged if any(marker in prompt for prompt in again)]


def test_workers_share_the_runs_concurrency(many):
    assert [concurrency_share(128, 2, place) for place in (0, 1)] == [64, 64]
    assert [concurrency_share(10, 3, place) for place in (0, 1, 2)] == [4, 3, 3]
    assert concurrency_share(1, 4, 3) == 1
    dataset, model = many(items=2)
    run = new_run(dataset, model, concurrency=128)
    run_worker_beat(
        run_id=run.pk, worker_id="a", shard_ids=[], window=128, ceiling=128, in_flight=100, overloads=0, rate=300.0
    )
    status, concurrency, workers, place = run_worker_beat(
        run_id=run.pk, worker_id="b", shard_ids=[], window=64, ceiling=64, in_flight=10, overloads=1, rate=20.0
    )
    assert (status, concurrency, workers, place) == ("pending", 128, 2, 1)
    # A worker silent for longer than JUDGING_STALE_SECONDS no longer counts.
    RunWorker.objects.filter(worker_id="a").update(heartbeat_at=timezone.now() - timezone.timedelta(minutes=5))
    assert run_worker_beat(
        run_id=run.pk, worker_id="b", shard_ids=[], window=64, ceiling=64, in_flight=10, overloads=1, rate=20.0
    )[2:] == (1, 0)


def test_progress_shows_the_window_and_a_run_no_worker_holds(many, fake_llm, settings):
    settings.JUDGING_TICK_SECONDS = 0.05
    dataset, model = many(items=30)
    fake_llm.latency = 0.05  # 10 rounds of 3 calls: several batches are saved while the run goes on
    run = new_run(dataset, model, concurrency=3)
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.RUNNING)
    waiting = run_progress(run=run)
    assert (waiting["workers"], waiting["waiting_for_worker"]) == (0, True)
    from judging.management.progress import progress_line

    assert progress_line(waiting).endswith(
        "; no worker holds the run (start one: manage.py db_worker --queue-name judging --interval 0.05)"
    )

    seen = []
    run_execute_inline(run=run, on_progress=lambda: seen.append(run_progress(run=run)))
    during = [p for p in seen if p["status"] == "running" and p["workers"]]
    assert during and all(p["window"] == 3 and p["concurrency"] == "3" and not p["waiting_for_worker"] for p in during)
    assert "(window 3 of 3, 1 worker(s))" in progress_line(during[0])
    assert not RunWorker.objects.exists()  # the worker left the run when it ended


def test_judge_resume_changes_concurrency_and_timeout(many, fake_llm):
    dataset, model = many(items=2)
    run = new_run(dataset, model, concurrency=4)
    call_command(
        "judge_resume", str(run.pk), "--concurrency", "auto", "--timeout", "7.5", "--no-wait", stdout=StringIO()
    )
    run.refresh_from_db()
    assert (run.concurrency_auto, run.concurrency, run.timeout_seconds) == (True, 64, 7.5)
    call_command("judge_resume", str(run.pk), "--concurrency", "9", "--no-wait", stdout=StringIO())
    run.refresh_from_db()
    assert (run.concurrency_auto, run.concurrency) == (False, 9)
    with pytest.raises(CommandError, match="--concurrency: must be at least 1"):
        call_command("judge_resume", str(run.pk), "--concurrency", "0", stdout=StringIO(), stderr=StringIO())


def test_a_leaderboard_ranks_no_model_without_a_valid_judgment():
    outcomes = [
        PairOutcome("good", "win"),
        PairOutcome("good", "lose"),
        PairOutcome("broken", "error"),
        PairOutcome("broken", "error"),
    ]
    rows = pairwise_table(outcomes, lengths={}, reference="ref")
    assert [(r["model"], r["rank"]) for r in rows] == [("good", 1), ("ref", 1), ("broken", None)]


def test_judgment_rows_record_how_a_call_failed(many, fake_llm):
    dataset, model = many(items=2)
    fake_llm.faults = {"<<answer 1>>": ["400"]}
    run = new_run(dataset, model)
    run_execute_inline(run=run)
    failed = Judgment.objects.get(item__external_id="q1")
    assert (failed.call_error_kind, len(failed.error_endpoint)) == ("context_length", 16)


def test_a_worker_asked_to_shut_down_gives_its_shards_back_at_once(many, fake_llm):
    """SIGTERM (a deploy, a restart) stops a worker's calls at once: what came back is kept, its
    shards go back to the queue with tasks for them, and the signal goes on to the worker."""
    received = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: received.append(signum))
    try:
        dataset, model = many(items=40)
        fake_llm.latency = 0.05
        pressed = threading.Lock()

        def stop_once(body):
            if fake_llm.count >= 6 and pressed.acquire(blocking=False):
                os.kill(os.getpid(), signal.SIGTERM)
            return "{'Final Score': 5}"

        fake_llm.reply = stop_once
        run = new_run(dataset, model, concurrency=2, shard_size=10)
        first = run.shards.get(index=0)
        assert shard_execute(shard_id=first.pk, worker_id="w1") == "interrupted"
        assert received == [signal.SIGTERM]  # handed on to the worker's own handler
        run.refresh_from_db()
        assert run.status == JudgeRun.Status.RUNNING
        kept = run.judgments.count()
        assert 1 <= kept < 40 and fake_llm.count <= kept + 4
        statuses = dict(run.shards.values_list("index", "status"))
        assert "running" not in statuses.values() and statuses[0] == "queued"
        # Every shard left has a task again, so another worker (or this one restarted) goes on.
        queued = set(run.shards.filter(status="queued").values_list("pk", flat=True))
        tasked = {
            task.args_kwargs["args"][0]
            for task in DBTaskResult.objects.filter(task_path="judging.tasks.judge_shard_task")
        }
        assert queued <= tasked
        assert not RunWorker.objects.exists()
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_signal_as_the_delivery_ends_still_reaches_the_worker(many, fake_llm, monkeypatch):
    """SIGTERM landing after the calls' event loop closed, before the worker's handler is back:
    the shard ends as it was, and the worker still hears it (it used to be swallowed by a
    RuntimeError from the closed loop, and the worker ran on, deaf to the stop)."""
    import asgiref.sync

    import llm.delivery

    real = asgiref.sync.async_to_sync

    def closing_then_signalled(function):
        def call(*args, **kwargs):
            outcome = real(function)(*args, **kwargs)  # the loop is closed now
            os.kill(os.getpid(), signal.SIGTERM)
            return outcome

        return call

    received = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: received.append(signum))
    try:
        dataset, model = many(items=3)
        run = new_run(dataset, model, concurrency=2, shard_size=10)
        monkeypatch.setattr(llm.delivery, "async_to_sync", closing_then_signalled)
        assert shard_execute(shard_id=run.shards.get(index=0).pk, worker_id="w1") == "done"
        assert received == [signal.SIGTERM]
        assert run.judgments.count() == 3 and fake_llm.count == 3
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_ctrl_c_while_following_workers_stops_the_run(many, fake_llm, ctrl_c):
    """Without --inline the calls are the workers'; Ctrl-C in `judge` cancels the run (the
    workers stop at their next tick) and says how to continue."""
    many(items=3)

    class CtrlCOnceWaiting(StringIO):
        """The command's output; Ctrl-C comes once the progress line says nobody holds the run
        (the order of events made to happen, whatever the machine's load)."""

        sent = False

        def write(self, text):
            written = super().write(text)
            if not self.sent and "no worker holds the run" in self.getvalue():
                self.sent = True
                os.kill(os.getpid(), signal.SIGINT)
            return written

    # Only if that line never comes: the assertions below then say what was printed instead.
    timer = threading.Timer(60, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    out = CtrlCOnceWaiting()
    try:
        with pytest.raises(SystemExit) as exit_code:
            call_command(
                "judge",
                "--dataset",
                "many",
                "--mode",
                "pointwise",
                "--judge-model",
                "judge-m",
                "--models",
                "m",
                "--endpoint",
                "fake",
                stdout=out,
            )
    finally:
        timer.cancel()
    run = JudgeRun.objects.get()
    assert exit_code.value.code == 130 and run.status == JudgeRun.Status.CANCELLED
    lines = out.getvalue()
    assert lines.startswith(f"Run {run.pk}: 3 judgments in 1 shards")
    assert "no worker holds the run" in lines  # nobody was working on it: the line said so
    assert lines.rstrip().endswith(f"Continue with: manage.py judge_resume {run.pk}")
    assert fake_llm.count == 0


@pytest.fixture
def one_slot_server():
    """A llama.cpp-like loopback server with one slot: 50 ms a reply, the others waiting in its
    queue (first come, first served) while their timeouts run."""
    from tests.judging.fake_llm import FakeLLM

    server = FakeLLM(latency=0.05, slots=1).start()
    yield server
    server.stop()


def test_a_run_on_auto_against_a_one_slot_server_finishes_with_no_timeouts(many, one_slot_server):
    """llama.cpp with one slot: the endpoint states no limit, so the run's window finds the
    server's capacity; no call waits in the server's queue long enough to time out (1 s here,
    twenty service times, so a stall of a busy machine is no timeout), none is retried, and
    nothing is computed for a client that had gone. The window settles near the one slot (its
    exact step moves by one with a busy machine's jitter), never near the run's 64."""
    server = one_slot_server
    dataset, model = many(items=30, base_url=server.base_url, timeout_seconds=1.0, max_retries=0)
    run = new_run(dataset, model, shard_size=10)
    assert (run.concurrency_auto, run.concurrency) == (True, 64)
    run_execute_inline(run=run)
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.FINISHED
    assert (run.replied, run.call_failures) == (30, 0)
    assert server.count == 30 and server.wasted == 0
    assert server.peak_busy == 1 and server.peak_waiting < 8


def test_the_eta_counts_only_the_units_still_to_come_back(many):
    # 14 calls failed at once (prompts over the context length), 1 came back, 2 are in flight at a
    # reply every 10 s: 20 s to go, not 16 units' worth.
    dataset, model = many(items=17)
    run = new_run(dataset, model)
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.RUNNING, replied=1, call_failures=14)
    run_worker_beat(run_id=run.pk, worker_id="w", shard_ids=[], window=1, ceiling=1, in_flight=1, overloads=0, rate=0.1)
    progress = run_progress(run=run)
    assert (progress["remaining"], progress["rate_per_second"], progress["eta_seconds"]) == (16, 0.1, 20)


def test_a_finished_run_says_which_replies_have_no_score_and_how_to_send_the_cut_off_ones_again(many, fake_llm):
    dataset, model = many(items=4, max_tokens=300)
    fake_llm.faults = {"<<answer 2>>": ["length"]}
    fake_llm.reply = lambda body: "No verdict." if "<<answer 3>>" in str(body) else "{'Final Score': 7}"
    out = StringIO()
    judge_args = ["--dataset", "many", "--mode", "pointwise", "--judge-model", "judge-m", "--models", "m"]
    call_command("judge", *judge_args, "--endpoint", "fake", "--inline", stdout=out)
    run = JudgeRun.objects.get()
    assert (
        out.getvalue()
        .rstrip()
        .endswith(
            f"Run {run.pk}: Finished. 1 of 4 replies were cut off at max_tokens (300) and have no score: "
            f"'judge_resume {run.pk} --max-tokens 600' sends them again. 1 of 4 replies could not be parsed into a score."
        )
    )

    # The command it names does what it says: only the cut-off reply goes out again.
    out = StringIO()
    call_command("judge_resume", str(run.pk), "--max-tokens", "600", "--inline", stdout=out)
    assert fake_llm.count == 5 and fake_llm.requests[-1]["max_tokens"] == 600
    assert "<<answer 2>>" in fake_llm.prompts()[-1]
    assert out.getvalue().rstrip().endswith(f"Run {run.pk}: Finished. 1 of 4 replies could not be parsed into a score.")


def test_a_call_that_timed_out_waits_for_room_in_the_shrunken_window_before_it_is_sent_again(many, one_slot_server):
    """16 in flight against a one-slot server: most calls time out in its queue and halve the
    window. Their retries must go out through the smaller window, not all at once again, or they
    queue and time out anew until they run out of attempts."""
    server = one_slot_server
    dataset, model = many(items=40, base_url=server.base_url, timeout_seconds=0.3, max_retries=6)
    run = new_run(dataset, model, concurrency=16)
    run_execute_inline(run=run)
    run.refresh_from_db()
    assert (run.status, run.replied, run.call_failures) == (JudgeRun.Status.FINISHED, 40, 0)
    # The server still computes the calls that timed out in its queue (as llama.cpp may), so
    # some retries queue behind them and time out too; but each item is sent a few times at
    # most (74 sends measured), where retries that ignored the window ran 14-17 items out of
    # their seven attempts.
    assert server.count <= 3 * 40


def test_a_failed_run_also_says_which_replies_have_no_score(many, fake_llm):
    dataset, model = many(items=4, max_tokens=300, max_retries=0)
    fake_llm.faults = {"<<answer 1>>": ["500"], "<<answer 2>>": ["length"]}
    judge_args = ["--dataset", "many", "--mode", "pointwise", "--judge-model", "judge-m", "--models", "m"]
    with pytest.raises(CommandError) as failed:
        call_command("judge", *judge_args, "--endpoint", "fake", "--inline", stdout=StringIO())
    run = JudgeRun.objects.get()
    assert str(failed.value).endswith(
        f"'judge_resume {run.pk}' sends what is missing again. 1 of 4 replies were cut off at max_tokens (300) "
        f"and have no score: 'judge_resume {run.pk} --max-tokens 600' sends them again."
    )


def test_a_run_whose_replies_all_lack_a_score_exits_non_zero_saying_why(many, fake_llm):
    dataset, model = many(items=3, max_tokens=300)
    fake_llm.faults = {"<<answer 0>>": ["length"], "<<answer 1>>": ["length"]}
    fake_llm.reply = lambda body: "No verdict."
    judge_args = ["--dataset", "many", "--mode", "pointwise", "--judge-model", "judge-m", "--models", "m"]
    with pytest.raises(CommandError) as raised:
        call_command("judge", *judge_args, "--endpoint", "fake", "--inline", stdout=StringIO())
    run = JudgeRun.objects.get()
    assert (run.status, run.replied, run.cut_off, run.parse_failures) == (JudgeRun.Status.FINISHED, 3, 2, 1)
    assert str(raised.value) == (
        f"Run {run.pk}: Finished, but no reply has a score. 2 of 3 replies were cut off at max_tokens (300) and "
        f"have no score: 'judge_resume {run.pk} --max-tokens 600' sends them again. "
        "1 of 3 replies could not be parsed into a score."
    )
