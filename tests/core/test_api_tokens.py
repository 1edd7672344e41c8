"""/account/tokens/: anyone signed in makes (shown once), names, lists and revokes their own API
tokens; only a hash is stored; the API takes them as `Authorization: Token <token>`; audited."""

import hashlib
import re

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.urls import reverse
from rest_framework.authtoken.models import Token

from core.models import ApiToken, AuditEvent
from core.tokens import api_token_create
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
PAGE = "/account/tokens/"


def made_token(response) -> str:
    return re.search(r'id="new-token" value="([^"]+)"', response.text).group(1)


@pytest.mark.parametrize("roles", [["annotator"], ["reviewer"], ["researcher"], []])
def test_anyone_signed_in_makes_a_token_shown_once_that_the_api_takes(client, roles):
    person = UserFactory(username="p", roles=roles)
    client.force_login(person)
    response = client.post(PAGE, {"name": "  nightly   export "})
    assert response.status_code == 200 and response["Cache-Control"] == "no-store"
    key = made_token(response)
    token = ApiToken.objects.get()
    # Only the hash is stored, never the token.
    assert token.key_hash == hashlib.sha256(key.encode()).hexdigest() and token.name == "nightly export"
    assert key not in str(ApiToken.objects.values().get()) and key not in str(AuditEvent.objects.values().get())
    assert key not in client.get(PAGE).text and "nightly export" in client.get(PAGE).text

    client.logout()
    me = client.get(reverse("api-me"), headers={"Authorization": f"Token {key}"})
    assert me.status_code == 200 and me.json()["username"] == "p"
    token.refresh_from_db()
    assert token.last_used_at is not None
    assert client.get(reverse("api-me"), headers={"Authorization": f"Token {key}x"}).status_code == 401


def test_a_token_is_revoked_by_its_owner_only_and_both_are_audited(client):
    owner, other = UserFactory(username="owner"), UserFactory(username="other")
    token, key = api_token_create(user=owner, name="laptop")
    client.force_login(other)
    assert "laptop" not in client.get(PAGE).text
    client.post(reverse("core:token-revoke", args=[token.pk]), {"confirm": "1"}, follow=True)
    assert ApiToken.objects.get(pk=token.pk).revoked_at is None

    client.force_login(owner)
    # The first step only asks; nothing is revoked until it is confirmed.
    asked = client.post(reverse("core:token-revoke", args=[token.pk]))
    assert asked.status_code == 200 and "Revoke the token “laptop”" in asked.text
    assert ApiToken.objects.get(pk=token.pk).revoked_at is None
    page = client.post(reverse("core:token-revoke", args=[token.pk]), {"confirm": "1"}, follow=True).text
    assert "Token “laptop” revoked" in page and ApiToken.objects.get(pk=token.pk).revoked_at is not None
    assert "laptop" not in client.get(PAGE).text
    client.logout()
    assert client.get(reverse("api-me"), headers={"Authorization": f"Token {key}"}).status_code == 401
    events = {(event.action, event.actor_name, event.details["name"]) for event in AuditEvent.objects.all()}
    assert events == {("token_created", "owner", "laptop"), ("token_revoked", "owner", "laptop")}


def test_a_token_needs_a_name(client):
    client.force_login(UserFactory(username="p"))
    response = client.post(PAGE, {"name": "   "})
    assert response.status_code == 400 and "Name the token" in response.text and not ApiToken.objects.exists()


def test_anonymous_people_go_to_the_log_in_page(client):
    response = client.get(PAGE)
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def test_a_token_made_in_the_admin_keeps_working_and_is_hashed_on_first_use(client):
    person = UserFactory(username="p")
    legacy = Token.objects.create(user=person)
    assert client.get(reverse("api-me"), headers={"Authorization": f"Token {legacy.key}"}).status_code == 200
    assert not Token.objects.exists()
    assert ApiToken.objects.get().key_hash == hashlib.sha256(legacy.key.encode()).hexdigest()
    assert client.get(reverse("api-me"), headers={"Authorization": f"Token {legacy.key}"}).status_code == 200


def test_an_inactive_persons_token_is_refused(client):
    person = UserFactory(username="p")
    _token, key = api_token_create(user=person, name="t")
    person.is_active = False
    person.save()
    assert client.get(reverse("api-me"), headers={"Authorization": f"Token {key}"}).status_code == 401


def test_the_menu_links_to_the_tokens_page(client):
    client.force_login(UserFactory(username="p", roles=["annotator"]))
    assert f'href="{PAGE}"' in client.get(reverse("home"), follow=True).text


@pytest.mark.django_db(transaction=True)
def test_the_migration_hashes_the_tokens_made_in_the_admin():
    # Back to just before core's token migration (nothing depends on it), not further: taking every
    # app back to core's first migration took minutes on a loaded machine, for the same check.
    executor = MigrationExecutor(connection)
    executor.migrate([("core", "0002_workspaces")])
    old = executor.loader.project_state(
        [("core", "0002_workspaces"), ("authtoken", "0004_alter_tokenproxy_options")]
    ).apps
    user = old.get_model("auth", "User").objects.create(username="script-owner")
    old.get_model("authtoken", "Token").objects.create(key="a" * 40, user=user)

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    token = ApiToken.objects.get()
    assert (token.user.username, token.key_hash, token.prefix) == (
        "script-owner",
        hashlib.sha256(b"a" * 40).hexdigest(),
        "aaaaaaaa",
    )
    assert not Token.objects.exists()


def test_the_tokens_page_speaks_chinese(client, settings):
    client.force_login(UserFactory(username="p"))
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    response = client.post(PAGE, {"name": "脚本"})
    assert all(words in response.text for words in ("API 令牌", "请现在复制", "复制令牌", "撤销")), response.text
