"""Upgrading to workspaces loses nothing: what exists moves into the workspace `default`, and every
account that held a role becomes a member of it with those roles (a superuser as its admin)."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE_WORKSPACES = [
    ("core", "0001_initial"),
    ("curation", "0007_security"),
    ("llm", "0002_engine"),
    ("judging", "0008_run_parameters"),
    ("annotation", "0006_stored_figures"),
]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_everything_moves_into_the_default_workspace_with_its_people():
    old = _migrate(BEFORE_WORKSPACES)
    User, Group = old.get_model("auth", "User"), old.get_model("auth", "Group")
    researcher_group, _ = Group.objects.get_or_create(name="researcher")
    reviewer_group, _ = Group.objects.get_or_create(name="reviewer")
    rita = User.objects.create(username="rita")
    rita.groups.add(researcher_group, reviewer_group)
    boss = User.objects.create(username="boss", is_superuser=True, is_staff=True)
    User.objects.create(username="nobody")
    Study, Dataset = old.get_model("curation", "Study"), old.get_model("curation", "Dataset")
    Endpoint, JudgeRun = old.get_model("llm", "Endpoint"), old.get_model("judging", "JudgeRun")
    Campaign = old.get_model("annotation", "Campaign")
    study = Study.objects.create(slug="old-study", title_en="Old")
    dataset = Dataset.objects.create(name="old-data", study=study)
    endpoint = Endpoint.objects.create(name="old-endpoint", base_url="http://127.0.0.1:9/v1")
    run = JudgeRun.objects.create(dataset=dataset, mode="pointwise", judge_model="j", endpoint=endpoint)
    campaign = Campaign.objects.create(slug="old-campaign", title="Old", dataset=dataset)

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    from annotation.models import Campaign as NewCampaign
    from core.models import Membership, Workspace
    from curation.models import Dataset as NewDataset
    from curation.models import Study as NewStudy
    from judging.models import JudgeRun as NewRun
    from llm.models import Endpoint as NewEndpoint

    default = Workspace.objects.get(slug="default")
    assert Workspace.objects.count() == 1
    for model, pk in (
        (NewStudy, study.pk),
        (NewDataset, dataset.pk),
        (NewEndpoint, endpoint.pk),
        (NewRun, run.pk),
        (NewCampaign, campaign.pk),
    ):
        assert model.objects.get(pk=pk).workspace == default, model.__name__
    places = {m.user.username: (m.role_names(), m.admin) for m in Membership.objects.select_related("user").all()}
    assert places == {"rita": (["researcher", "reviewer"], False), "boss": ([], True)}
    assert NewRun.objects.get(pk=run.pk).endpoint.name == "old-endpoint"
    assert boss.pk in set(Membership.objects.values_list("user_id", flat=True))
