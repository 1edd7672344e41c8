"""A researcher reviews a study's submissions for Prolific in a real browser, in English and
Chinese, at desktop and phone width: the table with its flags, the filter, and the copy buttons
for the study URL and the IDs to approve (read back from the clipboard)."""

import pytest
from playwright.sync_api import expect

from curation.models import Submission
from tests.factories import SUBMISSIONS_T0, StudyFactory, SubmissionFactory, UserFactory, finished_submission

pytestmark = pytest.mark.django_db(transaction=True)

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
T0 = SUBMISSIONS_T0  # the moment finished_submission's cases consented
WORDS = {
    "en": {
        "table": "Submissions for Prolific",
        "flagged": "Flagged only",
        "filter": "Apply the filters",
        "copy_url": "Copy the study URL",
        "url_copied": "The study URL is copied.",
        "copy_approve": "Copy the IDs to approve",
        "copied": "Copied.",
        "speeder": "Speeder",
        "screened": "Screened out",
    },
    "zh-hans": {
        "table": "用于 Prolific 的提交列表",
        "flagged": "仅显示已标记",
        "filter": "应用筛选",
        "copy_url": "复制研究链接",
        "url_copied": "研究链接已复制。",
        "copy_approve": "复制要批准的 ID",
        "copied": "已复制。",
        "speeder": "过快作答",
        "screened": "已筛除",
    },
}


def no_sideways_scroll(page):
    page.wait_for_load_state("load")
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0


def within_width(page, locator):
    locator.scroll_into_view_if_needed()
    box = locator.bounding_box()
    return box is not None and box["x"] >= 0 and box["x"] + box["width"] <= page.viewport_size["width"]


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_researcher_reviews_submissions_and_copies_what_prolific_needs(
    page, live_server, log_in, blocked_requests, language, viewport
):
    words = WORDS[language]
    page.set_viewport_size(viewport)
    study = StudyFactory(slug="prolific", title_en="Prolific study", completion_code="C0MPL3TE", screenout_code="SCR")
    for pid, minutes, excluded in (("aaa", 10, False), ("bbb", 12, False), ("fast", 1, False), ("scr", 9, True)):
        finished_submission(study, pid, minutes, excluded=excluded)
    SubmissionFactory(study=study, prolific_pid="<i>typed</i>", status=Submission.Status.IN_PROGRESS)
    UserFactory(username="res", roles=["researcher"])
    page.context.add_cookies([{"name": "django_language", "value": language, "url": live_server.url}])
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    log_in("res", "pw-for-tests")

    page.goto(f"{live_server.url}/studies/prolific/")
    # The study URL with Prolific's placeholders, copied with one click.
    link = page.locator("#participant-link")
    expected_link = f"{live_server.url}/study/prolific/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}&SESSION_ID={{{{%SESSION_ID%}}}}"
    expect(link).to_have_value(expected_link)
    copy_url = page.get_by_role("button", name=words["copy_url"])
    assert within_width(page, copy_url)
    copy_url.click()
    expect(page.locator("#participant-link-copied")).to_have_text(words["url_copied"])
    assert page.evaluate("navigator.clipboard.readText()") == expected_link
    no_sideways_scroll(page)

    page.get_by_role("link", name=words["table"]).click()
    expect(page).to_have_url(f"{live_server.url}/studies/prolific/submissions/")
    rows = page.locator("#submissions-table tbody tr")
    expect(rows).to_have_count(5)
    expect(rows.filter(has_text="fast")).to_contain_text(words["speeder"])
    expect(rows.filter(has_text="scr")).to_contain_text(words["screened"])
    expect(rows.filter(has_text="scr")).to_contain_text("SCR")
    expect(page.locator("#submissions-table code", has_text="<i>typed</i>")).to_have_count(1)  # shown as text
    no_sideways_scroll(page)

    page.get_by_label(words["flagged"]).check()
    page.get_by_role("button", name=words["filter"], exact=True).click()
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("fast")

    copy_ids = page.get_by_role("button", name=words["copy_approve"])
    assert within_width(page, copy_ids)
    copy_ids.click()
    expect(page.locator("#ids-approve-copied")).to_have_text(words["copied"])
    assert page.evaluate("navigator.clipboard.readText()") == "aaa, bbb"
    no_sideways_scroll(page)
    assert blocked_requests == []
