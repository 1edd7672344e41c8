"""Two teams set up and staffed without the admin, by a superuser and two workspace admins: once
entirely through the API, once entirely through the pages. Neither team reaches the other (404 or
403, nothing changed); the audit stays home; the current workspace is chosen by a POST (pages) or
a header (API); revoked tokens are tombstones; the admin is for superusers."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from core.models import ApiToken, AuditEvent, Membership, Workspace
from core.tokens import api_token_create, api_token_revoke
from core.workspaces import membership_set
from curation.models import Dataset, Study
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
