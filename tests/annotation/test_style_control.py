"""Style-controlled Bradley-Terry from human votes, end to end: votes simulated from a known model
in which voters reward length on top of each model's strength; the style fit recovers both, and
the results page, the API and `bt --style` show it beside the plain fit."""

import csv
import io
import json
import math
import random

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import translation

from annotation.style_report import style_bt_report
from tests.factories import AnswerFactory, CampaignFactory, CandidateModelFactory, ItemFactory, UserFactory, VoteFactory
from tests.figures import get_computed


@pytest.fixture(autouse=True)
def back_to_the_default_language():
    """A page asked for in Chinese leaves Chinese active in this thread: later tests expect English."""
    yield
    translation.deactivate()


# True strengths (centred) and the length effect per unit of (a - b) / (a + b).
THETA = {"plain": -0.8, "sharp": 0.8, "wordy": 0.0}
GAMMA = 3.0


@pytest.fixture
def styled_campaign(db):
    rng = random.Random(11)
    models = {name: CandidateModelFactory(name=name) for name in [*THETA, "ghost"]}
    campaign = CampaignFactory(slug="styled")
    campaign.candidates.set([models[name] for name in THETA])
    items = [ItemFactory(dataset=campaign.dataset, external_id=f"s{n:03d}") for n in range(300)]
    lengths = {}
    for item in items:
        for name in THETA:
            length = rng.randint(800, 1600) if name == "wordy" else rng.randint(300, 700)
            lengths[(item.pk, name)] = length
            AnswerFactory(item=item, model=models[name], text="x" * length)
    for item in items:
        for vote in range(2):
            a, b = rng.sample(sorted(THETA), 2)
            la, lb = lengths[(item.pk, a)], lengths[(item.pk, b)]
            p_a = 1 / (1 + math.exp(-(THETA[a] - THETA[b] + GAMMA * (la - lb) / (la + lb))))
            winner = "model_a" if rng.random() < p_a else "model_b"
            VoteFactory(
                campaign=campaign,
                item=item,
                model_a=models[a],
                model_b=models[b],
                winner=winner,
                annotator_label=f"voter{vote}",
            )
    # A vote naming a model with no answer stored here, and a cannot-determine vote.
    VoteFactory(campaign=campaign, item=items[0], model_a=models["wordy"], model_b=models["ghost"], annotator_label="x")
    VoteFactory(
        campaign=campaign,
        item=items[1],
        model_a=models["sharp"],
        model_b=models["plain"],
        winner="cannot_determine",
        annotator_label="x",
    )
    return campaign


def test_style_fit_recovers_strengths_and_the_length_effect(styled_campaign):
    report = style_bt_report(campaign=styled_campaign, rounds=100, seed=1)
    assert (report["all_votes"], report["cannot_determine"], report["without_answers"]) == (602, 1, 1)
    assert report["votes"] == 600 and report["bootstrap_rounds"] == 100
    assert report["dropped_features"] == ["headers", "list_items", "bold"]
    assert report["disconnected"] == ["ghost"]
    scores = {row["label"]: row for row in report["scores"]}
    for name, theta in THETA.items():
        assert scores[name]["lower"] < theta < scores[name]["upper"], name
    [length] = report["coefficients"]
    assert length["feature"] == "length"
    # beta is per typical (RMS) difference; divided by the scale it is per unit of the ratio.
    assert length["lower"] / length["scale"] < GAMMA < length["upper"] / length["scale"]
    assert length["lower"] > 0


def test_results_page_api_and_bt_command_show_style_beside_plain(styled_campaign, client):
    client.force_login(UserFactory(username="style-res", roles=["researcher"]))
    page = get_computed(client, reverse("annotation:results", args=["styled"]) + "?rounds=100")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Style-controlled ranking" in html and 'id="style-table"' in html
    assert "1 vote names an answer that is not stored and is left out." in html
    # Without style control wordy's long answers put it first; with it, sharp is first.
    plain_table = html[html.index('id="bt-table"') : html.index('id="style-table"')]
    style_table = html[html.index('id="style-table"') : html.index('id="style-coefficients"')]
    assert plain_table.index("<td>wordy</td>") < plain_table.index("<td>sharp</td>")
    assert style_table.index("<td>sharp</td>") < style_table.index("<td>wordy</td>")
    assert style_table.count("↓1") == 1 and style_table.count("↑1") == 1

    api = client.get(reverse("api-campaign-bt-style", args=["styled"]) + "?rounds=20&seed=3")
    assert api.status_code == 200
    data = api.json()
    assert data["bootstrap_rounds"] == 20 and data["without_answers"] == 1
    assert [row["label"] for row in data["scores"]][0] == "sharp"
    assert data["coefficients"][0]["feature"] == "length"
    # Arena's Elo scale beside the style-held scores, as beside the plain ones: the mean model at
    # 1000 by default, or the model named by `anchor`, 400 / ln 10 points per unit.
    points = 400 / math.log(10)
    mean = sum(row["score"] for row in data["scores"]) / len(data["scores"])
    for row in data["scores"]:
        assert row["elo"] == pytest.approx(1000 + points * (row["score"] - mean), abs=1e-9)
        assert row["elo_lower"] == pytest.approx(1000 + points * (row["lower"] - mean), abs=1e-9)
    assert (data["elo_anchor"], data["elo_rating"]) == (None, 1000)
    anchored = client.get(reverse("api-campaign-bt-style", args=["styled"]) + "?rounds=20&seed=3&anchor=wordy").json()
    assert [row["elo"] for row in anchored["scores"] if row["label"] == "wordy"] == [pytest.approx(1000)]
    assert client.get(reverse("api-campaign-bt-style", args=["styled"]) + "?anchor=nobody").status_code == 400
    assert client.get(reverse("api-campaign-bt-style", args=["styled"]) + "?rounds=9999").status_code == 400

    out = io.StringIO()
    dataset = styled_campaign.dataset.name
    call_command("bt", "--dataset", dataset, "--campaign", "styled", "--style", "--bootstrap", "20", stdout=out)
    text = out.getvalue()
    assert "style-controlled" in text and "length" in text
    wordy_line = next(line for line in text.splitlines() if line.startswith("wordy"))
    assert wordy_line.rstrip().endswith("-1")
    out = io.StringIO()
    call_command(
        "bt",
        "--dataset",
        dataset,
        "--campaign",
        "styled",
        "--style",
        "--bootstrap",
        "20",
        "--format",
        "json",
        stdout=out,
    )
    both = json.loads(out.getvalue())
    assert both["style"]["scores"][0]["label"] == "sharp" and both["scores"][0]["label"] == "wordy"
    out = io.StringIO()
    call_command(
        "bt", "--dataset", dataset, "--campaign", "styled", "--style", "--bootstrap", "0", "--format", "csv", stdout=out
    )
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [row["model"] for row in rows] == ["sharp", "wordy", "plain"]
    assert [row["places_moved"] for row in rows] == ["1", "-1", "0"]


def test_results_page_in_chinese(styled_campaign, client):
    client.force_login(UserFactory(username="style-res-zh", roles=["researcher"]))
    client.cookies["django_language"] = "zh-hans"
    html = get_computed(client, reverse("annotation:results", args=["styled"]) + "?rounds=0").content.decode()
    assert "风格控制后的排名" in html and "长度" in html
