"""Answers saved before answers had versions become version 1 of their (dataset, model); each run
and campaign pins the versions it used, and each judgment the version of its candidate; a version
retired before retirements were recorded says whether a replace or a delete retired it."""

from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

BEFORE = [("judging", "0017_answer_uploads"), ("annotation", "0012_archive")]
AFTER = [("annotation", "0013_campaign_pins_answer_versions")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.fixture
def back_to_the_latest():
    """The database ends at the latest migrations: the flush after a transactional test expects them."""
    yield
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_old_answers_become_version_1_and_runs_campaigns_and_judgments_pin_it(back_to_the_latest):
    old = _migrate(BEFORE)
    Dataset, Item = old.get_model("curation", "Dataset"), old.get_model("curation", "Item")
    CandidateModel, Answer = old.get_model("judging", "CandidateModel"), old.get_model("judging", "Answer")
    JudgeRun, Judgment = old.get_model("judging", "JudgeRun"), old.get_model("judging", "Judgment")
    Campaign = old.get_model("annotation", "Campaign")
    first, second = Dataset.objects.create(name="m-one"), Dataset.objects.create(name="m-two")
    alpha, beta, ref = (CandidateModel.objects.create(name=n) for n in ("alpha", "beta", "ref"))
    items = {
        d.name: [Item.objects.create(dataset=d, external_id=f"q{i}", question="?") for i in range(2)]
        for d in (first, second)
    }
    for item in items["m-one"]:
        for model in (alpha, beta, ref):
            Answer.objects.create(item=item, model=model, text="a")
    Answer.objects.create(item=items["m-two"][0], model=alpha, text="b")
    run = JudgeRun.objects.create(dataset=first, mode="pairwise", judge_model="j", reference_model=ref)
    run.candidates.set([alpha])
    judgment = Judgment.objects.create(run=run, item=items["m-one"][0], model=alpha)
    other_run = JudgeRun.objects.create(dataset=second, mode="pointwise", judge_model="j")
    other_run.candidates.set([alpha])
    campaign = Campaign.objects.create(slug="c", title="C", dataset=first)

    new = _migrate(AFTER)
    AnswerSet, NewAnswer = new.get_model("judging", "AnswerSet"), new.get_model("judging", "Answer")
    sets = {(s.dataset_id, s.model.name): s for s in AnswerSet.objects.select_related("model").all()}
    assert sorted((d, m, s.version, s.is_current) for (d, m), s in sets.items()) == sorted(
        [(first.pk, n, 1, True) for n in ("alpha", "beta", "ref")] + [(second.pk, "alpha", 1, True)]
    )
    assert not NewAnswer.objects.filter(answer_set__isnull=True).exists()
    assert all(
        a.answer_set.dataset_id == a.item.dataset_id for a in NewAnswer.objects.select_related("item", "answer_set")
    )
    NewRun, NewJudgment = new.get_model("judging", "JudgeRun"), new.get_model("judging", "Judgment")
    assert sorted(NewRun.objects.get(pk=run.pk).answer_sets.values_list("model__name", flat=True)) == ["alpha", "ref"]
    assert list(NewRun.objects.get(pk=other_run.pk).answer_sets.values_list("pk", flat=True)) == [
        sets[(second.pk, "alpha")].pk
    ]
    assert NewJudgment.objects.get(pk=judgment.pk).answer_set_id == sets[(first.pk, "alpha")].pk
    NewCampaign = new.get_model("annotation", "Campaign")
    assert sorted(NewCampaign.objects.get(pk=campaign.pk).answer_sets.values_list("model__name", flat=True)) == [
        "alpha",
        "beta",
        "ref",
    ]


@pytest.mark.django_db(transaction=True)
def test_versions_retired_before_say_whether_a_replace_or_a_delete_retired_them(back_to_the_latest):
    """A replace made its successor in the transaction that retired the old version; a delete did not."""
    old = _migrate([("judging", "0023_candidate_model_per_workspace")])
    Dataset, AnswerSet = old.get_model("curation", "Dataset"), old.get_model("judging", "AnswerSet")
    dataset = Dataset.objects.create(name="m-retired")
    model = old.get_model("judging", "CandidateModel").objects.create(name="alpha")
    replaced_at, deleted_at = timezone.now() - timedelta(days=2), timezone.now() - timedelta(days=1)
    for version, made, retired in ((1, replaced_at - timedelta(hours=1), replaced_at), (2, replaced_at, deleted_at)):
        made_set = AnswerSet.objects.create(
            dataset=dataset, model=model, version=version, is_current=False, retired_at=retired
        )
        AnswerSet.objects.filter(pk=made_set.pk).update(created_at=made)
    AnswerSet.objects.create(dataset=dataset, model=model, version=3)  # uploaded a day after the delete

    new = _migrate([("judging", "0024_answer_set_retired_by")])
    retired_by = new.get_model("judging", "AnswerSet").objects.order_by("version").values_list("retired_by", flat=True)
    assert list(retired_by) == ["replaced", "deleted", ""]
