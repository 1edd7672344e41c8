"""The researcher's command line for curation: cases, datasets, LLM steps, filter, freeze, diff."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from curation.models import CaseCuration, Dataset, ReviewQueue, ReviewTask
from curation.review.services import quality_review_decide, review_task_lease
from tests.curation.review_helpers import review_study  # noqa: F401
from tests.factories import (
    CandidateModelFactory,
    CaseFactory,
    DatasetFactory,
    ItemFactory,
    JudgeRunFactory,
    JudgmentFactory,
    SubmissionFactory,
)
from tests.judging.fake_llm import FakeLLM

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_curate_cases_only_does_what_is_left(review_study):
    submission = SubmissionFactory(study=review_study)
    for position in range(1, 4):
        CaseFactory(submission=submission, position=position, conversation=f"Q: What is item number {position}?\nA: x")
    assert "3 cases processed." in run("curate_cases", "--study", "rs")
    assert "0 cases processed." in run("curate_cases")
    assert "3 cases processed." in run("curate_cases", "--all")
    assert CaseCuration.objects.count() == 3 and ReviewTask.objects.count() == 3
    with pytest.raises(CommandError, match="No study with slug 'nope'."):
        run("curate_cases", "--study", "nope")


def test_build_freeze_and_diff(review_study, reviewer):
    submission = SubmissionFactory(study=review_study)
    for position, question in enumerate(["Why is the sky blue?", "How do vaccines work?"], start=1):
        CaseFactory(submission=submission, position=position, conversation=f"Q: {question}\nA: x")
    run("curate_cases")
    while task := review_task_lease(queue=ReviewQueue.QUALITY, reviewer=reviewer):
        quality_review_decide(task=task, reviewer=reviewer, decision="accept")
    assert "2 items added to rs-work (2 in all)." in run("build_study_dataset", "--study", "rs", "--name", "rs-work")
    assert "rs-work@v1: 2 items frozen." in run("freeze_dataset", "rs-work", "--confirm-missing-references")
    working = Dataset.objects.get(name="rs-work")
    ItemFactory(dataset=working, external_id="extra", question="Q")
    run("freeze_dataset", "rs-work", "--confirm-missing-references")
    assert run("freeze_dataset", "--diff", "rs-work@v1", "rs-work@v2").splitlines() == [
        "+ extra",
        "1 added, 0 removed, 0 changed, 2 unchanged",
    ]
    payload = json.loads(run("freeze_dataset", "--diff", "rs-work@v1", "rs-work@v2", "--format", "json"))
    assert payload["added"] == ["extra"] and payload["unchanged"] == 2
    with pytest.raises(CommandError, match="Dataset rs-work@v1 is a frozen version and cannot change."):
        run("freeze_dataset", "rs-work@v1", "--confirm-missing-references")


def test_llm_steps_from_the_command_line(monkeypatch, settings):
    server = FakeLLM(reply=lambda body: "A drafted reference.").start()
    try:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        dataset = DatasetFactory(name="w")
        ItemFactory(dataset=dataset, external_id="a", question="Why?", reference="")
        out = run("curation_llm", "references", "--dataset", "w", "--model", "strong")
        assert "done: 1 done, 0 failed (0 cut off) of 1" in out
        with pytest.raises(CommandError, match="No item needs a reference draft."):
            run("curation_llm", "references", "--dataset", "w")
        job_id = dataset.curation_jobs.get().pk
        assert "done: 1 done, 0 failed (0 cut off) of 1" in run("curation_llm", "references", "--resume", str(job_id))
        assert server.count == 1
    finally:
        server.stop()


def test_curation_llm_takes_max_tokens_and_exits_non_zero_on_a_cut_off_reply(monkeypatch, settings):
    server = FakeLLM(reply=lambda body: "A drafted reference that runs on and on.").start()
    try:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        dataset = DatasetFactory(name="w2")
        ItemFactory(dataset=dataset, external_id="a", question="Why?", reference="")
        ItemFactory(dataset=dataset, external_id="b", question="How?", reference="")
        server.faults = {"How?": ["length"]}
        with pytest.raises(CommandError) as failed:
            run(
                "curation_llm",
                "references",
                "--dataset",
                "w2",
                "--model",
                "strong",
                "--max-tokens",
                "64",
                "--concurrency",
                "auto",
                "--timeout",
                "30",
            )
        job = dataset.curation_jobs.get()
        assert str(failed.value) == (
            f"job {job.pk} failed: 1 done, 1 failed (1 cut off) of 2. Last error: cut off at max_tokens (64): "
            f"raise --max-tokens and run again. Start it again with --resume {job.pk} --max-tokens N, N above the "
            "limit that cut them off (and --endpoint NAME to use another)."
        )
        assert [body["max_tokens"] for body in server.requests] == [64, 64]

        # What the message says to do works: only the cut-off item is sent again, with the new limit.
        out = run("curation_llm", "references", "--resume", str(job.pk), "--max-tokens", "256")
        assert f"job {job.pk} done: 2 done, 0 failed (0 cut off) of 2" in out
        assert [body["max_tokens"] for body in server.requests] == [64, 64, 256]
        assert "How?" in str(server.requests[-1])
    finally:
        server.stop()


def test_difficulty_filter_command():
    working = DatasetFactory(name="ab")
    run_row = JudgeRunFactory(dataset=working)
    model = CandidateModelFactory(name="f1")
    for index, score in enumerate([9, 3, 7, 1]):
        item = ItemFactory(dataset=working, external_id=f"q{index}")
        JudgmentFactory(run=run_row, item=item, model=model, final_score=score)
    out = run("difficulty_filter", "--run", str(run_row.pk))
    assert out.splitlines()[:2] == ["q0\t9.00\t1\texcluded", "q2\t7.00\t1\texcluded"]
    assert "2 of 4 items of ab excluded (top 50%)." in out
    with pytest.raises(CommandError, match="No judge run 999."):
        run("difficulty_filter", "--run", "999")
