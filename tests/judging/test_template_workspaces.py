"""Judge templates belong to a workspace: the built-in ones are read-only for everyone and copied
to be changed; a workspace's researchers see and edit only their own; a run judges with its
dataset's workspace's copy, else the built-in one; reproductions keep the published text; the
audit row of a change stays in its workspace; the upgrade gives each past edit to a workspace."""

import importlib

import pytest
from django.apps import apps
from django.urls import reverse

from core.models import AuditEvent, Workspace, default_workspace_id
from core.workspaces import membership_set
from judging.models import JudgeTemplate
from judging.prompts.templates import template_copy, template_revise, templates_as_published, templates_ensure_defaults
from judging.runs.planning import run_plan
from judging.runs.spec import RunSpec
from tests.factories import (
    AnswerFactory,
    CandidateModelFactory,
    DatasetFactory,
    ItemFactory,
    JudgeRunFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db
NAME = "urs/factual_qa/en"


@pytest.fixture
def teams(db):
    """Workspace A (the default one) with researcher ann, workspace B with researcher ben."""
    templates_ensure_defaults()
    team_a = Workspace.objects.get(pk=default_workspace_id())
    team_b = Workspace.objects.create(slug="team-b", name="Team B")
    ann = UserFactory(username="ann", roles=["researcher"])
    ben = UserFactory(username="ben", roles=["researcher"], roles__workspace=team_b)
    return team_a, team_b, ann, ben


def builtin(name: str = NAME) -> JudgeTemplate:
    return JudgeTemplate.objects.filter(workspace=None, name=name).order_by("-version").first()


def planned_template(workspace: Workspace) -> JudgeTemplate:
    """The template a run on a dataset of `workspace` would judge its one item with."""
    item = ItemFactory(dataset=DatasetFactory(workspace=workspace))
    model = CandidateModelFactory(name=f"model-{workspace.slug}", workspace=workspace)
    AnswerFactory(item=item, model=model)
    plan = run_plan(spec=RunSpec(dataset=item.dataset, mode="pointwise", judge_model="j", candidates=[model]))
    return plan.templates[NAME]


def test_b_edits_its_copy_a_neither_sees_nor_edits_it_and_each_run_judges_with_its_own(client_as, teams):
    team_a, team_b, ann, ben = teams
    original = builtin()
    as_ben = client_as(ben)
    refused = as_ben.post(reverse("judging:template-edit", args=[original.pk]), {"text": "Mine: {answer}"})
    assert refused.status_code == 400 and "Copy to this workspace" in refused.text
    assert builtin() == original and not JudgeTemplate.objects.exclude(workspace=None).exists()

    as_ben.post(reverse("judging:template-copy", args=[original.pk]))
    copy = JudgeTemplate.objects.get(workspace=team_b, name=NAME)
    edited = as_ben.post(reverse("judging:template-edit", args=[copy.pk]), {"text": "TEAM-B judge {answer}"})
    b_version = JudgeTemplate.objects.get(workspace=team_b, name=NAME, text="TEAM-B judge {answer}")
    assert edited["Location"] == reverse("judging:template-edit", args=[b_version.pk])
    # Its list and the API show B's copy beside the built-in ones.
    assert "Team B" in as_ben.get(reverse("judging:templates")).text
    listed = {(t["name"], t["workspace"]) for t in as_ben.get(reverse("api-judge-templates")).json()["results"]}
    assert {(NAME, None), (NAME, "team-b")} <= listed

    # A: B's template is not found, on every page and in the API; A's list has only built-ins.
    as_ann = client_as(ann)
    for url in (
        reverse("judging:template-edit", args=[b_version.pk]),
        reverse("judging:template-diff", args=[copy.pk, b_version.pk]),
        reverse("judging:template-diff-pick", args=[b_version.pk]),
    ):
        assert as_ann.get(url).status_code == 404
    assert (
        as_ann.post(reverse("judging:template-edit", args=[b_version.pk]), {"text": "A's {answer}"}).status_code == 404
    )
    assert as_ann.post(reverse("judging:template-copy", args=[b_version.pk])).status_code == 404
    assert "TEAM-B" not in as_ann.get(reverse("judging:templates")).text + str(
        as_ann.get(reverse("api-judge-templates")).json()
    )
    assert JudgeTemplate.objects.filter(name=NAME).exclude(workspace=None).count() == 2  # nothing new from A

    # B's next run judges with B's version, A's with the built-in one.
    assert planned_template(team_b) == b_version
    assert planned_template(team_a) == original

    # Each change is audited in B, never in A.
    rows = AuditEvent.objects.filter(action="template_changed")
    assert [(r.workspace_id, r.actor_name, r.details.get("version")) for r in rows.order_by("pk")] == [
        (team_b.pk, "ben", copy.version),
        (team_b.pk, "ben", b_version.version),
    ]


def test_a_copy_per_workspace_under_the_same_name_and_numbers_of_its_own(teams):
    team_a, team_b, ann, ben = teams
    original = builtin()
    copy_a, made_a = template_copy(template=original, workspace=team_a, user=ann)
    copy_b, made_b = template_copy(template=original, workspace=team_b, user=ben)
    assert made_a and made_b and copy_a.name == copy_b.name == NAME
    template_revise(template=copy_b, text="B again {answer}", user=ben)
    template_revise(template=copy_b, text="B third {answer}", user=ben)
    # A's next version follows A's own and the built-in ones, whatever B did.
    revised_a, _made = template_revise(template=copy_a, text="A {answer}", user=ann)
    assert revised_a.version == original.version + 2
    assert template_copy(template=original, workspace=team_a) == (revised_a, False)


def test_a_member_of_both_teams_edits_in_the_current_one_only(client_as, teams):
    team_a, team_b, ann, ben = teams
    membership_set(user=ann, workspace=team_b, roles=["researcher"])
    copy_b, _made = template_copy(template=builtin(), workspace=team_b, user=ben)
    client = client_as(ann)
    client.post(reverse("workspace-switch"), {"workspace": team_a.slug})
    assert client.get(reverse("judging:template-edit", args=[copy_b.pk])).status_code == 404
    client.post(reverse("judging:template-copy", args=[builtin().pk]))
    assert JudgeTemplate.objects.filter(workspace=team_a, name=NAME, created_by=ann).exists()
    client.post(reverse("workspace-switch"), {"workspace": team_b.slug})
    assert client.get(reverse("judging:template-edit", args=[copy_b.pk])).status_code == 200


def test_a_reproduction_judges_with_the_published_text_whatever_a_workspace_copied(teams):
    team_a, _team_b, ann, _ben = teams
    copy, _made = template_copy(template=builtin(), workspace=team_a, user=ann)
    template_revise(template=copy, text="Edited {answer} {reference}", user=ann)
    chosen, notes = templates_as_published(template_set="urs", mode="pointwise")
    assert notes == [] and all(t.workspace_id is None for t in chosen)
    assert next(t for t in chosen if t.name == NAME) == builtin()


def test_the_upgrade_gives_each_past_edit_to_the_workspace_of_its_runs_else_to_the_default(teams):
    team_a, team_b, ann, ben = teams
    migration = importlib.import_module("judging.migrations.0021_template_workspace")
    original = builtin()
    # As the database held them before: edits are versions of the same name, with no workspace.
    used_by_b = JudgeTemplate.objects.create(
        name=NAME, version=original.version + 1, mode="pointwise", language="en", text="b {answer}", created_by=ben
    )
    unused = JudgeTemplate.objects.create(
        name=NAME, version=original.version + 2, mode="pointwise", language="en", text="? {answer}", created_by=ann
    )
    JudgeRunFactory(dataset=DatasetFactory(workspace=team_b), workspace=team_b).templates.add(used_by_b)
    JudgeRunFactory(dataset=DatasetFactory(), workspace=team_a).templates.add(original)
    migration.edits_to_workspaces(apps, None)
    assert JudgeTemplate.objects.get(pk=used_by_b.pk).workspace == team_b
    assert JudgeTemplate.objects.get(pk=unused.pk).workspace == team_a  # the default workspace
    assert JudgeTemplate.objects.get(pk=original.pk).workspace is None
    assert planned_template(team_b).pk == used_by_b.pk
