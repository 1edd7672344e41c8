"""Cache rows made before the cache was per workspace: a row that one workspace's runs used moves
to that workspace under the key its calls now ask for (its judgments follow); a row used by runs of
two workspaces, or by none, keeps no workspace and is served to nobody."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from llm.cache import workspace_cache_key

BEFORE = [("llm", "0008_response_cache_per_workspace"), ("judging", "0022_answer_cut_off")]
AFTER = [("llm", "0009_response_cache_rows_to_their_runs_workspace")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.fixture
def back_to_the_latest():
    yield
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_rows_move_to_the_workspace_of_the_runs_that_used_them(back_to_the_latest):
    old = _migrate(BEFORE)
    Workspace = old.get_model("core", "Workspace")
    Dataset, Item = old.get_model("curation", "Dataset"), old.get_model("curation", "Item")
    CandidateModel = old.get_model("judging", "CandidateModel")
    JudgeRun, Judgment = old.get_model("judging", "JudgeRun"), old.get_model("judging", "Judgment")
    LLMResponse = old.get_model("llm", "LLMResponse")
    team_a = Workspace.objects.get_or_create(slug="default", defaults={"name": "Default"})[0]
    team_b = Workspace.objects.create(slug="team-b", name="Team B")
    model = CandidateModel.objects.create(name="m")
    runs = {}
    for name, workspace in (("a", team_a), ("b", team_b)):
        dataset = Dataset.objects.create(name=f"{name}-data", workspace=workspace)
        item = Item.objects.create(dataset=dataset, external_id="q1", question="?")
        runs[name] = (
            JudgeRun.objects.create(dataset=dataset, mode="pointwise", judge_model="j", workspace=workspace),
            item,
        )
    only_a, shared, unused = "1" * 64, "2" * 64, "3" * 64
    for key in (only_a, shared, unused):
        LLMResponse.objects.create(key=key, base_url="http://x/v1", model="j", text=key)
    run_a, item_a = runs["a"]
    run_b, item_b = runs["b"]
    Judgment.objects.create(run=run_a, item=item_a, model=model, response_id=only_a)
    Judgment.objects.create(run=run_a, item=item_a, model=model, order=1, response_id=shared)
    Judgment.objects.create(run=run_b, item=item_b, model=model, response_id=shared)

    new = _migrate(AFTER)
    LLMResponse, Judgment = new.get_model("llm", "LLMResponse"), new.get_model("judging", "Judgment")
    moved = workspace_cache_key(only_a, team_a.pk)
    assert dict(LLMResponse.objects.values_list("text", "workspace_id")) == {
        only_a: team_a.pk,
        shared: None,
        unused: None,
    }
    assert LLMResponse.objects.get(text=only_a).key == moved
    assert sorted(Judgment.objects.values_list("response_id", flat=True)) == sorted([moved, shared, shared])
