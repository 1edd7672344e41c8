"""A person working across two workspaces reads, on a desktop and a phone, in English and Chinese,
the runs list and the annotation queue with a Workspace column, and keeps each to one workspace
with the filter above it; the page still fits the screen."""

import pytest
from playwright.sync_api import expect

from core.models import Workspace
from core.workspaces import membership_set
from tests.factories import CampaignFactory, DatasetFactory, JudgeRunFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 375, "height": 740}
WORDS = {
    "en": {"column": "Workspace", "show": "Show", "all": "All your workspaces"},
    "zh-hans": {"column": "工作区", "show": "显示", "all": "您的全部工作区"},
}


@pytest.mark.parametrize("language", ["en", "zh-hans"])
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_lists_name_the_workspace_and_keep_to_one(signed_in_page, live_server, language, viewport):
    lab_a = Workspace.objects.create(slug="lab-a", name="Lab Alpha")
    lab_b = Workspace.objects.create(slug="lab-b", name="Lab Beta")
    person = UserFactory(username="both", roles=["researcher", "annotator"], roles__workspace=lab_a)
    membership_set(user=person, workspace=lab_b, roles=["researcher", "annotator"])
    for lab, letter in ((lab_a, "a"), (lab_b, "b")):
        dataset = DatasetFactory(name=f"data-{letter}", workspace=lab)
        JudgeRunFactory(dataset=dataset, workspace=lab)
        campaign = CampaignFactory(slug=f"camp-{letter}", title=f"Campaign {letter}", dataset=dataset, workspace=lab)
        campaign.annotators.add(person)
    words = WORDS[language]

    page = signed_in_page("both", language, viewport)
    for path, a_row, b_row in (("/runs/", "data-a", "data-b"), ("/annotate/", "Campaign a", "Campaign b")):
        page.goto(f"{live_server.url}{path}")
        table = page.locator("main table")
        expect(table.get_by_role("columnheader", name=words["column"], exact=True)).to_be_visible()
        expect(table.get_by_role("row").filter(has_text=a_row)).to_contain_text("Lab Alpha")
        expect(table.get_by_role("row").filter(has_text=b_row)).to_contain_text("Lab Beta")

        chooser = page.get_by_test_id("workspace-filter")
        chooser.get_by_label(words["column"]).select_option("lab-b")
        chooser.get_by_role("button", name=words["show"]).click()
        expect(table.get_by_role("row").filter(has_text=b_row)).to_be_visible()
        expect(table.get_by_role("row").filter(has_text=a_row)).to_have_count(0)
        assert page.url == f"{live_server.url}{path}?workspace=lab-b"
        expect(page.get_by_test_id("workspace-filter").get_by_label(words["column"])).to_have_value("lab-b")
        assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]

        chooser = page.get_by_test_id("workspace-filter")
        chooser.get_by_label(words["column"]).select_option(label=words["all"])
        chooser.get_by_role("button", name=words["show"]).click()
        expect(table.get_by_role("row").filter(has_text=a_row)).to_be_visible()
