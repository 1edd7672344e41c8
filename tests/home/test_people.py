"""/people/: a researcher (not a superuser) creates accounts, invites people with one-time links,
assigns and removes roles and deactivates accounts, without the admin."""

import hashlib
import logging
import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import timezone

from core.roles import roles_of
from core.workspaces import membership_set
from home.models import Invitation
from home.services import PeopleError, invitation_accept, invitation_create
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
User = get_user_model()


def accept_url(token: str) -> str:
    return f"{reverse('invitation-accept')}?token={token}"


@pytest.fixture(autouse=True)
def researcher_administers_the_workspace(researcher):
    """The researcher of these tests administers the default workspace: only an admin changes
    members and roles (tests/test_workspaces.py checks that others cannot)."""
    membership_set(user=researcher, roles=["researcher"], admin=True)
    return researcher


def link_token(page: str) -> str:
    return re.search(r'value="http://testserver/invite/\?token=([^"&]+)"', page).group(1)


def test_people_pages_are_for_researchers_only(client, client_as, reviewer, annotator):
    for url in (reverse("people"),):
        assert client.get(url).status_code == 302
        assert client_as(reviewer).get(url).status_code == 403
    client = client_as(annotator)
    assert client.post(reverse("people-account-new"), {"account-username": "x"}).status_code == 403
    assert client.post(reverse("people-invitation-new"), {"invite-roles": ["researcher"]}).status_code == 403
    assert (
        client.post(
            reverse("people-roles", args=[annotator.pk]), {f"p{annotator.pk}-roles": ["researcher"]}
        ).status_code
        == 403
    )
    assert roles_of(User.objects.get(pk=annotator.pk)) == {"annotator"}
    assert Invitation.objects.count() == 0


def test_researcher_creates_an_account_with_roles(client_as, researcher, caplog):
    client = client_as(researcher)
    data = {
        "account-username": "rita",
        "account-password1": "kettle-window-42",
        "account-password2": "kettle-window-42",
        "account-roles": ["reviewer", "annotator"],
    }
    with caplog.at_level(logging.INFO, logger="userbench.changes"):
        response = client.post(reverse("people-account-new"), data, follow=True)
    assert "Account rita created." in response.text
    rita = User.objects.get(username="rita")
    assert rita.check_password("kettle-window-42") and roles_of(rita) == {"reviewer", "annotator"}
    assert "people: rita created by res {'roles': ['annotator', 'reviewer']}" in caplog.text
    assert "kettle-window-42" not in caplog.text


@pytest.mark.parametrize(
    "changes,field,message",
    [
        ({"account-password2": "different-99"}, "password2", "The two password fields didn’t match."),
        (
            {"account-password1": "12345678", "account-password2": "12345678"},
            "password2",
            "This password is entirely numeric.",
        ),
        ({"account-username": "RES"}, "username", "A user with that username already exists."),
        ({"account-username": "bad name!"}, "username", "Enter a valid username."),
    ],
)
def test_bad_account_input_is_refused_beside_the_field(client_as, researcher, changes, field, message):
    data = {
        "account-username": "newbie",
        "account-password1": "kettle-window-42",
        "account-password2": "kettle-window-42",
        "account-roles": ["annotator"],
        **changes,
    }
    response = client_as(researcher).post(reverse("people-account-new"), data)
    assert response.status_code == 400
    start = response.text.index(f'id="id_account-{field}_error"')
    assert message in response.text[start : start + 300]
    assert User.objects.count() == 1


def test_invitation_link_works_once_and_stores_only_a_hash(client, client_as, researcher):
    page = (
        client_as(researcher)
        .post(
            reverse("people-invitation-new"),
            {"invite-roles": ["annotator"], "invite-note": "batch 2", "invite-days": "7"},
        )
        .text
    )
    token = link_token(page)
    invitation = Invitation.objects.get()
    assert invitation.token_hash == hashlib.sha256(token.encode()).hexdigest()
    assert token not in str(Invitation.objects.values().get())
    assert (invitation.roles, invitation.note, invitation.created_by) == (["annotator"], "batch 2", researcher)
    assert timedelta(days=6, hours=23) < invitation.expires_at - timezone.now() <= timedelta(days=7)
    assert "it is shown only this once" in page

    client.logout()
    url = accept_url(token)
    page = client.get(url).text
    assert "You are invited to Userbench as: Annotator." in page
    response = client.post(url, {"username": "ann2", "password1": "short", "password2": "short"})
    assert response.status_code == 400 and "This password is too short." in response.text
    response = client.post(url, {"username": "ann2", "password1": "kettle-window-42", "password2": "kettle-window-42"})
    assert response["Location"] == reverse("home")
    person = User.objects.get(username="ann2")
    assert roles_of(person) == {"annotator"} and person.check_password("kettle-window-42")
    assert client.get(reverse("annotation:index")).status_code == 200  # signed in as the new annotator
    invitation.refresh_from_db()
    assert (invitation.used_by, invitation.state()) == (person, "used")

    client.logout()
    again = client.post(url, {"username": "ann3", "password1": "kettle-window-42", "password2": "kettle-window-42"})
    assert again.status_code == 410 and "It was used already" in again.text
    assert not User.objects.filter(username="ann3").exists()
    assert client.get(accept_url("not-a-token")).status_code == 404


def test_expired_and_withdrawn_invitations_refuse(client, client_as, researcher):
    invitation, token = invitation_create(roles=["reviewer"], days=1, actor=researcher)
    Invitation.objects.filter(pk=invitation.pk).update(
        created_at=timezone.now() - timedelta(days=2), expires_at=timezone.now() - timedelta(seconds=1)
    )
    response = client.get(accept_url(token))
    assert response.status_code == 410 and "It has expired." in response.text
    with pytest.raises(PeopleError, match="cannot be used"):
        invitation_accept(token=token, username="late", password="kettle-window-42")

    second, token = invitation_create(roles=["reviewer"], actor=researcher)
    response = client_as(researcher).post(reverse("people-invitation-withdraw", args=[second.pk]), follow=True)
    assert "its link no longer works" in response.text
    client.logout()
    assert "It was withdrawn." in client.get(accept_url(token)).text
    assert User.objects.count() == 1


@pytest.mark.parametrize(
    "data,message",
    [
        ({"invite-days": "7"}, "This field is required."),
        ({"invite-roles": ["annotator"], "invite-days": "31"}, "Ensure this value is less than or equal to 30."),
    ],
)
def test_bad_invitations_are_refused(client_as, researcher, data, message):
    response = client_as(researcher).post(reverse("people-invitation-new"), data)
    assert response.status_code == 400 and message in response.text
    assert Invitation.objects.count() == 0


def test_roles_are_assigned_and_removed_and_accounts_deactivated(client, client_as, researcher):
    rev = UserFactory(username="rev2", roles=["reviewer"])
    admin = client_as(researcher)
    response = admin.post(reverse("people-roles", args=[rev.pk]), {f"p{rev.pk}-roles": ["annotator"]}, follow=True)
    assert "Roles of rev2: Annotator." in response.text
    assert roles_of(User.objects.get(pk=rev.pk)) == {"annotator"}
    admin.post(reverse("people-roles", args=[rev.pk]), {})
    assert roles_of(User.objects.get(pk=rev.pk)) == set()

    admin.post(reverse("people-active", args=[rev.pk]), {"active": "0", "confirm": "1"})
    assert User.objects.get(pk=rev.pk).is_active is False
    client.logout()
    assert not client.login(username="rev2", password="pw-for-tests")
    admin = client_as(researcher)
    admin.post(reverse("people-active", args=[rev.pk]), {"active": "1"})
    assert client.login(username="rev2", password="pw-for-tests")


def test_a_researcher_cannot_lock_themselves_out_or_touch_a_superuser(client_as, researcher):
    client = client_as(researcher)
    response = client.post(
        reverse("people-roles", args=[researcher.pk]), {f"p{researcher.pk}-roles": ["reviewer"]}, follow=True
    )
    assert "You cannot take the researcher role from yourself" in response.text
    response = client.post(reverse("people-active", args=[researcher.pk]), {"active": "0", "confirm": "1"}, follow=True)
    assert "You cannot deactivate your own account." in response.text
    boss = UserFactory(username="boss", roles=["researcher"])
    boss.is_superuser = True
    boss.save()
    response = client.post(reverse("people-active", args=[boss.pk]), {"active": "0", "confirm": "1"}, follow=True)
    assert "boss is a superuser; manage that account in the admin." in response.text
    assert User.objects.get(pk=boss.pk).is_active and roles_of(User.objects.get(pk=researcher.pk)) == {"researcher"}


def test_two_people_using_one_invitation_make_one_account(researcher):
    _invitation, token = invitation_create(roles=["annotator"], actor=researcher)
    invitation_accept(token=token, username="first", password="kettle-window-42")
    with pytest.raises(PeopleError):
        invitation_accept(token=token, username="second", password="kettle-window-42")
    assert User.objects.filter(username__in=["first", "second"]).count() == 1


def test_people_page_speaks_chinese(client_as, researcher):
    client = client_as(researcher)
    client.cookies["django_language"] = "zh-hans"
    page = client.get(reverse("people")).text
    assert "<h1>人员</h1>" in page and "制作邀请链接" in page
    assert "用户名:" not in page  # no ASCII colon after a Chinese label
