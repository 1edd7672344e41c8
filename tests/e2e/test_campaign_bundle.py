"""A researcher downloads a campaign's bundle from its page in a real browser, in English and
Chinese, on a desktop and a phone, and opens it as a spreadsheet would: the votes name the
winning model, probabilities have at most 6 decimal places, timestamps are UTC to the second in
the form spreadsheets read as dates, and the zip holds its manifest and README.txt. On a desktop
the link is reached with the keyboard and followed with Enter."""

import csv
import datetime
import io
import json
import re
import zipfile

import pytest
from playwright.sync_api import expect

from annotation.campaigns import campaign_create
from annotation.figures import figures_read
from annotation.models import Campaign, Vote
from annotation.services import assignment_next, vote_cast
from core.exports import CSV_TIME
from tests.e2e.conftest import requests_kept_home
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
MODELS = ("acme/orion-large", "vega-7b", "lyra-mini")
WORDS = {
    "en": {"heading": "Results: Blind pilot", "bundle": "Everything in one zip (tables, manifest, README)"},
    "zh-hans": {"heading": "结果：Blind pilot", "bundle": "全部内容打包为一个 ZIP 文件（数据表、清单、说明）"},
}
# A cell a spreadsheet reads as a number with at most 6 decimal places.
SIX_DECIMALS = re.compile(r"-?\d+(\.\d{1,6})?")


def voted_adaptive_campaign() -> Campaign:
    """Three models (one named with a "/"), an adaptive campaign whose pairs are drawn with a
    probability, three pairs voted by both annotators: answer A's model wins, except the last
    vote, a tie (so raw agreement is 2/3). Its figures computed, as the background task does."""
    dataset = DatasetFactory(name="bundle-set")
    models = [CandidateModelFactory(name=name) for name in MODELS]
    for n in range(4):
        item = ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"Question {n}?")
        for model in models:
            AnswerFactory(item=item, model=model, text=f"{model.name} answers question {n}.")
    people = [UserFactory(username=f"rater{k}", roles=["annotator"]) for k in range(2)]
    UserFactory(username="res", roles=["researcher"])
    campaign = campaign_create(
        slug="bundle-pilot",
        title="Blind pilot",
        dataset=dataset,
        candidates=models,
        annotators=people,
        sampling=Campaign.Sampling.ADAPTIVE,
        budget=6,
        votes_per_pair=2,
    )
    cast = 0
    for person in people:
        while (assignment := assignment_next(campaign=campaign, annotator=person)) is not None:
            choice = "tie" if cast == 5 else ("left" if assignment.model_a_on_left else "right")
            vote_cast(token=assignment.token, annotator=person, choice=choice)
            cast += 1
    assert cast == 6
    figures_read(what="campaign", campaign=campaign, run=None, compute="missing")
    return campaign


def spreadsheet_rows(archive: zipfile.ZipFile, name: str) -> list[dict[str, str]]:
    """A CSV of the zip as a spreadsheet opens it: UTF-8 with a byte order mark (Excel reads
    Chinese right with it), rows by the csv module."""
    raw = archive.read(name)
    assert raw.startswith("\ufeff".encode()), name
    return list(csv.DictReader(io.StringIO(raw.decode("utf-8-sig"), newline="")))


def downloaded_zip(download) -> zipfile.ZipFile:
    assert download.failure() is None
    assert re.fullmatch(r"campaign-bundle-pilot[\w.-]*\.zip", download.suggested_filename), download.suggested_filename
    with open(download.path(), "rb") as stream:
        return zipfile.ZipFile(io.BytesIO(stream.read()))


def check_bundle(archive: zipfile.ZipFile) -> None:
    names = archive.namelist()
    assert names == ["votes.csv", "bt.csv", "agreement.csv", "manifest.json", "README.txt"]

    votes = spreadsheet_rows(archive, "votes.csv")
    stored = {vote.pk: vote for vote in Vote.objects.filter(campaign__slug="bundle-pilot").select_related("model_a")}
    assert len(votes) == len(stored) == 6
    for row in votes:
        vote = stored[int(row["vote_id"])]
        # The winner column says which side; winner_model names the model, as a paper reports it.
        expected = {"model_a": row["model_a"], "model_b": row["model_b"]}.get(row["winner"], "")
        assert row["winner_model"] == expected, row
        assert row["winner"] in ("model_a", "model_b", "tie")
        # UTC to the second, in the form spreadsheets read as a date and time.
        assert row["created_at"] == vote.created_at.astimezone(datetime.UTC).strftime(CSV_TIME), row
        assert datetime.datetime.strptime(row["created_at"], "%Y-%m-%d %H:%M:%S")
        assert SIX_DECIMALS.fullmatch(row["choice_probability"]), row
        assert abs(float(row["choice_probability"]) - vote.choice_probability) < 5e-7
        assert row["chosen_by"] in ("uniform", "information"), row
    winners = {row["winner_model"] for row in votes if row["winner"] != "tie"}
    assert winners and winners <= set(MODELS)
    assert "acme/orion-large" in {row["model_a"] for row in votes} | {row["model_b"] for row in votes}
    assert sum(row["winner"] == "tie" for row in votes) == 1

    # The statistics tables, also as a spreadsheet reads them: every rate or probability with at
    # most 6 decimal places.
    bt = spreadsheet_rows(archive, "bt.csv")
    assert {row["model"] for row in bt} == set(MODELS)
    agreement = spreadsheet_rows(archive, "agreement.csv")
    assert {"raw_agreement", "fleiss_kappa", "krippendorff_alpha"} <= {row["metric"] for row in agreement}
    for row in agreement:
        for column in ("agreement", "value"):
            assert row[column] == "" or SIX_DECIMALS.fullmatch(row[column]), row
    assert {row["metric"]: row["value"] for row in agreement}["raw_agreement"] == "0.666667"

    manifest = json.loads(archive.read("manifest.json"))
    assert manifest["campaign"]["campaign"] == "bundle-pilot"
    assert manifest["campaign"]["design"]["sampling"] == "adaptive"
    files = {entry["file"]: entry["rows"] for entry in manifest["bundle"]["files"]}
    assert files["votes.csv"] == 6 and set(files) == {"votes.csv", "bt.csv", "agreement.csv"}
    readme = archive.read("README.txt").decode("utf-8")
    assert "- winner_model: the name of the model that won" in readme
    assert "Every timestamp is UTC, to the second" in readme and "6 decimal places" in readme


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_campaign_bundle_opens_in_a_spreadsheet_with_the_models_named(
    live_server, signed_in_page, language, viewport
):
    words = WORDS[language]
    voted_adaptive_campaign()
    page = signed_in_page("res", language, viewport)
    outside = requests_kept_home(page, live_server.url)
    page.goto(f"{live_server.url}/campaigns/bundle-pilot/")
    expect(page.get_by_role("heading", level=1)).to_have_text(words["heading"])
    link = page.get_by_role("link", name=words["bundle"])
    expect(link).to_have_attribute("href", "/api/exports/bundle/?campaign=bundle-pilot")
    # The link is on the screen at phone width too, and the page never scrolls sideways.
    link.scroll_into_view_if_needed()
    box = link.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"], box
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0

    with page.expect_download() as download:
        link.click()
    check_bundle(downloaded_zip(download.value))

    if viewport is DESKTOP:
        # By keyboard: Tab from the link before it (the agreement table's JSONL) reaches the
        # bundle link, and Enter downloads it.
        before = page.locator("p.exports a").nth(-2)
        before.focus()
        page.keyboard.press("Tab")
        expect(link).to_be_focused()
        with page.expect_download() as again:
            page.keyboard.press("Enter")
        check_bundle(downloaded_zip(again.value))
    assert outside == []
