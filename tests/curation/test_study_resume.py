"""Resume links cannot move a participant's browser onto someone else's submission unawares.

The attack: a page on another site sends a participant's browser to the attacker's own resume
link. Before, the browser was silently moved onto the attacker's submission, and the attacker read
the next case the participant typed. Now a cross-site navigation, or any link when this browser
already holds a submission of the study, gets a page saying what will happen, and binds only
when the person confirms with a POST. Binding rotates the session key; the questionnaire's pages
are never stored by a browser or proxy cache."""

import pytest
from django.test import Client

from curation.models import Case, Submission
from tests.curation.study_helpers import Participant, small_study  # noqa: F401

pytestmark = pytest.mark.django_db

RESUME = "/study/small/resume/"


@pytest.fixture
def attacker(small_study):
    """Someone who started a submission of their own and holds its private link."""
    person = Participant(Client(), small_study)
    person.consent()
    person.add_cases(1, conversation="Question: bait\nAnswer: bait")
    return Submission.objects.get()


@pytest.fixture
def victim(small_study, attacker):
    person = Participant(Client(), small_study)
    person.consent()
    person.add_cases(1, conversation="Question: my own question\nAnswer: mine")
    return person


def held(client) -> int | None:
    return client.session.get("study_submissions", {}).get("small")


def test_a_cross_site_redirect_does_not_move_a_browser_onto_another_submission(victim, attacker):
    own = held(victim.client)
    page = victim.client.get(RESUME, {"token": attacker.resume_token}, HTTP_SEC_FETCH_SITE="cross-site")
    assert page.status_code == 200
    assert "Continue a questionnaire?" in page.text
    assert "with 1 case reported so far" in page.text
    assert "This browser is already filling in another questionnaire of this study (1 case)." in page.text
    assert f'name="token" value="{attacker.resume_token}"' in page.text
    assert held(victim.client) == own
    # The participant types their next case: it goes to their own submission, never the attacker's.
    victim.add_cases(1, conversation="Question: secret\nAnswer: x")
    assert not Case.objects.filter(submission=attacker, conversation__contains="secret").exists()


def test_a_link_from_this_site_still_asks_when_the_browser_holds_another_submission(victim, attacker):
    own = held(victim.client)
    for site in ("none", "same-origin"):
        page = victim.client.get(RESUME, {"token": attacker.resume_token}, HTTP_SEC_FETCH_SITE=site)
        assert page.status_code == 200 and "Continue a questionnaire?" in page.text
    assert held(victim.client) == own


@pytest.mark.parametrize(
    "headers",
    [
        {"HTTP_SEC_FETCH_SITE": "cross-site"},
        {"HTTP_SEC_FETCH_SITE": "same-site"},
        {"HTTP_REFERER": "https://evil.example/page"},
        {},  # an old browser that says nothing: treated as cross-site
    ],
)
def test_a_fresh_browser_sent_from_elsewhere_is_asked_too(small_study, attacker, headers):
    browser = Client()
    page = browser.get(RESUME, {"token": attacker.resume_token}, **headers)
    assert page.status_code == 200 and "Continue a questionnaire?" in page.text
    assert "This browser is already filling in" not in page.text
    assert held(browser) is None
    assert browser.get("/study/small/cases/")["Location"] == "/study/small/"


def test_confirming_binds_and_rotates_the_session_key(victim, attacker):
    before = victim.client.session.session_key
    response = victim.client.post(RESUME, {"token": attacker.resume_token, "confirm": "yes"})
    assert response["Location"] == "/study/small/cases/"
    assert held(victim.client) == attacker.pk
    assert victim.client.session.session_key != before


def test_a_post_without_confirm_or_from_another_site_binds_nothing(victim, attacker):
    own = held(victim.client)
    page = victim.client.post(RESUME, {"token": attacker.resume_token})
    assert page.status_code == 200 and "Continue a questionnaire?" in page.text
    assert held(victim.client) == own
    # A form on another site cannot post without this site's CSRF token.
    guarded = Client(enforce_csrf_checks=True)
    guarded.cookies = victim.client.cookies
    refused = guarded.post(RESUME, {"token": attacker.resume_token, "confirm": "yes"})
    assert refused.status_code == 403
    assert held(victim.client) == own


def test_a_link_opened_by_the_person_in_a_fresh_browser_binds_at_once_with_a_new_key(small_study, attacker):
    phone = Client()
    phone.get("/study/small/")  # a session exists before the link is opened
    phone.session.save()
    before = phone.cookies.get("sessionid").value if phone.cookies.get("sessionid") else None
    response = phone.get(RESUME, {"token": attacker.resume_token}, HTTP_SEC_FETCH_SITE="none")
    assert response["Location"] == "/study/small/cases/"
    assert held(phone) == attacker.pk
    assert phone.cookies["sessionid"].value != before
    # Without Sec-Fetch-Site, a Referer from this very site counts as a same-site navigation.
    other = Client()
    response = other.get(RESUME, {"token": attacker.resume_token}, HTTP_REFERER="http://testserver/study/small/")
    assert response["Location"] == "/study/small/cases/"


def test_consent_rotates_the_session_key(small_study):
    browser = Client()
    browser.get("/study/small/")
    browser.session.save()
    planted = browser.session.session_key
    Participant(browser, small_study).consent()
    assert browser.session.session_key != planted
    assert held(browser) == Submission.objects.get().pk


def test_questionnaire_pages_are_never_cached(victim, attacker):
    client = victim.client
    for path in ("/study/small/", "/study/small/cases/", "/study/small/cases/1/", "/study/small/about/"):
        response = client.get(path, follow=True)
        assert "no-store" in response["Cache-Control"], path
    confirm = client.get(RESUME, {"token": attacker.resume_token}, HTTP_SEC_FETCH_SITE="cross-site")
    assert "no-store" in confirm["Cache-Control"]
