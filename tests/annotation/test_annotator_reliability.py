"""Annotator reliability wherever Bradley-Terry is: `bt --annotator-reliability`, the API's
?annotators=reliability, the results page (English and Chinese), a stored figure like the others;
votes to separate neighbours; and `--weights ipw`."""

import io
import json
import math
import random

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from django.utils import translation

from annotation.models import StoredFigures
from tests.factories import CampaignFactory, CandidateModelFactory, ItemFactory, UserFactory, VoteFactory
from tests.figures import get_computed

THETA = {"alpha": 1.2, "bravo": 0.5, "charlie": -0.3, "delta": -1.4}
# Three careful annotators, one voting at random, one voting against the truth.
KINDS = {"ann": "careful", "bea": "careful", "cy": "careful", "dice": "random", "eve": "adversarial"}


@pytest.fixture(autouse=True)
def back_to_the_default_language():
    yield
    translation.deactivate()


@pytest.fixture
def noisy_campaign(db):
    rng = random.Random(5)
    models = {name: CandidateModelFactory(name=name) for name in THETA}
    campaign = CampaignFactory(slug="noisy")
    campaign.candidates.set(models.values())
    items = [ItemFactory(dataset=campaign.dataset, external_id=f"n{k:03d}") for k in range(120)]
    names = sorted(THETA)
    for item in items:
        for who, kind in KINDS.items():
            a, b = rng.sample(names, 2)
            p = 1 / (1 + math.exp(-(THETA[a] - THETA[b])))
            if kind == "random":
                p = 0.5
            elif kind == "adversarial":
                p = 1 - p
            winner = "model_a" if rng.random() < p else "model_b"
            VoteFactory(
                campaign=campaign,
                item=item,
                model_a=models[a],
                model_b=models[b],
                winner=winner,
                annotator_label=who,
                choice_probability=1 / 6,
            )
    return campaign


def _bt_json(campaign, *extra):
    out = io.StringIO()
    call_command(
        "bt", "--dataset", campaign.dataset.name, "--campaign", campaign.slug, *extra, "--format", "json", stdout=out
    )
    return json.loads(out.getvalue())


def test_bt_command_json_keeps_scores_and_adds_annotators(noisy_campaign):
    plain = _bt_json(noisy_campaign, "--bootstrap", "50")
    report = _bt_json(noisy_campaign, "--annotator-reliability", "--bootstrap", "50")
    assert [row["label"] for row in report["scores"]] == ["alpha", "bravo", "charlie", "delta"]
    for row in report["scores"]:
        assert {"label", "score", "lower", "upper", "elo", "elo_lower", "elo_upper"} <= set(row)
        assert row["lower"] < row["score"] < row["upper"]
    people = {row["label"]: row for row in report["annotators"]}
    assert set(people) == set(KINDS)
    for row in people.values():
        assert {"label", "reliability", "lower", "upper", "votes"} <= set(row)
        assert row["votes"] == 120
    careful = min(people[name]["reliability"] for name in ("ann", "bea", "cy"))
    assert people["dice"]["reliability"] < careful and people["eve"]["reliability"] < careful
    assert people["eve"]["flags"] == ["adversarial"]
    assert people["dice"]["flags"] == ["careless"]
    assert [people[name]["flags"] for name in ("ann", "bea", "cy")] == [[], [], []]
    assert report["anchor"]["kind"] == "consistent" and set(report["anchor"]["annotators"]) <= {"ann", "bea", "cy"}
    # The random and the adversarial annotator pull the plain fit together; the reliability fit does not.
    spread = {r["label"]: r["score"] for r in report["scores"]}
    plain_spread = {r["label"]: r["score"] for r in plain["scores"]}
    assert spread["alpha"] - spread["delta"] > plain_spread["alpha"] - plain_spread["delta"] + 0.5
    assert report["plain_moved"] != []
    # Votes to separate: one row per pair of neighbours, the first the top model against the second.
    assert [(row["higher"], row["lower"]) for row in report["votes_to_separate"]] == [
        ("alpha", "bravo"),
        ("bravo", "charlie"),
        ("charlie", "delta"),
    ]
    assert len(plain["votes_to_separate"]) == 3

    text = io.StringIO()
    call_command(
        "bt", "--dataset", noisy_campaign.dataset.name, "--campaign", "noisy", "--annotator-reliability",
        "--bootstrap", "20", stdout=text,
    )  # fmt: skip
    assert "Annotator reliability" in text.getvalue() and "adversarial" in text.getvalue()
    assert "alpha > bravo" in text.getvalue()
    with pytest.raises(CommandError, match="cannot be combined"):
        call_command(
            "bt", "--dataset", noisy_campaign.dataset.name, "--annotator-reliability", "--style", stdout=io.StringIO()
        )


def test_api_with_annotators_reliability_is_a_stored_figure(noisy_campaign, client):
    client.force_login(UserFactory(username="rel-api", roles=["researcher"]))
    url = reverse("api-campaign-bt", args=["noisy"])
    data = client.get(url + "?annotators=reliability&rounds=30").json()
    assert data["bootstrap_rounds"] == 30
    assert {row["label"] for row in data["annotators"]} == set(KINDS)
    assert [row["label"] for row in data["scores"]][0] == "alpha"
    assert data["votes_to_separate"][0]["higher"] == "alpha"
    assert StoredFigures.objects.filter(what="reliability", campaign=noisy_campaign, rounds=30).count() == 1
    plain = client.get(url + "?rounds=30").json()
    assert "annotators" not in plain and len(plain["votes_to_separate"]) == 3
    response = client.get(url + "?annotators=everyone")
    assert response.status_code == 400 and "annotators" in response.json()


def test_results_page_shows_the_quality_section_in_english_and_chinese(noisy_campaign, client):
    client.force_login(UserFactory(username="rel-page", roles=["researcher"]))
    url = reverse("annotation:results", args=["noisy"]) + "?rounds=30"
    html = get_computed(client, url).content.decode()
    section = html[html.index('id="annotator-reliability"') :]
    table = section[section.index('id="reliability-table"') : section.index("</table>")]
    assert table.count("<tr>") == 1 + len(KINDS)
    eve = table[table.index("<td>eve</td>") :].split("</tr>")[0]
    assert "Adversarial" in eve
    dice = table[table.index("<td>dice</td>") :].split("</tr>")[0]
    assert "Careless" in dice
    ann = table[table.index("<td>ann</td>") :].split("</tr>")[0]
    assert "Careless" not in ann and "Adversarial" not in ann
    assert 'id="reliability-moves-plain"' in html
    assert 'id="bt-separation"' in html and "(top against second)" in html

    client.cookies["django_language"] = "zh-hans"
    zh = client.get(url).content.decode()
    assert "标注员可靠性" in zh and "对抗" in zh and "还需多少票" in zh


def test_ipw_weights_need_every_vote_to_carry_its_probability(noisy_campaign):
    weighted = _bt_json(noisy_campaign, "--weights", "ipw", "--bootstrap", "0")
    plain = _bt_json(noisy_campaign, "--bootstrap", "0")
    assert weighted["weights"] == "ipw"
    # Every vote has the same probability here: the weights change nothing.
    for a, b in zip(weighted["scores"], plain["scores"], strict=True):
        assert a["label"] == b["label"] and a["score"] == pytest.approx(b["score"], abs=1e-8)
    VoteFactory(
        campaign=noisy_campaign,
        item=ItemFactory(dataset=noisy_campaign.dataset),
        model_a=noisy_campaign.candidates.get(name="alpha"),
        model_b=noisy_campaign.candidates.get(name="bravo"),
        winner="model_a",
        annotator_label="ann",
    )
    with pytest.raises(CommandError, match="1 of the 601 counted votes have none"):
        _bt_json(noisy_campaign, "--weights", "ipw", "--bootstrap", "0")


def test_models_the_votes_do_not_connect_are_left_out_as_in_the_plain_fit(noisy_campaign):
    ghost, x, y = (CandidateModelFactory(name=name) for name in ("ghost", "xray", "yank"))
    noisy_campaign.candidates.add(ghost, x, y)
    item = ItemFactory(dataset=noisy_campaign.dataset)
    for winner in ("model_a", "model_b", "model_a"):
        VoteFactory(campaign=noisy_campaign, item=item, model_a=x, model_b=y, winner=winner, annotator_label="ann")
    report = _bt_json(noisy_campaign, "--annotator-reliability", "--bootstrap", "10")
    plain = _bt_json(noisy_campaign, "--bootstrap", "0")
    assert report["disconnected"] == sorted(plain["disconnected"]) == ["ghost", "xray", "yank"]
    assert [row["label"] for row in report["scores"]] == ["alpha", "bravo", "charlie", "delta"]
    assert report["votes"] == 603 and report["comparisons"] == 600
    out = io.StringIO()
    call_command(
        "bt", "--dataset", noisy_campaign.dataset.name, "--campaign", "noisy", "--annotator-reliability",
        "--bootstrap", "10", "--format", "csv", stdout=out,
    )  # fmt: skip
    rows = [line.split(",") for line in out.getvalue().splitlines()[1:]]
    # The ranked models from the reliability fit, then the unranked ones, as the plain csv lists them.
    assert [(row[1], row[2]) for row in rows] == [
        ("1", "alpha"), ("2", "bravo"), ("3", "charlie"), ("4", "delta"), ("", "ghost"), ("", "xray"), ("", "yank"),
    ]  # fmt: skip
