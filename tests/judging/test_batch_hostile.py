"""A hostile or broken provider batch (the provider's Batch API, judging/batching.py), against a
loopback server serving it (tests/judging/fake_batch.py): results files over the caps, cut
short or not JSONL, a "completed" batch with no file, a batch id given twice, stray result
lines. Each fails the requests concerned once, with the reason; the file is never read again;
`judge_resume` sends the requests again; nothing crashes."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from judging.engine.batch import run_batch_pass
from judging.engine.queue import run_cancel
from judging.models import BatchJob, JudgeRun
from judging.runs.creation import run_create
from judging.runs.manifest import run_manifest
from judging.runs.spec import RunSpec
from llm.models import Endpoint
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory
from tests.judging.fake_batch import FakeBatchLLM

pytestmark = pytest.mark.django_db(transaction=True)

KEY = "batch-key-0123456789"


@pytest.fixture
def server(fast_retries, settings, monkeypatch):
    settings.LLM_BATCH_POLL_SECONDS = 0.01
    settings.LLM_BATCH_MAX_RESULT_BYTES = 1_000_000
    monkeypatch.setenv("FAKE_LLM_KEY", KEY)
    fake = FakeBatchLLM().start()
    yield fake
    fake.stop()


def answered(server, *, items=3, name="fake", dataset_name="d"):
    Endpoint.objects.create(name=name, base_url=server.base_url, api_key_env="FAKE_LLM_KEY", max_retries=1)
    dataset = DatasetFactory(name=dataset_name)
    model = CandidateModelFactory(name=f"m-{dataset_name}")
    for n in range(items):
        item = ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"question {n}")
        AnswerFactory(item=item, model=model, text=f"<<answer {n}>>")
    return dataset, model


def started(dataset, model, endpoint="fake") -> JudgeRun:
    run = run_create(
        spec=RunSpec(
            dataset=dataset,
            mode="pointwise",
            judge_model="judge-m",
            candidates=(model,),
            endpoint=Endpoint.objects.get(name=endpoint),
            batch=True,
        )
    )
    JudgeRun.objects.filter(pk=run.pk).update(status="running")
    return run


def resume(run):
    call_command("judge_resume", str(run.pk), "--inline", stdout=StringIO(), stderr=StringIO())
    run.refresh_from_db()


def reasons(run) -> set[str]:
    return set(run.judgments.exclude(call_error="").values_list("call_error", flat=True))


def ended_with_file(server, mode: str, kind: str = "output") -> JudgeRun:
    """A run whose batch ends with its `kind` file served as `mode`; passes until it is collected."""
    dataset, model = answered(server)
    run = started(dataset, model)
    assert run_batch_pass(run_id=run.pk) == "waiting"
    server.file_modes[kind] = mode
    server.complete()
    run_batch_pass(run_id=run.pk)
    return run


@pytest.mark.parametrize(
    ("mode", "says"),
    [
        ("gzip_bomb", "larger than 1000000 bytes"),
        ("declared_huge", "larger than 1000000 bytes"),
        ("cut_short", "cut short"),
    ],
)
def test_a_results_file_over_the_cap_or_cut_short_fails_its_requests_once(server, mode, says):
    run = ended_with_file(server, mode)
    job = BatchJob.objects.get()
    assert job.status == "collected" and says in job.error
    assert run.judgments.count() == 3 and run.judgments.scored().count() == 0
    (reason,) = reasons(run)
    assert "without a result for this request" in reason and says in reason
    assert server.file_reads == [job.output_file_id]
    # Further passes read nothing again: the batch is collected.
    run_batch_pass(run_id=run.pk)
    run_batch_pass(run_id=run.pk)
    assert server.file_reads == [job.output_file_id]
    # A resume sends the three requests again, in a new batch, read as usual this time.
    server.file_modes.clear()
    server.complete_after = 0.0
    resume(run)
    assert (run.status, run.judgments.scored().count(), len(server.uploads)) == ("finished", 3, 2)


def test_a_results_file_that_takes_longer_than_the_time_cap_is_given_up_once(server, settings):
    """The server sends a byte at a time for as long as the client reads: only the time cap ends it."""
    settings.LLM_BATCH_READ_SECONDS = 0.3
    run = ended_with_file(server, "trickle")
    job = BatchJob.objects.get()
    assert job.status == "collected" and "took longer than 0.3 s" in job.error
    assert run.judgments.scored().count() == 0 and len(server.file_reads) == 1
    run_batch_pass(run_id=run.pk)
    assert len(server.file_reads) == 1


def test_an_error_file_that_is_not_jsonl_fails_only_the_requests_it_should_have_answered(server):
    server.line_faults = {"answer 1>>": "failed"}  # its line goes to the error file
    run = ended_with_file(server, "not_jsonl", kind="errors")
    job = BatchJob.objects.get()
    assert run.judgments.scored().count() == 2
    (reason,) = reasons(run)
    assert f"the error file {job.error_file_id} is not JSONL (line 1 is not a JSON object)" in reason
    assert job.status == "collected" and job.unknown_lines == 1
    reads = list(server.file_reads)
    assert sorted(reads) == sorted([job.output_file_id, job.error_file_id])
    run_batch_pass(run_id=run.pk)
    assert server.file_reads == reads


def test_a_completed_batch_that_names_no_file_fails_its_requests_and_a_resume_sends_them(server):
    dataset, model = answered(server)
    run = started(dataset, model)
    run_batch_pass(run_id=run.pk)
    server.no_files = True
    server.complete()
    run_batch_pass(run_id=run.pk)
    (reason,) = reasons(run)
    assert "the provider named no results file" in reason
    assert BatchJob.objects.get().status == "collected" and server.file_reads == []
    server.no_files = False
    server.complete_after = 0.0
    resume(run)
    assert (run.status, run.judgments.scored().count()) == ("finished", 3)


def test_a_cancelled_runs_batch_with_a_bad_file_is_read_once(server):
    dataset, model = answered(server)
    run = started(dataset, model)
    run_batch_pass(run_id=run.pk)
    run_cancel(run=run)
    server.file_modes["errors"] = "gzip_bomb"  # cancelled lines end in the error file
    run_batch_pass(run_id=run.pk)  # asks the provider to stop
    server.complete()
    for _ in range(3):
        run_batch_pass(run_id=run.pk)
    job = BatchJob.objects.get()
    assert server.cancels == ["batch_1"] and job.status == "collected"
    assert server.file_reads == [job.error_file_id]
    assert JudgeRun.objects.get(pk=run.pk).status == "cancelled"


def test_an_id_the_provider_gives_two_runs_is_refused_and_the_second_run_fails_saying_why(server):
    first_data, first_model = answered(server, dataset_name="first")
    first = started(first_data, first_model)
    run_batch_pass(run_id=first.pk)
    assert server.creates == ["batch_1"]
    second_data, second_model = answered(server, name="again", dataset_name="second")
    second = started(second_data, second_model, endpoint="again")
    server.next_batch_ids = ["batch_1"]  # the same provider hands out the id again
    assert run_batch_pass(run_id=second.pk) == "failed"
    second.refresh_from_db()
    assert "an id it had already given another batch" in second.error
    assert f"run {first.pk}" not in second.error.lower() and "first" not in second.error
    job = BatchJob.objects.get(run=second)
    assert (job.status, job.batch_id) == ("collected", None)
    (reason,) = reasons(second)
    assert "already given another batch" in reason
    # The first run is untouched: its batch is followed and finishes.
    server.complete("batch_1")
    assert run_batch_pass(run_id=first.pk) == "finished"
    assert BatchJob.objects.get(run=first).batch_id == "batch_1"


def test_two_providers_may_both_name_a_batch_batch_1(server, fast_retries):
    other = FakeBatchLLM().start()
    try:
        first_data, first_model = answered(server, dataset_name="first")
        second_data, second_model = answered(other, name="other", dataset_name="second")
        runs = [started(first_data, first_model), started(second_data, second_model, endpoint="other")]
        for run in runs:
            run_batch_pass(run_id=run.pk)
        assert server.creates == other.creates == ["batch_1"]
        server.complete()
        other.complete()
        assert [run_batch_pass(run_id=run.pk) for run in runs] == ["finished", "finished"]
        assert sorted(BatchJob.objects.values_list("endpoint_url", flat=True)) == sorted(
            [server.base_url.rstrip("/").lower(), other.base_url.rstrip("/").lower()]
        )
    finally:
        other.stop()


def test_duplicate_and_unknown_result_lines_are_counted_on_the_run_page_and_in_its_export(
    server, client_as, researcher
):
    dataset, model = answered(server)
    q0 = dataset.items.get(external_id="q0")
    repeated = {
        "custom_id": f"{q0.pk}:{model.pk}:0",
        "response": {"status_code": 200, "body": {"choices": [{"message": {"content": "{'Final Score': 1}"}}]}},
    }
    server.hostile_lines = [
        json.dumps(repeated).encode() + b"\n",
        json.dumps(repeated).encode() + b"\n",
        json.dumps({"custom_id": "999999:1:0", "response": None}).encode() + b"\n",
        b"not json at all\n",
    ]
    server.complete_after = 0.0
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
        model.name,
        "--endpoint",
        "fake",
        "--batch",
        "--inline",
        stdout=out,
        stderr=StringIO(),
    )
    run = JudgeRun.objects.get()
    assert run.status == "finished" and run.judgments.get(item=q0).final_score == 7  # the first line counts
    job = BatchJob.objects.get()
    assert (job.duplicate_lines, job.unknown_lines) == (2, 2)
    (entry,) = run_manifest(run=run)["batches"]
    assert (entry["duplicate_lines"], entry["unknown_lines"]) == (2, 2)
    page = client_as(researcher).get(reverse("judging:run-detail", args=[run.pk])).text
    assert "result lines ignored: 2 repeating a request, 2 naming none of the batch's requests" in page


def test_a_bad_file_from_judge_inline_ends_the_command_with_the_failed_calls(server):
    dataset, model = answered(server)
    server.file_modes["output"] = "cut_short"
    server.complete_after = 0.0
    with pytest.raises(CommandError, match="3 calls failed"):
        call_command(
            "judge",
            "--dataset",
            dataset.name,
            "--mode",
            "pointwise",
            "--judge-model",
            "judge-m",
            "--models",
            model.name,
            "--endpoint",
            "fake",
            "--batch",
            "--inline",
            stdout=StringIO(),
            stderr=StringIO(),
        )
    assert len(server.file_reads) == 1
