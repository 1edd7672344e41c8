"""The Prolific round-trip without traps: a flagged submission waits in neither list until the
researcher decides it (audited, undoable); a study opens to participants only with both codes; a
screened-out participant gets the screen-out code and the way back to Prolific; a second Prolific
ID in the same browser meets a confirmation page about the browser."""

import pytest
from django.test import Client
from django.urls import reverse

from core.models import AuditEvent
from curation.models import Study, Submission
from curation.studies.prolific import prolific_decisions, study_review
from tests.curation.study_helpers import Participant, small_study  # noqa: F401
from tests.factories import SUBMISSIONS_T0, StudyFactory, SubmissionFactory, UserFactory
from tests.factories import finished_submission as finished

pytestmark = pytest.mark.django_db

T0 = SUBMISSIONS_T0  # the moment finished_submission's cases consented


@pytest.fixture
def study(db):
    """aaa, bbb, ccc kept; scr screened out; fast a speeder; dup screened out under an ID that
    another (unfinished) submission used too."""
    study = StudyFactory(slug="rt", completion_code="C0MPL3TE", screenout_code="SCR33N")
    for pid, minutes in (("aaa", 10), ("bbb", 12), ("ccc", 11), ("fast", 2)):
        finished(study, pid, minutes)
    finished(study, "scr", 8, excluded=True)
    SubmissionFactory(study=study, prolific_pid="dup", status=Submission.Status.IN_PROGRESS, consented_at=T0)
    finished(study, "dup", 9, excluded=True)
    return study


def lists(study):
    return prolific_decisions(study=study, review=study_review(study=study))


def decide_url(study, submission):
    return reverse("curation:study-submission-decide", args=[study.slug, submission.pk])


def test_a_shared_id_that_was_screened_out_is_in_neither_list_until_decided(study):
    # Before, "dup" was in the reject list although flagged: it was screened out.
    assert lists(study) == {"approve": ["aaa", "bbb", "ccc"], "reject": ["scr"], "flagged": ["dup", "fast"]}


def test_the_researcher_decides_each_flagged_row_asked_first_and_audited(study, client_as, researcher):
    client = client_as(researcher)
    dup = Submission.objects.get(prolific_pid="dup", status="submitted")
    fast = Submission.objects.get(prolific_pid="fast")
    table = client.get(reverse("curation:study-submissions", args=["rt"])).text
    assert table.count("Waiting for you") == 2
    assert f'data-testid="approve-{dup.pk}"' in table and f'data-testid="reject-{fast.pk}"' in table
    # Rows that are not flagged offer no decision.
    aaa = Submission.objects.get(prolific_pid="aaa")
    assert f'data-testid="approve-{aaa.pk}"' not in table

    # The link asks first; a POST without the confirmation changes nothing and asks again.
    page = client.get(decide_url(study, fast), {"decision": "approve"})
    assert page.status_code == 200 and "Approve this submission on Prolific?" in page.text
    assert '<code id="decide-pid">fast</code>' in page.text
    again = client.post(decide_url(study, fast), {"decision": "approve"})
    assert again.status_code == 200 and "Approve this submission on Prolific?" in again.text
    assert lists(study)["flagged"] == ["dup", "fast"] and not AuditEvent.objects.filter(action="prolific_decided")

    done = client.post(decide_url(study, fast), {"decision": "approve", "confirm": "yes"})
    assert done["Location"] == "/studies/rt/submissions/"
    client.post(decide_url(study, dup), {"decision": "reject", "confirm": "yes"})
    assert lists(study) == {"approve": ["aaa", "bbb", "ccc", "fast"], "reject": ["dup", "scr"], "flagged": []}
    assert client.get(reverse("curation:study-prolific-ids", args=["rt", "reject"])).text == "dup\nscr\n"

    # Undone: the decision taken back, the row waits again.
    client.post(decide_url(study, fast), {"decision": "", "confirm": "yes"})
    assert lists(study)["flagged"] == ["fast"]
    events = AuditEvent.objects.filter(action="prolific_decided").order_by("pk")
    assert [(e.actor, e.target, e.details) for e in events] == [
        (researcher, "study:rt", {"submission": fast.pk, "changes": {"prolific_decision": ["", "approve"]}}),
        (researcher, "study:rt", {"submission": dup.pk, "changes": {"prolific_decision": ["", "reject"]}}),
        (researcher, "study:rt", {"submission": fast.pk, "changes": {"prolific_decision": ["approve", ""]}}),
    ]
    assert all(event.workspace_id == study.workspace_id for event in events)


def test_the_audit_log_shows_each_decision_before_and_after_in_the_readers_language(study, client_as, researcher):
    client = client_as(researcher)
    client.post(
        decide_url(study, Submission.objects.get(prolific_pid="fast")), {"decision": "approve", "confirm": "yes"}
    )
    dup = Submission.objects.get(prolific_pid="dup", status="submitted")
    client.post(decide_url(study, dup), {"decision": "reject", "confirm": "yes"})
    page = client.get(reverse("core:audit"), {"action": "prolific_decided"}).text
    assert "prolific_decision: — → approve" in page and "prolific_decision: — → reject" in page
    client.cookies["django_language"] = "zh-hans"
    page = client.get(reverse("core:audit"), {"action": "prolific_decided"}).text
    assert "为 Prolific 决定了已标记的提交" in page
    assert "— → 批准" in page and "— → 拒绝" in page and "→ approve" not in page


def test_a_decision_names_a_finished_submission_and_a_known_decision(study, client_as, researcher):
    client = client_as(researcher)
    unfinished = Submission.objects.get(prolific_pid="dup", status="in_progress")
    aaa = Submission.objects.get(prolific_pid="aaa")
    assert client.get(decide_url(study, unfinished), {"decision": "approve"}).status_code == 404
    assert client.post(decide_url(study, aaa), {"decision": "pay", "confirm": "yes"}).status_code == 404
    assert not AuditEvent.objects.filter(action="prolific_decided").exists()


def test_another_workspace_cannot_decide(study, client_as):
    from core.models import Workspace

    beta = Workspace.objects.create(slug="beta", name="Beta")
    outsider = UserFactory(username="outsider", roles=["researcher"], roles__workspace=beta)
    fast = Submission.objects.get(prolific_pid="fast")
    client = client_as(outsider)
    assert client.get(decide_url(study, fast), {"decision": "approve"}).status_code == 404
    assert client.post(decide_url(study, fast), {"decision": "approve", "confirm": "yes"}).status_code == 404
    assert Submission.objects.get(pk=fast.pk).prolific_decision == ""


def test_the_decision_page_reads_in_chinese(study, client_as, researcher):
    client = client_as(researcher)
    client.cookies["django_language"] = "zh-hans"
    fast = Submission.objects.get(prolific_pid="fast")
    page = client.get(decide_url(study, fast), {"decision": "reject"}).text
    assert "在 Prolific 上拒绝这份提交吗？" in page and "是，拒绝" in page


STUDY_FORM = {
    "slug": "coded", "title_en": "Coded", "title_zh": "", "consent_en": "", "consent_zh": "",
    "instructions_en": "", "instructions_zh": "", "min_cases": "1", "max_cases": "2",
    "intents": ["factual_qa"], "attention_answer": "2", "completion_code": "C1", "screenout_code": "",
    "is_open": "on", "services_text": "ChatGPT", "age_groups_text": "18-30",
}  # fmt: skip


def test_a_study_opens_only_with_both_codes_and_the_form_names_the_missing_one(client_as, researcher):
    client = client_as(researcher)
    response = client.post(reverse("curation:study-new"), STUDY_FORM)
    assert response.status_code == 200 and not Study.objects.filter(slug="coded").exists()
    assert list(response.context["form"].errors) == ["screenout_code"]
    assert "Set a screen-out code before opening the study" in response.context["form"].errors["screenout_code"][0]
    response = client.post(reverse("curation:study-new"), {**STUDY_FORM, "completion_code": "", "screenout_code": ""})
    assert sorted(response.context["form"].errors) == ["completion_code", "screenout_code"]
    # Closed, a study may wait for its codes; opened, it needs them.
    assert client.post(reverse("curation:study-new"), {**STUDY_FORM, "is_open": ""}).status_code == 302
    assert client.post(reverse("curation:study-edit", args=["coded"]), STUDY_FORM).status_code == 200
    assert Study.objects.get(slug="coded").is_open is False
    opened = client.post(reverse("curation:study-edit", args=["coded"]), {**STUDY_FORM, "screenout_code": "S1"})
    assert opened.status_code == 302 and Study.objects.get(slug="coded").is_open is True


def test_an_open_study_saved_before_the_rule_keeps_its_codes_but_cannot_stay_open_without_one(client_as, researcher):
    # No code is invented for it: the next save asks for one.
    StudyFactory(slug="coded", is_open=True, completion_code="C1", screenout_code="")
    client = client_as(researcher)
    response = client.post(reverse("curation:study-edit", args=["coded"]), {**STUDY_FORM, "title_en": "Renamed"})
    assert list(response.context["form"].errors) == ["screenout_code"]
    study = Study.objects.get(slug="coded")
    assert (study.title_en, study.screenout_code) == ("A study (coded)", "")


def screened_out(client, study, pid="p-screen"):
    person = Participant(client, study)
    person.consent(f"?PROLIFIC_PID={pid}")
    person.to_review(attention="5")
    return person, person.submit()


def test_a_screened_out_participant_gets_the_code_and_the_link_back(small_study):  # noqa: F811
    person, response = screened_out(Client(), small_study)
    assert response["Location"] == "https://app.prolific.com/submissions/complete?cc=SCREEN9"
    page = person.client.get(person.url("done")).text
    assert "Your screen-out code:" in page and 'id="completion-code">SCREEN9<' in page
    assert "did not pass the study's attention check" in page
    assert 'href="https://app.prolific.com/submissions/complete?cc=SCREEN9"' in page


def test_without_a_screen_out_code_the_participant_still_gets_the_way_back(small_study):  # noqa: F811
    Study.objects.filter(pk=small_study.pk).update(screenout_code="")
    person, response = screened_out(Client(), small_study)
    assert response["Location"] == "/study/small/done/"
    page = person.client.get(person.url("done")).text
    assert "Your completion code" not in page and 'id="no-screenout-code"' in page
    assert 'id="return-to-prolific">' in page and 'href="https://app.prolific.com/"' in page


def held(client) -> int | None:
    return client.session.get("study_submissions", {}).get("small")


def test_a_second_prolific_id_in_the_same_browser_is_asked_about_the_browser(small_study):  # noqa: F811
    first = Participant(Client(), small_study)
    first.consent("?PROLIFIC_PID=first-pid")
    first.add_cases(1)
    own = held(first.client)

    page = first.client.get(first.url("start"), {"PROLIFIC_PID": "second-pid"})
    assert page.status_code == 200 and "Another Prolific ID in this browser" in page.text
    assert "This browser is already filling in a questionnaire of this study under another Prolific ID." in page.text
    assert "<code>second-pid</code>" in page.text and "first-pid" not in page.text
    assert "in another browser or on another device" not in page.text
    assert held(first.client) == own and Submission.objects.count() == 1
    # The consent form alone (without the confirmation) changes nothing either.
    again = first.client.post(first.url("start") + "?PROLIFIC_PID=second-pid", {"agree": "on"})
    assert "Another Prolific ID in this browser" in again.text and Submission.objects.count() == 1

    # Confirmed: the consent page (carrying the confirmation), then a submission of its own.
    consent = first.client.post(first.url("start") + "?PROLIFIC_PID=second-pid", {"switch": "yes", "step": "switch"})
    assert 'name="switch" value="yes"' in consent.text and "agree" in consent.text
    assert Submission.objects.count() == 1
    first.client.post(first.url("start") + "?PROLIFIC_PID=second-pid", {"switch": "yes", "agree": "on"})
    second = Submission.objects.get(prolific_pid="second-pid")
    assert held(first.client) == second.pk

    # The first ID back in this browser: asked again, and its own answers come back (this
    # browser started them), with no "elsewhere" and no new submission.
    back = first.client.get(first.url("start"), {"PROLIFIC_PID": "first-pid"})
    assert "Another Prolific ID in this browser" in back.text
    moved = first.client.post(first.url("start") + "?PROLIFIC_PID=first-pid", {"switch": "yes", "step": "switch"})
    assert moved["Location"] == "/study/small/cases/"
    assert held(first.client) == own and Submission.objects.count() == 2


def test_another_browsers_submission_is_never_opened_by_a_switch(small_study):  # noqa: F811
    owner = Participant(Client(), small_study)
    owner.consent("?PROLIFIC_PID=owner-pid")
    other = Participant(Client(), small_study)
    other.consent("?PROLIFIC_PID=other-pid")
    page = other.client.post(other.url("start") + "?PROLIFIC_PID=owner-pid", {"switch": "yes", "step": "switch"})
    # The consent page, saying the ID is in progress elsewhere: the owner's answers stay theirs.
    assert page.status_code == 200 and "This study is already in progress elsewhere" in page.text
    assert held(other.client) == Submission.objects.get(prolific_pid="other-pid").pk


def test_the_switch_page_reads_in_chinese(small_study):  # noqa: F811
    person = Participant(Client(), small_study)
    person.consent("?PROLIFIC_PID=first-pid")
    person.client.cookies["django_language"] = "zh-hans"
    page = person.client.get(person.url("start"), {"PROLIFIC_PID": "second-pid"}).text
    assert "此浏览器中的另一个 Prolific ID" in page and "是，使用此 Prolific ID 继续" in page
