"""Two workspaces, a researcher in each: researcher B gets nothing of workspace A, over every staff
page, API route and export of the URLconf.

The routes are read from the URLconf, so a new route fails `test_every_route_is_checked` until it
is listed in tests/workspace_world.py: as scoped (with what B must get) or as not workspace-scoped,
with the reason. A's objects are made there too (`team_build`), as every walk of workspaces makes a
team's.
"""

import json
from dataclasses import dataclass, fields

import pytest
from django.urls import reverse
from django.utils import timezone

from core.exports import EXPORTERS
from core.models import Membership, Workspace
from core.workspaces import default_workspace_id, membership_set
from curation.models import Case, Dataset, DatasetUpload, ReviewTask
from judging.models import AnswerUpload, JudgeRun
from llm.models import Endpoint
from tests.factories import (
    AnswerFactory,
    CandidateModelFactory,
    CaseFactory,
    DatasetFactory,
    ItemFactory,
    StudyFactory,
    UserFactory,
)
from tests.workspace_world import (
    ALL_ROLES,
    LISTS,
    NOT_404,
    NOT_SCOPED,
    Names,
    Team,
    body_text,
    scoped_routes,
    team_build,
    url_routes,
)

pytestmark = pytest.mark.django_db

# Whatever workspace A holds carries this mark (case aside); B never types it, so it may only
# reach B's responses by leaking.
HIDDEN = "hidden-a"


@dataclass
class World(Team):
    """Workspace A's team (the default workspace; `alice` its owner), and B: bob, researcher and
    admin of `beta`, which holds nothing."""

    bob: object
    beta: Workspace

    @property
    def alice(self):
        return self.owner


# A's names: none of them is one B uses.
A_NAMES = Names(
    dataset="alpha-data",
    study_slug="alpha-study",
    study_title="HIDDEN-A study",
    campaign_slug="alpha-campaign",
    campaign_title="HIDDEN-A campaign",
    endpoint="alpha-endpoint",
    models=("hidden-a-model-1", "hidden-a-model-2"),
    template="hidden-a-template",
    dataset_upload="hidden-a-import",
)


@pytest.fixture
def world(db) -> World:
    alpha = Workspace.objects.get(pk=default_workspace_id())
    beta = Workspace.objects.create(slug="beta", name="Beta")
    alice = UserFactory(username="hidden-a-alice", roles=ALL_ROLES)
    membership_set(user=alice, workspace=alpha, roles=ALL_ROLES, admin=True)
    bob = UserFactory(username="bob", roles=ALL_ROLES, roles__workspace=beta)
    membership_set(user=bob, workspace=beta, roles=ALL_ROLES, admin=True)
    team = team_build(workspace=alpha, owner=alice, mark=HIDDEN, names=A_NAMES)
    return World(**{field.name: getattr(team, field.name) for field in fields(Team)}, bob=bob, beta=beta)


def _nothing_of_a(response, where: str) -> None:
    assert HIDDEN not in body_text(response).lower(), f"{where} shows workspace A's data"


def test_every_route_is_checked(world):
    listed = set(NOT_SCOPED) | set(LISTS) | set(scoped_routes(world)) | set(NOT_404)
    missing = sorted(set(url_routes()) - listed)
    assert not missing, f"routes neither checked for workspaces nor listed as not scoped: {missing}"
    assert not sorted(listed - set(url_routes())), "listed routes that no longer exist"


def test_b_gets_404_for_every_object_of_a(client, world):
    client.force_login(world.bob)
    for name, (kwargs, data) in scoped_routes(world).items():
        url = reverse(name, kwargs=kwargs)
        got = client.get(url)
        posted = client.post(url, data)
        assert got.status_code in (404, 405) and posted.status_code in (404, 405), (name, got.status_code)
        assert 404 in (got.status_code, posted.status_code), name
        _nothing_of_a(got, name)
        _nothing_of_a(posted, name)


def test_a_opens_the_same_routes(client, world):
    """The routes above name real objects: their owner gets them (not a 404)."""
    client.force_login(world.alice)
    for name, (kwargs, _data) in scoped_routes(world).items():
        if name == "api-dataset-answers-restore":
            continue  # POST-only: its GET reads a model named "restore" (tests/judging/test_answer_restore.py)
        if name.startswith(("people-", "api-annotate-", "annotation:vote", "annotation:skip", "annotation:undo")):
            continue  # POST-only or state-changing: their owner's use is tested where they live
        response = client.get(reverse(name, kwargs=kwargs))
        # A campaign made without a manifest or a finished run has 404s of its own, which say so.
        own_404 = response.status_code == 404 and (
            "predates" in body_text(response) or "judge run" in body_text(response)
        )
        assert response.status_code != 404 or own_404, name


def test_b_lists_show_nothing_of_a(client, world):
    client.force_login(world.bob)
    for name, kwargs in LISTS.items():
        response = client.get(reverse(name, kwargs=kwargs))
        assert response.status_code == 200, name
        _nothing_of_a(response, name)
    # Lists of the API come back empty, not merely without the mark.
    for name in ("api-studies", "api-datasets", "api-runs", "api-campaigns", "api-endpoints"):
        assert client.get(reverse(name)).json()["results"] == [], name


def test_b_forms_naming_a_objects_change_nothing(client, world):
    client.force_login(world.bob)
    task = world.task
    for name, (kwargs, data) in NOT_404.items():
        if name == "curation:review-task":
            kwargs = {"task_id": task.pk}
        url = reverse(name, kwargs=kwargs)
        response = client.post(url, data, follow=True)
        assert response.status_code in (200, 400, 404), (name, response.status_code)
        _nothing_of_a(response, name)
    assert not Dataset.objects.filter(name="stolen").exists()
    assert Dataset.objects.filter(workspace=world.beta).count() == 0
    assert not ReviewTask.objects.filter(leased_to=world.bob).exists()


def test_b_changes_nothing_of_a(client, world):
    client.force_login(world.bob)
    for name, (kwargs, data) in scoped_routes(world).items():
        client.post(reverse(name, kwargs=kwargs), data)
    world.run.refresh_from_db()
    world.endpoint.refresh_from_db()
    world.study.refresh_from_db()
    world.invitation.refresh_from_db()
    assert world.run.status == JudgeRun.Status.PENDING
    assert world.endpoint.base_url == "http://hidden-a.invalid/v1"
    assert world.study.title_en == "HIDDEN-A study"
    assert world.invitation.revoked_at is None
    alice = type(world.alice).objects.get(pk=world.alice.pk)
    assert alice.is_active and Membership.objects.get(user=alice).role_names() == ALL_ROLES
    assert Case.objects.filter(pk=world.case.pk).exists()
    assert AnswerUpload.objects.filter(pk=world.upload.pk).exists()
    assert DatasetUpload.objects.filter(pk=world.dataset_upload.pk).exists()  # not discarded by B


@pytest.mark.parametrize("what", sorted(EXPORTERS))
def test_no_export_gives_b_anything_of_a(client, world, what):
    client.force_login(world.bob)
    url = reverse("api-export", args=[what])
    for query in (
        {},
        {"dataset": "alpha-data"},
        {"study": "alpha-study"},
        {"run": world.run.pk},
        {"campaign": world.campaign.slug},
    ):
        for fmt in ("csv", "jsonl"):
            response = client.get(url, {**query, "format": fmt})
            assert response.status_code in (200, 400), (what, query, response.status_code)
            _nothing_of_a(response, f"export {what} {query}")
            if query and response.status_code == 400:
                detail = json.loads(body_text(response))["detail"]
                assert "No " in detail, (what, query, detail)


def test_a_superuser_sees_every_workspace(client, world):
    boss = UserFactory(username="boss", is_superuser=True, is_staff=True)
    client.force_login(boss)
    assert "HIDDEN-A study" in client.get(reverse("curation:study-detail", args=[world.study.slug])).text
    assert client.get(reverse("judging:run-detail", args=[world.run.pk])).status_code == 200
    slugs = [row["slug"] for row in client.get(reverse("api-studies")).json()["results"]]
    assert "alpha-study" in slugs


def test_a_researcher_in_no_workspace_sees_an_empty_dashboard_and_nothing_else(client, world):
    loner = UserFactory(username="loner")
    client.force_login(loner)
    page = client.get(reverse("dashboard"))
    assert page.status_code == 200 and 'data-testid="no-workspace"' in page.text
    _nothing_of_a(page, "dashboard")
    for name in ("curation:review", "annotation:index", "people", "llm:endpoints", "api-studies"):
        assert client.get(reverse(name)).status_code == 403, name


def test_b_names_its_own_objects_as_a_does_and_reaches_only_its_own(client, world, settings):
    """Names belong to a workspace: B makes a dataset and an endpoint with A's names (the name is
    free in B), and every route taking those names answers with B's, never A's."""
    settings.LLM_ALLOWED_INTERNAL_HOSTS = ["127.0.0.1"]
    dataset = DatasetFactory(name=world.dataset.name, workspace=world.beta, description="B's own data")
    item = ItemFactory(dataset=dataset, question="B question")
    for name in ("b-model-1", "b-model-2"):
        AnswerFactory(item=item, model=CandidateModelFactory(name=name, workspace=world.beta), text="B answer")
    client.force_login(world.bob)
    endpoint = {"name": world.endpoint.name, "base_url": "http://127.0.0.1:9/v1", "api_key_env": "", "max_retries": "0"}
    assert client.post(reverse("llm:endpoint-new"), endpoint).status_code == 302
    assert Endpoint.objects.get(workspace=world.beta).name == world.endpoint.name == "alpha-endpoint"
    for name, mark in (
        ("curation:dataset-detail", "B&#x27;s own data"),
        ("judging:dataset-answers", "b-model-1"),
        ("api-dataset-answers", "b-model-1"),
        ("api-dataset-generations", "[]"),
    ):
        response = client.get(reverse(name, kwargs={"name": dataset.name}))
        assert response.status_code == 200 and mark in body_text(response), name
        _nothing_of_a(response, name)
    tested = client.post(reverse("llm:endpoint-test"), {"endpoint": world.endpoint.name}, follow=True)
    # The connection test took B's endpoint (its page is where the result is shown).
    own = Endpoint.objects.get(workspace=world.beta)
    assert tested.redirect_chain[-1][0] == reverse("llm:endpoint-edit", args=[own.pk])
    _nothing_of_a(tested, "llm:endpoint-test")
    # Changing by name changes B's: archiving `alpha-data` archives B's, never A's.
    assert client.post(reverse("api-dataset-archive", kwargs={"key": dataset.name})).status_code == 200
    world.dataset.refresh_from_db()
    dataset.refresh_from_db()
    assert dataset.archived_at is not None and world.dataset.archived_at is None


def test_derived_objects_stay_in_their_parents_workspace(world):
    from annotation.campaigns import campaign_create
    from curation.datasets.services import dataset_freeze, dataset_working_copy, study_dataset_build
    from curation.models import Item
    from judging.runs.creation import run_create
    from judging.runs.spec import RunSpec

    study = StudyFactory(slug="beta-study", workspace=world.beta)
    case = CaseFactory(submission__study=study, review_status=Case.ReviewStatus.ACCEPTED)
    from curation.models import CaseCuration

    CaseCuration.objects.create(case=case, question="What is 2 + 2?", processed_at=timezone.now())
    dataset, added = study_dataset_build(study=study, name="beta-data", created_by=world.bob)
    assert added == 1 and dataset.workspace == world.beta
    Item.objects.filter(dataset=dataset).update(reference="4")
    version = dataset_freeze(dataset=dataset, created_by=world.bob)
    assert version.workspace == world.beta
    copy, _made = dataset_working_copy(dataset=version, name="beta-copy", created_by=world.bob)
    assert copy.workspace == world.beta
    models = [CandidateModelFactory(name=name, workspace=world.beta) for name in ("b1", "b2")]
    for model in models:
        AnswerFactory(item=version.items.get(), model=model)
    run = run_create(
        spec=RunSpec(dataset=version, mode="pointwise", judge_model="j", candidates=tuple(models)),
        created_by=world.bob,
    )
    assert run.workspace == world.beta
    campaign = campaign_create(
        slug="beta-campaign", title="B", dataset=version, candidates=models, question_count=1, created_by=world.bob
    )
    assert campaign.workspace == world.beta


def test_an_annotator_of_another_workspace_cannot_join_a_campaign(world):
    from annotation.campaigns import campaign_create
    from annotation.errors import AnnotationError

    with pytest.raises(AnnotationError, match="does not hold the annotator role"):
        campaign_create(
            slug="mixed",
            title="Mixed",
            dataset=world.dataset,
            candidates=[answer.model for answer in world.dataset.items.get().answers.all()],
            question_count=1,
            annotators=[world.bob],
        )
