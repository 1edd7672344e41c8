"""The response cache is per workspace: team A's exact prompt, sent to the same server and model
as team B's (the shared `default` endpoint), is asked again rather than answered from the row B's
work paid for; within one team an identical prompt is still paid once."""

from io import StringIO

import pytest
from django.core.management import call_command

from core.models import Workspace, default_workspace_id
from curation.models import Item
from judging.models import Answer, JudgeRun
from llm.cache import cache_key, cache_lookup
from llm.calls import ChatRequest
from llm.models import LLMResponse
from llm.selectors import endpoint_config
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory

pytestmark = pytest.mark.django_db

QUESTION = "What is our secret launch date?"


@pytest.fixture
def teams(fake_llm, fast_retries, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    team_a = Workspace.objects.get(pk=default_workspace_id())
    team_b = Workspace.objects.create(slug="team-b", name="Team B")
    for name, workspace in (("a-data", team_a), ("b-data", team_b), ("b-again", team_b)):
        ItemFactory(dataset=DatasetFactory(name=name, workspace=workspace), external_id="q1", question=QUESTION)
    return team_a, team_b


def generate(dataset):
    call_command("generate", "--dataset", dataset, "--model", "m1", stdout=StringIO(), stderr=StringIO())


def test_one_teams_prompt_is_not_answered_from_anothers_cache(fake_llm, teams):
    team_a, team_b = teams
    fake_llm.reply = lambda body: "B's answer" if fake_llm.count == 1 else "A's own answer"
    generate("b-data")
    assert fake_llm.count == 1
    generate("a-data")
    # The same prompt, server, model and parameters: asked again for team A.
    assert fake_llm.count == 2
    assert Answer.objects.get(item__dataset__name="a-data").text == "A's own answer"
    assert sorted(LLMResponse.objects.values_list("workspace__slug", flat=True)) == ["default", "team-b"]
    # Within team B the same prompt is answered from B's row: nothing is sent.
    generate("b-again")
    assert fake_llm.count == 2
    assert Answer.objects.get(item__dataset__name="b-again").text == "B's answer"


def test_a_lookup_finds_only_its_own_workspaces_rows_and_never_an_unassigned_one(fake_llm, teams):
    team_a, team_b = teams
    generate("b-data")
    request = ChatRequest(model="m1", messages=(("user", QUESTION),), temperature=0.7, max_tokens=2048)
    keys = {
        slug: cache_key(endpoint_config(None, workspace_id=workspace.pk), request)
        for slug, workspace in (("a", team_a), ("b", team_b))
    }
    assert keys["a"] != keys["b"]
    row = LLMResponse.objects.get()
    assert (row.key, row.workspace) == (keys["b"], team_b)
    assert cache_lookup([keys["b"]], team_b.pk) and not cache_lookup([keys["b"]], team_a.pk)
    # A row of no known workspace (made before the cache was per workspace) is served to no team.
    LLMResponse.objects.update(workspace=None)
    assert not cache_lookup([keys["b"]], team_b.pk)


def judge(dataset):
    args = ("--dataset", dataset, "--mode", "pointwise", "--judge-model", "j", "--models", "m1", "--inline")
    call_command("judge", *args, stdout=StringIO(), stderr=StringIO())


def test_a_judge_run_of_one_team_is_not_answered_from_anothers_cache(fake_llm, teams):
    # Each team's own model named m1 (a model's name belongs to its workspace).
    models = {workspace.pk: CandidateModelFactory(name="m1", workspace=workspace) for workspace in teams}
    for name in ("a-data", "b-data", "b-again"):
        item = Item.objects.select_related("dataset").get(dataset__name=name)
        AnswerFactory(item=item, model=models[item.dataset.workspace_id], text="The same answer.")
    judge("b-data")
    assert fake_llm.count == 1
    judge("a-data")
    assert fake_llm.count == 2  # team A's identical judge prompt is asked again
    judge("b-again")
    assert fake_llm.count == 2  # team B's own identical prompt comes from B's cache
    runs = {run.dataset.name: run for run in JudgeRun.objects.select_related("dataset")}
    assert (runs["a-data"].cached_replies, runs["b-again"].cached_replies) == (0, 1)
