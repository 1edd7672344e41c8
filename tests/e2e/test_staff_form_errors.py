"""A staff form sent with several mistakes says all of them at once: a summary at the top with
every error linked to its field, the first wrong field focused, the typed values kept; in English
and Chinese, on a desktop and a phone. /studies/new/ and /campaigns/new/ used to report one
mistake per submit with no summary."""

import pytest
from playwright.sync_api import expect

from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
HEADING = {"en": "problems to fix", "zh-hans": "处需要修改"}
SAVE_STUDY = {"en": "Save study", "zh-hans": "保存研究"}


def check_summary(page, language):
    """Every error is in the summary, each linked to a field that exists; the first is focused."""
    summary = page.get_by_test_id("error-summary")
    expect(summary).to_be_visible()
    expect(summary.locator("h2")).to_contain_text(HEADING[language])
    links = summary.locator("a")
    anchors = [links.nth(k).get_attribute("href") for k in range(links.count())]
    assert len(anchors) >= 2, anchors
    for anchor in anchors:
        expect(page.locator(anchor)).to_have_count(1)
    # The page opens on the first wrong field, and the summary's links lead to the others.
    expect(page.locator(anchors[0])).to_be_focused()
    links.nth(1).click()
    expect(page).to_have_url(page.url.split("#")[0] + anchors[1])
    # The inline errors stay beside their fields, as many as the summary lists.
    assert page.locator(".has-error").count() == len(anchors)
    return anchors


@pytest.mark.parametrize(
    ("language", "viewport"), [("en", DESKTOP), ("zh-hans", PHONE)], ids=["en-desktop", "zh-phone"]
)
def test_a_new_study_with_several_mistakes_says_all_of_them(signed_in_page, live_server, language, viewport):
    UserFactory(username="res", roles=["researcher"])
    page = signed_in_page("res", language, viewport)
    page.goto(f"{live_server.url}/studies/new/")
    page.locator("#id_slug").fill("Not a slug!")
    page.locator("#id_consent_en").fill("Consent I typed and want to keep.")
    page.get_by_role("button", name=SAVE_STUDY[language]).click()
    anchors = check_summary(page, language)
    assert "#id_slug" in anchors
    expect(page.locator("#id_consent_en")).to_have_value("Consent I typed and want to keep.")


@pytest.mark.parametrize(
    ("language", "viewport"), [("en", PHONE), ("zh-hans", DESKTOP)], ids=["en-phone", "zh-desktop"]
)
def test_a_new_campaign_with_several_mistakes_says_all_of_them(signed_in_page, live_server, language, viewport):
    dataset = DatasetFactory(name="pilot")
    for name in ("north", "south"):
        model = CandidateModelFactory(name=name)
        AnswerFactory(item=ItemFactory(dataset=dataset, external_id=f"q-{name}"), model=model)
    UserFactory(username="res", roles=["researcher"])
    page = signed_in_page("res", language, viewport)
    page.goto(f"{live_server.url}/campaigns/new/?dataset=pilot")
    page.locator("#id_slug").fill("Not a slug!")
    page.locator("form button[type=submit].primary").last.click()
    anchors = check_summary(page, language)
    assert "#id_slug" in anchors
