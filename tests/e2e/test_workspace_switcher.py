"""A researcher in two workspaces switches between them with the header's menu, on a desktop and a
phone, in English and in Chinese: the dashboard names the workspace and lists only its studies,
the choice holds on the next page, and "all my workspaces" brings both back."""

import pytest
from playwright.sync_api import expect

from core.models import Workspace
from core.workspaces import membership_set
from tests.factories import StudyFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 375, "height": 740}
WORDS = {
    "en": {
        "menu": "Workspace",
        "button": "Switch workspace",
        "named": "Workspace: Lab B (lab-b)",
        "all": "All my workspaces",
    },
    "zh-hans": {"menu": "工作区", "button": "切换工作区", "named": "工作区：Lab B（lab-b）", "all": "我的全部工作区"},
}


@pytest.mark.parametrize("language", ["en", "zh-hans"])
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_switcher_changes_the_current_workspace(signed_in_page, live_server, language, viewport):
    lab_a = Workspace.objects.create(slug="lab-a", name="Lab A")
    lab_b = Workspace.objects.create(slug="lab-b", name="Lab B")
    person = UserFactory(username="both", roles=["researcher"], roles__workspace=lab_a)
    membership_set(user=person, workspace=lab_b, roles=["researcher"])
    StudyFactory(slug="study-of-a", workspace=lab_a)
    StudyFactory(slug="study-of-b", workspace=lab_b)
    words = WORDS[language]

    page = signed_in_page("both", language, viewport)
    page.goto(f"{live_server.url}/dashboard/")
    switcher = page.get_by_test_id("workspace-switch")
    expect(switcher).to_be_visible()
    expect(page.get_by_text("study-of-a", exact=True)).to_be_visible()
    expect(page.get_by_text("study-of-b", exact=True)).to_be_visible()

    switcher.get_by_label(words["menu"]).select_option("lab-b")
    switcher.get_by_role("button", name=words["button"]).click()
    expect(page.get_by_test_id("dashboard-workspace")).to_contain_text(words["named"])
    expect(page.get_by_text("study-of-b", exact=True)).to_be_visible()
    expect(page.get_by_text("study-of-a", exact=True)).to_have_count(0)
    assert page.url == f"{live_server.url}/dashboard/"

    # Remembered for the session: the next page works in lab-b too.
    page.goto(f"{live_server.url}/dashboard/")
    expect(page.get_by_test_id("dashboard-workspace")).to_contain_text(words["named"])
    expect(page.get_by_test_id("workspace-switch").get_by_label(words["menu"])).to_have_value("lab-b")
    # The header still fits the screen.
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]

    switcher = page.get_by_test_id("workspace-switch")
    switcher.get_by_label(words["menu"]).select_option(label=words["all"])
    switcher.get_by_role("button", name=words["button"]).click()
    expect(page.get_by_text("study-of-a", exact=True)).to_be_visible()
    expect(page.get_by_text("study-of-b", exact=True)).to_be_visible()
