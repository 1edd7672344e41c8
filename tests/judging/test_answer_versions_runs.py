"""A run or a campaign made before a model's answers are replaced or deleted keeps the version it
used: its judgments, exports, manifest, page and re-run are what they were, also when an earlier
version is made current again; a new run takes the current version; pages and manifests say which version each used. Against a loopback judge whose
score depends on the answer it is shown."""

import io
import json

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from annotation.campaigns import campaign_create
from annotation.services import assignment_next
from core.roles import Role
from judging.answers.imports import answers_import
from judging.answers.versions import answers_delete, answers_restore
from judging.engine.execution import run_execute_inline
from judging.models import CandidateModel, JudgeRun
from judging.results.exports import answers_export, judgments_export, leaderboard_export
from judging.results.selectors import answer_lengths
from judging.runs.creation import run_create
from judging.runs.manifest import run_manifest
from judging.runs.rerun import run_rerun
from judging.runs.spec import RunSpec
from llm.models import Endpoint
from tests.factories import UserFactory
from tests.judging import simulated

pytestmark = pytest.mark.django_db(transaction=True)
ITEMS = 6


@pytest.fixture(autouse=True)
def role_groups(transactional_db):
    for role in Role:
        Group.objects.get_or_create(name=role.value)


@pytest.fixture
def endpoint_row(fake_llm, fast_retries):
    # A new answer ("NEW" in it) scores 3, an old one 8: which version a run judged shows in its scores.
    fake_llm.reply = simulated.pointwise_judge(lambda external_id, model, prompt: 3 if " NEW" in prompt else 8)
    return Endpoint.objects.create(name="fake", base_url=fake_llm.base_url, max_in_flight=4, timeout_seconds=5)


@pytest.fixture
def dataset():
    return simulated.build_dataset("kept", {"alpha": [300] * ITEMS, "beta": [500] * ITEMS})


def new_run(dataset, endpoint) -> JudgeRun:
    run = run_create(
        spec=RunSpec(
            dataset=dataset,
            mode="pointwise",
            judge_model="judge-m",
            candidates=tuple(CandidateModel.objects.filter(name__in=["alpha", "beta"])),
            endpoint=endpoint,
            seed=7,
            concurrency=4,
            max_tokens=200,
        )
    )
    run_execute_inline(run=run)
    return JudgeRun.objects.get(pk=run.pk)


def replace_alpha(dataset):
    lines = [
        json.dumps({"question_id": f"q{i:03d}", "response": f"ANS-q{i:03d}-alpha NEW " + "y" * 800})
        for i in range(ITEMS)
    ]
    stream = io.BytesIO("\n".join(lines).encode())
    return answers_import(dataset_name=dataset.name, model_name="alpha", stream=stream, replace=True)


def scores(run) -> list:
    return list(run.judgments.order_by("item_id", "model__name").values_list("model__name", "final_score"))


def snapshot(run, client) -> dict:
    """Everything a reader of the run sees, with the parts that are today's clock left out."""
    page = client.get(reverse("judging:run-detail", args=[run.pk])).content.decode()
    answers_line = page[page.index('id="manifest-answers"') : page.index("</dd>", page.index('id="manifest-answers"'))]
    return {
        "manifest": run_manifest(run=run),
        "judgments": [dict(row) for row in judgments_export(run=run).rows],
        "answers": [dict(row) for row in answers_export(run=run).rows],
        "leaderboard": [dict(row) for row in leaderboard_export(run=run).rows],
        "lengths": answer_lengths(run=run),
        "page_answers": answers_line,
    }


def test_a_run_before_a_replace_keeps_everything_and_a_new_run_takes_the_new_answers(
    dataset, endpoint_row, fake_llm, client
):
    client.force_login(UserFactory(username="res-v", roles=["researcher"]))
    first = new_run(dataset, endpoint_row)
    assert scores(first) == [(name, 8) for _ in range(ITEMS) for name in ("alpha", "beta")]
    before = snapshot(first, client)
    assert "alpha (version 1)" in before["page_answers"] and "beta (version 1)" in before["page_answers"]
    assert [c["answers_version"] for c in before["manifest"]["candidates"]] == [1, 1]

    assert replace_alpha(dataset) == ITEMS
    assert snapshot(JudgeRun.objects.get(pk=first.pk), client) == before
    assert scores(first) == [(name, 8) for _ in range(ITEMS) for name in ("alpha", "beta")]

    # The re-run is identical: same versions, nothing "changed since", the same verdicts.
    sent = fake_llm.count
    rerun = run_rerun(run=first)
    assert "changes_since_original" not in rerun.manifest
    assert sorted(rerun.answer_sets.values_list("model__name", "version")) == [("alpha", 1), ("beta", 1)]
    run_execute_inline(run=rerun)
    assert fake_llm.count == sent + 2 * ITEMS and not any(" NEW" in p for p in fake_llm.prompts()[sent:])
    assert scores(rerun) == scores(first)

    second = new_run(dataset, endpoint_row)
    assert {c["name"]: c["answers_version"] for c in second.manifest["candidates"]} == {"alpha": 2, "beta": 1}
    assert scores(second) == [(name, 3 if name == "alpha" else 8) for _ in range(ITEMS) for name in ("alpha", "beta")]
    assert set(second.judgments.filter(model__name="alpha").values_list("answer_set__version", flat=True)) == {2}
    assert set(first.judgments.filter(model__name="alpha").values_list("answer_set__version", flat=True)) == {1}
    assert answer_lengths(run=second)["alpha"] > before["lengths"]["alpha"]
    page = client.get(reverse("judging:run-detail", args=[second.pk])).content.decode()
    assert "alpha (version 2)" in page


def test_a_delete_leaves_earlier_runs_as_they_were(dataset, endpoint_row, client):
    client.force_login(UserFactory(username="res-d", roles=["researcher"]))
    first = new_run(dataset, endpoint_row)
    before = snapshot(first, client)
    answers_delete(dataset=dataset, model_name="beta", actor=None)
    assert snapshot(JudgeRun.objects.get(pk=first.pk), client) == before
    rerun = run_rerun(run=first)
    assert sorted(rerun.answer_sets.values_list("model__name", "version")) == [("alpha", 1), ("beta", 1)]


def test_a_run_on_version_2_keeps_it_when_version_1_is_made_current_again(dataset, endpoint_row, client):
    client.force_login(UserFactory(username="res-r", roles=["researcher"]))
    replace_alpha(dataset)
    on_v2 = new_run(dataset, endpoint_row)
    before = snapshot(on_v2, client)
    assert {c["name"]: c["answers_version"] for c in before["manifest"]["candidates"]} == {"alpha": 2, "beta": 1}

    answers_restore(dataset=dataset, model_name="alpha", version=1, actor=None)
    assert snapshot(JudgeRun.objects.get(pk=on_v2.pk), client) == before
    rerun = run_rerun(run=on_v2)
    assert sorted(rerun.answer_sets.values_list("model__name", "version")) == [("alpha", 2), ("beta", 1)]

    on_v1 = new_run(dataset, endpoint_row)
    assert {c["name"]: c["answers_version"] for c in on_v1.manifest["candidates"]} == {"alpha": 1, "beta": 1}
    assert scores(on_v1) == [(name, 8) for _ in range(ITEMS) for name in ("alpha", "beta")]
    assert set(on_v1.judgments.filter(model__name="alpha").values_list("answer_set__version", flat=True)) == {1}


def test_a_campaign_shows_the_answers_it_was_made_with(dataset, client_as, researcher):
    annotators = [UserFactory(username=f"v-ann{k}", roles=["annotator"]) for k in range(2)]
    campaign = campaign_create(
        slug="pinned",
        title="Pinned",
        dataset=dataset,
        candidates=list(CandidateModel.objects.filter(name__in=["alpha", "beta"])),
        question_count=ITEMS,
        annotators=annotators,
        seed=3,
    )
    held = assignment_next(campaign=campaign, annotator=annotators[0])
    shown = {held.answer_a_text, held.answer_b_text}
    replace_alpha(dataset)
    again = assignment_next(campaign=campaign, annotator=annotators[0])
    assert again.pk == held.pk and {again.answer_a_text, again.answer_b_text} == shown
    fresh = assignment_next(campaign=campaign, annotator=annotators[1])
    texts = [fresh.answer_a_text, fresh.answer_b_text]
    assert all(text and " NEW" not in text for text in texts) and any("-alpha " in text for text in texts)
    # Its manifest names the version of each model's answers it was made with.
    versions = {entry["name"]: entry["answers_version"] for entry in campaign.manifest["candidates"]}
    assert versions == {"alpha": 1, "beta": 1}
    page = client_as(researcher).get(reverse("annotation:results", args=[campaign.slug])).content.decode()
    shown_answers = page.split('id="campaign-manifest"', 1)[1].split("</dd>", 5)[3]
    assert "alpha (version 1)" in shown_answers and "beta (version 1)" in shown_answers
