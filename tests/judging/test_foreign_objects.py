"""Another workspace's candidate model, endpoint or judge template handed to a run or a campaign
as an object, by code that skipped the pages' lookups: the services refuse it as unknown (the
words a lookup by name would use, nothing about the other workspace), and nothing is written."""

import pytest

from annotation.campaigns import campaign_create
from annotation.errors import AnnotationError
from annotation.models import Campaign
from core.models import Workspace
from judging.errors import RunError
from judging.models import JudgeRun, JudgeTemplate
from judging.runs.spec import RunSpec
from llm.models import Endpoint
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_teams():
    """Team A's dataset, answered by A's alpha and beta; team B's model, endpoint and template
    named like A's would be."""
    lab_a, lab_b = (Workspace.objects.create(slug=slug, name=slug) for slug in ("lab-a", "lab-b"))
    dataset = DatasetFactory(name="pilot", workspace=lab_a)
    ours = [CandidateModelFactory(name=name, workspace=lab_a) for name in ("alpha", "beta")]
    theirs = CandidateModelFactory(name="gamma", workspace=lab_b)
    item = ItemFactory(dataset=dataset, external_id="q1")
    for model in ours:
        AnswerFactory(item=item, model=model, text=f"{model.name} answers.")
    return dataset, ours, theirs, lab_b


def spec(dataset, **given):
    return RunSpec(**{"dataset": dataset, "mode": "pointwise", "judge_model": "judge", **given})


def test_a_run_refuses_another_workspaces_candidate_reference_endpoint_and_template(two_teams):
    dataset, ours, theirs, lab_b = two_teams
    spec(dataset, candidates=ours)  # A's own: accepted
    with pytest.raises(RunError) as refused:
        spec(dataset, candidates=[ours[0], theirs])
    assert (str(refused.value), refused.value.parameter) == ("Unknown candidate model 'gamma'.", "candidates")
    with pytest.raises(RunError) as refused:
        spec(dataset, mode="pairwise", candidates=ours, reference_model=theirs)
    assert (str(refused.value), refused.value.parameter) == ("Unknown candidate model 'gamma'.", "reference_model")
    endpoint = Endpoint.objects.create(name="b-server", base_url="http://127.0.0.1:9/v1", workspace=lab_b)
    with pytest.raises(RunError, match=r"^Unknown endpoint 'b-server'\.$"):
        spec(dataset, candidates=ours, endpoint=endpoint)
    template = JudgeTemplate.objects.create(
        workspace=lab_b, name="b-judge", mode="pointwise", language="en", text="{question} {answer}"
    )
    with pytest.raises(RunError) as refused:
        spec(dataset, candidates=ours, templates=[template])
    assert (str(refused.value), refused.value.parameter) == ("Unknown judge template 'b-judge'.", "templates")
    # A built-in template (no workspace) is everyone's.
    template.workspace = None
    template.save()
    spec(dataset, candidates=ours, templates=[template])
    assert not JudgeRun.objects.exists()


def test_a_campaign_refuses_another_workspaces_candidate(two_teams):
    dataset, ours, theirs, _lab_b = two_teams
    with pytest.raises(AnnotationError, match=r"^Unknown candidate model 'gamma'\.$"):
        campaign_create(slug="c1", title="pilot", dataset=dataset, candidates=[*ours, theirs], question_count=1)
    assert not Campaign.objects.exists()
    made = campaign_create(slug="c1", title="pilot", dataset=dataset, candidates=ours, question_count=1)
    assert list(made.candidates.order_by("name").values_list("name", flat=True)) == ["alpha", "beta"]
