"""Exports a paper can use: one zip per study, dataset, run and campaign (every table, its
manifest and a README.txt data dictionary) streamed from `/api/exports/bundle/` and linked from
each page; `winner_model` beside `winner`; probabilities with 6 decimal places; UTC timestamps to
the second; the question text on request. Scoped by workspace like every export."""

import csv
import datetime
import io
import json
import tracemalloc
import zipfile

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.models import Vote
from core.bundles import BundleTable, iter_bundle
from core.exports import ExportTable, export_table, iter_export
from core.models import AuditEvent, Workspace
from judging.models import JudgeRun
from judging.runs.manifest import run_manifest
from tests.factories import (
    AnswerFactory,
    CampaignFactory,
    CandidateModelFactory,
    CaseFactory,
    DatasetFactory,
    ItemFactory,
    JudgeRunFactory,
    JudgmentFactory,
    StudyFactory,
    SubmissionFactory,
    UserFactory,
    VoteFactory,
)
from tests.figures import get_computed

pytestmark = pytest.mark.django_db

WHEN = datetime.datetime(2026, 11, 28, 9, 48, 6, 123456, tzinfo=datetime.UTC)


@pytest.fixture
def world():
    """A study with one finished submission and its case; a dataset of the study with two items,
    answers of alpha and beta, a finished run, and a campaign with three votes (one each way and
    a tie), the first chosen with probability 1/3."""
    study = StudyFactory(slug="paper", completion_code="C", screenout_code="S")
    submission = SubmissionFactory(study=study, prolific_pid="pid-1", consented_at=WHEN, submitted_at=WHEN)
    CaseFactory(submission=submission, position=1)
    dataset = DatasetFactory(name="paper-data", study=study)
    alpha, beta = CandidateModelFactory(name="alpha"), CandidateModelFactory(name="beta")
    items = [ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"What is {n} + {n}?") for n in (1, 2)]
    run = JudgeRunFactory(dataset=dataset, status=JudgeRun.Status.FINISHED)
    for item in items:
        for model, score in ((alpha, 8), (beta, 5)):
            AnswerFactory(item=item, model=model, text=f"{model.name} says {score}")
            JudgmentFactory(run=run, item=item, model=model, final_score=score)
    campaign = CampaignFactory(slug="paper-votes", dataset=dataset)
    campaign.candidates.set([alpha, beta])
    for item, winner, chance in ((items[0], "model_a", 1 / 3), (items[1], "model_b", None), (items[0], "tie", None)):
        VoteFactory(
            campaign=campaign,
            item=item,
            model_a=alpha,
            model_b=beta,
            winner=winner,
            annotator_label="r1",
            choice_probability=chance,
        )
    Vote.objects.update(created_at=WHEN)
    return {"study": study, "dataset": dataset, "run": run, "campaign": campaign}


def rows_of(table, fmt):
    text = "".join(iter_export(table, fmt))
    if fmt == "csv":
        return list(csv.DictReader(io.StringIO(text.removeprefix("\ufeff"))))
    return [json.loads(line) for line in text.splitlines()]


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_votes_name_the_winning_model_round_probabilities_and_write_utc_seconds(world, fmt):
    rows = rows_of(export_table("votes", campaign=world["campaign"]), fmt)
    assert [(row["winner"], row["winner_model"]) for row in rows] == [
        ("model_a", "alpha"),
        ("model_b", "beta"),
        ("tie", ""),
    ]
    expected = "0.333333" if fmt == "csv" else 0.333333
    assert rows[0]["choice_probability"] == expected
    assert rows[1]["choice_probability"] == ("" if fmt == "csv" else None)
    assert {row["created_at"] for row in rows} == {"2026-11-28 09:48:06" if fmt == "csv" else "2026-11-28T09:48:06Z"}
    assert "question_text" not in rows[0]


def test_winner_model_sits_beside_winner_and_the_old_columns_stay(world):
    fields = list(export_table("votes", campaign=world["campaign"]).fields)
    assert fields[fields.index("winner") + 1] == "winner_model"
    assert fields[:6] == ["vote_id", "dataset", "question_id", "model_a", "model_b", "winner"]
    assert fields[-2:] == ["choice_probability", "chosen_by"]


def test_a_timestamp_in_another_zone_is_written_in_utc():
    table = ExportTable(
        fields=["at"],
        rows=[
            {"at": datetime.datetime(2026, 1, 2, 8, 0, 1, 999, tzinfo=datetime.timezone(datetime.timedelta(hours=8)))}
        ],
    )
    assert rows_of(table, "csv") == [{"at": "2026-01-02 00:00:01"}]
    assert rows_of(table, "jsonl") == [{"at": "2026-01-02T00:00:01Z"}]


@pytest.mark.parametrize("what", ["votes", "judgments", "answers"])
@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_the_question_text_comes_on_request_last_and_audited(world, what, fmt, capsys):
    scope = {"dataset": world["dataset"]}
    plain = export_table(what, **scope)
    asked = export_table(what, **scope, question_text=True, actor=None, via="test")
    assert list(asked.fields) == [*plain.fields, "question_text"]
    rows = rows_of(asked, fmt)
    assert {row["question_text"] for row in rows} == {"What is 1 + 1?", "What is 2 + 2?"}
    entry = AuditEvent.objects.filter(target=f"export:{what}").order_by("pk").last()
    assert entry.details["question_text"] == "yes"


def test_the_question_text_through_the_api_and_the_command(world, client_as, researcher, capsys):
    response = client_as(researcher).get(
        reverse("api-export", args=["votes"]), {"campaign": "paper-votes", "question_text": "1", "format": "csv"}
    )
    text = b"".join(response.streaming_content).decode("utf-8-sig")
    header = text.splitlines()[0].split(",")
    assert header[-1] == "question_text" and "What is 1 + 1?" in text
    call_command("export", "--what", "judgments", "--run", str(world["run"].pk), "--question-text", "--format", "jsonl")
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(lines) == 4 and lines[0]["question_text"] == "What is 1 + 1?"
    refused = client_as(researcher).get(
        reverse("api-export", args=["items"]), {"dataset": "paper-data", "question_text": "1"}
    )
    assert refused.status_code == 400 and "question_text" in refused.json()["detail"]


def bundle(client, **query):
    response = client.get(reverse("api-export-bundle"), query)
    assert response.status_code == 200, response.content
    assert response.streaming and response["Content-Type"] == "application/zip"
    return response, zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))


@pytest.mark.parametrize(
    ("kind", "key", "files"),
    [
        ("study", "paper", ["submissions", "cases", "votes", "judgments", "leaderboard", "manifests"]),
        (
            "dataset",
            "paper-data",
            ["items", "answers", "votes", "judgments", "leaderboard", "manifests", "bt", "agreement"],
        ),
        ("run", None, ["judgments", "leaderboard", "manifests"]),
        ("campaign", "paper-votes", ["votes", "bt", "agreement"]),
    ],
)
@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_each_bundle_holds_every_table_its_manifest_and_a_data_dictionary(
    world, client_as, researcher, kind, key, files, fmt
):
    key = key or str(world["run"].pk)
    response, archive = bundle(client_as(researcher), **{kind: key, "format": fmt})
    assert response["Content-Disposition"].startswith(f'attachment; filename="{kind}-')
    assert archive.namelist() == [f"{name}.{fmt}" for name in files] + ["manifest.json", "README.txt"]
    manifest = json.loads(archive.read("manifest.json"))
    counts = {entry["file"]: entry["rows"] for entry in manifest["bundle"]["files"]}
    for name in files:
        body = archive.read(f"{name}.{fmt}").decode("utf-8-sig")
        lines = body.splitlines() if fmt == "jsonl" else list(csv.reader(io.StringIO(body)))[1:]
        assert counts[f"{name}.{fmt}"] == len(lines), name
    readme = archive.read("README.txt").decode()
    assert "Every timestamp is UTC, to the second" in readme and "6 decimal places" in readme
    for name in files:
        assert f"{name}.{fmt}: {counts[f'{name}.{fmt}']} row(s)" in readme
    if "votes" in files:
        assert "- winner_model: the name of the model that won" in readme
        assert counts[f"votes.{fmt}"] == 3
    expected_manifest = {
        "study": lambda m: m["study"]["slug"] == "paper",
        "dataset": lambda m: m["dataset"]["name"] == "paper-data",
        "run": lambda m: m["run"]["format"] == run_manifest(run=world["run"])["format"] == "userbench-run-manifest/1",
        "campaign": lambda m: "campaign" in m,
    }
    assert expected_manifest[kind](manifest)


def test_the_campaign_bundle_opens_in_a_spreadsheet_with_model_names(world, client_as, researcher):
    _response, archive = bundle(client_as(researcher), campaign="paper-votes")
    votes = list(csv.DictReader(io.StringIO(archive.read("votes.csv").decode("utf-8-sig"))))
    assert [row["winner_model"] for row in votes] == ["alpha", "beta", ""]
    assert votes[0]["created_at"] == "2026-11-28 09:48:06" and votes[0]["choice_probability"] == "0.333333"


def test_a_bundle_of_participant_data_is_audited_like_its_tables(world, client_as, researcher):
    bundle(client_as(researcher), study="paper")
    via = {(event.target, event.details["via"]) for event in AuditEvent.objects.filter(action="export")}
    assert {("export:submissions", "bundle"), ("export:cases", "bundle")} <= via


def test_another_workspace_gets_404_for_every_bundle(world, client_as):
    beta = Workspace.objects.create(slug="beta", name="Beta")
    outsider = UserFactory(username="outsider", roles=["researcher"], roles__workspace=beta)
    client = client_as(outsider)
    for kind, key in (
        ("study", "paper"),
        ("dataset", "paper-data"),
        ("run", str(world["run"].pk)),
        ("campaign", "paper-votes"),
    ):
        assert client.get(reverse("api-export-bundle"), {kind: key}).status_code == 404, kind
    assert not AuditEvent.objects.filter(action="export").exists()


def test_a_bundle_names_exactly_one_thing(world, client_as, researcher, annotator):
    client = client_as(researcher)
    assert client.get(reverse("api-export-bundle")).status_code == 400
    assert client.get(reverse("api-export-bundle"), {"study": "paper", "dataset": "paper-data"}).status_code == 400
    assert client_as(annotator).get(reverse("api-export-bundle"), {"study": "paper"}).status_code == 403


def test_every_page_links_its_bundle(world, client_as, researcher):
    client = client_as(researcher)
    pages = {
        reverse("curation:study-detail", args=["paper"]): "?study=paper",
        reverse("curation:dataset-detail", args=["paper-data"]): "?dataset=paper-data",
        reverse("judging:run-detail", args=[world["run"].pk]): f"?run={world['run'].pk}",
        reverse("annotation:results", args=["paper-votes"]): "?campaign=paper-votes",
    }
    for page, query in pages.items():
        html = get_computed(client, page).text
        assert f'href="/api/exports/bundle/{query}"' in html, page
    client.cookies["django_language"] = "zh-hans"
    assert "一个 ZIP 文件" in client.get(reverse("curation:study-detail", args=["paper"])).text


def test_the_zip_is_written_as_it_is_sent_with_memory_flat():
    """120,000 rows (about 8 MB of CSV) leave the writer in chunks of at most a little over
    CHUNK_BYTES, and the writer never holds more than a fraction of the whole."""

    def rows():
        for n in range(120_000):
            yield {"n": n, "text": f"row {n} of a long table, with some words to fill it {n * 7919 % 1000003}"}

    table = ExportTable(fields=["n", "text"], rows=rows())
    tracemalloc.start()
    sizes = []
    try:
        for chunk in iter_bundle(title="t", tables=[BundleTable(name="big", table=table)], manifest={}, fmt="csv"):
            sizes.append(len(chunk))
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sum(sizes) > 1_000_000 and len(sizes) > 10
    assert max(sizes) < 2 * 64 * 1024
    assert peak < 4 * 1024 * 1024
