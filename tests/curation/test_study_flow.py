"""The participant's questionnaire through Django's test client: every page, error and path."""

import pytest
from django.conf import settings
from django.urls import reverse

from curation.models import Case, StudyStep, Submission
from tests.curation.study_helpers import Participant, case_data, participant, small_study, usage_data  # noqa: F401
from tests.factories import StudyFactory

pytestmark = pytest.mark.django_db

PROLIFIC = "?PROLIFIC_PID=pid-0001&STUDY_ID=st-42&SESSION_ID=se-7"


def test_lang_preselects_and_is_dropped_from_the_address(client, small_study):
    response = client.get(f"/study/small/{PROLIFIC}&lang=zh-hans")
    assert response.status_code == 302
    assert response["Location"] == f"/study/small/{PROLIFIC}"
    assert response.cookies[settings.LANGUAGE_COOKIE_NAME].value == "zh-hans"
    page = client.get(response["Location"]).text
    assert '<html lang="zh-hans">' in page
    assert "开始之前" in page and "一项研究" in page


def test_consent_starts_a_submission_with_the_prolific_ids(participant):
    response = participant.client.post("/study/small/" + PROLIFIC, {})
    assert response.status_code == 200
    assert "Please tick the box to agree before you start." in response.text
    assert Submission.objects.count() == 0

    response = participant.consent(PROLIFIC)
    assert response["Location"] == "/study/small/cases/"
    submission = Submission.objects.get()
    assert (submission.prolific_pid, submission.prolific_study_id, submission.prolific_session_id) == (
        "pid-0001", "st-42", "se-7",
    )  # fmt: skip
    assert submission.consented_at is not None
    assert submission.language == "en"
    assert submission.current_step == StudyStep.CASES


def test_case_errors_show_beside_the_field_and_keep_the_typed_text(participant):
    participant.consent()
    typed = "I asked about the weather and it told me it would rain."
    response = participant.client.post(participant.url("cases"), case_data(service="", conversation=typed))
    assert response.status_code == 200
    page = response.text
    assert '<ul class="errorlist" id="id_service_error"><li>This field is required.</li></ul>' in page
    assert (
        '<ul class="errorlist" id="id_conversation_error"><li>Please mark the turns: start with “Question:” '
        "and put “Answer:” before the reply.</li></ul>"
    ) in page
    assert 'aria-invalid="true"' in page
    assert typed in page
    assert Case.objects.count() == 0

    response = participant.client.post(
        participant.url("cases"), case_data(conversation="", share_link="", intent="other", service="Other")
    )
    errors = response.context["form"].errors
    assert errors == {
        "service_other": ["Please name the service you used."],
        "intent_other": ["Please describe your intent in a few words."],
        "conversation": ["Please paste the conversation or give a share link."],
    }


def test_case_errors_in_chinese(participant):
    participant.client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    participant.consent()
    response = participant.client.post(participant.url("cases"), case_data(conversation="x" * 20_001))
    assert response.context["form"].errors["conversation"] == [
        "“您的问题和助手的回答”共有 20,001 个字符，超过了 20,000 个字符的上限。请删减 1 个字符；您输入的内容都还在。"
    ]


def test_size_limits_have_clear_messages(participant):
    participant.consent()
    response = participant.client.post(
        participant.url("cases"),
        case_data(conversation="Question: a\nAnswer: " + "b" * 20_000, share_link="https://x.example/" + "a" * 500,
                  service="Other", service_other="s" * 101),
    )  # fmt: skip
    assert response.context["form"].errors == {
        "conversation": [
            "“Your question and the assistant's answer” has 20,020 characters, more than the 20,000 that fit. "
            "Please shorten it by 20 characters; everything you typed is still here."
        ],
        "share_link": [
            "“Or a share link to the conversation” has 518 characters, more than the 500 that fit. "
            "Please shorten it by 18 characters; everything you typed is still here."
        ],
        "service_other": [
            "“Service in your own words” has 101 characters, more than the 100 that fit. "
            "Please shorten it by 1 characters; everything you typed is still here."
        ],
    }
    assert Case.objects.count() == 0


def test_cases_are_added_edited_and_removed_keeping_positions(participant):
    participant.consent()
    participant.add_cases(1)
    participant.add_cases(
        1, service="Other", service_other="MyBot", conversation="", share_link="https://chat.example/s/1"
    )
    participant.add_cases(1, intent="other", intent_other="Planning a trip")
    # The maximum is three: the add form is gone and a fourth is refused.
    page = participant.client.get(participant.url("cases")).text
    assert "You have reported 3 cases, the most this study takes." in page
    assert 'name="conversation"' not in page
    response = participant.client.post(participant.url("cases"), case_data(), follow=True)
    assert "You have already reported 3 cases, the most this study takes." in response.text
    assert Case.objects.count() == 3

    response = participant.client.post(participant.url("case-edit", 2), case_data(service="Claude"))
    assert response.status_code == 302
    response = participant.client.post(participant.url("case-remove", 1), {"confirm": "yes"})
    assert response.status_code == 302
    rows = list(Case.objects.order_by("position").values_list("position", "service", "intent", "intent_other"))
    assert rows == [(1, "Claude", "factual_qa", ""), (2, "ChatGPT", "other", "Planning a trip")]


def test_continue_needs_the_minimum_and_saves_a_filled_form_first(participant):
    participant.consent()
    participant.add_cases(1)
    response = participant.client.post(participant.url("cases"), {"action": "continue"})
    assert response.status_code == 200
    assert "Please report at least 2 cases; you have 1 so far." in response.text
    # A second case typed but not yet saved is saved by Continue, then the next page opens.
    response = participant.client.post(participant.url("cases"), case_data(action="continue"))
    assert response["Location"] == "/study/small/about/"
    assert Case.objects.count() == 2
    # Pages ahead of the furthest reached send the participant back to it.
    assert participant.client.get(participant.url("review"))["Location"] == "/study/small/about/"


def test_about_you_accepts_prefer_not_to_say(participant):
    participant.consent()
    participant.add_cases(2)
    participant.client.post(participant.url("cases"), {"action": "continue"})
    response = participant.about(age_group="prefer_not_to_say", occupation="", occupation_declined="on", country="")
    assert response.status_code == 302
    submission = Submission.objects.get()
    assert (submission.age_group, submission.occupation, submission.country) == (
        "prefer_not_to_say", "prefer_not_to_say", "",
    )  # fmt: skip
    response = participant.about(age_group="99-100")
    assert "Select a valid choice. 99-100 is not one of the available choices." in response.text


def test_full_flow_redirects_to_prolific_with_the_completion_code(participant):
    participant.consent(PROLIFIC)
    participant.to_review()
    review = participant.client.get(participant.url("review")).text
    assert "Paris." in review and "Kenya" in review and "Dissatisfied" in review
    response = participant.submit()
    assert response.status_code == 302
    assert response["Location"] == "https://app.prolific.com/submissions/complete?cc=DONE123"
    submission = Submission.objects.get()
    assert submission.status == Submission.Status.SUBMITTED
    assert (submission.attention_passed, submission.excluded, submission.exclusion_reason) == (True, False, "")
    assert submission.usage == {
        "llms_used": ["ChatGPT", "Claude"],
        "frequency": "daily",
        "satisfaction": {"factual_qa": 4, "solve_professional_problem": 3, "text_assistant": 5,
                         "ask_for_advice": 0, "seek_creativity": 2, "leisure": 1},
        "attention_check": 2,
    }  # fmt: skip
    page = participant.client.get(participant.url("done")).text
    assert "DONE123" in page and "https://app.prolific.com/submissions/complete?cc=DONE123" in page
    # Once submitted, the pages of the questionnaire lead to the thank-you page.
    assert participant.client.get(participant.url("cases"))["Location"] == "/study/small/done/"


def test_attention_failure_keeps_the_submission_excluded_with_the_screen_out_code(participant):
    participant.consent(PROLIFIC)
    participant.to_review(attention="5")
    # Never stopped mid-way: the review page opens as for everyone.
    assert participant.client.get(participant.url("review")).status_code == 200
    response = participant.submit()
    assert response["Location"] == "https://app.prolific.com/submissions/complete?cc=SCREEN9"
    submission = Submission.objects.get()
    assert submission.status == Submission.Status.SUBMITTED
    assert submission.excluded is True and submission.attention_passed is False
    assert submission.exclusion_reason == "Failed the attention check: chose 5 where the instruction asked for 2."
    assert submission.cases.count() == 2


def test_without_prolific_the_thank_you_page_shows_the_code(participant):
    participant.consent()
    participant.to_review()
    response = participant.submit()
    assert response["Location"] == "/study/small/done/"
    page = participant.client.get("/study/small/done/").text
    assert '<strong class="code" id="completion-code">DONE123</strong>' in page
    assert "app.prolific.com" not in page


def test_a_second_finished_submission_by_the_same_pid_is_refused(client, small_study):
    first = Participant(client, small_study)
    first.consent(PROLIFIC)
    first.to_review()
    first.submit()
    client.cookies.clear()
    response = client.get("/study/small/" + PROLIFIC)
    assert response.status_code == 200
    assert "You have already taken part" in response.text
    response = client.post("/study/small/" + PROLIFIC, {"agree": "on"})
    assert "You have already taken part" in response.text
    assert Submission.objects.count() == 1


def test_the_same_pid_finishing_second_in_another_browser_sees_it_already_took_part(small_study):
    """Two browsers start under one Prolific ID; the one that submits last lands on the
    already-taken-part page with the code the first one earned, not on a server error."""
    from django.test import Client

    first, second = Participant(Client(), small_study), Participant(Client(), small_study)
    for browser in (first, second):
        browser.consent(PROLIFIC)
        browser.to_review()
    first.submit()
    response = second.submit()
    assert response.status_code == 200
    assert "You have already taken part" in response.text
    assert 'id="completion-code">DONE123<' in response.text
    assert Submission.objects.filter(status=Submission.Status.SUBMITTED).count() == 1


def test_the_same_pid_in_the_same_browser_returns_where_it_stopped(client, small_study):
    first = Participant(client, small_study)
    first.consent(PROLIFIC)
    first.add_cases(2)
    client.post(first.url("cases"), {"action": "continue"})
    response = client.get("/study/small/" + PROLIFIC)
    assert response["Location"] == "/study/small/about/"
    assert Submission.objects.count() == 1


def test_a_private_resume_link_brings_back_a_participant(client, small_study):
    first = Participant(client, small_study)
    first.consent(PROLIFIC)
    first.add_cases(1)
    submission = Submission.objects.get()
    page = client.get(first.url("cases")).text
    link = f"/study/small/resume/?token={submission.resume_token}"
    assert link in page
    client.cookies.clear()  # the browser was closed, cookies gone
    assert client.get("/study/small/cases/")["Location"] == "/study/small/"
    # Pasted into the address bar: the browser says the person began this navigation.
    assert client.get(link, HTTP_SEC_FETCH_SITE="none")["Location"] == "/study/small/cases/"
    assert len(client.get("/study/small/cases/").context["cases"]) == 1
    assert client.get("/study/small/resume/?token=not-a-token").status_code == 404
    assert client.get("/study/small/resume/").status_code == 404
    # Links handed out before the token moved to the query string still work.
    client.cookies.clear()
    old = client.get(f"/study/small/resume/{submission.resume_token}/")
    assert old["Location"] == link
    assert client.get(old["Location"], HTTP_SEC_FETCH_SITE="same-origin")["Location"] == "/study/small/cases/"


def test_a_language_switch_keeps_unsaved_input_as_a_draft(participant):
    participant.consent()
    typed = "Question: 第一个问题\nAnswer: 一个回答"
    response = participant.client.post(
        participant.url("cases"), case_data(conversation=typed, service="Qwen", _language="zh-hans")
    )
    assert response.status_code == 302 and response["Location"] == "/study/small/cases/"
    assert response.cookies[settings.LANGUAGE_COOKIE_NAME].value == "zh-hans"
    assert Case.objects.count() == 0
    page = participant.client.get(participant.url("cases"))
    assert page.context["form"]["conversation"].value() == typed
    assert page.context["form"]["service"].value() == "Qwen"
    assert '<html lang="zh-hans">' in page.text
    assert Submission.objects.get().language == "zh"
    # Saving the case clears the draft.
    participant.add_cases(1)
    assert Submission.objects.get().drafts == {}


def test_a_closed_study_takes_no_newcomers(client):
    StudyFactory(slug="shut", is_open=False)
    response = client.get("/study/shut/")
    assert "This study is closed" in response.text
    response = client.post("/study/shut/", {"agree": "on"})
    assert "This study is closed" in response.text
    assert Submission.objects.count() == 0
    assert client.get("/study/nope/").status_code == 404


def test_no_ip_address_is_stored(participant):
    ip = "203.0.113.77"
    participant.client.defaults["REMOTE_ADDR"] = ip
    participant.client.defaults["HTTP_X_FORWARDED_FOR"] = ip
    participant.consent(PROLIFIC)
    participant.to_review()
    participant.submit()
    for row in Submission.objects.values():
        assert ip not in str(row)
    for row in Case.objects.values():
        assert ip not in str(row)


HOSTILE = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">'


def test_html_typed_into_every_text_field_is_inert_on_every_page(participant, client_as, researcher):
    participant.consent()
    participant.add_cases(
        2,
        service="Other",
        service_other=HOSTILE[:100],
        conversation=f"Question: {HOSTILE}\nAnswer: {HOSTILE}",
        intent="other",
        intent_other=HOSTILE,
    )
    participant.client.post(participant.url("cases"), {"action": "continue"})
    participant.about(occupation=HOSTILE, country=HOSTILE[:64])
    participant.client.post(participant.url("usage"), usage_data())
    pages = [participant.url("cases"), participant.url("case-edit", 1), participant.url("about"),
             participant.url("review")]  # fmt: skip
    for url in pages:
        page = participant.client.get(url).text
        assert "<script>window.pwned" not in page and "<img src=x" not in page, url
        assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in page, url
    participant.submit()
    staff = client_as(researcher)
    for url in [reverse("curation:study-detail", args=["small"])]:
        page = staff.get(url).text
        assert "<script>window.pwned" not in page and "<img src=x" not in page
        assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in page


@pytest.fixture
def country_db(tmp_path, settings):
    """A two-network GeoIP2-format country database written for the test."""
    from mmdb_writer import MMDBWriter
    from netaddr import IPSet

    from curation.studies.geo import _reader

    writer = MMDBWriter(ip_version=6, database_type="GeoIP2-Country", ipv4_compatible=True)
    writer.insert_network(IPSet(["81.2.69.0/24"]), {"country": {"iso_code": "GB", "names": {"en": "United Kingdom"}}})
    writer.insert_network(IPSet(["1.2.3.0/24"]), {"country": {"iso_code": "CN", "names": {"en": "China"}}})
    path = tmp_path / "country.mmdb"
    writer.to_db_file(str(path))
    settings.GEOIP_COUNTRY_DB = str(path)
    _reader.cache_clear()
    yield path
    _reader.cache_clear()


def test_geoip_suggests_the_country_and_never_keeps_the_address(participant, country_db):
    participant.client.defaults["REMOTE_ADDR"] = "81.2.69.160"
    participant.consent()
    submission = Submission.objects.get()
    assert submission.country == "United Kingdom"
    assert "81.2.69" not in str(Submission.objects.values().get())
    # The participant may decline the suggestion.
    participant.add_cases(2)
    participant.client.post(participant.url("cases"), {"action": "continue"})
    page = participant.client.get(participant.url("about"))
    assert page.context["form"]["country"].value() == "United Kingdom"
    participant.about(country="", country_declined="on")
    assert Submission.objects.get().country == "prefer_not_to_say"


def test_geoip_gives_nothing_for_private_or_unknown_addresses(country_db):
    from curation.studies.geo import country_from_address

    assert country_from_address("1.2.3.4") == "China"
    assert [country_from_address(ip) for ip in ("10.0.0.1", "127.0.0.1", "8.8.8.8", "nonsense", "")] == [""] * 5


def test_without_a_database_no_country_is_guessed(participant, settings):
    settings.GEOIP_COUNTRY_DB = ""
    participant.client.defaults["REMOTE_ADDR"] = "81.2.69.160"
    participant.consent()
    assert Submission.objects.get().country == ""


def test_a_race_between_two_unfinished_submissions_of_one_pid_stores_one_finish(small_study):
    from curation.studies import services
    from tests.factories import CaseFactory, SubmissionFactory

    pair = [SubmissionFactory(study=small_study, prolific_pid="racer", status=Submission.Status.IN_PROGRESS,
                              usage={"attention_check": 2}, attention_passed=True) for _ in range(2)]  # fmt: skip
    for submission in pair:
        CaseFactory(submission=submission, position=1)
        CaseFactory(submission=submission, position=2)
    services.submission_finish(submission=pair[0], language="en")
    with pytest.raises(services.AlreadyFinished):
        services.submission_finish(submission=pair[1], language="en")
    statuses = sorted(Submission.objects.filter(prolific_pid="racer").values_list("status", flat=True))
    assert statuses == ["in_progress", "submitted"]


def test_finishing_queues_the_curation_steps_for_the_worker(participant, django_capture_on_commit_callbacks):
    """The submit only enqueues; the worker's task parses, dedups and hints every case."""
    from django_tasks_db.models import DBTaskResult

    from curation.models import CaseCuration
    from curation.tasks import submission_process_task

    participant.consent()
    participant.to_review(cases=2)
    with django_capture_on_commit_callbacks(execute=True):
        assert participant.submit().status_code == 302
    submission = Submission.objects.get()
    queued = DBTaskResult.objects.get()
    assert queued.task_path == "curation.tasks.submission_process_task"
    assert queued.args_kwargs["args"] == [submission.pk]
    assert CaseCuration.objects.count() == 0

    submission_process_task.call(submission.pk)
    assert CaseCuration.objects.filter(case__submission=submission).count() == 2
