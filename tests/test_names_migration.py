"""Names become unique within a workspace: every existing dataset, endpoint and model keeps its
name, so every URL and lookup by name still resolves; a candidate model two workspaces shared is
split into one per workspace, each workspace's rows pointing at its own; study and campaign titles
a workspace held twice are told apart, their slugs (the links handed out) unchanged."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [
    ("core", "0004_token_tombstones_audit_subject"),
    ("curation", "0012_dataset_uploads"),
    ("llm", "0009_response_cache_rows_to_their_runs_workspace"),
    ("judging", "0022_answer_cut_off"),
    ("annotation", "0013_campaign_pins_answer_versions"),
]


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


def _team(old, workspace, model, *, dataset_name: str):
    """A dataset of the workspace with the shared model's answers, a run and a campaign on them."""
    Dataset, Item = old.get_model("curation", "Dataset"), old.get_model("curation", "Item")
    AnswerSet, Answer = old.get_model("judging", "AnswerSet"), old.get_model("judging", "Answer")
    JudgeRun, Judgment = old.get_model("judging", "JudgeRun"), old.get_model("judging", "Judgment")
    Campaign, Pair = old.get_model("annotation", "Campaign"), old.get_model("annotation", "ComparisonPair")
    CandidateModel = old.get_model("judging", "CandidateModel")
    other = CandidateModel.objects.create(name=f"other-{workspace.slug}")
    dataset = Dataset.objects.create(name=dataset_name, workspace=workspace)
    item = Item.objects.create(dataset=dataset, external_id="q1", question="1+1?")
    for candidate in (model, other):
        answers = AnswerSet.objects.create(dataset=dataset, model=candidate, version=1)
        Answer.objects.create(item=item, model=candidate, answer_set=answers, text="two")
    run = JudgeRun.objects.create(dataset=dataset, mode="pointwise", judge_model="j", workspace=workspace)
    run.candidates.add(model)
    Judgment.objects.create(run=run, item=item, model=model)
    campaign = Campaign.objects.create(
        slug=f"camp-{workspace.slug}", title="Pilot", dataset=dataset, workspace=workspace
    )
    campaign.candidates.add(model, other)
    Pair.objects.create(campaign=campaign, item=item, model_a=model, model_b=other)
    return dataset, run, campaign


@pytest.mark.django_db(transaction=True)
def test_names_keep_resolving_and_a_shared_model_is_split_per_workspace(back_to_the_latest):
    old = _migrate(BEFORE)
    Workspace, Study = old.get_model("core", "Workspace"), old.get_model("curation", "Study")
    Endpoint, CandidateModel = old.get_model("llm", "Endpoint"), old.get_model("judging", "CandidateModel")
    Campaign = old.get_model("annotation", "Campaign")
    default, _ = Workspace.objects.get_or_create(slug="default", defaults={"name": "Default"})
    lab_b = Workspace.objects.create(slug="lab-b", name="Lab B")
    shared = CandidateModel.objects.create(name="gpt-4o", provider="openai", family="gpt-4")
    unused = CandidateModel.objects.create(name="described-only", family="f")
    data_a, run_a, campaign_a = _team(old, default, shared, dataset_name="old-data")
    data_b, run_b, campaign_b = _team(old, lab_b, shared, dataset_name="b-data")
    Campaign.objects.create(slug="camp-again", title="Pilot", dataset=data_a, workspace=default)
    endpoint = Endpoint.objects.create(name="old-endpoint", base_url="http://127.0.0.1:9/v1", workspace=lab_b)
    studies = [Study.objects.create(slug=f"s{n}", title_en="Pilot", workspace=default) for n in range(3)]
    Study.objects.create(slug="s-b", title_en="Pilot", workspace=lab_b)

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    from annotation.models import Campaign as NewCampaign
    from annotation.models import ComparisonPair
    from curation.datasets.selectors import dataset_by_name
    from curation.models import Study as NewStudy
    from judging.models import Answer, AnswerSet, JudgeRun, Judgment
    from judging.models import CandidateModel as NewModel
    from llm.selectors import endpoint_by_name

    # Every old name resolves, to the same row.
    assert dataset_by_name(name="old-data").pk == data_a.pk and dataset_by_name(name="b-data").pk == data_b.pk
    assert endpoint_by_name(name="old-endpoint").pk == endpoint.pk
    # The shared model stays the default workspace's; lab-b gets its own copy, described alike.
    kept = NewModel.objects.get(pk=shared.pk)
    copy = NewModel.objects.get(name="gpt-4o", workspace__slug="lab-b")
    assert kept.workspace.slug == "default" and copy.pk != kept.pk
    assert (copy.provider, copy.family) == ("openai", "gpt-4")
    assert NewModel.objects.get(pk=unused.pk).workspace.slug == "default"
    for dataset, model in ((data_a, kept), (data_b, copy)):
        assert set(
            Answer.all_versions.filter(item__dataset_id=dataset.pk, model__name="gpt-4o").values_list(
                "model_id", flat=True
            )
        ) == {model.pk}
        assert AnswerSet.objects.get(dataset_id=dataset.pk, model__name="gpt-4o").model_id == model.pk
    assert list(JudgeRun.objects.get(pk=run_b.pk).candidates.values_list("pk", flat=True)) == [copy.pk]
    assert list(JudgeRun.objects.get(pk=run_a.pk).candidates.values_list("pk", flat=True)) == [kept.pk]
    assert set(Judgment.objects.filter(run_id=run_b.pk).values_list("model_id", flat=True)) == {copy.pk}
    assert copy.pk in set(NewCampaign.objects.get(pk=campaign_b.pk).candidates.values_list("pk", flat=True))
    assert ComparisonPair.objects.get(campaign_id=campaign_b.pk).model_a_id == copy.pk
    assert ComparisonPair.objects.get(campaign_id=campaign_a.pk).model_a_id == kept.pk
    # Titles a workspace held twice are told apart; slugs never change; other workspaces keep theirs.
    assert [NewStudy.objects.get(pk=s.pk).title_en for s in studies] == ["Pilot", "Pilot (2)", "Pilot (3)"]
    assert NewStudy.objects.get(slug="s-b").title_en == "Pilot"
    titles = dict(NewCampaign.objects.values_list("slug", "title"))
    assert titles == {"camp-default": "Pilot", "camp-lab-b": "Pilot", "camp-again": "Pilot (2)"}
