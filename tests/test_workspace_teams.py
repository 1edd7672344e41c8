"""Two teams set up and staffed without the admin, by a superuser and two workspace admins: once
entirely through the API, once entirely through the pages. Neither team reaches the other (404 or
403, nothing changed); the audit stays home; the current workspace is chosen by a POST (pages) or
a header (API); revoked tokens are tombstones; the admin is for superusers."""

import io
import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation.models import Campaign
from core.models import ApiToken, AuditEvent, Membership, Workspace
from core.tokens import api_token_create, api_token_revoke
from core.workspaces import membership_set
from curation.datasets.llm_steps import curation_model_for
from curation.models import Dataset, Study
from judging.models import Answer, AnswerGeneration, CandidateModel, JudgeRun, JudgeTemplate
from llm.errors import EndpointError
from llm.models import Endpoint
from llm.selectors import endpoint_config
from tests.factories import DatasetFactory, UserFactory

pytestmark = pytest.mark.django_db
User = get_user_model()


def _api(user) -> Client:
    """A client that speaks as `user` through a token, as a script does."""
    _token, key = api_token_create(user=user, name="script")
    return Client(headers={"Authorization": f"Token {key}"})


def _accounts():
    boss = UserFactory(username="boss")
    boss.is_superuser = boss.is_staff = True
    boss.save()
    return boss, *(UserFactory(username=name) for name in ("ann", "ben", "rita", "rob"))


def _places() -> dict[str, tuple]:
    return {
        (m.workspace.slug, m.user.username): (tuple(m.role_names()), m.admin)
        for m in Membership.objects.select_related("workspace", "user")
    }


def test_two_teams_are_set_up_and_staffed_through_the_api():
    boss, ann, ben, rita, rob = _accounts()
    as_boss, as_ann, as_ben = _api(boss), _api(ann), _api(ben)
    for slug, name, admin in (("lab-a", "Lab A", "ann"), ("lab-b", "Lab B", "ben")):
        made = as_boss.post(reverse("api-workspaces"), {"slug": slug, "name": name, "admin": admin})
        assert made.status_code == 201 and made.json() == {"slug": slug, "name": name, "roles": [], "admin": True}
    # Only a superuser makes a workspace; a taken slug is named to the superuser.
    assert as_ann.post(reverse("api-workspaces"), {"slug": "lab-c", "name": "C"}).status_code == 403
    assert as_boss.post(reverse("api-workspaces"), {"slug": "lab-a", "name": "again"}).status_code == 400

    members = lambda slug: reverse("api-workspace-members", args=[slug])  # noqa: E731
    member = lambda slug, name: reverse("api-workspace-member", args=[slug, name])  # noqa: E731
    added = as_ann.post(
        members("lab-a"), {"username": "rita", "roles": ["researcher"]}, content_type="application/json"
    )
    assert added.status_code == 201
    assert added.json() == {"username": "rita", "roles": ["researcher"], "admin": False, "active": True}
    assert as_ben.post(members("lab-b"), {"username": "rob", "roles": ["annotator"]}).status_code == 201
    assert as_ann.get(reverse("api-workspaces")).json() == [
        {"slug": "lab-a", "name": "Lab A", "roles": ["researcher"], "admin": True}
    ]
    assert [m["username"] for m in as_ann.get(members("lab-a")).json()] == ["ann", "rita"]
    before = _places()

    # Across the teams: 404, whatever the method, and nothing changes.
    assert as_ann.get(members("lab-b")).status_code == 404
    assert as_ann.post(members("lab-b"), {"username": "ann", "roles": ["researcher"]}).status_code == 404
    assert as_ann.patch(member("lab-b", "rob"), {"roles": []}, content_type="application/json").status_code == 404
    assert as_ann.delete(member("lab-b", "rob")).status_code == 404
    assert as_ann.delete(member("lab-a", "rob")).status_code == 404
    assert as_ben.patch(member("lab-a", "rita"), {"admin": True}, content_type="application/json").status_code == 404
    # A researcher of the team who is not its admin: 403.
    as_rita = _api(rita)
    assert as_rita.post(members("lab-a"), {"username": "rob", "roles": ["annotator"]}).status_code == 403
    assert as_rita.delete(member("lab-a", "ann")).status_code == 403
    assert _places() == before

    changed = as_ann.patch(
        member("lab-a", "rita"), {"roles": ["reviewer", "researcher"]}, content_type="application/json"
    )
    assert changed.status_code == 200 and changed.json()["roles"] == ["researcher", "reviewer"]
    assert as_ann.delete(member("lab-a", "rita")).status_code == 204
    assert ("lab-a", "rita") not in _places()
    me = as_ann.get(reverse("api-me")).json()
    assert me["workspaces"] == [{"slug": "lab-a", "name": "Lab A", "roles": ["researcher"], "admin": True}]
    assert me["superuser"] is False and me["workspace"] is None

    # Every change is audited in its own workspace.
    rows = {
        (e.workspace.slug, e.action, e.target, e.details.get("change", ""))
        for e in AuditEvent.objects.exclude(action__startswith="token_").select_related("workspace")
    }
    assert rows == {
        ("lab-a", "workspace_changed", "workspace:lab-a", ""),
        ("lab-b", "workspace_changed", "workspace:lab-b", ""),
        ("lab-a", "people_changed", "user:ann", "added"),
        ("lab-b", "people_changed", "user:ben", "added"),
        ("lab-a", "people_changed", "user:rita", "added"),
        ("lab-b", "people_changed", "user:rob", "added"),
        ("lab-a", "people_changed", "user:rita", "roles changed"),
        ("lab-a", "people_changed", "user:rita", "removed"),
    }


def test_two_teams_are_set_up_and_staffed_through_the_pages(client):
    boss, ann, ben, rita, rob = _accounts()
    client.force_login(boss)
    for slug, name, admin in (("lab-a", "Lab A", "ann"), ("lab-b", "Lab B", "ben")):
        response = client.post(
            reverse("workspace-new"), {"new-slug": slug, "new-name": name, "new-first_admin": admin}, follow=True
        )
        assert f"Workspace {name} made." in response.text
    assert client.post(reverse("workspace-rename", args=["lab-b"]), {"lab-b-name": "Lab Bee"}).status_code == 302
    assert Workspace.objects.get(slug="lab-b").name == "Lab Bee"
    # A bad slug is named; nothing is made.
    response = client.post(reverse("workspace-new"), {"new-slug": "Lab C!", "new-name": "C"})
    assert response.status_code == 400 and not Workspace.objects.filter(name="C").exists()

    team_a, team_b = Client(), Client()
    team_a.force_login(ann)
    team_b.force_login(ben)
    page = team_a.get(reverse("workspaces")).text
    assert "Lab A" in page and "Lab Bee" not in page and 'name="new-slug"' not in page
    assert team_a.post(reverse("workspace-new"), {"new-slug": "lab-c", "new-name": "C"}).status_code == 400
    assert team_a.post(reverse("workspace-rename", args=["lab-a"]), {"lab-a-name": "Mine"}).status_code == 302
    assert Workspace.objects.get(slug="lab-a").name == "Lab A"

    added = team_a.post(
        reverse("people-member-new"),
        {"workspace": "lab-a", "member-username": "rita", "member-roles": ["researcher"]},
        follow=True,
    )
    assert "rita is now a member of Lab A." in added.text
    team_b.post(
        reverse("people-member-new"), {"workspace": "lab-b", "member-username": "rob", "member-roles": ["annotator"]}
    )
    unknown = team_a.post(reverse("people-member-new"), {"workspace": "lab-a", "member-username": "nobody"})
    assert unknown.status_code == 400 and "There is no account named nobody." in unknown.text
    before = _places()
    # Team B's admin reaches nothing of team A: another workspace's form is 404, nothing changes.
    for name, args, data in (
        ("people-member-new", [], {"workspace": "lab-a", "member-username": "ben", "member-roles": ["researcher"]}),
        ("people-roles", [rita.pk], {"workspace": "lab-a", f"p{rita.pk}-roles": ["annotator"]}),
        ("people-remove", [rita.pk], {"workspace": "lab-a", "confirm": "1"}),
        ("people-remove", [rita.pk], {"workspace": "lab-b", "confirm": "1"}),
        ("people-active", [rita.pk], {"workspace": "lab-b", "active": "0", "confirm": "1"}),
    ):
        assert team_b.post(reverse(name, args=args), data).status_code == 404, name
    assert _places() == before and User.objects.get(pk=rita.pk).is_active

    # Removing a member asks first; the second step removes.
    asked = team_a.post(reverse("people-remove", args=[rita.pk]), {"workspace": "lab-a"})
    assert asked.status_code == 200 and "Remove rita from Lab A?" in asked.text and ("lab-a", "rita") in _places()
    team_a.post(reverse("people-remove", args=[rita.pk]), {"workspace": "lab-a", "confirm": "1"})
    assert ("lab-a", "rita") not in _places()
    assert set(_places()) == {("lab-a", "ann"), ("lab-b", "ben"), ("lab-b", "rob")}


def test_only_a_superuser_changes_the_admin_of_another_workspace(client):
    boss, ann, ben, _rita, _rob = _accounts()
    lab_a, lab_b = Workspace.objects.create(slug="lab-a", name="A"), Workspace.objects.create(slug="lab-b", name="B")
    membership_set(user=ann, workspace=lab_a, roles=["researcher"], admin=True)
    membership_set(user=ben, workspace=lab_b, roles=["researcher"], admin=True)
    membership_set(user=ben, workspace=lab_a, roles=["researcher"])
    client.force_login(ann)
    page = client.get(reverse("people")).text
    # Nothing is offered for ben: his roles, deactivating and removing him are a superuser's.
    assert f'action="{reverse("people-roles", args=[ben.pk])}"' not in page
    assert "Deactivate ben" not in page and "Remove ben" not in page
    assert "Remove ann" not in page and "Deactivate ann" not in page
    response = client.post(
        reverse("people-roles", args=[ben.pk]), {"workspace": "lab-a", f"p{ben.pk}-roles": []}, follow=True
    )
    assert "ben administers another workspace; only a superuser changes their roles or removes them." in response.text
    refused = _api(ann).delete(reverse("api-workspace-member", args=["lab-a", "ben"]))
    assert refused.status_code == 403
    assert Membership.objects.get(user=ben, workspace=lab_a).researcher
    assert _api(boss).delete(reverse("api-workspace-member", args=["lab-a", "ben"])).status_code == 204
    assert not Membership.objects.filter(user=ben, workspace=lab_a).exists()


def test_deactivating_asks_first_and_is_offered_only_where_it_works(client):
    lab = Workspace.objects.create(slug="lab-a", name="A")
    ann = UserFactory(username="ann")
    membership_set(user=ann, workspace=lab, roles=["researcher"], admin=True)
    rita = UserFactory(username="rita")
    membership_set(user=rita, workspace=lab, roles=["annotator"])
    client.force_login(ann)
    assert "Deactivate rita" in client.get(reverse("people")).text
    asked = client.post(reverse("people-active", args=[rita.pk]), {"workspace": "lab-a", "active": "0"})
    assert asked.status_code == 200 and "Deactivate rita?" in asked.text and User.objects.get(pk=rita.pk).is_active
    client.post(reverse("people-active", args=[rita.pk]), {"workspace": "lab-a", "active": "0", "confirm": "1"})
    assert not User.objects.get(pk=rita.pk).is_active


def test_the_audit_stays_home(client, settings):
    lab_a, lab_b = Workspace.objects.create(slug="lab-a", name="A"), Workspace.objects.create(slug="lab-b", name="B")
    rita = UserFactory(username="rita", roles=["researcher"], roles__workspace=lab_a)
    rob = UserFactory(username="rob", roles=["researcher"], roles__workspace=lab_b)
    both = UserFactory(username="both", roles=["researcher"], roles__workspace=lab_a)
    membership_set(user=both, workspace=lab_b, roles=["researcher"])
    boss = UserFactory(username="boss")
    boss.is_superuser = True
    boss.save()
    from judging.answers.imports import answers_import  # noqa: F401 - the import path must exist

    DatasetFactory(name="data-of-b", workspace=lab_b)
    api_token_create(user=rob, name="rob-script")
    Client().post(reverse("login"), {"username": "rob", "password": "wrong"})
    Client().post(reverse("login"), {"username": "stranger-name", "password": "wrong"})
    from core.audit import audit_record

    audit_record(actor=rob, action="answers_imported", target="dataset:data-of-b", workspace=lab_b)
    audit_record(actor=rita, action="answers_imported", target="dataset:data-of-a", workspace=lab_a)

    def seen(person, **query) -> str:
        client.force_login(person)
        return client.get(reverse("core:audit"), query).text

    page = seen(rita)
    assert "data-of-a" in page and "data-of-b" not in page and "rob-script" not in page
    assert "rob" not in page.replace("rob-", "") and "stranger-name" not in page
    page = seen(rob)
    assert "data-of-b" in page and "rob-script" in page and "data-of-a" not in page and "stranger-name" not in page
    page = seen(boss)
    assert all(mark in page for mark in ("data-of-a", "data-of-b", "rob-script", "stranger-name"))
    # A person in both: both, and one at a time with the filter; 404 for a workspace not theirs.
    page = seen(both)
    assert "data-of-a" in page and "data-of-b" in page
    page = seen(both, workspace="lab-b")
    assert "data-of-b" in page and "data-of-a" not in page
    client.force_login(rita)
    assert client.get(reverse("core:audit"), {"workspace": "lab-b"}).status_code == 404
    # The export likewise.
    body = b"".join(client.get(reverse("api-export", args=["audit"]), {"format": "jsonl"}).streaming_content)
    assert b"data-of-a" in body and b"data-of-b" not in body and b"stranger-name" not in body


def test_a_revoked_token_is_refused_without_locking_its_address(settings):
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "api_token_failure": "3/hour"}
    person = UserFactory(username="scripted", roles=["researcher"])
    token, key = api_token_create(user=person, name="old script")
    _live, live_key = api_token_create(user=person, name="new script")
    api_token_revoke(user=person, token_id=token.pk)
    tombstone = ApiToken.objects.get(pk=token.pk)
    assert tombstone.revoked_at is not None and key not in str(ApiToken.objects.values().get(pk=token.pk))
    client = Client()
    for _ in range(10):
        refused = client.get(reverse("api-me"), headers={"Authorization": f"Token {key}"})
        assert refused.status_code == 401 and refused.json() == {"detail": "This token was revoked."}
    # The address is not locked: the live token still works.
    assert client.get(reverse("api-me"), headers={"Authorization": f"Token {live_key}"}).status_code == 200
    # Guesses still count: three wrong tokens, and the address waits.
    for _ in range(3):
        assert client.get(reverse("api-me"), headers={"Authorization": "Token ub_guess"}).status_code == 401
    assert client.get(reverse("api-me"), headers={"Authorization": f"Token {live_key}"}).status_code == 429


def test_a_token_may_expire():
    person = UserFactory(username="scripted", roles=["researcher"])
    token, key = api_token_create(user=person, name="short", expires_in_days=1)
    client = Client(headers={"Authorization": f"Token {key}"})
    assert client.get(reverse("api-me")).status_code == 200
    ApiToken.objects.filter(pk=token.pk).update(expires_at=token.created_at)
    refused = client.get(reverse("api-me"))
    assert refused.status_code == 401 and refused.json() == {"detail": "This token has expired."}


def test_a_one_workspace_token_script_works_unchanged():
    person = UserFactory(username="scripted", roles=["researcher"])
    DatasetFactory(name="mine")
    script = _api(person)
    listed = script.get(reverse("api-datasets"))
    assert listed.status_code == 200 and [row["name"] for row in listed.json()["results"]] == ["mine"]
    assert script.get(reverse("api-me")).json()["workspace"] is None


def test_the_api_works_in_the_workspace_its_header_names():
    lab_a, lab_b = Workspace.objects.create(slug="lab-a", name="A"), Workspace.objects.create(slug="lab-b", name="B")
    both = UserFactory(username="both", roles=["researcher"], roles__workspace=lab_a)
    membership_set(user=both, workspace=lab_b, roles=["researcher"])
    DatasetFactory(name="data-a", workspace=lab_a)
    DatasetFactory(name="data-b", workspace=lab_b)
    script = _api(both)

    def names(**headers) -> list[str]:
        response = script.get(reverse("api-datasets"), headers=headers)
        assert response.status_code == 200
        return sorted(row["name"] for row in response.json()["results"])

    assert names() == ["data-a", "data-b"]
    assert names(**{"X-Userbench-Workspace": "lab-b"}) == ["data-b"]
    assert sorted(r["name"] for r in script.get(reverse("api-datasets"), {"workspace": "lab-a"}).json()["results"]) == [
        "data-a"
    ]
    assert script.get(reverse("api-me"), headers={"X-Userbench-Workspace": "lab-a"}).json()["workspace"] == "lab-a"
    refused = script.get(reverse("api-datasets"), headers={"X-Userbench-Workspace": "default"})
    assert refused.status_code == 404 and refused.json() == {
        "detail": "No workspace 'default' of yours; yours: lab-a, lab-b."
    }


def test_the_switcher_is_a_post_and_a_form_stays_in_its_workspace(client):
    lab_a, lab_b = (
        Workspace.objects.create(slug="lab-a", name="Lab A"),
        Workspace.objects.create(slug="lab-b", name="Lab B"),
    )
    both = UserFactory(username="both", roles=["researcher"], roles__workspace=lab_a)
    membership_set(user=both, workspace=lab_b, roles=["researcher"])
    StudyFactory = __import__("tests.factories", fromlist=["StudyFactory"]).StudyFactory
    StudyFactory(slug="study-a", workspace=lab_a)
    StudyFactory(slug="study-b", workspace=lab_b)
    client.force_login(both)
    page = client.get(reverse("dashboard")).text
    assert 'data-testid="workspace-switch"' in page and "study-a" in page and "study-b" in page
    assert client.get(reverse("workspace-switch"), {"workspace": "lab-b"}).status_code == 405
    assert client.post(reverse("workspace-switch"), {"workspace": "lab-b", "next": "/dashboard/"}).status_code == 302
    page = client.get(reverse("dashboard")).text
    assert "Workspace: Lab B (lab-b)" in page and "study-b" in page and "study-a" not in page
    # A form opened in lab-b has no workspace choice, carries lab-b, and makes the study there.
    form = client.get(reverse("curation:study-new")).text
    assert '<select name="workspace"' not in form and 'name="drawn_workspace" value="lab-b"' in form
    # Sent after switching to lab-a (in another tab, say): refused, nothing made anywhere.
    client.post(reverse("workspace-switch"), {"workspace": "lab-a", "next": "/dashboard/"})
    response = client.post(reverse("curation:study-new"), {"drawn_workspace": "lab-b", "slug": "late", "title_en": "L"})
    assert response.status_code == 400 and "You switched workspace" in response.text
    assert not Study.objects.filter(slug="late").exists()
    # The other site or tab cannot switch: no CSRF token, no switch.
    csrf_client = Client(enforce_csrf_checks=True)
    csrf_client.force_login(both)
    assert csrf_client.post(reverse("workspace-switch"), {"workspace": "lab-b"}).status_code == 403
    # Back to all: no current workspace.
    client.post(reverse("workspace-switch"), {"workspace": "", "next": "/dashboard/"})
    page = client.get(reverse("dashboard")).text
    assert "study-a" in page and "study-b" in page
    assert not Dataset.objects.exists()


def test_the_admin_is_for_superusers_only(client):
    staff = UserFactory(username="staff")
    staff.is_staff = True
    staff.save()
    client.force_login(staff)
    assert client.get("/admin/").status_code == 302
    boss = UserFactory(username="boss")
    boss.is_staff = boss.is_superuser = True
    boss.save()
    client.force_login(boss)
    assert client.get("/admin/").status_code == 200


def test_an_invitation_names_the_workspace_it_joins(client):
    from home.services import invitation_create

    lab = Workspace.objects.create(slug="lab-a", name="Lab A")
    ann = UserFactory(username="ann")
    membership_set(user=ann, workspace=lab, roles=["researcher"], admin=True)
    _invitation, token = invitation_create(roles=["annotator"], actor=ann, workspace=lab)
    page = client.get(reverse("invitation-accept"), {"token": token}).text
    assert "You join the workspace Lab A (lab-a)." in page


# What each team names `pilot`, made through its pages and its API token (tests below).
URS_ITEMS = (
    "question,reference_ans,user_intent,language\nWhat is 2+2?,4.,Factual_QA,EN\nName a colour.,Red.,Factual_QA,EN\n"
)
PILOT_ENDPOINT = {"name": "pilot", "api_key_env": "", "default_model": "m", "max_retries": "1"}
PILOT_STUDY = {
    "slug": "pilot", "title_en": "pilot", "min_cases": "1", "max_cases": "2", "intents": ["factual_qa"],
    "attention_answer": "2", "completion_code": "C1", "screenout_code": "S1", "is_open": "on",
    "services_text": "ChatGPT", "age_groups_text": "18-30",
}  # fmt: skip
FREE_SLUG = re.compile(r"pilot-[a-z2-9]{6}")


def _answers(*lines: str):
    upload = io.BytesIO("".join(json.dumps({"question": q, "response": r}) + "\n" for q, r in lines).encode())
    upload.name = "answers.jsonl"
    return upload


def _pilots(page: Client, api: Client, slug: str, port: int) -> list:
    """Team `slug` names an endpoint, a dataset, two candidate models, a template copy, a study and a
    campaign `pilot`, through its pages and API; returns everything it was told, a taken link's
    free proposal written as <free>, so that what two teams are told can be compared."""
    said: list = []
    endpoint = {**PILOT_ENDPOINT, "base_url": f"http://127.0.0.1:{port}/v1", "default_model": f"model-{slug}"}
    said.append(page.post(reverse("llm:endpoint-new"), endpoint).status_code)
    clash = page.post(reverse("llm:endpoint-new"), endpoint)
    said.append((clash.status_code, clash.context["form"].errors["name"]))
    imported = {
        "name": "pilot",
        "format": "urs",
        "description": slug,
        "file": SimpleUploadedFile("p.csv", URS_ITEMS.encode()),
    }
    said.append(page.post(reverse("curation:review-import"), imported).status_code)
    imported["file"] = SimpleUploadedFile("p.csv", URS_ITEMS.encode())
    clash = page.post(reverse("curation:review-import"), imported)
    said.append((clash.status_code, clash.context["form"].errors["name"]))
    for model in ("gpt-4o", "other"):
        file = _answers(("What is 2+2?", f"{slug} {model}"), ("Name a colour.", "Blue"))
        said.append(api.post(reverse("api-dataset-answers", args=["pilot"]), {"model": model, "file": file}).json())
    call_command("describe_model", "gpt-4o", "--family", f"family-{slug}", "--workspace", slug, stdout=io.StringIO())
    builtin = JudgeTemplate.objects.filter(workspace=None).order_by("name", "version").first()
    said.append(page.post(reverse("judging:template-copy", args=[builtin.pk])).status_code)
    # The study's link: /study/pilot/ is the first team's; the second is offered a free one.
    study = page.post(reverse("curation:study-new"), PILOT_STUDY)
    if study.status_code != 302:
        proposal = study.context["form"]["slug"].value()
        assert FREE_SLUG.fullmatch(proposal) and not Study.objects.filter(slug=proposal).exists()
        said.append(("study", [e.replace(proposal, "<free>") for e in study.context["form"].errors["slug"]]))
        study = page.post(reverse("curation:study-new"), {**PILOT_STUDY, "slug": proposal})
    said.append(study.status_code)
    clash = page.post(reverse("curation:study-new"), {**PILOT_STUDY, "slug": f"{slug}-2"})
    said.append(clash.context["form"].errors["title_en"])
    # The campaign's link likewise, through the API.
    campaign = {"slug": "pilot", "title": "pilot", "dataset": "pilot", "models": ["gpt-4o", "other"]}
    made = api.post(reverse("api-campaigns"), campaign, content_type="application/json")
    if made.status_code == 400:
        proposal = made.json()["proposed_slug"]
        said.append(("campaign", made.json()["detail"].replace(proposal, "<free>")))
        made = api.post(reverse("api-campaigns"), {**campaign, "slug": proposal}, content_type="application/json")
    said.append(made.status_code)
    clash = api.post(reverse("api-campaigns"), {**campaign, "slug": f"{slug}-2"}, content_type="application/json")
    said.append((clash.status_code, clash.json()))
    return said


@pytest.mark.parametrize("first", ["lab-a", "lab-b"])
def test_each_team_names_its_own_pilot_and_uses_only_its_own(first, settings):
    settings.TASKS = {
        "default": {"BACKEND": "django.tasks.backends.dummy.DummyBackend", "QUEUES": ["default", "judging"]}
    }
    settings.LLM_ALLOWED_INTERNAL_HOSTS = ["127.0.0.1"]
    teams = {slug: Workspace.objects.create(slug=slug, name=slug.upper()) for slug in ("lab-a", "lab-b")}
    people = {
        slug: UserFactory(username=f"r-{slug}", roles=["researcher", "annotator"], roles__workspace=teams[slug])
        for slug in teams
    }
    pages = {slug: Client() for slug in teams}
    for slug, client in pages.items():
        client.force_login(people[slug])
    apis = {slug: _api(person) for slug, person in people.items()}
    ports = {"lab-a": 9001, "lab-b": 9002}
    second = "lab-b" if first == "lab-a" else "lab-a"
    said = {slug: _pilots(pages[slug], apis[slug], slug, ports[slug]) for slug in (first, second)}

    # The second team was told what the first was, bar the free link it was offered.
    offered = [entry for entry in said[second] if isinstance(entry, tuple) and entry[0] in ("study", "campaign")]
    assert [entry for entry in said[second] if entry not in offered] == said[first]
    assert offered == [
        ("study", ["The link name 'pilot' is taken. <free> is free: keep it or choose another."]),
        ("campaign", "The link name 'pilot' is taken. <free> is free: keep it or choose another."),
    ]
    # A clash in one's own workspace is named as such, the same for both teams.
    assert said[first][1] == (400, ["An endpoint named 'pilot' exists already in this workspace; choose another name."])
    assert said[first][3] == (400, ["A dataset named 'pilot' exists already in this workspace; choose another name."])
    assert said[first][-3] == ["A study titled 'pilot' exists already in this workspace; choose another title."]
    assert said[first][-1] == (
        400,
        {"detail": "A campaign titled 'pilot' exists already in this workspace; choose another title."},
    )
    # A taken link in one's own workspace gets the very words another team's gets.
    own = (
        apis[first]
        .post(
            reverse("api-campaigns"),
            {"slug": "pilot", "title": "pilot again", "dataset": "pilot", "models": ["gpt-4o", "other"]},
            content_type="application/json",
        )
        .json()
    )
    assert own["detail"].replace(own["proposed_slug"], "<free>") == offered[1][1]

    # Each team's pilot is its own object; each name resolves in its own workspace.
    for slug, team in teams.items():
        mine = {"workspace": team}
        assert Endpoint.objects.get(name="pilot", **mine).base_url == f"http://127.0.0.1:{ports[slug]}/v1"
        assert Dataset.objects.get(name="pilot", **mine).description == slug
        assert CandidateModel.objects.get(name="gpt-4o", **mine).family == f"family-{slug}"
        assert Study.objects.get(title_en="pilot", **mine) and Campaign.objects.get(title="pilot", **mine)
        assert JudgeTemplate.objects.filter(**mine).count() == 1
        listed = apis[slug].get(reverse("api-datasets")).json()["results"]
        assert [(row["name"], row["description"]) for row in listed] == [("pilot", slug)]
        mine = Answer.objects.filter(item__dataset__workspace=team, model__name="gpt-4o")
        assert {a.text for a in mine} == {f"{slug} gpt-4o", "Blue"} and {a.model.workspace for a in mine} == {team}
        assert "lab-" not in pages[slug].get(reverse("llm:endpoints")).text.replace(slug, "")
    assert Campaign.objects.get(slug="pilot").workspace.slug == first
    assert Study.objects.get(slug="pilot").workspace.slug == first

    # Using `pilot`: a run of team A takes A's dataset, models and endpoint; its manifest names A's URL.
    body = {"dataset": "pilot", "mode": "pointwise", "judge_model": "j", "models": ["gpt-4o"], "endpoint": "pilot"}
    started = apis["lab-a"].post(reverse("api-runs"), body, content_type="application/json")
    assert started.status_code == 201, started.json()
    run = JudgeRun.objects.get(pk=started.json()["id"])
    assert (run.workspace, run.dataset.workspace, run.endpoint.workspace) == (teams["lab-a"],) * 3
    assert {m.workspace for m in run.candidates.all()} == {teams["lab-a"]}
    manifest = apis["lab-a"].get(reverse("api-run-manifest", args=[run.pk])).json()
    assert manifest["endpoint"] == {"name": "pilot", "base_url": "http://127.0.0.1:9001/v1"}
    # A generation, a curation step and a command take `pilot` in the dataset's workspace too.
    generations = reverse("api-dataset-generations", args=["pilot"])
    generated = apis["lab-a"].post(generations, {"model": "gen", "endpoint": "pilot"}, content_type="application/json")
    assert AnswerGeneration.objects.get(pk=generated.json()["id"]).endpoint.workspace == teams["lab-a"]
    for slug, team in teams.items():
        assert curation_model_for(kind="reference", endpoint_name="pilot", workspace_id=team.pk) == f"model-{slug}"
        assert endpoint_config("pilot", workspace_id=team.pk).base_url == f"http://127.0.0.1:{ports[slug]}/v1"
    with pytest.raises(EndpointError, match=r"'pilot' is used in several workspaces \(lab-a, lab-b\)"):
        endpoint_config("pilot")
    # Changing `pilot`: A's deletion of its gpt-4o answers and archiving of its dataset leave B's.
    answers_of = lambda api, **headers: api.get(  # noqa: E731
        reverse("api-model-answers", args=["pilot", "gpt-4o"]), headers=headers
    )
    assert apis["lab-a"].delete(reverse("api-dataset-answers", args=["pilot"]) + "?model=gpt-4o").status_code == 204
    assert answers_of(apis["lab-a"]).status_code == 404 and answers_of(apis["lab-b"]).json()["answers"] == 2
    # A's pilot is not archived while A's run, generation and campaign use it; the refusal names
    # them, and nothing of B's (B's campaign on B's pilot).
    archive = reverse("api-dataset-archive", args=["pilot"])
    refused = apis["lab-a"].post(archive)
    assert refused.status_code == 400
    detail = refused.json()["detail"]
    campaign_of = {slug: Campaign.objects.get(workspace=team, title="pilot").slug for slug, team in teams.items()}
    named = detail.split(": ", 1)[1].split(". ", 1)[0].split(", ")
    assert named == [f"run #{run.pk}", "the generation of gen's answers", f"campaign {campaign_of['lab-a']}"]
    assert Dataset.objects.get(workspace=teams["lab-a"], name="pilot").archived_at is None
    cancel = reverse("api-dataset-generation-cancel", args=["pilot", generated.json()["id"]])
    assert apis["lab-a"].post(cancel).status_code == 200
    assert apis["lab-a"].post(reverse("api-run-cancel", args=[run.pk])).status_code == 200
    assert apis["lab-a"].post(reverse("api-run-archive", args=[run.pk])).status_code == 200
    assert apis["lab-a"].post(reverse("api-campaign-archive", args=[campaign_of["lab-a"]])).status_code == 200
    assert apis["lab-a"].post(archive).status_code == 200
    assert Dataset.objects.get(workspace=teams["lab-b"], name="pilot").archived_at is None
    assert apis["lab-b"].get(reverse("api-run-detail", args=[run.pk])).status_code == 404
    # A person in both teams works in one at a time: `pilot` asks which until one is named.
    membership_set(user=people["lab-a"], workspace=teams["lab-b"], roles=["researcher"])
    both = _api(people["lab-a"])
    ambiguous = both.get(reverse("api-dataset-answers", args=["pilot"]))
    assert ambiguous.status_code == 400 and "more than one of your workspaces" in ambiguous.json()["detail"]
    assert answers_of(both, **{"X-Userbench-Workspace": "lab-b"}).json()["answers"] == 2
    assert answers_of(both, **{"X-Userbench-Workspace": "lab-a"}).status_code == 404


def test_a_participant_link_ending_in_a_hyphen_gets_a_random_end(client):
    client.force_login(UserFactory(username="rita", roles=["researcher"]))
    made = client.post(reverse("curation:study-new"), {**PILOT_STUDY, "slug": "pilot-"})
    study = Study.objects.get()
    assert FREE_SLUG.fullmatch(study.slug) and made["Location"] == reverse("curation:study-detail", args=[study.slug])
    again = client.post(reverse("curation:study-new"), {**PILOT_STUDY, "slug": "pilot-", "title_en": "Second"})
    assert again.status_code == 302 and len({s.slug for s in Study.objects.all()}) == 2
    client.cookies["django_language"] = "zh-hans"
    assert "以连字符结尾（如 pilot-）" in client.get(reverse("curation:study-new")).text
