"""submissions.csv as a spreadsheet wants it: one column per service and per intent rated
instead of JSON in a cell, dates a spreadsheet reads (UTC, whole seconds), and bare LF line
breaks inside cells; submissions.jsonl unchanged."""

import csv
import datetime
import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from tests.factories import StudyFactory, SubmissionFactory

pytestmark = pytest.mark.django_db

CONSENTED = datetime.datetime(2026, 3, 1, 9, 0, 5, 123456, tzinfo=datetime.UTC)


@pytest.fixture
def study(db):
    study = StudyFactory(slug="s", services=["ChatGPT", "Claude"])
    SubmissionFactory(
        study=study,
        prolific_pid="p1",
        occupation="line one\r\nline two",
        consented_at=CONSENTED,
        submitted_at=CONSENTED + datetime.timedelta(minutes=7, microseconds=5),
        usage={
            "llms_used": ["Claude", "Retired bot"],
            "frequency": "daily",
            "satisfaction": {"factual_qa": 4, "leisure": 0},
            "attention_check": 2,
        },
    )
    return study


def export(fmt):
    out = io.StringIO()
    call_command("export", study="s", what="submissions", fmt=fmt, stdout=out)
    return out.getvalue()


def test_the_csv_has_a_column_per_service_and_intent_and_dates_a_spreadsheet_reads(study):
    text = export("csv")
    reader = csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline=""))
    header, row = next(reader), next(reader)
    assert "llms_used" not in header and "satisfaction" not in header
    at = header.index("used: ChatGPT")
    assert header[at : at + 3] == ["used: ChatGPT", "used: Claude", "used: other"]
    assert header[header.index("frequency") + 1 :][:6] == [
        "satisfaction: factual_qa",
        "satisfaction: solve_professional_problem",
        "satisfaction: text_assistant",
        "satisfaction: ask_for_advice",
        "satisfaction: seek_creativity",
        "satisfaction: leisure",
    ]
    cells = dict(zip(header, row, strict=True))
    assert (cells["used: ChatGPT"], cells["used: Claude"], cells["used: other"]) == ("0", "1", "Retired bot")
    assert (
        cells["satisfaction: factual_qa"],
        cells["satisfaction: leisure"],
        cells["satisfaction: text_assistant"],
    ) == (
        "4",
        "0",
        "",
    )
    assert (cells["consented_at"], cells["submitted_at"]) == ("2026-03-01 09:00:05", "2026-03-01 09:07:05")
    assert cells["occupation"] == "line one\nline two"
    # Records end with CRLF; the break inside the cell is a bare LF.
    assert '"line one\nline two"' in text and "\r\nline two" not in text
    assert text.count("\r\n") == 2


def test_the_jsonl_is_unchanged(study):
    [row] = [json.loads(line) for line in export("jsonl").splitlines()]
    assert row["llms_used"] == ["Claude", "Retired bot"]
    assert row["satisfaction"] == {"factual_qa": 4, "leisure": 0}
    assert row["consented_at"] == "2026-03-01T09:00:05.123456+00:00"
    assert row["occupation"] == "line one\r\nline two"


def test_the_api_serves_the_same_spreadsheet(study, client_as, researcher):
    response = client_as(researcher).get(reverse("api-export", args=["submissions"]), {"study": "s", "format": "csv"})
    body = b"".join(response.streaming_content).decode()
    assert body == export("csv")
