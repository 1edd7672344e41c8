"""A person's API tokens through the API: made with an expiry (or none), listed, revoked. An
expired token is answered 401 without counting as a guess against its address; a token made with
a token that expires cannot outlive it; bad input is named and makes nothing."""

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from core.models import ApiToken
from core.tokens import api_token_create
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _token_client(key: str) -> Client:
    return Client(headers={"Authorization": f"Token {key}"})


def test_a_token_made_through_the_api_expires_when_asked_and_is_shown_once(client_as):
    person = UserFactory(username="scripted", roles=["researcher"])
    made = client_as(person).post(
        reverse("api-tokens"), {"name": "nightly", "expires_in_days": 30}, content_type="application/json"
    )
    assert made.status_code == 201
    body = made.json()
    key = body["token"]
    row = ApiToken.objects.get()
    assert (body["name"], body["prefix"], row.user) == ("nightly", key[:8], person)
    assert timedelta(days=29, hours=23) < row.expires_at - timezone.now() <= timedelta(days=30)
    assert key not in str(ApiToken.objects.values().get())  # only its hash is kept
    script = _token_client(key)
    assert script.get(reverse("api-me")).json()["username"] == "scripted"
    listed = script.get(reverse("api-tokens")).json()
    assert [entry["name"] for entry in listed] == ["nightly"] and "token" not in listed[0]
    forever = client_as(person).post(reverse("api-tokens"), {"name": "server"}, content_type="application/json")
    assert forever.status_code == 201 and forever.json()["expires_at"] is None


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "t", "expires_in_days": 0}, "expires_in_days"),
        ({"name": "t", "expires_in_days": 367}, "expires_in_days"),
        ({"name": "t", "expires_in_days": "soon"}, "expires_in_days"),
        ({"name": "", "expires_in_days": 3}, "name"),
        ({"name": "x" * 101}, "name"),
    ],
)
def test_bad_input_is_named_and_makes_nothing(client_as, body, field):
    person = UserFactory(username="scripted", roles=["researcher"])
    refused = client_as(person).post(reverse("api-tokens"), body, content_type="application/json")
    assert refused.status_code == 400 and field in refused.json()
    assert not ApiToken.objects.exists()


def test_an_expired_token_is_refused_without_locking_its_address(settings):
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "api_token_failure": "3/hour"}
    person = UserFactory(username="scripted", roles=["researcher"])
    old, old_key = api_token_create(user=person, name="old script", expires_in_days=1)
    _live, live_key = api_token_create(user=person, name="new script")
    ApiToken.objects.filter(pk=old.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    client = Client()
    for _ in range(10):
        refused = client.get(reverse("api-me"), headers={"Authorization": f"Token {old_key}"})
        assert refused.status_code == 401 and refused.json() == {"detail": "This token has expired."}
    assert client.get(reverse("api-me"), headers={"Authorization": f"Token {live_key}"}).status_code == 200
    for _ in range(3):
        assert client.get(reverse("api-me"), headers={"Authorization": "Token ub_guess"}).status_code == 401
    assert client.get(reverse("api-me"), headers={"Authorization": f"Token {live_key}"}).status_code == 429


def test_a_token_that_expires_makes_none_that_outlives_it():
    person = UserFactory(username="scripted", roles=["researcher"])
    _short, key = api_token_create(user=person, name="short", expires_in_days=7)
    script = _token_client(key)
    for body in ({"name": "forever"}, {"name": "longer", "expires_in_days": 8}):
        refused = script.post(reverse("api-tokens"), body, content_type="application/json")
        assert refused.status_code == 400 and "expires no later" in refused.json()["detail"]
    assert ApiToken.objects.count() == 1
    assert script.post(reverse("api-tokens"), {"name": "shorter", "expires_in_days": 6}).status_code == 201


def test_a_token_is_revoked_by_its_owner_only():
    owner, other = UserFactory(username="owner"), UserFactory(username="other")
    token, key = api_token_create(user=owner, name="laptop")
    _theirs, their_key = api_token_create(user=other, name="theirs")
    assert _token_client(their_key).delete(reverse("api-token", args=[token.pk])).status_code == 404
    assert _token_client(key).get(reverse("api-me")).status_code == 200
    assert _token_client(key).delete(reverse("api-token", args=[token.pk])).status_code == 204
    refused = _token_client(key).get(reverse("api-me"))
    assert refused.status_code == 401 and refused.json() == {"detail": "This token was revoked."}
    assert ApiToken.objects.get(pk=token.pk).revoked_at is not None
