"""Judge runs and generations through the provider's Batch API, against a loopback server that
serves it (tests/judging/fake_batch.py) and is driven by the real `openai` client: every item
scored with no live call, the cache and earlier results never batched, results read through the
live path's parsing, failed and expired lines sent again by a resume, large runs split, batches
picked up after a crash and never uploaded or made twice, the batch price, the manifest."""

import json
import re
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from judging.answers.generation_jobs import generation_resume, generation_start
from judging.dispatch import run_enqueue
from judging.engine.batch import run_batch_execute, run_batch_pass
from judging.engine.queue import run_cancel
from judging.management.progress import progress_line
from judging.models import Answer, AnswerGeneration, BatchJob, JudgeRun, Judgment
from judging.results.selectors import run_progress
from judging.runs.creation import run_create
from judging.runs.manifest import run_manifest
from judging.runs.spec import RunSpec
from llm.models import Endpoint, LLMResponse
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory
from tests.judging.fake_batch import FakeBatchLLM

pytestmark = pytest.mark.django_db(transaction=True)

KEY = "batch-key-0123456789"
IMMEDIATE = {
    "default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend", "QUEUES": ["default", "judging"]}
}


@pytest.fixture
def server(fast_retries, settings, monkeypatch):
    """A loopback server with the Batch API; a pass every 10 ms while a command waits."""
    settings.LLM_BATCH_POLL_SECONDS = 0.01
    monkeypatch.setenv("FAKE_LLM_KEY", KEY)
    fake = FakeBatchLLM().start()
    yield fake
    fake.stop()


def answered(server, items=4, models=("m",), name="fake", **prices):
    """A dataset of `items` questions answered by each model, and an endpoint on the server."""
    Endpoint.objects.create(name=name, base_url=server.base_url, api_key_env="FAKE_LLM_KEY", max_retries=1, **prices)
    dataset = DatasetFactory(name=f"d-{name}")
    candidates = [CandidateModelFactory(name=model) for model in models]
    for n in range(items):
        item = ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"question {n}")
        for model in candidates:
            AnswerFactory(item=item, model=model, text=f"<<{model.name} answer {n}>>")
    return dataset, candidates


def judge(dataset, *args, models="m", endpoint="fake"):
    out = StringIO()
    call_command(
        "judge",
        "--dataset",
        dataset.name,
        "--mode",
        "pointwise",
        "--judge-model",
        "judge-m",
        "--models",
        models,
        "--endpoint",
        endpoint,
        *args,
        stdout=out,
        stderr=StringIO(),
    )
    return out.getvalue()


def resume(run, *args):
    out = StringIO()
    call_command("judge_resume", str(run.pk), "--inline", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def batch_run(dataset, candidates, endpoint="fake"):
    return run_create(
        spec=RunSpec(
            dataset=dataset,
            mode="pointwise",
            judge_model="judge-m",
            candidates=candidates,
            endpoint=Endpoint.objects.get(name=endpoint),
            batch=True,
        )
    )


def lines(server, batch_id):
    return server.lines_of(batch_id)


def test_a_batch_run_scores_every_item_with_no_live_call(server):
    dataset, (model,) = answered(server)
    server.complete_after = 0.0  # the first look finds the batch done
    out = judge(dataset, "--batch", "--inline")
    run = JudgeRun.objects.get()
    assert "through the Batch API" in out and f"Run {run.pk}: Finished." in out
    assert (run.status, run.batch, run.replied, run.parse_failures, run.call_failures) == ("finished", True, 4, 0, 0)
    assert run.judgments.scored().count() == 4
    assert set(run.judgments.values_list("final_score", flat=True)) == {7}
    assert server.count == 0  # no live chat call
    assert len(server.uploads) == 1 and server.creates == ["batch_1"]
    # Each line is the body a live call sends, under the unit's custom id; the key went along.
    sent = lines(server, "batch_1")
    items = {item.pk: item.external_id for item in dataset.items.all()}
    assert sorted(line["custom_id"] for line in sent) == sorted(f"{pk}:{model.pk}:0" for pk in items)
    body = sent[0]["body"]
    assert (sent[0]["url"], body["model"], body["temperature"], body["max_tokens"]) == (
        "/v1/chat/completions",
        "judge-m",
        0.0,
        1024,
    )
    assert set(server.authorizations) == {f"Bearer {KEY}"}
    job = BatchJob.objects.get()
    assert (job.status, job.batch_id, job.provider_status, job.completed, job.requests) == (
        "collected",
        "batch_1",
        "completed",
        4,
        4,
    )
    manifest = run_manifest(run=run)
    assert manifest["judge"]["batch"] is True
    assert [(b["batch_id"], b["input_file_id"], b["requests"], b["status"]) for b in manifest["batches"]] == [
        ("batch_1", job.input_file_id, 4, "completed")
    ]


def test_batched_replies_take_the_live_path_parsing_caching_and_cut_off(server, fake_llm):
    """The same replies, live and batched, make the same judgments."""

    def reply(body):
        prompt = body["messages"][-1]["content"]
        return "no verdict in here" if "answer 0>>" in prompt else '{"Final Score": 6}'

    results = {}
    for kind, fake in (("live", fake_llm), ("batch", server)):
        fake.reply = reply
        dataset, _models = answered(fake, name=kind)
        if kind == "live":
            fake.faults = {"answer 1>>": ["length"]}
            out = judge(dataset, "--inline", endpoint=kind)
        else:
            fake.line_faults = {"answer 1>>": "length"}
            fake.complete_after = 0.0
            out = judge(dataset, "--batch", "--inline", endpoint=kind)
        assert "1 of 4 replies were cut off at max_tokens (1024)" in out
        assert "1 of 4 replies could not be parsed into a score" in out
        run = JudgeRun.objects.get(endpoint__name=kind)
        results[kind] = sorted(
            run.judgments.with_reply_text().values_list(
                "item__external_id", "reply_text", "final_score", "parse_error", "finish_reason", "call_error"
            )
        )
        assert (run.parse_failures, run.cut_off, run.replied) == (1, 1, 4)
    assert results["batch"] == results["live"]
    # The parse failure keeps its reply and reason; the cut-off reply is kept, never scored.
    assert [(row[0], row[1]) for row in results["batch"] if row[3] and row[4] != "length"] == [
        ("q0", "no verdict in here")
    ]
    assert [(row[0], row[2]) for row in results["batch"] if row[4] == "length"] == [("q1", None)]
    # Every paid reply (the cut-off one too) is in the response cache, under the batch server's URL.
    assert LLMResponse.objects.filter(base_url=server.base_url).count() == 4


def test_a_reply_without_a_message_is_a_failed_call(server):
    dataset, _models = answered(server, items=2)
    server.line_faults = {"answer 0>>": "junk"}
    server.complete_after = 0.0
    with pytest.raises(CommandError, match="1 calls failed"):
        judge(dataset, "--batch", "--inline")
    failed = Judgment.objects.get(call_error__gt="")
    assert (failed.item.external_id, failed.call_error) == ("q0", "the reply has no message content")


def test_cached_and_answered_calls_are_never_put_in_a_batch(server):
    dataset, _models = answered(server, models=("m", "n"))
    server.complete_after = 0.0
    judge(dataset, "--batch", "--inline", models="m")
    assert len(server.uploads) == 1
    # The same run again: every call is in the cache; nothing is uploaded.
    judge(dataset, "--batch", "--inline", models="m")
    again = JudgeRun.objects.order_by("-pk").first()
    assert (again.status, again.cached_replies, again.replied) == ("finished", 4, 4)
    assert len(server.uploads) == 1 and len(server.creates) == 1
    # With a new candidate, only its calls go in a batch.
    judge(dataset, "--batch", "--inline", models="m,n")
    third = JudgeRun.objects.order_by("-pk").first()
    assert third.status == "finished" and third.cached_replies == 4
    assert len(server.uploads) == 2
    n = CandidateModelFactory._meta.model.objects.get(name="n")
    assert {line["custom_id"].split(":")[1] for line in lines(server, "batch_2")} == {str(n.pk)}
    assert server.count == 0


def test_failed_and_expired_lines_are_failed_calls_that_a_resume_sends_in_a_new_batch(server):
    dataset, (model,) = answered(server)
    server.line_faults = {"answer 1>>": "failed", "answer 2>>": "expired"}
    server.complete_after = 0.0
    with pytest.raises(CommandError, match=r"2 calls failed; 'judge_resume \d+' sends what is missing again"):
        judge(dataset, "--batch", "--inline")
    run = JudgeRun.objects.get()
    assert BatchJob.objects.get().provider_status == "expired"
    reasons = dict(run.judgments.call_failures().values_list("item__external_id", "call_error"))
    assert reasons == {
        "q1": "HTTP 500: server exploded",
        "q2": "batch line failed: the batch expired before this request ran",
    }
    server.line_faults = {}
    out = resume(run)
    assert "picked up" in out
    run.refresh_from_db()
    assert (run.status, run.replied, run.call_failures) == ("finished", 4, 0)
    # A new batch with exactly the two units that failed; nothing else uploaded again, no live call.
    assert len(server.uploads) == 2 and server.creates == ["batch_1", "batch_2"]
    q1, q2 = (dataset.items.get(external_id=e).pk for e in ("q1", "q2"))
    assert sorted(line["custom_id"] for line in lines(server, "batch_2")) == sorted(
        [f"{q1}:{model.pk}:0", f"{q2}:{model.pk}:0"]
    )
    assert server.count == 0


def test_resume_live_sends_what_is_left_as_live_calls_and_prices_each_part(server):
    dataset, _models = answered(server, input_price_per_million=Decimal("2"), output_price_per_million=Decimal("8"))
    server.line_faults = {"answer 3>>": "failed"}
    server.complete_after = 0.0
    with pytest.raises(CommandError):
        judge(dataset, "--batch", "--inline")
    run = JudgeRun.objects.get()
    batch_in, batch_out = run.prompt_tokens, run.completion_tokens
    resume(run, "--live")
    run.refresh_from_db()
    assert (run.status, run.batch, run.replied) == ("finished", False, 4)
    assert server.count == 1 and len(server.uploads) == 1  # the one failed unit, live
    live_in, live_out = run.prompt_tokens - batch_in, run.completion_tokens - batch_out
    expected = (Decimal(batch_in) * 1 + Decimal(batch_out) * 4 + Decimal(live_in) * 2 + Decimal(live_out) * 8) / 10**6
    assert run_progress(run=run)["estimated_cost"] == float(round(expected, 4))
    assert run_manifest(run=run)["batches"][0]["batch_id"] == "batch_1"


def test_resume_live_waits_for_the_batches_at_the_provider(server):
    dataset, candidates = answered(server)
    run = batch_run(dataset, candidates)
    JudgeRun.objects.filter(pk=run.pk).update(status="running")
    assert run_batch_pass(run_id=run.pk) == "waiting"  # a worker's pass: the batch is at the provider
    with pytest.raises(CommandError, match="still has 1 batch\\(es\\) at the provider"):
        resume(run, "--live")
    run.refresh_from_db()
    assert run.batch is True and server.count == 0


def test_large_runs_are_split_by_lines_and_by_bytes(server, settings):
    dataset, candidates = answered(server, items=8)
    server.complete_after = 0.0
    settings.LLM_BATCH_MAX_REQUESTS = 3
    judge(dataset, "--batch", "--inline")
    run = JudgeRun.objects.get()
    assert run.status == "finished" and run.judgments.scored().count() == 8
    assert [len(lines(server, batch_id)) for batch_id in server.creates] == [3, 3, 2]

    settings.LLM_BATCH_MAX_REQUESTS = 50_000
    one_line = len(json.dumps(lines(server, "batch_1")[0]).encode())
    settings.LLM_BATCH_MAX_BYTES = 2 * one_line + 60
    LLMResponse.objects.all().delete()  # the same calls again, paid again
    before = len(server.uploads)
    judge(dataset, "--batch", "--inline")
    files = [server.files[file_id]["content"] for file_id in server.uploads[before:]]
    assert len(files) == 4 and all(len(content) <= settings.LLM_BATCH_MAX_BYTES for content in files)
    assert sum(content.count(b"\n") for content in files) == 8
    assert JudgeRun.objects.order_by("-pk").first().status == "finished"


def test_an_endpoint_without_the_batch_api_is_refused_at_the_start(fast_retries, monkeypatch):
    monkeypatch.setenv("FAKE_LLM_KEY", KEY)
    server = FakeBatchLLM(batch_api=False).start()
    try:
        dataset, _models = answered(server, name="plain")
        with pytest.raises(
            CommandError,
            match=r"The endpoint plain \(http://127\.0\.0\.1:\d+/v1\) does not offer the Batch API: GET /v1/batches answered HTTP 404",
        ) as refused:
            judge(dataset, "--batch", "--inline", endpoint="plain")
        # The message says what to do; no option is tacked on after it.
        assert str(refused.value).endswith("Run it live instead (without batch).")
        assert JudgeRun.objects.count() == 0
        with pytest.raises(CommandError, match="does not offer the Batch API"):
            call_command(
                "generate",
                "--dataset",
                dataset.name,
                "--model",
                "new",
                "--endpoint",
                "plain",
                "--batch",
                stdout=StringIO(),
                stderr=StringIO(),
            )
        assert AnswerGeneration.objects.count() == 0
        assert server.count == 0
    finally:
        server.stop()


def test_the_cost_uses_the_batch_price(server):
    dataset, candidates = answered(server, input_price_per_million=Decimal("2"), output_price_per_million=Decimal("8"))
    server.complete_after = 0.0
    judge(dataset, "--batch", "--inline")
    run = JudgeRun.objects.get()
    half = (Decimal(run.prompt_tokens) * 1 + Decimal(run.completion_tokens) * 4) / 10**6
    assert run_progress(run=run)["estimated_cost"] == float(round(half, 4))
    Endpoint.objects.filter(name="fake").update(
        batch_input_price_per_million=Decimal("0.5"), batch_output_price_per_million=Decimal("3")
    )
    run = JudgeRun.objects.select_related("endpoint").get()
    stated = (Decimal(run.prompt_tokens) * Decimal("0.5") + Decimal(run.completion_tokens) * 3) / 10**6
    assert run_progress(run=run)["estimated_cost"] == float(round(stated, 4))


def test_a_file_uploaded_before_a_crash_is_never_uploaded_again_nor_its_batch_made_twice(server):
    dataset, candidates = answered(server)
    run = batch_run(dataset, candidates)
    JudgeRun.objects.filter(pk=run.pk).update(status="running")
    # The batch service fails once after the upload: the file id is stored, the batch not made.
    server.create_faults = [500]
    assert run_batch_pass(run_id=run.pk) == "waiting"
    job = BatchJob.objects.get()
    assert (job.status, len(server.uploads), server.creates) == ("uploaded", 1, [])
    assert "Creating the batch failed: HTTP 500" in job.error
    assert run_batch_pass(run_id=run.pk) == "waiting"
    job.refresh_from_db()
    assert (job.status, job.batch_id, len(server.uploads)) == ("submitted", "batch_1", 1)
    # A crash after the batch was made but before its id was stored: the batch is found, not made.
    BatchJob.objects.filter(pk=job.pk).update(status="uploaded", batch_id=None)
    assert run_batch_pass(run_id=run.pk) == "waiting"
    job.refresh_from_db()
    assert (job.status, job.batch_id, server.creates, len(server.uploads)) == ("submitted", "batch_1", ["batch_1"], 1)
    server.complete()
    assert run_batch_pass(run_id=run.pk) == "finished"
    assert run.judgments.scored().count() == 4 and server.count == 0


def test_result_lines_the_batch_does_not_hold_are_ignored(server):
    dataset, (model,) = answered(server, items=3)
    q0 = dataset.items.get(external_id="q0")
    stranger = CandidateModelFactory(name="stranger")
    server.line_faults = {"answer 2>>": "missing"}
    server.hostile_lines = [
        b"not json at all\n",
        json.dumps({"custom_id": "999999:1:0", "response": {"status_code": 200, "body": {}}}).encode() + b"\n",
        json.dumps({"custom_id": f"{q0.pk}:{stranger.pk}:0", "response": {"status_code": 200}}).encode() + b"\n",
        # A second line for a unit the batch holds: the first one counts.
        json.dumps(
            {
                "custom_id": f"{q0.pk}:{model.pk}:0",
                "response": {"status_code": 200, "body": {"choices": [{"message": {"content": "{'Final Score': 1}"}}]}},
            }
        ).encode()
        + b"\n",
        json.dumps({"custom_id": ["a", "list"], "response": None}).encode() + b"\n",
    ]
    server.complete_after = 0.0
    with pytest.raises(CommandError, match="1 calls failed"):
        judge(dataset, "--batch", "--inline")
    run = JudgeRun.objects.get()
    assert run.judgments.count() == 3
    assert run.judgments.get(item=q0).final_score == 7
    assert run.judgments.get(item__external_id="q2").call_error == (
        "the batch ended completed without a result for this request"
    )
    assert not Judgment.objects.filter(model=stranger).exists()


def test_identical_requests_go_as_one_line_and_are_paid_once(server):
    Endpoint.objects.create(name="fake", base_url=server.base_url, api_key_env="FAKE_LLM_KEY")
    dataset = DatasetFactory(name="twins")
    a, b = CandidateModelFactory(name="a"), CandidateModelFactory(name="b")
    for n in range(2):
        item = ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"question {n}")
        AnswerFactory(item=item, model=a, text=f"the same answer {n}")
        AnswerFactory(item=item, model=b, text=f"the same answer {n}")
    server.complete_after = 0.0
    judge(dataset, "--batch", "--inline", models="a,b")
    run = JudgeRun.objects.get()
    assert len(lines(server, "batch_1")) == 2
    assert (run.status, run.replied, run.cached_replies) == ("finished", 4, 2)
    assert BatchJob.objects.get().requests == 2


def test_a_cancelled_run_asks_the_provider_to_stop_and_keeps_what_came_back(server):
    dataset, candidates = answered(server)
    run = batch_run(dataset, candidates)
    JudgeRun.objects.filter(pk=run.pk).update(status="running")
    assert run_batch_pass(run_id=run.pk) == "waiting"
    run_cancel(run=run)
    assert run_batch_pass(run_id=run.pk) == "waiting"
    assert server.cancels == ["batch_1"]
    server.complete()
    assert run_batch_pass(run_id=run.pk) == "cancelled"
    assert BatchJob.objects.get().provider_status == "cancelled"
    assert run.judgments.call_failures().count() == 4 and len(server.uploads) == 1


def test_progress_shows_the_batches_while_they_wait(server):
    dataset, candidates = answered(server)
    run = batch_run(dataset, candidates)
    JudgeRun.objects.filter(pk=run.pk).update(status="running")
    assert run_batch_pass(run_id=run.pk) == "waiting"
    progress = run_progress(run=run)
    assert (progress["batch"], progress["batches"]["open"], progress["batches"]["requests"]) == (True, 1, 4)
    assert progress["batches"]["batches"][0]["provider_status"] == "validating"
    assert progress["waiting_for_worker"] is False
    server.progress("batch_1", completed=3, failed=1)
    run_batch_pass(run_id=run.pk)
    progress = run_progress(run=run)
    row = progress["batches"]["batches"][0]
    assert (row["provider_status"], row["completed"], row["failed"], row["batch_id"]) == (
        "in_progress",
        3,
        1,
        "batch_1",
    )
    assert re.search(r"batches: 1 \(1 in progress\), 3/4 completed, 1 failed, waiting \d+s", progress_line(progress))


def test_a_worker_polls_the_batches_of_a_run_it_was_given(server, settings):
    settings.TASKS = IMMEDIATE
    dataset, candidates = answered(server)
    run = batch_run(dataset, candidates)
    run_enqueue(run=run)  # the immediate backend runs the pass now: the batch is sent
    assert BatchJob.objects.get().status == "submitted"
    server.complete()
    assert run_batch_execute(run_id=run.pk) == "finished"
    assert run.judgments.scored().count() == 4 and server.count == 0


def test_generate_batch_saves_answers_and_the_same_command_sends_the_failed_ones_again(server):
    dataset = DatasetFactory(name="gen")
    for n in range(3):
        ItemFactory(dataset=dataset, external_id=f"g{n}", question=f"ask {n}", category="")
    Endpoint.objects.create(name="fake", base_url=server.base_url, api_key_env="FAKE_LLM_KEY")
    server.reply = lambda body: "answer to " + body["messages"][-1]["content"]
    server.line_faults = {"ask 1": "failed"}
    server.complete_after = 0.0

    def generate():
        out = StringIO()
        call_command(
            "generate",
            "--dataset",
            "gen",
            "--model",
            "g1",
            "--endpoint",
            "fake",
            "--batch",
            stdout=out,
            stderr=StringIO(),
        )
        return out.getvalue()

    with pytest.raises(CommandError, match="1 of 3 items got no complete answer"):
        generate()
    answers = dict(Answer.objects.values_list("item__external_id", "text"))
    assert answers == {"g0": "answer to ask 0", "g2": "answer to ask 2"}
    assert Answer.objects.get(item__external_id="g0").parameters["temperature"] == 0.7
    server.line_faults = {}
    out = generate()
    assert "1 generated, 0 failed, 0 cut off." in out
    assert Answer.objects.count() == 3 and server.count == 0
    assert [len(lines(server, batch_id)) for batch_id in server.creates] == [3, 1]


def test_a_resumed_batch_generation_sends_only_the_items_still_without_an_answer(server, settings):
    settings.TASKS = IMMEDIATE
    dataset = DatasetFactory(name="gen")
    for n in range(3):
        ItemFactory(dataset=dataset, external_id=f"g{n}", question=f"ask {n}")
    Endpoint.objects.create(name="fake", base_url=server.base_url, api_key_env="FAKE_LLM_KEY")
    server.line_faults = {"ask 2": "expired"}
    server.complete_after = 0.0
    generation = generation_start(
        dataset=dataset, model_name="g1", endpoint=Endpoint.objects.get(name="fake"), batch=True
    )
    generation.refresh_from_db()
    assert (generation.status, generation.generated, generation.failed) == ("finished", 2, 1)
    server.line_faults = {}
    generation_resume(generation=generation)
    generation.refresh_from_db()
    assert (generation.status, generation.generated, generation.failed) == ("finished", 1, 0)
    assert Answer.objects.count() == 3
    assert [len(lines(server, batch_id)) for batch_id in server.creates] == [3, 1]


def test_a_key_bound_to_other_hosts_never_reaches_the_batch_api(server, settings):
    """Batch calls go through the same guarded clients as live ones (llm/egress.py)."""
    settings.LLM_KEY_HOSTS = {**settings.LLM_KEY_HOSTS, "FAKE_LLM_KEY": ["api.elsewhere.example"]}
    dataset, _models = answered(server)
    with pytest.raises(
        CommandError, match="The key in FAKE_LLM_KEY may only be sent to api.elsewhere.example, not to 127.0.0.1"
    ):
        judge(dataset, "--batch", "--inline")
    assert server.authorizations == [] and server.uploads == [] and JudgeRun.objects.count() == 0


def test_a_live_shard_task_of_a_batch_run_sends_nothing(server):
    from judging.engine.execution import shard_execute

    dataset, candidates = answered(server)
    run = batch_run(dataset, candidates)
    assert shard_execute(shard_id=run.shards.get().pk) == "skipped"
    assert server.count == 0 and run.shards.get().status == "queued"


def test_a_batch_the_provider_forgot_fails_its_units_and_a_resume_sends_them_again(server):
    dataset, candidates = answered(server, items=2)
    run = batch_run(dataset, candidates)
    JudgeRun.objects.filter(pk=run.pk).update(status="running")
    assert run_batch_pass(run_id=run.pk) == "waiting"
    del server.batches["batch_1"]  # purged at the provider
    assert run_batch_pass(run_id=run.pk) == "failed"
    reasons = set(run.judgments.values_list("call_error", flat=True))
    assert len(reasons) == 1 and "without a result" in reasons.pop()
    server.complete_after = 0.0
    resume(run)
    run.refresh_from_db()
    assert (run.status, run.replied, len(server.uploads)) == ("finished", 2, 2)


def test_reproduce_batch_generates_and_judges_through_the_batch_api(server, tmp_path, monkeypatch):
    folder = tmp_path / "cae"
    (folder / "model_outputs").mkdir(parents=True)
    instructions = [("helpful_base", "Name a river.", "说出一条河。"), ("koala", "Say hi.", "打个招呼。")]
    (folder / "chinese_alpaca_eval.jsonl").write_text(
        "".join(
            json.dumps({"dataset": d, "instruction": en, "instruction_zh": zh}, ensure_ascii=False) + "\n"
            for d, en, zh in instructions
        ),
        encoding="utf-8",
    )
    (folder / "model_outputs" / "text-davinci-003.jsonl").write_text(
        "".join(
            json.dumps({"instruction": zh, "response": f"参考：{zh}"}, ensure_ascii=False) + "\n"
            for _d, _en, zh in instructions
        ),
        encoding="utf-8",
    )
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    server.reply = lambda body: (
        "更好的回答"
        if body["model"] != "judge"
        else "[{'model': 'model_1', 'rank': 1}, {'model': 'model_2', 'rank': 2}]"
    )
    server.complete_after = 0.0
    out = StringIO()
    call_command(
        "reproduce",
        "--benchmark",
        "chinese_alpaca_eval",
        "--judge-model",
        "judge",
        "--models",
        "mine",
        "--data",
        str(folder),
        "--batch",
        "--manifest",
        str(tmp_path / "manifest.json"),
        stdout=out,
        stderr=StringIO(),
    )
    assert "Answers of mine: 2 generated (chinese_alpaca_eval preset, batched)" in out.getvalue()
    run = JudgeRun.objects.get()
    assert (run.batch, run.status, run.replied) == (True, "finished", 2)
    # One batch of answers (asked with the preset's system prompt), one of judgments; nothing live.
    assert server.count == 0 and len(server.creates) == 2
    answers_asked = lines(server, server.creates[0])
    assert {line["body"]["model"] for line in answers_asked} == {"mine"}
    assert all(line["body"]["messages"][0]["role"] == "system" for line in answers_asked)
    manifest = json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["run"]["manifest"]["judge"]["batch"] is True
