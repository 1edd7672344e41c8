"""The submissions table of a study, as a researcher reviews it for Prolific: statuses, time
taken, the code each was given, the attention check, speeders and shared Prolific IDs flagged,
filters, and the IDs to approve and to reject in the form Prolific's bulk actions take."""

import datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from core.models import AuditEvent
from curation.models import Submission
from curation.studies.prolific import prolific_decisions, study_review
from tests.factories import SUBMISSIONS_T0, StudyFactory, SubmissionFactory
from tests.factories import finished_submission as finished

pytestmark = pytest.mark.django_db

T0 = SUBMISSIONS_T0  # the moment finished_submission's cases consented


@pytest.fixture
def study(db):
    study = StudyFactory(slug="prolific", completion_code="C0MPL3TE", screenout_code="SCR33N")
    for pid, minutes in (("aaa", 10), ("bbb", 12), ("ccc", 11), ("fast", 2)):
        finished(study, pid, minutes)
    finished(study, "scr", 8, excluded=True, passed=False)
    SubmissionFactory(study=study, prolific_pid="dup", status=Submission.Status.IN_PROGRESS, consented_at=T0)
    finished(study, "dup", 9)
    SubmissionFactory(study=study, prolific_pid="<b>x</b>", status=Submission.Status.IN_PROGRESS)
    SubmissionFactory(study=study, prolific_pid="", status=Submission.Status.IN_PROGRESS)
    return study


def table_pids(html):
    """The Prolific IDs of the table's rows, in order (rows without one left out)."""
    body = html.split('id="submissions-table"', 1)[1].split("</tbody>", 1)[0]
    cells = [row.split("<td>", 2)[1] for row in body.split("<tr data-status=")[1:]]
    return [cell.split("<code>", 1)[1].split("</code>", 1)[0] for cell in cells if cell.startswith("<code>")]


def test_speeders_and_shared_ids_are_flagged_and_the_lists_follow(study):
    review = study_review(study=study)
    # Finished: 2, 8, 9, 10, 11, 12 minutes: the median is 9.5 minutes, speeders under 4.75.
    assert review.median_seconds == 570 and review.speeder_below_seconds == 285
    assert review.shared_pids == {"dup"}
    assert prolific_decisions(study=study, review=review) == {
        "approve": ["aaa", "bbb", "ccc"],
        "reject": ["scr"],
        "flagged": ["dup", "fast"],
    }


def test_the_speeder_fraction_is_a_setting(study, settings):
    settings.STUDY_SPEEDER_FRACTION = 0.1  # under 57 s: nobody
    review = study_review(study=study)
    assert prolific_decisions(study=study, review=review)["approve"] == ["aaa", "bbb", "ccc", "fast"]


def test_a_fast_study_still_flags_whoever_is_fast_against_its_median(db):
    # The median is 12 seconds (0.2 minutes): 3 seconds is a quarter of it.
    study = StudyFactory()
    for pid, seconds in (("p1", 12), ("p2", 11), ("p3", 13), ("p4", 3)):
        SubmissionFactory(
            study=study, prolific_pid=pid, consented_at=T0, submitted_at=T0 + datetime.timedelta(seconds=seconds)
        )
    review = study_review(study=study)
    assert review.median_seconds == 11.5
    assert prolific_decisions(study=study, review=review)["flagged"] == ["p4"]


def test_an_id_that_would_split_in_a_list_is_never_listed(db):
    study = StudyFactory()
    finished(study, "ok1", 10)
    finished(study, "a,b", 10)
    finished(study, "c d", 10)
    decisions = prolific_decisions(study=study, review=study_review(study=study))
    assert decisions["approve"] == ["ok1"] and decisions["flagged"] == ["a,b", "c d"]


def test_the_table_shows_each_submission_with_its_code_and_flags(study, client_as, researcher):
    page = client_as(researcher).get(reverse("curation:study-submissions", args=["prolific"]))
    assert page.status_code == 200
    html = page.content.decode()
    assert table_pids(html) == ["aaa", "bbb", "ccc", "fast", "scr", "dup", "dup", "&lt;b&gt;x&lt;/b&gt;"]
    row = html.split("<code>scr</code>", 1)[1].split("</tr>", 1)[0]
    assert "Screened out" in row and "SCR33N" in row and "8.0 min" in row and "Failed" in row
    row = html.split("<code>fast</code>", 1)[1].split("</tr>", 1)[0]
    assert "Completed" in row and "C0MPL3TE" in row and "2.0 min" in row and "Speeder" in row
    assert html.count("Prolific ID used more than once") == 2
    assert "<b>x</b>" not in html  # a typed Prolific ID is escaped
    assert "Speeders took less than 50 % of the median time (570 s): under 285 s." in html
    assert "aaa, bbb, ccc</textarea>" in html and ">scr</textarea>" in html
    assert "2 finished submissions wait for your decision." in html


@pytest.mark.parametrize(
    "query, expected",
    [
        ({"status": "completed"}, ["aaa", "bbb", "ccc", "fast", "dup"]),
        ({"status": "screened_out"}, ["scr"]),
        ({"status": "in_progress"}, ["dup", "&lt;b&gt;x&lt;/b&gt;"]),
        ({"flagged": "1"}, ["fast", "dup", "dup"]),
        ({"status": "completed", "flagged": "1"}, ["fast", "dup"]),
        ({"status": "nonsense"}, ["aaa", "bbb", "ccc", "fast", "scr", "dup", "dup", "&lt;b&gt;x&lt;/b&gt;"]),
    ],
)
def test_the_table_filters(study, client_as, researcher, query, expected):
    html = client_as(researcher).get(reverse("curation:study-submissions", args=["prolific"]), query).content.decode()
    assert table_pids(html) == expected


def test_the_id_lists_download_one_per_line_and_are_audited(study, client_as, researcher):
    client = client_as(researcher)
    approve = client.get(reverse("curation:study-prolific-ids", args=["prolific", "approve"]))
    assert approve["Content-Type"] == "text/plain; charset=utf-8"
    assert approve["Content-Disposition"] == 'attachment; filename="prolific-approve.txt"'
    assert approve.content.decode() == "aaa\nbbb\nccc\n"
    assert client.get(reverse("curation:study-prolific-ids", args=["prolific", "reject"])).content == b"scr\n"
    assert client.get(reverse("curation:study-prolific-ids", args=["prolific", "pay"])).status_code == 404
    events = AuditEvent.objects.filter(action="export").order_by("pk")
    assert [(e.target, e.details) for e in events] == [
        ("export:prolific-approve", {"study": "prolific", "ids": 3, "via": "page"}),
        ("export:prolific-reject", {"study": "prolific", "ids": 1, "via": "page"}),
    ]


def test_only_researchers_see_submissions(study, client, client_as, annotator, reviewer):
    for url in (
        reverse("curation:study-submissions", args=["prolific"]),
        reverse("curation:study-prolific-ids", args=["prolific", "approve"]),
    ):
        client.logout()
        assert client.get(url)["Location"].startswith("/accounts/login/")
        assert client_as(annotator).get(url).status_code == 403
        assert client_as(reviewer).get(url).status_code == 403
    assert not AuditEvent.objects.exists()


def test_the_table_costs_the_same_queries_however_many_submissions(study, client_as, researcher):
    client = client_as(researcher)
    url = reverse("curation:study-submissions", args=["prolific"])
    with CaptureQueriesContext(connection) as few:
        client.get(url)
    for number in range(30):
        finished(study, f"more{number}", 5 + number)
    with CaptureQueriesContext(connection) as many:
        client.get(url)
    assert len(many) == len(few)


def test_the_study_page_offers_the_study_url_to_copy_and_the_table(study, client_as, researcher):
    html = client_as(researcher).get(reverse("curation:study-detail", args=["prolific"])).content.decode()
    assert (
        'id="participant-link" type="text" readonly value="http://testserver/study/prolific/?PROLIFIC_PID={{%PROLIFIC_PID%}}&amp;STUDY_ID={{%STUDY_ID%}}&amp;SESSION_ID={{%SESSION_ID%}}"'
        in html
    )
    assert 'data-copy="participant-link"' in html and "curation/copy.js" in html
    assert reverse("curation:study-submissions", args=["prolific"]) in html
    # 8 started (the two browsers of "dup" count once), 6 finished, 1 of them screened out.
    assert '<td class="num" id="stat-completion">62 %</td>' in html
    assert '<td class="num" id="stat-screened-out">1 (12 %)</td>' in html


def test_the_table_reads_in_chinese(study, client_as, researcher):
    client = client_as(researcher)
    client.cookies["django_language"] = "zh-hans"
    html = client.get(reverse("curation:study-submissions", args=["prolific"])).content.decode()
    assert "已筛除" in html and "复制要批准的 ID" in html
