"""Roles decide where people go and what they may open; no page leaks data to the wrong role."""

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

STAFF_PAGES = {
    "dashboard": "researcher",
    "curation:review": "reviewer",
    "annotation:index": "annotator",
}


@pytest.mark.parametrize("url_name", [*STAFF_PAGES, "home"])
def test_anonymous_people_are_sent_to_log_in(client, url_name):
    url = reverse(url_name)
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('login')}?next={url}"


@pytest.mark.parametrize("url_name,role", STAFF_PAGES.items())
def test_each_page_opens_for_its_role_only(client, url_name, role):
    for other in {"researcher", "reviewer", "annotator"} - {role}:
        client.force_login(UserFactory(username=f"only-{other}", roles=[other]))
        response = client.get(reverse(url_name))
        assert response.status_code == 403, (url_name, other)
        assert b"Not allowed" in response.content
    client.force_login(UserFactory(username=f"only-{role}", roles=[role]))
    assert client.get(reverse(url_name)).status_code == 200


@pytest.mark.parametrize("role,target", [(role, page) for page, role in STAFF_PAGES.items()])
def test_home_sends_a_single_role_to_its_work(client, role, target):
    client.force_login(UserFactory(username="single", roles=[role]))
    response = client.get(reverse("home"))
    assert response.status_code == 302
    assert response["Location"] == reverse(target)


def test_home_offers_a_choice_to_people_with_several_roles(client):
    client.force_login(UserFactory(username="both", roles=["reviewer", "annotator"]))
    response = client.get(reverse("home"))
    assert response.status_code == 200
    assert response.content.count(b'class="card"') == 2
    assert reverse("curation:review").encode() in response.content
    assert reverse("annotation:index").encode() in response.content
    assert reverse("dashboard").encode() not in response.content


def test_home_tells_a_person_without_role_what_to_do(client):
    client.force_login(UserFactory(username="nobody"))
    response = client.get(reverse("home"))
    assert response.status_code == 200
    assert b"Your account has no role yet" in response.content


def test_inactive_people_hold_no_role(client):
    user = UserFactory(username="gone", roles=["researcher"])
    user.is_active = False
    user.save()
    client.force_login(user)
    assert client.get(reverse("dashboard")).status_code == 302


def test_log_in_and_log_out(client):
    UserFactory(username="res", roles=["researcher"])
    response = client.post(reverse("login"), {"username": "res", "password": "pw-for-tests"})
    assert response.status_code == 302 and response["Location"] == reverse("home")
    assert client.get(reverse("dashboard")).status_code == 200
    response = client.post(reverse("logout"))
    assert response.status_code == 302
    assert client.get(reverse("dashboard")).status_code == 302


def test_wrong_password_is_refused_with_a_message(client):
    UserFactory(username="res", roles=["researcher"])
    response = client.post(reverse("login"), {"username": "res", "password": "wrong"})
    assert response.status_code == 200
    assert b"Please enter a correct username and password" in response.content


API_LISTS = ["api-studies", "api-datasets", "api-runs", "api-campaigns", "api-endpoints"]


@pytest.mark.parametrize("url_name", API_LISTS + ["api-me", "api-root"])
def test_api_refuses_anonymous_people(client, url_name):
    response = client.get(reverse(url_name))
    assert response.status_code in {401, 403}
    assert "results" not in response.json()


@pytest.mark.parametrize("url_name", API_LISTS)
def test_api_lists_are_for_researchers(client, url_name):
    for role in ("reviewer", "annotator"):
        client.force_login(UserFactory(username=f"api-{role}", roles=[role]))
        response = client.get(reverse(url_name))
        assert response.status_code == 403
        assert response.json() == {"detail": "This needs the role: researcher."}
    client.force_login(UserFactory(username="api-res", roles=["researcher"]))
    response = client.get(reverse(url_name))
    assert response.status_code == 200
    assert response.json()["count"] == 0


def test_api_accepts_a_token(client):
    user = UserFactory(username="scripted", roles=["researcher", "annotator"])
    token = Token.objects.create(user=user)
    response = client.get(reverse("api-me"), headers={"Authorization": f"Token {token.key}"})
    assert response.status_code == 200
    assert response.json() == {
        "username": "scripted",
        "roles": ["annotator", "researcher"],
        "superuser": False,
        "workspace": None,
        "workspaces": [{"slug": "default", "name": "Default", "roles": ["annotator", "researcher"], "admin": False}],
    }
    assert client.get(reverse("api-me"), headers={"Authorization": "Token not-a-token"}).status_code == 401


def test_a_session_user_arrives_with_roles_and_a_revoked_role_counts_at_once(client, django_assert_num_queries):
    from core.auth import RoleLoadingBackend
    from core.roles import roles_of
    from core.workspaces import membership_set

    person = UserFactory(username="two-roles", roles=["researcher", "annotator"])
    backend = RoleLoadingBackend()
    with django_assert_num_queries(1):
        loaded = backend.get_user(person.pk)
        assert roles_of(loaded) == {"researcher", "annotator"}
        assert loaded.username == "two-roles" and loaded.check_password("pw-for-tests")
    client.force_login(person)
    assert client.get(reverse("dashboard")).status_code == 200
    membership_set(user=person, roles=["annotator"])
    assert client.get(reverse("dashboard")).status_code == 403
    assert roles_of(backend.get_user(person.pk)) == {"annotator"}
    assert backend.get_user(10**9) is None
    person.is_active = False
    person.save()
    assert backend.get_user(person.pk) is None
    assert client.get(reverse("annotation:index")).status_code == 302


def test_a_superuser_holds_every_role_without_joining_a_group(client):
    boss = UserFactory(username="boss")
    boss.is_superuser = boss.is_staff = True
    boss.save()
    assert boss.groups.count() == 0 and not boss.memberships.exists()
    client.force_login(boss)
    for url_name in STAFF_PAGES:
        assert client.get(reverse(url_name)).status_code == 200, url_name
    assert client.get(reverse("api-me")).json() == {
        "username": "boss",
        "roles": ["annotator", "researcher", "reviewer"],
        "superuser": True,
        "workspace": None,
        # Every workspace, as their admin, without a membership.
        "workspaces": [{"slug": "default", "name": "Default", "roles": [], "admin": True}],
    }
    boss.is_superuser = False
    boss.save()
    # Now in no workspace: an empty dashboard, and no other staff page.
    assert 'data-testid="no-workspace"' in client.get(reverse("dashboard")).text
    assert client.get(reverse("curation:review")).status_code == 403
