"""What a team holds, made by one builder, and the tables of the URLconf's routes that the
workspace walks read (tests/test_workspaces.py: another team gets none of it;
tests/test_workspace_pilot_walk.py: two teams that name everything `pilot` each get their own).

Whatever a team makes carries its mark (a lower-case word such as `hidden-a`, in any case) in its
content: descriptions, questions, answers, verdicts, base URLs, file names, errors. The names a
team chooses are given apart (`Names`), so that two teams can choose the same ones.

The routes are read from the URLconf: a new route fails `test_every_route_is_checked` until it is
listed here, as scoped (with the arguments naming a team's objects), as a list, as a form that
answers another team without a 404, or as not workspace-scoped, with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.urls import URLPattern, URLResolver, get_resolver

from annotation.models import Campaign
from core.models import Workspace
from core.slugs import slug_free
from core.workspaces import DEFAULT_SLUG, membership_set
from curation.models import Case, CurationJob, Dataset, DatasetUpload, ReviewTask, Study
from home.models import Invitation
from home.services import invitation_create
from judging.models import AnswerGeneration, AnswerUpload, BatchJob, CandidateModel, JudgeRun, JudgeTemplate
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

ALL_ROLES = ["researcher", "reviewer", "annotator"]


@dataclass(frozen=True)
class Names:
    """The names a team chose: unique within its workspace (a study's and a campaign's slugs,
    their links, across the server)."""

    dataset: str
    study_slug: str
    study_title: str
    campaign_slug: str
    campaign_title: str
    endpoint: str
    models: tuple[str, str]
    template: str
    dataset_upload: str


@dataclass
class Team:
    workspace: Workspace
    owner: object
    study: Study
    case: Case
    dataset: Dataset
    models: list[CandidateModel]
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


def team_build(*, workspace: Workspace, owner, mark: str, names: Names) -> Team:
    """Every kind of object a team makes, in `workspace`, its content carrying `mark`; `owner` (an
    admin of the workspace with every role) annotates its campaign and invites."""
    loud = mark.upper()
    here = {"workspace": workspace}
    study = StudyFactory(slug=names.study_slug, title_en=names.study_title, completion_code=f"{loud}-CODE", **here)
    case = CaseFactory(
        submission__study=study,
        position=1,
        submission__prolific_pid=f"{mark}-pid",
        conversation=f"Question: {loud} question?\nAnswer: {loud}.",
    )
    dataset = DatasetFactory(name=names.dataset, study=study, description=f"{loud} data", **here)
    item = ItemFactory(dataset=dataset, external_id="q1", question=f"{loud} question", reference=f"{loud} reference")
    models = [CandidateModelFactory(name=name, **here) for name in names.models]
    for model in models:
        AnswerFactory(item=item, model=model, text=f"{loud} answer")
    run = JudgeRunFactory(dataset=dataset, judge_model=f"{mark}-judge", **here)
    JudgmentFactory(run=run, item=item, model=models[0], raw_text=f"{loud} verdict")
    campaign = CampaignFactory(slug=names.campaign_slug, title=names.campaign_title, dataset=dataset, **here)
    campaign.annotators.add(owner)
    VoteFactory(item=item, model_a=models[0], model_b=models[1], annotator_label=f"{mark}-voter")
    endpoint = Endpoint.objects.create(
        name=names.endpoint, base_url=f"http://{mark}.invalid/v1", default_model=f"{mark}-judge", **here
    )
    job = CurationJob.objects.create(kind="reference", dataset=dataset, model=f"{mark}-judge", status="failed")
    task = ReviewTask.objects.create(queue="quality", case=case)
    invitation, _token = invitation_create(roles=["annotator"], note=f"{loud} batch", actor=owner, workspace=workspace)
    generation = AnswerGeneration.objects.create(dataset=dataset, model=models[0], status="cancelled", total=1)
    # Batches sent through the provider's Batch API: their ids and errors are the team's too.
    BatchJob.objects.create(run=run, batch_id=f"{mark}-batch", status="collected", error=f"{loud} error")
    BatchJob.objects.create(generation=generation, batch_id=f"{mark}-gen-batch", status="collected")
    # A large answers file stored for a worker: its name, file and error are the team's.
    upload = AnswerUpload.objects.create(
        dataset=dataset,
        model_name=models[0].name,
        file_name=f"{mark}.jsonl",
        content=f"{loud} file".encode(),
        status="running",
        error=f"{loud} error",
    )
    # A large dataset file of the team's, refused (so that a discard by its owner would go through).
    dataset_upload = DatasetUpload.objects.create(
        name=names.dataset_upload,
        file_format="arena_hard",
        file_name=f"{mark}-questions.jsonl",
        status="failed",
        error=f"{loud} line 2",
        **here,
    )
    # The team's own judge template (a copy of a built-in one would be the same: the team's).
    template = JudgeTemplate.objects.create(
        name=names.template, mode="pointwise", language="en", text=f"{loud} {{answer}}", **here
    )
    return Team(
        workspace=workspace,
        owner=owner,
        study=study,
        case=case,
        dataset=dataset,
        models=models,
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
        template=template,
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
    # Scoped by its query string, which the walk of routes does not give: tests/test_export_bundles.py
    # checks that B gets a 404 for A's study, dataset, run and campaign bundles, and
    # tests/test_workspace_pilot_walk.py that each team's bundles of `pilot` hold its own only.
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

# Pages and API lists of a team's own: they open (200), and show nothing of another team.
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


def scoped_routes(w: Team) -> dict[str, tuple[dict, dict]]:
    """Route name -> (its arguments naming the team's objects, POST data): another team must get
    404 (405 for a method the route does not take) and nothing of the team's."""
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
    owner = w.owner.pk
    return {
        "people-roles": ({"user_id": owner}, {f"p{owner}-roles": ["annotator"]}),
        "people-active": ({"user_id": owner}, {"active": "0", "confirm": "1"}),
        "people-invitation-withdraw": ({"invitation_id": w.invitation.pk}, {}),
        "people-remove": ({"user_id": owner}, {"confirm": "1"}),
        "api-workspace-members": ({"slug": w.workspace.slug}, {"username": "bob", "roles": ["researcher"]}),
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
            {"name": w.endpoint.name, "base_url": "http://bob.invalid/v1", "api_key_env": "OPENAI_API_KEY"},
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
        "api-model-answers": ({"name": w.dataset.name, "model": w.models[0].name}, {}),
        "api-dataset-answers-restore": ({"name": w.dataset.name}, {"model": w.models[0].name, "version": 1}),
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


# Routes that answer B with something other than 404 for A's objects (as tests/test_workspaces.py
# builds them, A in the default workspace), and why that leaks nothing.
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


def url_routes() -> dict[str, URLPattern]:
    """Every named route of the URLconf but the admin's, by its full name."""

    def walk(patterns, namespace=""):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                inner = pattern.namespace or ""
                yield from walk(pattern.url_patterns, f"{namespace}:{inner}".strip(":") if inner else namespace)
            elif isinstance(pattern, URLPattern) and pattern.name:
                yield f"{namespace}:{pattern.name}" if namespace else pattern.name, pattern

    return {name: pattern for name, pattern in walk(get_resolver().url_patterns) if not name.startswith("admin:")}


def body_text(response) -> str:
    """A response's body as text, a streamed one read whole."""
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content).decode("utf-8", "replace")
    return response.content.decode("utf-8", "replace")


# Two teams that name everything `pilot`, each with its mark, and one person in both.
PILOT = "pilot"
MARKS = {"a": "hidden-a", "b": "hidden-b"}


@dataclass
class Pilots:
    teams: dict[str, Team]
    both: object

    def other(self, key: str) -> str:
        return "b" if key == "a" else "a"


def _link_free(model, slug: str) -> str:
    """`slug` when no object of `model` has it, else a free one, as the app proposes."""
    if not model.objects.filter(slug=slug).exists():
        return slug
    return slug_free(model, slug, max_length=model._meta.get_field("slug").max_length)


def pilots_build(*, first: str) -> Pilots:
    """Workspaces team-a and team-b, made in the order `first` says, each with an owner (admin,
    every role) and every kind of object a team makes, named `pilot` (the links of the study and
    the campaign: `pilot` for the first team, a free one for the second); `both`, a member of
    both with every role, annotates both campaigns."""
    order = [first, "b" if first == "a" else "a"]
    teams = {}
    for key in order:
        workspace = Workspace.objects.create(slug=f"team-{key}", name=f"Team {key.upper()}")
        owner = UserFactory(username=f"{MARKS[key]}-owner", roles=ALL_ROLES, roles__workspace=workspace)
        membership_set(user=owner, workspace=workspace, roles=ALL_ROLES, admin=True)
        names = Names(
            dataset=PILOT,
            study_slug=_link_free(Study, PILOT),
            study_title=PILOT,
            campaign_slug=_link_free(Campaign, PILOT),
            campaign_title=PILOT,
            endpoint=PILOT,
            models=(PILOT, "other"),
            template=PILOT,
            dataset_upload=PILOT,
        )
        teams[key] = team_build(workspace=workspace, owner=owner, mark=MARKS[key], names=names)
    both = UserFactory(username="both")
    for team in teams.values():
        membership_set(user=both, workspace=team.workspace, roles=ALL_ROLES)
        team.campaign.annotators.add(both)
    return Pilots(teams={key: teams[key] for key in ("a", "b")}, both=both)


def owned_rows(workspace: Workspace) -> dict[str, list[dict]]:
    """Every row a workspace holds, field by field (its audit, its response cache and its members'
    accounts' activity too): equal before and after, nothing of the workspace changed."""
    from django.contrib.auth import get_user_model
    from django.db.models import Q

    from annotation.models import Assignment, ComparisonPair, Vote
    from core.models import AuditEvent, Membership, WorkspaceInvitation
    from curation.models import CaseCuration, Item, ReferenceDraft, Submission, Translation
    from judging.models import Answer, JudgeShard, Judgment
    from llm.models import LLMResponse

    def of(via: str) -> Q:
        return Q(**{via: workspace})

    study_case = "case__submission__study__workspace"
    owned = {
        Workspace: Q(pk=workspace.pk),
        Membership: of("workspace"),
        AuditEvent: of("workspace"),
        WorkspaceInvitation: of("workspace"),
        Study: of("workspace"),
        Submission: of("study__workspace"),
        Case: of("submission__study__workspace"),
        CaseCuration: of(study_case),
        Dataset: of("workspace"),
        Item: of("dataset__workspace"),
        CandidateModel: of("workspace"),
        Answer: of("item__dataset__workspace"),
        JudgeRun: of("workspace"),
        Judgment: of("run__workspace"),
        JudgeShard: of("run__workspace"),
        JudgeTemplate: of("workspace"),
        Campaign: of("workspace"),
        ComparisonPair: of("campaign__workspace"),
        Assignment: of("pair__campaign__workspace"),
        Vote: of("item__dataset__workspace"),
        Endpoint: of("workspace"),
        LLMResponse: of("workspace"),
        CurationJob: of("dataset__workspace"),
        ReferenceDraft: of("job__dataset__workspace"),
        Translation: of("job__dataset__workspace"),
        ReviewTask: of(study_case) | of("item__dataset__workspace"),
        AnswerGeneration: of("dataset__workspace"),
        BatchJob: of("run__workspace") | of("generation__dataset__workspace"),
        AnswerUpload: of("dataset__workspace"),
        DatasetUpload: of("workspace"),
    }
    rows = {model.__name__: list(model.objects.filter(where).order_by("pk").values()) for model, where in owned.items()}
    invited = WorkspaceInvitation.objects.filter(workspace=workspace).values("token_hash")
    rows["Invitation"] = list(Invitation.objects.filter(token_hash__in=invited).order_by("pk").values())
    members = Membership.objects.filter(workspace=workspace).values("user_id")
    rows["accounts"] = list(get_user_model().objects.filter(pk__in=members).order_by("pk").values("pk", "is_active"))
    return rows
