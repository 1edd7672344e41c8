"""What researchers see of a study: statistics, permissions, exports and the API."""

import datetime
import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from curation.models import Submission
from curation.studies.selectors import study_statistics
from tests.factories import CaseFactory, StudyFactory, SubmissionFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo_study(db):
    call_command("loaddata", "fixtures/demo.json", verbosity=0)
    from curation.models import Study

    return Study.objects.get(slug="demo")


def test_statistics_of_the_demo_study(demo_study):
    stats = study_statistics(study=demo_study)
    assert {key: stats[key] for key in ("started", "submitted", "in_progress", "excluded", "case_count")} == {
        "started": 3, "submitted": 3, "in_progress": 0, "excluded": 1, "case_count": 10,
    }  # fmt: skip
    # The one screened out (the attention check) is counted apart, not as a completion.
    assert (stats["completed"], stats["screened_out"]) == (2, 1)
    assert stats["completion_rate"] == pytest.approx(2 / 3)
    assert stats["median_seconds"] == 720.0
    assert stats["exclusions"] == [
        {"submission": 3, "prolific_pid": "5f0demo0000000000000003",
         "reason": "Failed the attention check: chose 4 where the instruction asked for 2."}
    ]  # fmt: skip
    assert stats["intents"] == [
        {"intent": "ask_for_advice", "count": 2}, {"intent": "factual_qa", "count": 2},
        {"intent": "solve_professional_problem", "count": 2}, {"intent": "text_assistant", "count": 2},
        {"intent": "leisure", "count": 1}, {"intent": "seek_creativity", "count": 1},
    ]  # fmt: skip
    assert stats["services"][0] == {"service": "ChatGPT", "count": 2}
    assert sum(row["count"] for row in stats["services"]) == 10 and len(stats["services"]) == 9
    assert stats["satisfaction"] == [
        {"intent": "factual_qa", "count": 2, "mean": 4.5},
        {"intent": "solve_professional_problem", "count": 2, "mean": 3.0},
        {"intent": "text_assistant", "count": 2, "mean": 4.0},
        {"intent": "ask_for_advice", "count": 2, "mean": 5.0},
        {"intent": "seek_creativity", "count": 2, "mean": 3.0},
        {"intent": "leisure", "count": 2, "mean": 4.0},
    ]


def test_completion_rate_and_median_time_count_only_finished(db):
    study = StudyFactory()
    start = datetime.datetime(2026, 1, 1, 12, 0, tzinfo=datetime.UTC)
    for minutes in (6, 10, 30):
        SubmissionFactory(study=study, consented_at=start, submitted_at=start + datetime.timedelta(minutes=minutes),
                          usage={"satisfaction": {"leisure": 2}})  # fmt: skip
    SubmissionFactory(study=study, status=Submission.Status.IN_PROGRESS, consented_at=start)
    stats = study_statistics(study=study)
    assert (stats["started"], stats["submitted"], stats["in_progress"]) == (4, 3, 1)
    assert stats["completion_rate"] == 0.75
    assert stats["median_seconds"] == 600.0
    leisure = [row for row in stats["satisfaction"] if row["intent"] == "leisure"]
    assert leisure == [{"intent": "leisure", "count": 3, "mean": 2.0}]


def test_the_study_page_is_for_researchers_only(client, client_as, demo_study, annotator, reviewer):
    url = reverse("curation:study-detail", args=["demo"])
    assert client.get(url)["Location"].startswith("/accounts/login/")
    assert client_as(annotator).get(url).status_code == 403
    assert client_as(reviewer).get(url).status_code == 403
    assert client.get(reverse("curation:study-edit", args=["demo"])).status_code == 403
    assert client.get(reverse("api-study-statistics", args=["demo"])).status_code == 403


def test_the_study_page_shows_the_figures(client_as, researcher, demo_study):
    page = client_as(researcher).get(reverse("curation:study-detail", args=["demo"])).text
    assert '<td class="num" id="stat-submitted">3</td>' in page
    assert '<td class="num" id="stat-excluded">1</td>' in page
    assert '<td class="num" id="stat-completion">67 %</td>' in page
    assert '<td class="num" id="stat-screened-out">1 (33 %)</td>' in page
    assert '<td class="num" id="stat-median">12.0 min</td>' in page
    assert "Failed the attention check: chose 4 where the instruction asked for 2." in page
    assert "PROLIFIC_PID={{%PROLIFIC_PID%}}&amp;STUDY_ID={{%STUDY_ID%}}&amp;SESSION_ID={{%SESSION_ID%}}" in page


def _grow(study, submissions=5, cases=4):
    for number in range(submissions):
        submission = SubmissionFactory(study=study, prolific_pid=f"grow-{study.pk}-{number}",
                                       usage={"satisfaction": {"factual_qa": 3}})  # fmt: skip
        for position in range(1, cases + 1):
            CaseFactory(submission=submission, position=position, service=f"S{number}")


def test_study_page_and_api_queries_do_not_grow(client_as, researcher, demo_study, django_assert_num_queries):
    client = client_as(researcher)
    page, api = reverse("curation:study-detail", args=["demo"]), reverse("api-study-statistics", args=["demo"])
    # session, user with roles, study, counts, finished submissions, intents, services; the page
    # also looks for Prolific IDs shared by several submissions
    with django_assert_num_queries(8):
        client.get(page)
    with django_assert_num_queries(7):
        client.get(api)
    _grow(demo_study)
    with django_assert_num_queries(8):
        assert client.get(page).status_code == 200
    with django_assert_num_queries(7):
        assert client.get(api).json()["submitted"] == 8


def test_api_statistics(client_as, researcher, demo_study):
    data = client_as(researcher).get(reverse("api-study-statistics", args=["demo"])).json()
    assert data["slug"] == "demo" and data["excluded"] == 1 and data["median_seconds"] == 720.0
    assert data["satisfaction"][0] == {"intent": "factual_qa", "count": 2, "mean": 4.5}


def test_export_command_streams_submissions_and_cases_without_resume_tokens(demo_study):
    out = io.StringIO()
    call_command("export", study="demo", what="submissions", fmt="jsonl", stdout=out)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [row["submission_id"] for row in rows] == [1, 2, 3]
    assert rows[2]["excluded"] is True
    assert rows[2]["exclusion_reason"] == "Failed the attention check: chose 4 where the instruction asked for 2."
    assert rows[0]["satisfaction"]["factual_qa"] == 4 and rows[0]["case_count"] == 5
    assert rows[1]["prolific_session_id"] == "demo-session-2"
    assert "resume_token" not in rows[0] and "demo-resume-token" not in out.getvalue()

    out = io.StringIO()
    call_command("export", study="demo", what="cases", fmt="csv", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0] == (
        "\ufeffcase_id,submission_id,study,position,service,question,conversation,intent,intent_other,"
        "review_status,language,country,excluded,submitted_at"
    )
    assert len([line for line in lines if line.split(",")[0].isdigit()]) == 15
    assert "demo-resume-token" not in out.getvalue()


def test_exports_need_a_study(demo_study):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="The submissions export needs --study SLUG."):
        call_command("export", what="submissions", stdout=io.StringIO())


def test_api_export_streams_for_researchers_only(client, client_as, researcher, demo_study):
    url = reverse("api-export", args=["cases"]) + "?study=demo&format=jsonl"
    assert client.get(url).status_code in (401, 403)
    response = client_as(researcher).get(url)
    assert response.status_code == 200 and response.streaming
    body = b"".join(response.streaming_content).decode()
    assert len(body.splitlines()) == 15
    assert "resume" not in body
    # Nothing is reviewed yet: the participants' text leaves only when asked for, and that is audited.
    first = json.loads(body.splitlines()[0])
    assert first["conversation"] == "" and "raw_conversation" not in first
    raw = b"".join(client_as(researcher).get(url + "&raw=true").streaming_content).decode()
    assert json.loads(raw.splitlines()[0])["raw_conversation"].startswith("Question: Why is the sky blue")
    from core.models import AuditEvent

    assert list(AuditEvent.objects.order_by("id").values_list("action", "target")) == [
        ("export", "export:cases"),
        ("raw_export", "export:cases"),
    ]


def test_researcher_creates_and_edits_a_study(client_as, researcher):
    client = client_as(researcher)
    data = {
        "slug": "pilot", "title_en": "Pilot", "title_zh": "试点", "consent_en": "We may publish.", "consent_zh": "",
        "instructions_en": "", "instructions_zh": "", "min_cases": "3", "max_cases": "2",
        "intents": ["factual_qa", "leisure", "other"], "attention_answer": "4", "completion_code": "C1",
        "screenout_code": "S1", "is_open": "on", "services_text": "ChatGPT\n\nClaude\nChatGPT\nOther",
        "age_groups_text": "18-30\n31+",
    }  # fmt: skip
    response = client.post(reverse("curation:study-new"), data)
    assert response.status_code == 200
    assert response.context["form"].errors == {"max_cases": ["The maximum must not be below the minimum."]}
    data["max_cases"] = "6"
    response = client.post(reverse("curation:study-new"), data)
    assert response["Location"] == "/studies/pilot/"
    from curation.models import Study

    study = Study.objects.get(slug="pilot")
    assert study.services == ["ChatGPT", "Claude", "Other"]
    assert study.age_groups == ["18-30", "31+"]
    assert (study.min_cases, study.max_cases, study.attention_answer, study.created_by) == (3, 6, 4, researcher)
    data["is_open"] = ""
    data["slug"] = "pilot"
    assert client.post(reverse("curation:study-edit", args=["pilot"]), data).status_code == 302
    assert Study.objects.get(slug="pilot").is_open is False


def test_admin_lists_studies_and_never_shows_resume_tokens(client, demo_study):
    admin = UserFactory(username="boss")
    admin.is_staff = admin.is_superuser = True
    admin.save()
    client.force_login(admin)
    page = client.get("/admin/curation/submission/1/change/").text
    assert "demo-resume-token-01" not in page
    assert client.get("/admin/curation/study/1/change/").status_code == 200
