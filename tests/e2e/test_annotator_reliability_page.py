"""A researcher reads the annotators' reliabilities on a campaign's results page, in English and
in Chinese: the careless and the adversarial annotator are flagged, the careful ones are not."""

import math
import random

import pytest
from playwright.sync_api import expect

from annotation.figures import figures_read
from annotation.reliability_report import RELIABILITY_ROUNDS
from tests.factories import CampaignFactory, CandidateModelFactory, ItemFactory, UserFactory, VoteFactory

pytestmark = pytest.mark.django_db(transaction=True)

THETA = {"alpha": 1.2, "bravo": 0.5, "charlie": -0.3, "delta": -1.4}
KINDS = {"ann": "careful", "bea": "careful", "cy": "careful", "dice": "random", "eve": "adversarial"}


def build_campaign():
    rng = random.Random(5)
    models = {name: CandidateModelFactory(name=name) for name in THETA}
    campaign = CampaignFactory(slug="reliable", title="Reliability campaign")
    campaign.candidates.set(models.values())
    names = sorted(THETA)
    for k in range(120):
        item = ItemFactory(dataset=campaign.dataset, external_id=f"r{k:03d}")
        for who, kind in KINDS.items():
            a, b = rng.sample(names, 2)
            p = {"careful": 1 / (1 + math.exp(-(THETA[a] - THETA[b]))), "random": 0.5}.get(kind)
            if p is None:
                p = 1 / (1 + math.exp(THETA[a] - THETA[b]))
            VoteFactory(
                campaign=campaign,
                item=item,
                model_a=models[a],
                model_b=models[b],
                winner="model_a" if rng.random() < p else "model_b",
                annotator_label=who,
            )
    UserFactory(username="lead", roles=["researcher"])
    # What the background task does once the votes are in.
    figures_read(what="campaign", campaign=campaign, compute="missing")
    figures_read(what="style", campaign=campaign, rounds=200, compute="missing")
    figures_read(what="reliability", campaign=campaign, rounds=RELIABILITY_ROUNDS, compute="missing")
    return campaign


def test_the_quality_section_flags_careless_and_adversarial_annotators(page, live_server, log_in, blocked_requests):
    build_campaign()
    log_in("lead", "pw-for-tests")
    page.goto(f"{live_server.url}/campaigns/reliable/")
    section = page.locator("#annotator-reliability")
    expect(section.get_by_role("heading", level=2)).to_have_text("Annotator reliability")
    rows = section.locator("#reliability-table tbody tr")
    expect(rows).to_have_count(5)
    expect(rows.filter(has_text="eve")).to_contain_text("Adversarial")
    expect(rows.filter(has_text="dice")).to_contain_text("Careless")
    for name in ("ann", "bea", "cy"):
        expect(rows.filter(has_text=name).locator(".flagged")).to_have_count(0)
    expect(page.locator("#reliability-moves-plain")).to_be_visible()
    expect(section.locator("#reliability-bt-table tbody tr").first).to_contain_text("alpha")
    expect(page.locator("#bt-separation tbody tr")).to_have_count(3)

    page.get_by_label("Language").select_option("zh-hans")
    page.get_by_role("button", name="Switch").click()
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    expect(page.locator("#annotator-reliability").get_by_role("heading", level=2)).to_have_text("标注员可靠性")
    expect(page.locator("#reliability-table tbody tr").filter(has_text="eve")).to_contain_text("对抗")
    assert blocked_requests == []
