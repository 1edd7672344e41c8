"""Two workspaces, a researcher in each: researcher B gets nothing of workspace A, over every staff
page, API route and export of the URLconf.

The routes are read from the URLconf, so a new route fails `test_every_route_is_checked` until it
is listed here: as scoped (with what B must get) or as not workspace-scoped, with the reason.
"""

import json
from dataclasses import dataclass

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils import timezone

from annotation.models import Campaign
from core.exports import EXPORTERS
from core.models import Membership, Workspace
from core.workspaces import DEFAULT_SLUG, default_workspace_id, membership_set
from curation.models import Case, CurationJob, Dataset, DatasetUpload, ReviewTask, Study
from home.models import Invitation
from home.services import invitation_create
from judging.models import AnswerGeneration, AnswerUpload, BatchJob, JudgeRun, JudgeTemplate
from llm.models import Endpoint
from tests.factories import (
    AnswerFactory,
    CampaignFactory,
    CandidateModelFactory,
    CaseFactory,
    DatasetFactory,
    ItemFactory,
    JudgeRunFactory,
    JudgmentFactory,
    StudyFactory,
    UserFactory,
    VoteFactory,
)

pytestmark = pytest.mark.django_db

# Whatever workspace A holds carries this mark (case aside); B never types it, so it may only
# reach B's responses by leaking.
HIDDEN = "hidden-a"
ALL_ROLES = ["researcher", "reviewer", "annotator"]


@dataclass
class World:
    alice: object
    bob: object
    beta: Workspace
    study: Study
    case: Case
    dataset: Dataset
    item_id: int
    run: JudgeRun
    campaign: Campaign
    endpoint: Endpoint
    job: CurationJob
    task: ReviewTask
    invitation: Invitation
    generation: AnswerGeneration
    upload: AnswerUpload
    dataset_upload: DatasetUpload
    template: JudgeTemplate


@pytest.fixture
def world(db) -> World:
    alpha = Workspace.objects.get(pk=default_workspace_id())
    beta = Workspace.objects.create(slug="beta", name="Beta")
    alice = UserFactory(username="hidden-a-alice", roles=ALL_ROLES)
    membership_set(user=alice, workspace=alpha, roles=ALL_ROLES, admin=True)
    bob = UserFactory(username="bob", roles=ALL_ROLES, roles__workspace=beta)
    membership_set(user=bob, workspace=beta, roles=ALL_ROLES, admin=True)

    study = StudyFactory(slug="alpha-study", title_en="HIDDEN-A study", completion_code="HIDDEN-A-CODE")
    case = CaseFactory(
        submission__study=study,
        submission__prolific_pid="hidden-a-pid",
        conversation="Question: HIDDEN-A question?\nAnswer: HIDDEN-A.",
    )
    dataset = DatasetFactory(name="alpha-data", study=study, description="HIDDEN-A data")
    item = ItemFactory(dataset=dataset, question="HIDDEN-A question", reference="HIDDEN-A reference")
    models = [CandidateModelFactory(name="hidden-a-model-1"), CandidateModelFactory(name="hidden-a-model-2")]
    for model in models:
        AnswerFactory(item=item, model=model, text="HIDDEN-A answer")
    run = JudgeRunFactory(dataset=dataset, judge_model="hidden-a-judge")
    JudgmentFactory(run=run, item=item, model=models[0], raw_text="HIDDEN-A verdict")
    campaign = CampaignFactory(slug="alpha-campaign", title="HIDDEN-A campaign", dataset=dataset)
    campaign.annotators.add(alice)
    VoteFactory(item=item, model_a=models[0], model_b=models[1], annotator_label="hidden-a-voter")
    endpoint = Endpoint.objects.create(
        name="alpha-endpoint", base_url="http://hidden-a.invalid/v1", default_model="hidden-a-judge"
    )
    job = CurationJob.objects.create(kind="reference", dataset=dataset, model="hidden-a-judge", status="failed")
    task = ReviewTask.objects.create(queue="quality", case=case)
    invitation, _token = invitation_create(roles=["annotator"], note="HIDDEN-A batch", actor=alice)
    generation = AnswerGeneration.objects.create(dataset=dataset, model=models[0], status="cancelled", total=1)
    # Batches sent through the provider's Batch API: their ids and errors are A's too.
    BatchJob.objects.create(run=run, batch_id="hidden-a-batch", status="collected", error="HIDDEN-A error")
    BatchJob.objects.create(generation=generation, batch_id="hidden-a-gen-batch", status="collected")
    # A large answers file stored for a worker: its name, file and error are A's.
    upload = AnswerUpload.objects.create(
        dataset=dataset,
        model_name="hidden-a-model-1",
        file_name="hidden-a.jsonl",
        content=b"HIDDEN-A file",
        status="running",
        error="HIDDEN-A error",
    )
    # A large dataset file of A's, refused (so that a discard by its owner would go through).
    dataset_upload = DatasetUpload.objects.create(
        name="hidden-a-import",
        file_format="arena_hard",
        file_name="hidden-a-questions.jsonl",
        workspace=alpha,
        status="failed",
        error="HIDDEN-A line 2",
    )
    # A's own judge template (a copy of a built-in one would be the same to B: A's).
    template = JudgeTemplate.objects.create(
        workspace=alpha, name="hidden-a-template", mode="pointwise", language="en", text="HIDDEN-A {answer}"
    )
    return World(
        template=template,
        alice=alice,
        bob=bob,
        beta=beta,
        study=study,
        case=case,
        dataset=dataset,
        item_id=item.pk,
        run=run,
        campaign=campaign,
        endpoint=endpoint,
        job=job,
        task=task,
        invitation=invitation,
        generation=generation,
        upload=upload,
        dataset_upload=dataset_upload,
    )


# Not workspace-scoped, and why.
NOT_SCOPED = {
    "home": "routes a person to their work; shows no data",
    "login": "Django's log-in",
    "logout": "Django's log-out",
    "set_language": "Django's language switch",
    "invitation-accept": "the invitee's page, opened by the one-time token, before they have an account",
    "api-root": "the list of API addresses",
    "api-me": "the person's own name and roles",
    "api-tokens": "the person's own tokens (another's are never listed)",
    "api-token": "revokes one of the person's own tokens (another's is 404)",
    "api-schema": "the API's description, no data",
    # Scoped by its query string, which this walk does not give: tests/test_export_bundles.py
    # checks that B gets a 404 for A's study, dataset, run and campaign bundles.
    "api-export-bundle": "scoped by its query (study, dataset, run or campaign): tested in test_export_bundles.py",
    "api-docs": "the API's documentation page, no data",
    "curation:study-start": "participants' questionnaire: anonymous, reached by the study's public link",
    "curation:study-resume": "participants' questionnaire",
    "curation:study-resume-path": "participants' questionnaire",
    "curation:study-cases": "participants' questionnaire",
    "curation:study-case-edit": "participants' questionnaire",
    "curation:study-case-remove": "participants' questionnaire",
    "curation:study-about": "participants' questionnaire",
    "curation:study-usage": "participants' questionnaire",
    "curation:study-review": "participants' questionnaire",
    "curation:study-done": "participants' questionnaire",
    "api-export": "checked per export table in test_no_export_gives_b_anything_of_a",
    "invitation-accept-path": "an invitation link of the old form: redirects to invitation-accept",
    "core:tokens": "a person's own API tokens (tests/core/test_api_tokens.py: nobody revokes another's)",
    "core:token-revoke": "a person's own API tokens (tests/core/test_api_tokens.py: nobody revokes another's)",
    "api-workspace-member": "PATCH and DELETE only: B's 404 for A's members in tests/test_workspace_teams.py",
}

# Pages and API lists of B's own: they open (200), and show nothing of A.
LISTS = {
    "dashboard": {},
    "archived": {},
    "people": {},
    "api-studies": {},
    "api-datasets": {},
    "api-runs": {},
    "api-campaigns": {},
    "api-endpoints": {},
    "llm:endpoints": {},
    "llm:endpoint-new": {},
    "core:audit": {},
    "curation:review": {},
    "curation:review-datasets": {},
    "curation:datasets": {},
    "curation:study-new": {},
    "judging:run-new": {},
    "judging:run-list": {},
    "annotation:index": {},
    "annotation:campaign-new": {},
    "workspaces": {},
    "api-workspaces": {},
    "judging:templates": {},
    "api-judge-templates": {},
}


ARCHIVE_ACTIONS = ("archive", "restore")


def scoped_routes(w: World) -> dict[str, tuple[dict, dict]]:
    """Route name -> (its arguments naming A's objects, POST data): B must get 404 (405 for a
    method the route does not take) and nothing of A."""
    study, campaign, run = {"slug": w.study.slug}, {"slug": w.campaign.slug}, {"run_id": w.run.pk}
    dataset = {"dataset_id": w.dataset.pk}
    generation = {"name": w.dataset.name, "generation_id": w.generation.pk}
    archivable = {"dataset": w.dataset.name, "run": w.run.pk, "campaign": w.campaign.slug, "study": w.study.slug}
    archive_pages = {
        "curation:dataset": dataset,
        "judging:run": run,
        "annotation:campaign": campaign,
        "curation:study": study,
    }
    return {
        "people-roles": ({"user_id": w.alice.pk}, {f"p{w.alice.pk}-roles": ["annotator"]}),
        "people-active": ({"user_id": w.alice.pk}, {"active": "0", "confirm": "1"}),
        "people-invitation-withdraw": ({"invitation_id": w.invitation.pk}, {}),
        "people-remove": ({"user_id": w.alice.pk}, {"confirm": "1"}),
        "api-workspace-members": ({"slug": DEFAULT_SLUG}, {"username": "bob", "roles": ["researcher"]}),
        "api-study-statistics": (study, {}),
        "api-run-detail": (run, {}),
        "api-run-progress": (run, {}),
        "api-run-leaderboard": (run, {}),
        "api-run-diagnostics": (run, {}),
        "api-run-manifest": (run, {}),
        "api-run-probe": (run, {}),
        "api-run-resume": (run, {}),
        "api-run-cancel": (run, {}),
        "api-campaign-bt": (campaign, {}),
        "api-campaign-bt-style": (campaign, {}),
        "api-campaign-manifest": (campaign, {}),
        "api-campaign-alignment": (campaign, {}),
        "api-campaign-quality": (campaign, {}),
        "api-annotate-next": (campaign, {}),
        "api-annotate-vote": (campaign, {"winner": "model_a"}),
        "api-annotate-skip": (campaign, {}),
        "api-annotate-undo": (campaign, {}),
        "llm:endpoint-edit": (
            {"endpoint_id": w.endpoint.pk},
            {"name": "alpha-endpoint", "base_url": "http://bob.invalid/v1", "api_key_env": "OPENAI_API_KEY"},
        ),
        "curation:review-release": ({"task_id": w.task.pk}, {}),
        "curation:review-item": ({"item_id": w.item_id}, {}),
        "curation:review-case": ({"case_id": w.case.pk}, {}),
        "curation:review-dataset": (dataset, {}),
        "curation:review-job": (dataset, {"kind": "reference", "model": "m"}),
        "curation:review-job-restart": ({"dataset_id": w.dataset.pk, "job_id": w.job.pk}, {}),
        "curation:review-freeze": (dataset, {}),
        "curation:review-diff-pick": (dataset, {}),
        "curation:review-diff": ({"old_id": w.dataset.pk, "new_id": w.dataset.pk}, {}),
        "curation:dataset-detail": ({"name": w.dataset.name}, {}),
        "curation:study-detail": (study, {}),
        "curation:study-edit": (study, {"slug": w.study.slug, "title_en": "taken over"}),
        "curation:study-duplicate-resolve": (study, {"prolific_pid": "x", "keep": "1"}),
        "curation:study-withdraw": (study, {"confirm": "1", "submission": str(w.case.submission_id)}),
        "judging:template-edit": ({"template_id": w.template.pk}, {"text": "Judge {answer}"}),
        "judging:template-copy": ({"template_id": w.template.pk}, {}),
        "judging:template-diff-pick": ({"template_id": w.template.pk}, {}),
        "judging:template-diff": ({"old_id": w.template.pk, "new_id": w.template.pk}, {}),
        "judging:run-detail": (run, {}),
        "judging:run-manifest": (run, {}),
        "judging:run-action": ({"run_id": w.run.pk, "action": "cancel"}, {}),
        "judging:dataset-difficulty": (dataset, {"run": str(w.run.pk), "percent": "50"}),
        "annotation:annotate": (campaign, {}),
        "annotation:vote": (campaign, {"choice": "left"}),
        "annotation:skip": (campaign, {}),
        "annotation:undo": (campaign, {}),
        "annotation:results": (campaign, {}),
        "annotation:pairs": (campaign, {"pair": "1", "action": "release"}),
        "annotation:settings": (campaign, {"action": "close", "confirm": "1"}),
        "api-campaign": (campaign, {"is_open": False}),
        "curation:study-submissions": (study, {}),
        "curation:study-prolific-ids": ({"slug": w.study.slug, "decision": "approve"}, {}),
        "curation:study-submission-decide": (
            {"slug": w.study.slug, "submission_id": w.case.submission_id},
            {"decision": "approve", "confirm": "yes"},
        ),
        "api-dataset-freeze": ({"name": w.dataset.name}, {"confirm_missing_references": True}),
        "api-dataset-answers": ({"name": w.dataset.name}, {}),
        "api-model-answers": ({"name": w.dataset.name, "model": "hidden-a-model-1"}, {}),
        "api-dataset-answers-restore": ({"name": w.dataset.name}, {"model": "hidden-a-model-1", "version": 1}),
        "api-dataset-generations": ({"name": w.dataset.name}, {"model": "m"}),
        "api-dataset-generation": (generation, {}),
        "api-dataset-generation-cancel": (generation, {}),
        "api-dataset-generation-resume": (generation, {}),
        "judging:dataset-answers": ({"name": w.dataset.name}, {"action": "upload"}),
        "judging:generation-action": ({**generation, "action": "cancel"}, {}),
        **{
            f"api-{kind}-{action}": ({"key": key}, {}) for kind, key in archivable.items() for action in ARCHIVE_ACTIONS
        },
        **{f"{page}-{action}": (kwargs, {}) for page, kwargs in archive_pages.items() for action in ARCHIVE_ACTIONS},
        "api-dataset-answers-upload": ({"name": w.dataset.name, "upload_id": w.upload.pk}, {}),
        "api-dataset-answers-upload-resume": ({"name": w.dataset.name, "upload_id": w.upload.pk}, {}),
        "judging:answers-upload-resume": ({"name": w.dataset.name, "upload_id": w.upload.pk}, {}),
        "judging:answers-upload-discard": ({"name": w.dataset.name, "upload_id": w.upload.pk}, {}),
        "api-dataset-upload": ({"upload_id": w.dataset_upload.pk}, {}),
        "api-dataset-upload-resume": ({"upload_id": w.dataset_upload.pk}, {}),
        "curation:review-import-resume": ({"upload_id": w.dataset_upload.pk}, {}),
        "curation:review-import-discard": ({"upload_id": w.dataset_upload.pk}, {}),
    }


# Routes that answer B with something other than 404 for A's objects, and why that leaks nothing.
NOT_404 = {
    # A form posted to the set-up pages of B: names of A's objects are unknown there, so the
    # page answers as for any unknown name (a message on B's own page), checked for A's data.
    "people-account-new": ({}, {"account-username": "x", "workspace": DEFAULT_SLUG}),
    "people-invitation-new": ({}, {"invite-roles": ["annotator"], "invite-days": "7", "workspace": DEFAULT_SLUG}),
    "llm:endpoint-test": ({}, {"endpoint": "alpha-endpoint"}),
    "curation:review-take": ({"queue": "quality"}, {}),
    # Only a task leased to the reviewer opens; any other is "not leased to you any more".
    "curation:review-task": (None, {}),
    "curation:review-build": ({}, {"study": "alpha-study", "name": "stolen"}),
    "curation:review-copy": ({}, {"dataset": "alpha-data", "name": "stolen"}),
    # B's own import form; a workspace of A's named in it is refused (tests/test_workspace_chooser.py).
    "curation:review-import": ({}, {"name": "stolen", "format": "urs", "workspace": "1"}),
    # Workspaces: only one's own are switched to; only superusers make or rename one.
    "people-member-new": ({}, {"member-username": "bob", "member-roles": ["researcher"], "workspace": DEFAULT_SLUG}),
    "workspace-switch": ({}, {"workspace": DEFAULT_SLUG, "next": "/dashboard/"}),
    "workspace-new": ({}, {"new-slug": "stolen", "new-name": "Stolen", "new-first_admin": "bob"}),
    "workspace-rename": ({"slug": DEFAULT_SLUG}, {f"{DEFAULT_SLUG}-name": "Stolen"}),
}


def _routes():
    def walk(patterns, namespace=""):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                inner = pattern.namespace or ""
                yield from walk(pattern.url_patterns, f"{namespace}:{inner}".strip(":") if inner else namespace)
            elif isinstance(pattern, URLPattern) and pattern.name:
                yield f"{namespace}:{pattern.name}" if namespace else pattern.name, pattern

    return {name: pattern for name, pattern in walk(get_resolver().url_patterns) if not name.startswith("admin:")}


def _body(response) -> str:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content).decode("utf-8", "replace")
    return response.content.decode("utf-8", "replace")


def _nothing_of_a(response, where: str) -> None:
    assert HIDDEN not in _body(response).lower(), f"{where} shows workspace A's data"


def test_every_route_is_checked(world):
    listed = set(NOT_SCOPED) | set(LISTS) | set(scoped_routes(world)) | set(NOT_404)
    missing = sorted(set(_routes()) - listed)
    assert not missing, f"routes neither checked for workspaces nor listed as not scoped: {missing}"
    assert not sorted(listed - set(_routes())), "listed routes that no longer exist"


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
        own_404 = response.status_code == 404 and ("predates" in _body(response) or "judge run" in _body(response))
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
                detail = json.loads(_body(response))["detail"]
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
        assert response.status_code == 200 and mark in _body(response), name
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
