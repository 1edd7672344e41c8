"""Exports equal the page: every export link on a campaign's results page is scoped to that
campaign (`/api/exports/{votes,bt,agreement}/?campaign=<slug>`, `export --campaign`).

As reported: with a second campaign on the same dataset, the exported BT gave 0.672 (31 wins)
where the page showed 0.777 (28 wins), and the votes CSV mixed both campaigns.
"""

import csv
import io
import re

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from judging.models import JudgeRun
from tests.factories import (
    CampaignFactory,
    CandidateModelFactory,
    DatasetFactory,
    ItemFactory,
    JudgeRunFactory,
    JudgmentFactory,
    VoteFactory,
)
from tests.figures import get_computed

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_campaigns():
    """One dataset, two campaigns over the same three models with opposite verdicts, two raters each."""
    dataset = DatasetFactory(name="shared")
    models = [CandidateModelFactory(name=name) for name in ("alpha", "beta", "gamma")]
    items = [ItemFactory(dataset=dataset, external_id=f"s{n}") for n in range(6)]
    campaigns = []
    for slug, favourite in (("first", 0), ("second", 2)):
        campaign = CampaignFactory(slug=slug, title=slug, dataset=dataset)
        campaign.candidates.set(models)
        for n, item in enumerate(items):
            for a, b in ((0, 1), (1, 2), (0, 2)):
                for rater in ("r1", "r2"):
                    # The favourite wins most of its duels; one vote in six goes the other way.
                    wins_a = (a == favourite) != (n == 0 and rater == "r2") if favourite in (a, b) else n % 2 == 0
                    VoteFactory(
                        campaign=campaign,
                        item=item,
                        model_a=models[a],
                        model_b=models[b],
                        winner="model_a" if wins_a else "model_b",
                        annotator_label=rater,
                    )
        campaigns.append(campaign)
    run = JudgeRunFactory(dataset=dataset, status=JudgeRun.Status.FINISHED)
    for item in items:
        for model, score in zip(models, (8, 6, 4), strict=True):
            JudgmentFactory(run=run, item=item, model=model, final_score=score)
    return campaigns


def _csv(response) -> list[dict]:
    text = b"".join(response.streaming_content).decode("utf-8-sig")
    return list(csv.DictReader(io.StringIO(text)))


def _page_bt(html: str) -> dict[str, tuple[str, str]]:
    """Model -> (BT score, wins) as the results page's table shows them."""
    table = html[html.index('id="bt-table"') : html.index("</table>", html.index('id="bt-table"'))]
    rows = {}
    for label, cells in re.findall(r"<td>([a-z]+)</td>(.*?)</tr>", table, re.S):
        numbers = [cell.split("<", 1)[0] for cell in cells.split('<td class="num">')[1:]]
        rows[label] = (numbers[0], numbers[2])
    return rows


def test_the_page_and_its_exports_agree_for_two_campaigns_on_one_dataset(two_campaigns, client, researcher):
    client.force_login(researcher)
    seen = {}
    for campaign in two_campaigns:
        html = get_computed(client, reverse("annotation:results", args=[campaign.slug])).text
        for what in ("votes", "bt", "agreement"):
            assert f"/api/exports/{what}/?campaign={campaign.slug}&amp;format=csv" in html
        page = _page_bt(html)
        exported = _csv(client.get(reverse("api-export", args=["bt"]), {"campaign": campaign.slug}))
        assert {row["model"]: (f"{float(row['coefficient']):.3f}", row["wins"]) for row in exported} == page
        seen[campaign.slug] = page
        votes = _csv(client.get(reverse("api-export", args=["votes"]), {"campaign": campaign.slug}))
        assert len(votes) == 36 and {row["campaign"] for row in votes} == {campaign.slug}
        assert f"{len(votes)} votes;" in html
        agreement = _csv(client.get(reverse("api-export", args=["agreement"]), {"campaign": campaign.slug}))
        raw = next(row for row in agreement if row["metric"] == "raw_agreement")
        page_raw = re.search(r"Raw agreement, ties included</th><td class=\"num\">([0-9.]+)<", html).group(1)
        assert f"{float(raw['value']):.3f}" == page_raw
    # The two campaigns disagree, so a dataset-wide export could equal neither page.
    assert seen["first"]["alpha"] != seen["second"]["alpha"]
    dataset_wide = _csv(client.get(reverse("api-export", args=["bt"]), {"dataset": "shared"}))
    assert {row["model"]: row["wins"] for row in dataset_wide} != {k: v[1] for k, v in seen["first"].items()}


def test_export_campaign_on_the_command_line(two_campaigns):
    out = io.StringIO()
    call_command("export", "--what", "votes", "--campaign", "second", stdout=out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue().lstrip("\ufeff"))))
    assert len(rows) == 36 and {row["campaign"] for row in rows} == {"second"}
    with pytest.raises(CommandError, match="No campaign with slug 'nope'"):
        call_command("export", "--what", "votes", "--campaign", "nope")
    with pytest.raises(CommandError, match="The campaign scope applies to agreement, bt, votes, not to 'items'"):
        call_command("export", "--what", "items", "--campaign", "second")
