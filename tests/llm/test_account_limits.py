"""One provider account, one limit: the shared budget is keyed by base URL and key variable, so
where two teams' endpoints state different limits for the same account, every run holds to the
lower, whichever endpoint it goes through; an endpoint of another account keeps its own."""

import pytest

from core.models import Workspace, default_workspace_id
from llm.gate import endpoint_budget
from llm.models import Endpoint
from llm.selectors import endpoint_config

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_teams(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    team_a = Workspace.objects.get(pk=default_workspace_id())
    team_b = Workspace.objects.create(slug="team-b", name="Team B")
    Endpoint.objects.create(
        name="provider",
        base_url="https://api.example.org/v1",
        api_key_env="LAB_API_KEY",
        requests_per_minute=600,
        tokens_per_minute=90_000,
        workspace=team_a,
    )
    # Team B's endpoint of the same account (another spelling of the URL), stating lower limits.
    Endpoint.objects.create(
        name="provider",
        base_url="https://API.example.org/v1/",
        api_key_env="LAB_API_KEY",
        requests_per_minute=60,
        max_in_flight=8,
        workspace=team_b,
    )
    return team_a, team_b


def test_the_lower_of_two_endpoints_limits_for_one_account_holds_through_either(two_teams):
    team_a, team_b = two_teams
    through_a = endpoint_config("provider", workspace_id=team_a.pk)
    through_b = endpoint_config("provider", workspace_id=team_b.pk)
    for config in (through_a, through_b):
        assert (config.requests_per_minute, config.tokens_per_minute, config.max_in_flight) == (60, 90_000, 8)
    # One budget row for both: the same key.
    assert endpoint_budget(through_a).key == endpoint_budget(through_b).key


def test_another_account_keeps_its_own_limits(two_teams):
    team_a, _team_b = two_teams
    Endpoint.objects.create(
        name="other-key",
        base_url="https://api.example.org/v1",
        api_key_env="OTHER_API_KEY",
        requests_per_minute=600,
        workspace=team_a,
    )
    config = endpoint_config("other-key", workspace_id=team_a.pk)
    assert (config.requests_per_minute, config.max_in_flight) == (600, None)


def test_the_default_endpoint_counts_when_it_is_the_same_account(two_teams, monkeypatch):
    team_a, _team_b = two_teams
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8001/v1")
    monkeypatch.setenv("OPENAI_REQUESTS_PER_MINUTE", "30")
    Endpoint.objects.create(
        name="local",
        base_url="http://127.0.0.1:8001/v1",
        api_key_env="OPENAI_API_KEY",
        requests_per_minute=300,
        workspace=team_a,
    )
    assert endpoint_config("local", workspace_id=team_a.pk).requests_per_minute == 30
    assert endpoint_config(None, workspace_id=team_a.pk).requests_per_minute == 30
