"""Limits on guessing and flooding: log-in lockout (django-axes), API throttles, and rate and size
limits on the anonymous questionnaire; abandoned submissions expire. No address is stored."""

import io
from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.apps import apps
from django.core.management import CommandError, call_command
from django.db import models
from django.urls import reverse
from django.utils import timezone

from core.models import AuditEvent
from curation.models import Case, Submission
from tests.curation.study_helpers import Participant, case_data, small_study  # noqa: F401
from tests.factories import CaseFactory, SubmissionFactory, UserFactory

pytestmark = pytest.mark.django_db

ADDRESS = "198.51.100.7"


@pytest.fixture
def axes_on(settings):
    settings.AXES_ENABLED = True
    return settings


def log_in(client, username, password, address=ADDRESS, path="login"):
    return client.post(reverse(path), {"username": username, "password": password}, REMOTE_ADDR=address)


def test_five_wrong_passwords_lock_the_account_even_for_the_right_one(client, axes_on):
    UserFactory(username="alice")
    for _ in range(4):
        assert log_in(client, "alice", "guess").status_code == 200
    assert log_in(client, "alice", "guess").status_code == 429  # the fifth failure locks
    locked = log_in(client, "alice", "pw-for-tests")
    assert locked.status_code == 429
    assert "Log-in locked for a while" in locked.text and "Try again in 15 minutes." in locked.text
    assert "_auth_user_id" not in client.session
    assert AuditEvent.objects.filter(action="login_failed", actor_name="alice").count() == 6


def test_a_stranger_cannot_lock_the_owner_out_from_another_address(client, axes_on):
    """Five wrong passwords from address A lock the name for A only: the owner at B logs in."""
    UserFactory(username="alice")
    for _ in range(5):
        log_in(client, "alice", "guess", address="203.0.113.66")
    assert log_in(client, "alice", "pw-for-tests", address="203.0.113.66").status_code == 429
    owner = log_in(client, "alice", "pw-for-tests", address="198.51.100.20")
    assert owner.status_code == 302 and client.session["_auth_user_id"]


def test_one_address_guessing_across_names_meets_a_looser_limit(client, axes_on):
    axes_on.LOGIN_ADDRESS_FAILURE_LIMIT = 8
    UserFactory(username="alice")
    for n in range(8):  # four names, two guesses each: no name reaches its five
        assert log_in(client, f"name{n % 4}", "guess", address="203.0.113.66").status_code == 200
    locked = log_in(client, "alice", "pw-for-tests", address="203.0.113.66")
    assert locked.status_code == 429 and "Log-in locked for a while" in locked.text
    assert log_in(client, "alice", "pw-for-tests", address="198.51.100.20").status_code == 302


def test_the_lock_lifts_after_the_cool_off_and_a_success_resets_the_count(client, axes_on):
    UserFactory(username="alice")
    for _ in range(5):
        log_in(client, "alice", "guess")
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))
    response = log_in(client, "alice", "pw-for-tests")
    assert response.status_code == 302 and client.session["_auth_user_id"]
    assert AccessAttempt.objects.count() == 0


def test_the_admin_log_in_is_locked_the_same_way(client, axes_on):
    UserFactory(username="boss", is_staff=True, is_superuser=True)
    for _ in range(5):
        log_in(client, "boss", "guess", path="admin:login")
    assert log_in(client, "boss", "pw-for-tests", path="admin:login").status_code == 429


def test_failed_log_ins_keep_no_address_anywhere(client, axes_on):
    UserFactory(username="alice")
    for _ in range(3):
        log_in(client, "alice", "guess")
    attempt = AccessAttempt.objects.get()
    assert attempt.ip_address.startswith("2001:db8:") and attempt.username == "alice"
    assert "guess" not in attempt.post_data
    kinds = (models.CharField, models.TextField, models.JSONField, models.GenericIPAddressField)
    for model in apps.get_models():
        fields = [field.attname for field in model._meta.concrete_fields if isinstance(field, kinds)]
        if fields:
            assert ADDRESS not in str(list(model.objects.values_list(*fields))), model


def test_the_anonymous_api_throttle_fires(client, settings):
    """Every API route needs a log-in, and DRF checks permissions before throttles: the
    anonymous limit never fired, and a client could probe the API without end."""
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "api_anon": "3/min"}
    statuses = [client.get(reverse("api-me"), REMOTE_ADDR=ADDRESS).status_code for _ in range(4)]
    assert statuses == [401, 401, 401, 429]
    assert int(client.get(reverse("api-runs"), REMOTE_ADDR=ADDRESS)["Retry-After"]) > 0
    assert client.get(reverse("api-me"), REMOTE_ADDR="203.0.113.5").status_code == 401


def test_failed_token_authentications_are_throttled_per_address(client, researcher, settings):
    from rest_framework.authtoken.models import Token

    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "api_token_failure": "3/hour"}
    token = Token.objects.create(user=researcher)

    def with_token(key, address=ADDRESS):
        return client.get(reverse("api-me"), HTTP_AUTHORIZATION=f"Token {key}", REMOTE_ADDR=address).status_code

    assert [with_token(f"guess{n}") for n in range(3)] == [401, 401, 401]
    # Past the limit, even the right token is refused from that address: guessing is not told apart.
    assert with_token("guess3") == 429 and with_token(token.key) == 429
    assert with_token(token.key, address="203.0.113.5") == 200
    # Good tokens never count.
    assert [with_token(token.key, address="203.0.113.6") for _ in range(5)] == [200] * 5


def test_the_api_throttles_each_account(client, researcher, settings):
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "api_user": "3/min"}
    client.force_login(researcher)
    statuses = [client.get(reverse("api-me")).status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    other = UserFactory(username="other", roles=["researcher"])
    client.force_login(other)
    assert client.get(reverse("api-me")).status_code == 200


# ---------------------------------------------------------------- the anonymous questionnaire


def test_new_submissions_from_one_client_are_limited(client, small_study, settings):
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "study_start": "2/hour"}
    for _ in range(2):
        client.cookies.clear()
        assert client.post("/study/small/", {"agree": "on"}, REMOTE_ADDR=ADDRESS).status_code == 302
    client.cookies.clear()
    refused = client.post("/study/small/", {"agree": "on"}, REMOTE_ADDR=ADDRESS)
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert "Too many requests" in refused.text
    assert Submission.objects.count() == 2
    # Another participant (another address) is not held back.
    assert client.post("/study/small/", {"agree": "on"}, REMOTE_ADDR="203.0.113.5").status_code == 302
    assert Submission.objects.count() == 3


def test_questionnaire_writes_are_limited_per_client(client, small_study, settings):
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "study_write": "3/min"}
    person = Participant(client, small_study)
    person.consent()
    statuses = [client.post(person.url("cases"), case_data()).status_code for _ in range(4)]
    assert statuses == [302, 302, 302, 429]
    assert Case.objects.count() == 3


def test_resume_link_guessing_is_limited(client, small_study, settings):
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "study_resume": "2/min"}
    statuses = [client.get("/study/small/resume/", {"token": f"guess-{n}"}).status_code for n in range(3)]
    assert statuses == [404, 404, 429]


def test_an_oversized_post_is_refused_before_it_is_read(client, small_study, settings):
    settings.STUDY_MAX_REQUEST_BYTES = 10_000
    person = Participant(client, small_study)
    person.consent()
    response = client.post(person.url("cases"), case_data(conversation="Question: x\nAnswer: " + "y" * 20_000))
    assert response.status_code == 413 and "Too much text at once" in response.text
    assert Case.objects.count() == 0
    huge = client.post("/study/small/", {"agree": "on", "padding": "z" * 20_000})
    assert huge.status_code == 413


def test_drafts_keep_only_the_pages_fields_within_their_caps(client, small_study):
    person = Participant(client, small_study)
    person.consent()
    client.post(
        person.url("cases"),
        {
            **case_data(conversation="Question: q\nAnswer: a"),
            "_language": "en",
            "evil": "x" * 1000,
            "conversation_2": "y",
        },
    )
    client.post(person.url("about"), {"occupation": "N" * 5000, "junk": "z", "_language": "en"})
    drafts = Submission.objects.get().drafts
    assert set(drafts["case-new"]) == {
        "service",
        "service_other",
        "conversation",
        "share_link",
        "intent",
        "intent_other",
    }
    # Cut at twice the field's limit (an over-long paste survives a language switch to be reported), junk dropped.
    assert drafts["about"] == {"occupation": ["N" * 400]}
    # A page that does not exist keeps no draft (case-99 is past the study's maximum of 3).
    client.post(person.url("case-edit", 99), {"conversation": "x", "_language": "en"})
    assert "case-99" not in Submission.objects.get().drafts


def test_all_drafts_together_have_a_cap(client, small_study):
    small_study.max_cases = 10
    small_study.save()
    person = Participant(client, small_study)
    person.consent()
    person.add_cases(6)
    long_text = "Question: " + "q" * 19_500 + "\nAnswer: a"
    for position in range(1, 7):
        client.post(person.url("case-edit", position), case_data(conversation=long_text, _language="en"))
    # Five drafts of about 19,600 characters fit in 100,000; the sixth would not.
    assert sorted(Submission.objects.get().drafts) == ["case-1", "case-2", "case-3", "case-4", "case-5"]


# ---------------------------------------------------------------- abandoned submissions


def test_abandoned_submissions_expire_and_finished_ones_stay(small_study, settings):
    settings.STUDY_ABANDONED_AFTER_DAYS = 30
    old = timezone.now() - timedelta(days=31)
    abandoned = SubmissionFactory(
        study=small_study, status="in_progress", last_activity_at=old, drafts={"case-new": {"conversation": ["half"]}}
    )
    CaseFactory(submission=abandoned, position=1)
    recent = SubmissionFactory(study=small_study, status="in_progress", last_activity_at=timezone.now())
    finished = SubmissionFactory(study=small_study, status="submitted", last_activity_at=old)
    out = io.StringIO()
    call_command("expire_submissions", stdout=out)
    assert out.getvalue().strip() == "Erased 1 unfinished submission(s) idle for more than 30 days."
    assert sorted(Submission.objects.values_list("pk", flat=True)) == sorted([recent.pk, finished.pk])
    assert Case.objects.count() == 0
    event = AuditEvent.objects.get(action="submissions_expired")
    assert event.details == {"count": 1, "idle_days": 30.0, "studies": {"small": 1}} and event.actor is None
    assert event.workspace == small_study.workspace
    call_command("expire_submissions", "--days", "0.5", stdout=io.StringIO())
    assert Submission.objects.count() == 2  # the recent one was active minutes ago
    with pytest.raises(CommandError, match="--days must be more than 0."):
        call_command("expire_submissions", "--days", "0", stdout=io.StringIO())


def test_every_write_of_the_participant_moves_the_last_activity(client, small_study):
    person = Participant(client, small_study)
    person.consent()
    Submission.objects.update(last_activity_at=timezone.now() - timedelta(days=10))
    person.add_cases(1)
    assert Submission.objects.get().last_activity_at > timezone.now() - timedelta(minutes=1)
