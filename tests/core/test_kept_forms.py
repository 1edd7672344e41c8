"""A staff form sent after the session ended keeps what was typed across the log-in: the fields
come back into the page's form (core/kept_forms.py, static/js/kept_form.js), nothing is saved
for the person; a form refused by the CSRF check shows what was typed below, to copy."""

import json
import re

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from core.kept_forms import SESSION_KEY
from curation.models import Study
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
CONSENT = ("I agree to take part in this study. " * 42)[:1480]


def kept_on(page: str):
    found = re.search(r'<script id="kept-form" type="application/json">(.*?)</script>', page, re.S)
    return json.loads(found.group(1)) if found else None


def study_form(**changes):
    data = {"csrfmiddlewaretoken": "x", "slug": "consent-test", "title_en": "Consent test", "consent_en": CONSENT}
    data.update(changes)
    return data


def test_a_study_form_sent_after_the_session_ended_is_filled_in_again_after_logging_in(client):
    UserFactory(username="res", roles=["researcher"])
    new = reverse("curation:study-new")
    response = client.post(new, study_form(), headers={"referer": f"http://testserver{new}"})
    assert response.status_code == 302 and response["Location"] == f"{reverse('login')}?next={new}"
    assert not Study.objects.exists()

    logged_in = client.post(response["Location"], {"username": "res", "password": "pw-for-tests"})
    assert logged_in["Location"] == new
    page = client.get(new).text
    kept = kept_on(page)
    assert kept["action"] == new
    assert ["consent_en", CONSENT] in kept["fields"] and len(CONSENT) == 1480
    assert "csrfmiddlewaretoken" not in {name for name, _value in kept["fields"]}
    assert "You were logged out before this form was sent" in page and "js/kept_form.js" in page
    assert not Study.objects.exists()  # only filled in, never sent for them
    assert kept_on(client.get(new).text) is None  # shown once


def test_a_form_posted_to_an_action_url_comes_back_on_the_page_that_holds_it(client):
    UserFactory(username="res", roles=["researcher"])
    study = Study.objects.create(slug="s1", title_en="S1")
    detail = reverse("curation:study-detail", args=[study.slug])
    withdraw = reverse("curation:study-withdraw", args=[study.slug])
    response = client.post(
        withdraw, {"prolific_pid": "P-123", "password": "secret"}, headers={"referer": f"http://testserver{detail}"}
    )
    assert response["Location"] == f"{reverse('login')}?next={detail}"
    client.post(reverse("login"), {"username": "res", "password": "pw-for-tests"})
    kept = kept_on(client.get(detail).text)
    assert kept == {"fields": [["prolific_pid", "P-123"]], "action": withdraw}


def test_a_referer_from_another_site_is_not_where_the_person_goes_back(client):
    new = reverse("curation:study-new")
    response = client.post(new, study_form(), headers={"referer": "https://elsewhere.example/studies/new/"})
    assert response["Location"] == f"{reverse('login')}?next={new}"
    assert list(client.session[SESSION_KEY]) == [new]


@pytest.mark.parametrize("language,heading", [("en", "What you typed"), ("zh-hans", "您输入的内容")])
def test_a_form_refused_by_the_csrf_check_shows_the_text_below_and_keeps_nothing(language, heading):
    person = UserFactory(username="res", roles=["researcher"])
    client = Client(enforce_csrf_checks=True)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
    client.force_login(person)
    new = reverse("curation:study-new")
    client.get(new)
    response = client.post(
        new, study_form(csrfmiddlewaretoken="stale" * 8), headers={"referer": f"http://testserver{new}"}
    )
    assert response.status_code == 403
    assert heading in response.text and CONSENT in response.text and "stale" not in response.text
    assert SESSION_KEY not in client.session
