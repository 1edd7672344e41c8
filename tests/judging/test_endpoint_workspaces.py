"""A run takes only endpoints of its dataset's workspace: a researcher of two workspaces cannot run
A's dataset on B's endpoint, on the page, through the API or with `judge`, and is told nothing of
B's endpoint; calls look the endpoint up within the run's workspace. The `default` endpoint is
shared by design, and /endpoints/ says so."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from core.models import Workspace, default_workspace_id
from core.workspaces import membership_set
from judging.errors import RunError
from judging.models import JudgeRun
from judging.runs.spec import RunSpec
from llm.errors import EndpointError
from llm.models import Endpoint
from llm.selectors import endpoint_config
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db
REFUSED = "Unknown endpoint 'b-endpoint'."


@pytest.fixture
def setup(db):
    team_b = Workspace.objects.create(slug="team-b", name="Team B")
    rita = UserFactory(username="rita", roles=["researcher"])
    membership_set(user=rita, workspace=team_b, roles=["researcher"])
    item = ItemFactory(dataset=DatasetFactory(name="a-data"))
    model = CandidateModelFactory(name="a-model")
    AnswerFactory(item=item, model=model)
    endpoint = Endpoint.objects.create(name="b-endpoint", base_url="http://b-secret.invalid/v1", workspace=team_b)
    return rita, item.dataset, model, endpoint


def test_the_api_and_the_command_refuse_a_dataset_on_another_workspaces_endpoint(client_as, setup):
    rita, dataset, model, endpoint = setup
    body = {
        "dataset": "a-data",
        "mode": "pointwise",
        "judge_model": "j",
        "models": ["a-model"],
        "endpoint": "b-endpoint",
    }
    refused = client_as(rita).post(reverse("api-runs"), body, content_type="application/json")
    assert refused.status_code == 400 and REFUSED in refused.text
    assert "b-secret" not in refused.text and "team-b" not in refused.text
    with pytest.raises(CommandError) as failed:
        call_command(
            "judge",
            *("--dataset", "a-data", "--mode", "pointwise", "--judge-model", "j", "--models", "a-model"),
            *("--endpoint", "b-endpoint", "--inline"),
            stdout=StringIO(),
        )
    assert REFUSED in str(failed.value) and "b-secret" not in str(failed.value)
    assert not JudgeRun.objects.exists()


def test_the_page_refuses_it_and_a_spec_cannot_hold_it(client_as, setup):
    rita, dataset, model, endpoint = setup
    form = {
        "dataset": "a-data",
        "mode": "pointwise",
        "endpoint": "b-endpoint",
        "judge_model": "j",
        "candidates": [model.pk],
        "template_set": "urs",
        "temperature": "0",
        "action": "preview",
    }
    page = client_as(rita).post(reverse("judging:run-new"), form)
    # The run form offers only the dataset's workspace's endpoints: B's is no choice there.
    assert page.status_code == 400 and "endpoint" in page.context["form"].errors
    assert 'value="b-endpoint"' not in page.content.decode()
    assert "b-secret" not in page.content.decode()
    assert not JudgeRun.objects.exists()
    with pytest.raises(RunError, match="Unknown endpoint 'b-endpoint'"):
        RunSpec(dataset=dataset, mode="pointwise", judge_model="j", candidates=[model], endpoint=endpoint)
    # In B's own dataset, with B's own model, it is fine.
    dataset.workspace = model.workspace = endpoint.workspace
    assert RunSpec(dataset=dataset, mode="pointwise", judge_model="j", candidates=[model], endpoint=endpoint)


def test_calls_look_the_endpoint_up_within_the_runs_workspace(setup):
    _rita, _dataset, _model, endpoint = setup
    assert endpoint_config("b-endpoint", workspace_id=endpoint.workspace_id).base_url == "http://b-secret.invalid/v1"
    with pytest.raises(EndpointError, match="Unknown endpoint 'b-endpoint'.$"):
        endpoint_config("b-endpoint", workspace_id=default_workspace_id())


def test_the_endpoints_page_says_the_default_endpoint_is_shared(client_as, setup):
    rita, *_rest = setup
    page = client_as(rita).get(reverse("llm:endpoints")).text
    assert "The default endpoint is shared by every workspace on this server, by design" in page
