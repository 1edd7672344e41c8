"""BT as the anchors fit it, with Arena's Elo scale beside it, and style control that says when it
cannot be estimated (issue: results that cannot be silently wrong).

As reported: BT was fitted with alpha 0.01 by default where FastChat fits unregularised; scores
were natural-log strengths only; a singular style fit left the page reading "No votes yet." beside
"5 votes" and the API gave no reason.
"""

import csv
import io
import json
import math

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.report import bt_report
from stats.ranking import bradley_terry
from stats.tallies import pair_counts
from tests.factories import AnswerFactory, CampaignFactory, CandidateModelFactory, ItemFactory, VoteFactory
from tests.figures import get_computed

pytestmark = pytest.mark.django_db

# A strongly connected record: every model both wins and loses.
RECORD = [("alpha", "beta", "model_a")] * 5 + [("alpha", "beta", "model_b")] * 2
RECORD += [("beta", "gamma", "model_a")] * 4 + [("beta", "gamma", "model_b")] * 3
RECORD += [("alpha", "gamma", "model_a")] * 6 + [("alpha", "gamma", "model_b")] * 1


def _campaign(slug, record, *, answers=None):
    names = sorted({name for a, b, _w in record for name in (a, b)})
    models = {name: CandidateModelFactory(name=f"{slug}-{name}") for name in names}
    campaign = CampaignFactory(slug=slug)
    campaign.candidates.set(models.values())
    for n, (a, b, winner) in enumerate(record):
        item = ItemFactory(dataset=campaign.dataset, external_id=f"{slug}{n}")
        if answers is not None:
            AnswerFactory(item=item, model=models[a], text="x" * answers[a])
            AnswerFactory(item=item, model=models[b], text="x" * answers[b])
        VoteFactory(campaign=campaign, item=item, model_a=models[a], model_b=models[b], winner=winner)
    return campaign


def _plain_fit(record, slug, alpha):
    outcomes = [(f"{slug}-{a}", f"{slug}-{b}", "a" if w == "model_a" else "b") for a, b, w in record]
    labels = sorted({x for a, b, _w in outcomes for x in (a, b)})
    return {s.label: s.score for s in bradley_terry(pair_counts(labels, outcomes), alpha=alpha, rounds=0).scores}


def test_the_default_fit_is_unregularised_on_a_strongly_connected_graph():
    campaign = _campaign("sc", RECORD)
    report = bt_report(campaign=campaign, rounds=0)
    assert report["alpha"] == 0 and report["regularised"] is False
    assert report["regularisation"].startswith("unregularised (alpha 0)")
    fastchat = _plain_fit(RECORD, "sc", 0.0)
    assert {row["label"]: row["score"] for row in report["scores"]} == pytest.approx(fastchat, abs=1e-7)
    # Not the fit with alpha 0.01, which the default used to be.
    regularised = _plain_fit(RECORD, "sc", 0.01)
    assert report["scores"][0]["score"] != pytest.approx(regularised[report["scores"][0]["label"]], abs=1e-4)


def test_regularisation_only_where_the_graph_needs_it_and_the_report_says_why():
    # alpha never loses: its plain maximum-likelihood score would be infinite.
    record = [("alpha", "beta", "model_a")] * 3 + [("beta", "gamma", "model_a"), ("beta", "gamma", "model_b")]
    report = bt_report(campaign=_campaign("nc", record), rounds=0)
    assert report["regularised"] is True and report["alpha"] == 0.01
    assert report["regularisation"] == (
        "regularised (alpha 0.01) because 'nc-alpha' never lost to or tied with any other model: "
        "without it that score would be infinite"
    )


def test_elo_beside_the_log_strengths_in_the_api_anchored_at_the_mean_or_a_model(client, researcher):
    _campaign("elo", RECORD)
    client.force_login(researcher)
    url = reverse("api-campaign-bt", args=["elo"]) + "?rounds=50"
    get_computed(client, url)
    data = client.get(url).json()
    assert data["regularised"] is False and data["alpha"] == 0
    assert data["elo_anchor"] is None and data["elo_rating"] == 1000
    assert data["elo_points_per_unit"] == pytest.approx(400 / math.log(10))
    scores = data["scores"]
    assert sum(row["elo"] for row in scores) / len(scores) == pytest.approx(1000)
    for row in scores:
        assert row["elo"] == pytest.approx(1000 + 400 / math.log(10) * row["score"])
        assert row["elo_lower"] == pytest.approx(row["elo"] + 400 / math.log(10) * (row["lower"] - row["score"]))
    anchored = client.get(url + "&anchor=elo-gamma").json()
    by = {row["label"]: row for row in anchored["scores"]}
    assert anchored["elo_anchor"] == "elo-gamma" and by["elo-gamma"]["elo"] == pytest.approx(1000)
    gap = by["elo-alpha"]["score"] - by["elo-gamma"]["score"]
    assert by["elo-alpha"]["elo"] == pytest.approx(1000 + 400 / math.log(10) * gap)
    bad = client.get(url + "&anchor=nobody")
    assert bad.status_code == 400 and "nobody" in bad.json()["anchor"]


def test_the_results_page_shows_elo_and_which_fit(client, researcher):
    _campaign("page", RECORD)
    client.force_login(researcher)
    url = reverse("annotation:results", args=["page"])
    html = get_computed(client, url, {"rounds": 50}).text
    assert '<th scope="col" class="num">Elo</th>' in html
    assert "Fit unregularised (alpha 0), as FastChat fits it" in html
    assert "with the mean model at 1000." in html
    anchored = client.get(url, {"rounds": 50, "anchor": "page-beta"}).text
    assert "with page-beta at 1000." in anchored
    assert '<td>page-beta</td><td class="num">' in anchored
    row = anchored[anchored.index("<td>page-beta</td>") :]
    assert row.split("</tr>")[0].count('<td class="num">1000</td>') == 1


def test_bt_command_and_export_carry_elo_and_the_fit(client, researcher):
    campaign = _campaign("cmd", RECORD)
    dataset = campaign.dataset.name
    out = io.StringIO()
    call_command("bt", "--dataset", dataset, "--bootstrap", "20", stdout=out)
    text = out.getvalue()
    assert "Elo" in text.splitlines()[0]
    assert "Fit: unregularised (alpha 0)" in text
    assert "the mean model reads 1000." in text
    out = io.StringIO()
    call_command(
        "bt", "--dataset", dataset, "--bootstrap", "0", "--anchor", "cmd-alpha", "--format", "json", stdout=out
    )
    report = json.loads(out.getvalue())
    assert report["alpha"] == 0 and report["elo_anchor"] == "cmd-alpha"
    assert {row["label"]: row["elo"] for row in report["scores"]}["cmd-alpha"] == pytest.approx(1000)
    client.force_login(researcher)
    exported = client.get(reverse("api-export", args=["bt"]), {"dataset": dataset, "format": "csv"})
    rows = list(csv.DictReader(io.StringIO(b"".join(exported.streaming_content).decode("utf-8-sig"))))
    assert all(row["regularised"] == "False" and row["fit"].startswith("unregularised") for row in rows)
    for row in rows:
        assert float(row["elo"]) == pytest.approx(1000 + 400 / math.log(10) * float(row["coefficient"]))


def _singular_style_campaign():
    """Five votes between a model whose answers are always short and one whose answers are always
    long: length is model identity, the style fit is singular."""
    record = [("short", "long", "model_a" if n % 2 else "model_b") for n in range(5)]
    return _campaign("sing", record, answers={"short": 100, "long": 400})


def test_a_singular_style_fit_answers_200_with_the_reason(client, researcher):
    _singular_style_campaign()
    client.force_login(researcher)
    url = reverse("api-campaign-bt-style", args=["sing"]) + "?rounds=10"
    # The API computes figures it has never stored before answering.
    response = client.get(url)
    assert response.status_code == 200
    data = response.json()
    assert data["estimable"] is False and data["scores"] == [] and data["votes"] == 5
    assert data["reason"].startswith("not estimable: length nearly collinear with model identity")
    assert data["variance_inflation"] == {"length": None}


def test_the_page_greys_style_with_the_reason_and_never_says_no_votes_beside_a_count(client, researcher):
    _singular_style_campaign()
    client.force_login(researcher)
    html = get_computed(client, reverse("annotation:results", args=["sing"]), {"rounds": 10}).text
    assert "5 votes;" in html
    assert "No votes yet." not in html
    assert '<strong>Not estimable:</strong> <span lang="en">not estimable: length nearly collinear' in html
    assert 'id="style-table"' not in html


def test_votes_that_rank_nobody_are_not_called_no_votes(client, researcher):
    record = [("alpha", "beta", "cannot_determine")] * 3
    _campaign("cd", record)
    client.force_login(researcher)
    html = get_computed(client, reverse("annotation:results", args=["cd"]), {"rounds": 10}).text
    assert "No votes yet." not in html
    assert "No model is ranked from the 3 votes that count" in html


def test_bt_style_says_why_style_control_is_not_estimable():
    campaign = _singular_style_campaign()
    out = io.StringIO()
    call_command("bt", "--dataset", campaign.dataset.name, "--style", "--bootstrap", "10", stdout=out)
    assert "Style control not estimable: length nearly collinear with model identity" in out.getvalue()
