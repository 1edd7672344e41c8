"""A researcher archives a dataset, a run and a campaign from their pages, finds each gone from
its list, and restores it, each asked first: in English and Chinese, on a desktop and a phone."""

import pytest
from playwright.sync_api import expect

from judging.models import JudgeRun
from tests.factories import CampaignFactory, DatasetFactory, JudgeRunFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 375, "height": 740}
WORDS = {
    "en": {
        "archive": "Archive…",
        "confirm": "Yes, archive it",
        "restore": "Restore…",
        "confirm_restore": "Yes, restore it",
        "note": "Archived on",
    },
    "zh-hans": {
        "archive": "归档…",
        "confirm": "确认归档",
        "restore": "恢复…",
        "confirm_restore": "确认恢复",
        "note": "归档于",
    },
}


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_archive_and_restore_a_dataset_a_run_and_a_campaign(live_server, signed_in_page, language, viewport):
    UserFactory(username="res", roles=["researcher"])
    dataset = DatasetFactory(name="pilot-set")
    run = JudgeRunFactory(dataset=dataset, status=JudgeRun.Status.FINISHED)
    CampaignFactory(slug="pilot-camp", title="Pilot campaign", dataset=dataset)
    page = signed_in_page("res", language, viewport)
    words = WORDS[language]
    # The run and the campaign first: a dataset is archived last and restored first, as a run or
    # campaign waits for its dataset to be restored.
    objects = [
        (f"/runs/{run.pk}/", "/runs/", f'a[href="/runs/{run.pk}/"]'),
        ("/campaigns/pilot-camp/", "/dashboard/", 'a[href="/campaigns/pilot-camp/"]'),
        ("/datasets/pilot-set/", "/datasets/", 'a[href="/datasets/pilot-set/"]'),
    ]
    for detail, listing, link in objects:
        page.goto(live_server.url + listing)
        expect(page.locator(link).first).to_be_visible()
        page.goto(live_server.url + detail)
        confirm = page.get_by_role("button", name=words["confirm"])
        expect(confirm).to_be_hidden()  # behind the confirmation
        page.locator("details[data-archive] summary").click()
        expect(page.locator("details[data-archive] summary")).to_have_text(words["archive"])
        confirm.click()
        expect(page.locator("[data-archived] strong")).to_contain_text(words["note"])
        # The restore is behind its own confirmation, as the archive is.
        expect(page.locator("details[data-restore] summary")).to_have_text(words["restore"])
        expect(page.get_by_role("button", name=words["confirm_restore"])).to_be_hidden()
        assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
        page.goto(live_server.url + listing)
        expect(page.locator(link)).to_have_count(0)
    for detail, listing, link in reversed(objects):
        page.goto(live_server.url + detail)
        confirm = page.get_by_role("button", name=words["confirm_restore"])
        expect(confirm).to_be_hidden()
        page.locator("details[data-restore] summary").click()
        confirm.click()
        expect(page.locator("details[data-archive]")).to_be_visible()
        expect(page.locator("[data-archived]")).to_have_count(0)
        page.goto(live_server.url + listing)
        expect(page.locator(link).first).to_be_visible()
