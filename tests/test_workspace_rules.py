"""Who may change what inside workspaces: people and roles on /people/, where an endpoint sends its
key, and the audit entries every such change leaves (readable on /audit/, in English and Chinese)."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from core.models import AuditEvent, Membership, Workspace, WorkspaceInvitation
from core.roles import roles_of
from core.workspaces import default_workspace_id, membership_set
from home.models import Invitation
from llm.models import Endpoint
from tests.factories import UserFactory
from tests.judging.fake_llm import FakeLLM

pytestmark = pytest.mark.django_db
User = get_user_model()


@pytest.fixture
def default():
    return Workspace.objects.get(pk=default_workspace_id())


@pytest.fixture
def admin(default):
    person = UserFactory(username="ada", roles=["researcher"])
    membership_set(user=person, workspace=default, roles=["researcher"], admin=True)
    return person


def _roles_post(client, person, roles, **extra):
    return client.post(reverse("people-roles", args=[person.pk]), {f"p{person.pk}-roles": roles, **extra}, follow=True)


def test_a_researcher_who_is_no_admin_changes_no_roles_and_deactivates_no_one(client, researcher, reviewer):
    client.force_login(researcher)
    response = _roles_post(client, reviewer, ["researcher"])
    assert "Only an admin of workspace default changes its members and their roles." in response.text
    assert roles_of(User.objects.get(pk=reviewer.pk)) == {"reviewer"}
    response = client.post(reverse("people-active", args=[reviewer.pk]), {"active": "0", "confirm": "1"}, follow=True)
    assert User.objects.get(pk=reviewer.pk).is_active
    response = client.post(
        reverse("people-account-new"),
        {"account-username": "x1", "account-password1": "kettle-w-42!", "account-password2": "kettle-w-42!"},
    )
    assert response.status_code == 400 and not User.objects.filter(username="x1").exists()
    response = client.post(reverse("people-invitation-new"), {"invite-roles": ["researcher"], "invite-days": "7"})
    assert response.status_code == 400 and Invitation.objects.count() == 0
    page = client.get(reverse("people")).text
    assert "Only its admins change its members" in page and "Save roles" not in page


def test_an_admin_changes_roles_and_the_admin_flag_audited(client, admin, reviewer, default):
    client.force_login(admin)
    response = _roles_post(client, reviewer, ["reviewer", "annotator"], **{f"p{reviewer.pk}-admin_shown": "1"})
    assert "Roles of rev: " in response.text
    _roles_post(client, reviewer, ["reviewer"], **{f"p{reviewer.pk}-admin_shown": "1", f"p{reviewer.pk}-admin": "on"})
    assert Membership.objects.get(user=reviewer).admin
    entries = list(AuditEvent.objects.filter(action="people_changed").order_by("id"))
    assert [(e.actor_name, e.target, e.workspace, e.details) for e in entries] == [
        ("ada", "user:rev", default, {"change": "roles changed", "roles": [["reviewer"], ["annotator", "reviewer"]]}),
        (
            "ada",
            "user:rev",
            default,
            {"change": "roles changed", "roles": [["annotator", "reviewer"], ["reviewer"]], "admin": [False, True]},
        ),
    ]
    page = client.get(reverse("core:audit")).text
    assert "Changed an account or its roles" in page and "annotator, reviewer → reviewer" in page
    assert "workspace admin: no → yes" in page
    client.cookies["django_language"] = "zh-hans"
    page = client.get(reverse("core:audit")).text
    assert "更改了账户或其角色" in page and "角色已更改" in page and "否 → 是" in page


def test_nobody_demotes_or_deactivates_someone_with_more_rights(client, admin, default):
    staff = UserFactory(username="sam", roles=["researcher"], is_staff=True)
    boss = UserFactory(username="boss", roles=["researcher"], is_superuser=True)
    client.force_login(admin)
    response = _roles_post(client, staff, [])
    assert "sam has more rights than you (a staff account); ask a superuser." in response.text
    response = client.post(reverse("people-active", args=[staff.pk]), {"active": "0", "confirm": "1"}, follow=True)
    assert "sam has more rights than you" in response.text
    response = client.post(reverse("people-active", args=[boss.pk]), {"active": "0", "confirm": "1"}, follow=True)
    assert "boss is a superuser; manage that account in the admin." in response.text
    assert User.objects.get(pk=staff.pk).is_active and User.objects.get(pk=boss.pk).is_active
    assert roles_of(User.objects.get(pk=staff.pk)) == {"researcher"}
    response = _roles_post(client, admin, ["researcher"], **{f"p{admin.pk}-admin_shown": "1"})
    assert "You cannot stop being an admin yourself" in response.text and Membership.objects.get(user=admin).admin


def test_an_admin_of_one_workspace_cannot_deactivate_a_member_of_another(client, admin, default):
    other = Workspace.objects.create(slug="other", name="Other")
    shared = UserFactory(username="shared", roles=["annotator"])
    membership_set(user=shared, workspace=other, roles=["annotator"])
    client.force_login(admin)
    response = client.post(reverse("people-active", args=[shared.pk]), {"active": "0", "confirm": "1"}, follow=True)
    assert "also a member of workspaces you do not administer (other)" in response.text
    assert User.objects.get(pk=shared.pk).is_active
    # Nor reach the other workspace's page, or its members through it.
    # (a workspace is chosen with the header's switcher, a POST; the query string no longer chooses)
    page = client.get(reverse("people"), {"workspace": "other"})
    assert page.status_code == 200 and "Members of the workspace Default (default)" in page.text
    response = client.post(
        reverse("people-roles", args=[shared.pk]), {"workspace": "other", f"p{shared.pk}-roles": ["researcher"]}
    )
    assert response.status_code == 404 and roles_of(User.objects.get(pk=shared.pk)) == {"annotator"}


def test_an_invitation_lands_in_its_workspace(client, admin):
    other = Workspace.objects.create(slug="lab-b", name="Lab B")
    membership_set(user=admin, workspace=other, roles=["researcher"], admin=True)
    client.force_login(admin)
    page = client.post(
        reverse("people-invitation-new"),
        {"workspace": "lab-b", "invite-roles": ["reviewer"], "invite-days": "7"},
    ).text
    token = page.split('value="http://testserver/invite/?token=')[1].split('"')[0]
    assert WorkspaceInvitation.objects.get().workspace == other
    client.logout()
    client.post(
        f"{reverse('invitation-accept')}?token={token}",
        {"username": "newcomer", "password1": "kettle-window-42", "password2": "kettle-window-42"},
    )
    newcomer = User.objects.get(username="newcomer")
    assert [(m.workspace.slug, m.role_names()) for m in Membership.objects.filter(user=newcomer)] == [
        ("lab-b", ["reviewer"])
    ]
    entry = AuditEvent.objects.filter(action="invitation_changed").order_by("id").last()
    assert (entry.workspace, entry.details["change"]) == (other, "used")


ENDPOINT = {
    "name": "lab",
    "base_url": "http://127.0.0.1:8080/v1",
    "api_key_env": "",
    "default_model": "m",
    "max_in_flight": "4",
    "requests_per_minute": "",
    "timeout_seconds": "30",
    "max_retries": "2",
    "input_price_per_million": "",
    "output_price_per_million": "",
}


def test_changing_where_an_endpoint_sends_its_key_needs_a_workspace_admin(client, researcher, admin, default):
    endpoint = Endpoint.objects.create(
        name="lab",
        base_url="http://127.0.0.1:8080/v1",
        api_key_env="",
        default_model="m",
        max_in_flight=4,
        timeout_seconds=30,
        max_retries=2,
    )
    client.force_login(researcher)
    for field, value in (("base_url", "https://collector.example/v1"), ("api_key_env", "FAKE_LLM_KEY")):
        response = client.post(reverse("llm:endpoint-edit", args=[endpoint.pk]), {**ENDPOINT, field: value})
        assert response.status_code == 400
        assert "Only an admin of workspace default may change where endpoint lab sends its key" in response.text
    endpoint.refresh_from_db()
    assert (endpoint.base_url, endpoint.api_key_env) == ("http://127.0.0.1:8080/v1", "")
    # Other settings stay a researcher's to change.
    response = client.post(reverse("llm:endpoint-edit", args=[endpoint.pk]), {**ENDPOINT, "max_in_flight": "8"})
    assert response.status_code == 302
    client.force_login(admin)
    client.post(
        reverse("llm:endpoint-edit", args=[endpoint.pk]),
        {**ENDPOINT, "max_in_flight": "8", "base_url": "http://127.0.0.1:9090/v1"},
    )
    endpoint.refresh_from_db()
    assert endpoint.base_url == "http://127.0.0.1:9090/v1"
    entries = [
        (e.actor_name, e.workspace, e.details)
        for e in AuditEvent.objects.filter(action="endpoint_changed").order_by("id")
    ]
    assert entries == [
        ("res", default, {"created": False, "changes": {"max_in_flight": [4, 8]}}),
        (
            "ada",
            default,
            {"created": False, "changes": {"base_url": ["http://127.0.0.1:8080/v1", "http://127.0.0.1:9090/v1"]}},
        ),
    ]
    page = client.get(reverse("core:audit")).text
    assert "base_url" in page and "http://127.0.0.1:8080/v1 → http://127.0.0.1:9090/v1" in page


def _input(page: str, name: str) -> str:
    """The <input> tag of field `name` on the page."""
    return re.search(rf'<input[^>]*name="{name}"[^>]*>', page).group(0)


def test_the_endpoint_page_offers_where_the_key_goes_only_to_a_workspace_admin(client, researcher, admin):
    endpoint = Endpoint.objects.create(
        name="lab", base_url="http://127.0.0.1:8080/v1", api_key_env="VLLM_KEY", default_model="m", max_in_flight=4
    )
    url = reverse("llm:endpoint-edit", args=[endpoint.pk])
    client.force_login(researcher)
    page = client.get(url).text
    for name in ("base_url", "api_key_env"):
        assert " disabled" in _input(page, name), _input(page, name)
    assert page.count("Only an admin of workspace default changes this.") == 2
    assert " disabled" not in _input(page, "max_in_flight")
    # Saved as a browser sends the page (no read-only field): the other settings change, not those.
    drawn = {**ENDPOINT, "max_in_flight": "8"}
    del drawn["base_url"], drawn["api_key_env"]
    assert client.post(url, drawn).status_code == 302
    endpoint.refresh_from_db()
    assert (endpoint.max_in_flight, endpoint.base_url, endpoint.api_key_env) == (
        8,
        "http://127.0.0.1:8080/v1",
        "VLLM_KEY",
    )
    # A post that sends them anyway is refused, and changes nothing.
    forged = client.post(url, {**drawn, "max_in_flight": "2", "base_url": "https://collector.example/v1"})
    assert forged.status_code == 400 and "Only an admin of workspace default may change where" in forged.text
    endpoint.refresh_from_db()
    assert (endpoint.max_in_flight, endpoint.base_url) == (8, "http://127.0.0.1:8080/v1")
    # The workspace's admin edits them.
    client.force_login(admin)
    page = client.get(url).text
    assert " disabled" not in _input(page, "base_url") and " disabled" not in _input(page, "api_key_env")
    assert "Only an admin of workspace default changes this." not in page
    # In Chinese too.
    client.force_login(researcher)
    client.cookies["django_language"] = "zh-hans"
    page = client.get(url).text
    assert "Only an admin" not in page and page.count("只有工作区 default 的管理员才能更改此项。") == 2


def test_a_new_endpoint_goes_to_the_researchers_workspace_and_is_audited(client, default):
    lab = Workspace.objects.create(slug="lab-c", name="Lab C")
    person = UserFactory(username="carla", roles=["researcher"], roles__workspace=lab)
    client.force_login(person)
    assert client.post(reverse("llm:endpoint-new"), ENDPOINT).status_code == 302
    endpoint = Endpoint.objects.get(name="lab")
    assert endpoint.workspace == lab
    entry = AuditEvent.objects.get(action="endpoint_changed")
    assert (entry.workspace, entry.details["created"], entry.details["changes"]["base_url"]) == (
        lab,
        True,
        [None, "http://127.0.0.1:8080/v1"],
    )


def test_a_connection_test_is_audited_without_the_answer(client, researcher, default):
    server = FakeLLM(reply=lambda body: "OK secret-looking reply").start()
    try:
        Endpoint.objects.create(name="fake", base_url=server.base_url, default_model="tiny", max_retries=0)
        client.force_login(researcher)
        client.post(reverse("llm:endpoint-test"), {"endpoint": "fake", "model": ""})
    finally:
        server.stop()
    entry = AuditEvent.objects.get(action="endpoint_tested")
    assert (entry.actor_name, entry.target, entry.workspace, entry.details) == (
        "res",
        "endpoint:fake",
        default,
        {"model": "tiny", "ok": True},
    )


def test_the_audit_log_shows_each_workspace_its_own_entries(client, researcher, default):
    from core.audit import audit_record

    other = Workspace.objects.create(slug="elsewhere", name="Elsewhere")
    audit_record(actor=None, action="study_changed", target="study:mine", workspace=default)
    audit_record(actor=None, action="study_changed", target="study:theirs", workspace=other)
    audit_record(actor=None, action="login_failed", target="login", details={"username": "x"})
    client.force_login(researcher)
    page = client.get(reverse("core:audit")).text
    assert "study:mine" in page and "login" in page and "study:theirs" not in page
    exported = b"".join(client.get(reverse("api-export", args=["audit"])).streaming_content).decode()
    assert "study:mine" in exported and "study:theirs" not in exported


def test_study_changes_record_the_values_before_and_after(client, researcher, default):
    from curation.studies.services import study_save

    study = study_save(values={"slug": "s9", "title_en": "Nine", "max_cases": 6, "is_open": False}, user=researcher)
    assert study.workspace == default
    study_save(values={"title_en": "Nine, renamed", "max_cases": 7}, study=study, user=researcher)
    entry = AuditEvent.objects.filter(action="study_changed").order_by("id").last()
    assert entry.workspace == default
    assert entry.details["changes"] == {"max_cases": [6, 7], "title_en": ["Nine", "Nine, renamed"]}


def test_commands_take_the_workspace_by_slug(tmp_path, default):
    import io
    import json

    from django.core.management import CommandError, call_command

    from curation.models import Dataset
    from tests.factories import ItemFactory, VoteFactory

    line = {"question_id": 1, "category": "数学计算", "subcategory": "x", "question": "1+1", "reference": "2"}
    path = tmp_path / "ab.jsonl"
    path.write_text(json.dumps(line, ensure_ascii=False) + "\n", encoding="utf-8")
    # One workspace: nothing to name.
    call_command("import_dataset", str(path), "--format", "alignbench", "--name", "one", stdout=io.StringIO())
    assert Dataset.objects.get(name="one").workspace == default
    beta = Workspace.objects.create(slug="beta", name="Beta")
    with pytest.raises(CommandError, match="Name the workspace with --workspace, one of: beta, default."):
        call_command("import_dataset", str(path), "--format", "alignbench", "--name", "two", stdout=io.StringIO())
    with pytest.raises(CommandError, match="No workspace 'gamma'; known: beta, default."):
        call_command("import_dataset", str(path), "--format", "alignbench", "--name", "two", "--workspace", "gamma")
    call_command(
        "import_dataset", str(path), "--format", "alignbench", "--name", "two", "--workspace", "beta",
        stdout=io.StringIO(),
    )  # fmt: skip
    assert Dataset.objects.get(name="two").workspace == beta

    VoteFactory(item=ItemFactory(dataset=Dataset.objects.get(name="one")), annotator_label="in-default")
    out = io.StringIO()
    call_command("export", "--what", "votes", "--workspace", "beta", stdout=out)
    assert "in-default" not in out.getvalue()
    out = io.StringIO()
    call_command("export", "--what", "votes", stdout=out)
    assert "in-default" in out.getvalue()  # the operator, naming no workspace, reads every one
    # A name is looked up in the workspace named: another workspace's dataset is unknown there.
    with pytest.raises(CommandError, match="No dataset named 'one'."):
        call_command("export", "--what", "items", "--dataset", "one", "--workspace", "beta", stdout=io.StringIO())
