"""A participant's answers open only in the browser that started them or through their private
link: a Prolific ID is no key. Every attack here is a stranger with a fresh browser who knows
(or guesses) someone's Prolific ID."""

import pytest
from django.test import Client
from django.urls import reverse

from core.models import AuditEvent
from curation.models import Case, Submission
from tests.curation.study_helpers import Participant, small_study, usage_data  # noqa: F401

pytestmark = pytest.mark.django_db

PID = "5f1e0c2b9a8d7e6f5a4b3c2d"
LINK = f"/study/small/?PROLIFIC_PID={PID}&STUDY_ID=st-1&SESSION_ID=se-1"
SECRET_TEXT = "Question: my private worry about my landlord\nAnswer: Talk to them."


@pytest.fixture
def owner(small_study):
    """The real participant, two cases into the study in their own browser."""
    person = Participant(Client(), small_study)
    person.consent(LINK.removeprefix("/study/small/"))
    person.add_cases(2, conversation=SECRET_TEXT)
    return person


@pytest.fixture
def stranger(small_study):
    return Participant(Client(), small_study)


def test_the_prolific_id_alone_opens_no_answers(owner, stranger):
    response = stranger.client.get(LINK)
    assert response.status_code == 200
    page = response.text
    assert "This study is already in progress elsewhere" in page
    assert "private link" in page and "Start again here" in page
    assert "landlord" not in page and "resume" not in page
    # Nothing of the owner's submission became this browser's.
    for name in ("cases", "about", "usage", "review", "done"):
        assert stranger.client.get(stranger.url(name))["Location"] == "/study/small/"
    assert stranger.client.get(stranger.url("case-edit", 1))["Location"] == "/study/small/"


def test_a_stranger_can_neither_delete_nor_change_nor_submit_the_answers(owner, stranger):
    stranger.client.get(LINK)
    stranger.client.post(stranger.url("case-remove", 1), {"confirm": "yes"})
    stranger.client.post(
        stranger.url("case-edit", 1),
        {"service": "Claude", "conversation": "Question: x\nAnswer: y", "intent": "leisure"},
    )
    stranger.client.post(stranger.url("cases"), {"action": "continue"})
    stranger.client.post(stranger.url("review"))
    stranger.client.post(stranger.url("cases"), {"service": "Qwen", "_language": "zh-hans"})
    submission = Submission.objects.get()
    assert submission.status == Submission.Status.IN_PROGRESS and submission.drafts == {}
    assert list(Case.objects.values_list("position", "conversation", "service")) == [
        (1, SECRET_TEXT, "ChatGPT"),
        (2, SECRET_TEXT, "ChatGPT"),
    ]


def test_going_on_anyway_gives_a_submission_of_its_own_and_never_locks_the_owner_out(owner, stranger):
    stranger.client.get(LINK)
    response = stranger.client.post(LINK, {"agree": "on"})
    assert response["Location"] == "/study/small/cases/"
    assert Submission.objects.filter(prolific_pid=PID).count() == 2
    assert stranger.client.get(stranger.url("cases")).context["cases"] == []
    # The owner still has their answers, in their browser.
    assert len(owner.client.get(owner.url("cases")).context["cases"]) == 2
    owner.add_cases(0)
    assert owner.client.post(owner.url("cases"), {"action": "continue"}).status_code == 302
    assert owner.about().status_code == 302
    assert owner.client.post(owner.url("usage"), usage_data()).status_code == 302
    assert owner.submit()["Location"] == "https://app.prolific.com/submissions/complete?cc=DONE123"


def test_the_already_taken_part_page_shows_the_code_and_nothing_else(owner, stranger):
    owner.client.post(owner.url("cases"), {"action": "continue"})
    owner.about()
    owner.client.post(owner.url("usage"), usage_data())
    owner.submit()
    page = stranger.client.get(LINK).text
    assert "You have already taken part" in page and 'id="completion-code">DONE123<' in page
    assert "landlord" not in page and "resume" not in page and "/study/small/cases/" not in page
    assert stranger.client.get(stranger.url("done"))["Location"] == "/study/small/"


def test_a_screened_out_participant_gets_the_screen_out_code_again(owner, stranger):
    owner.client.post(owner.url("cases"), {"action": "continue"})
    owner.about()
    owner.client.post(owner.url("usage"), usage_data(attention="5"))
    owner.submit()
    assert 'id="completion-code">SCREEN9<' in stranger.client.get(LINK).text


def test_the_private_link_is_on_every_page_and_opens_the_answers_anywhere(owner, small_study):
    submission = Submission.objects.get()
    link = f"/study/small/resume/?token={submission.resume_token}"
    owner.client.post(owner.url("cases"), {"action": "continue"})
    owner.about()
    owner.client.post(owner.url("usage"), usage_data())
    for name, args in (("cases", ()), ("case-edit", (1,)), ("about", ()), ("usage", ()), ("review", ())):
        assert link in owner.client.get(owner.url(name, *args)).text, name
    # The owner on their phone: the link, not the Prolific ID, brings the answers.
    phone = Participant(Client(), small_study)
    assert phone.client.get(link, HTTP_SEC_FETCH_SITE="none")["Location"] == "/study/small/review/"
    assert "landlord" in phone.client.get(phone.url("review")).text


def test_shared_prolific_ids_are_flagged_counted_once_and_resolved_by_a_researcher(owner, stranger, client, researcher):
    stranger.client.get(LINK)
    stranger.client.post(LINK, {"agree": "on"})
    first, second = Submission.objects.order_by("pk")
    client.force_login(researcher)
    page = client.get(reverse("curation:study-detail", args=["small"]))
    assert page.context["stats"]["started"] == 1 and page.context["stats"]["in_progress"] == 1
    assert "Submissions sharing a Prolific ID" in page.text and PID in page.text
    [group] = page.context["duplicates"]
    assert [s.pk for s in group["submissions"]] == [first.pk, second.pk]
    assert [s.case_count for s in group["submissions"]] == [2, 0]

    response = client.post(
        reverse("curation:study-duplicate-resolve", args=["small"]), {"prolific_pid": PID, "keep": first.pk}
    )
    assert response.status_code == 302
    second.refresh_from_db()
    assert second.excluded and second.exclusion_reason == (
        f"Another submission under the same Prolific ID was kept (#{first.pk})."
    )
    page = client.get(reverse("curation:study-detail", args=["small"]))
    assert page.context["duplicates"] == []
    assert (page.context["stats"]["started"], page.context["stats"]["excluded"]) == (2, 1)
    event = AuditEvent.objects.get(action="duplicate_resolved")
    assert (event.actor, event.details) == (researcher, {"kept": first.pk, "excluded": [second.pk]})
    # The browser whose submission was not kept can write no more.
    closed = stranger.client.get(stranger.url("cases"))
    assert "This questionnaire has been closed" in closed.text
    stranger.client.post(
        stranger.url("cases"),
        {"service": "Qwen", "conversation": "Question: a\nAnswer: b", "intent": "leisure", "action": "add"},
    )
    assert second.cases.count() == 0


def test_a_finished_submission_is_the_one_to_keep(owner, stranger, client, researcher):
    stranger.client.get(LINK)
    stranger.client.post(LINK, {"agree": "on"})
    owner.client.post(owner.url("cases"), {"action": "continue"})
    owner.about()
    owner.client.post(owner.url("usage"), usage_data())
    owner.submit()
    first, second = Submission.objects.order_by("pk")
    client.force_login(researcher)
    response = client.post(
        reverse("curation:study-duplicate-resolve", args=["small"]),
        {"prolific_pid": PID, "keep": second.pk},
        follow=True,
    )
    assert f"Submission #{first.pk} is already finished under this Prolific ID: keep that one." in response.text
    assert not Submission.objects.filter(excluded=True).exists()


def test_only_researchers_resolve(owner, client, reviewer):
    client.force_login(reviewer)
    url = reverse("curation:study-duplicate-resolve", args=["small"])
    assert client.post(url, {"prolific_pid": PID, "keep": 1}).status_code == 403
