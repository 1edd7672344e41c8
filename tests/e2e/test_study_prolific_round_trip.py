"""The Prolific round-trip in a browser, in English and Chinese, on a desktop and a phone: a
screened-out participant is sent back to Prolific with the screen-out code, and the thank-you page
shows that code and the link back, on the screen; a second Prolific ID in the same browser meets a
confirmation page about the browser, and the first ID, back in that browser, finds its own answers."""

import re

import pytest
from playwright.sync_api import expect

from curation.models import StudyStep, Submission
from tests.e2e.conftest import sent_to
from tests.factories import CaseFactory, StudyFactory

pytestmark = pytest.mark.django_db(transaction=True)

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}

TEXTS = {
    "en": {
        "agree": "I have read the notice above and agree to take part.",
        "start": "Start",
        "submit": "Submit my answers",
        "screenout": "Your screen-out code:",
        "return": "Return to Prolific",
        "switch_heading": "Another Prolific ID in this browser",
        "switch_held": "This browser is already filling in a questionnaire of this study under another Prolific ID.",
        "switch_yes": "Yes, continue with this Prolific ID",
        "cases": "You have reported {n} case.",
        "cases_plural": "You have reported {n} cases.",
    },
    "zh-hans": {
        "agree": "我已阅读上述说明并同意参与。",
        "start": "开始",
        "submit": "提交我的回答",
        "screenout": "您的筛除代码：",
        "return": "返回 Prolific",
        "switch_heading": "此浏览器中的另一个 Prolific ID",
        "switch_held": "此浏览器正在以另一个 Prolific ID 填写本研究的问卷。",
        "switch_yes": "是，使用此 Prolific ID 继续",
        "cases": "您已报告 {n} 个案例。",
        "cases_plural": "您已报告 {n} 个案例。",
    },
}


@pytest.fixture
def prolific(page):
    page.route(
        re.compile(r"^https://app\.prolific\.com/.*"),
        lambda route: route.fulfill(status=200, content_type="text/html", body="<h1>Prolific</h1>"),
    )


@pytest.fixture
def study(db):
    return StudyFactory(slug="trip", min_cases=1, max_cases=3, completion_code="DONE-E2E", screenout_code="SCR-E2E")


def fits_the_screen(page, locator) -> None:
    """The page never scrolls sideways, and `locator` lies wholly on the screen's width."""
    page.wait_for_load_state("load")
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
    locator.scroll_into_view_if_needed()
    box = locator.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= page.viewport_size["width"], box


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_screened_out_participant_gets_the_code_and_the_way_back(
    page, live_server, study, prolific, language, viewport, blocked_requests
):
    words = TEXTS[language]
    page.set_viewport_size(viewport)
    # A questionnaire at its last page whose attention check chose 5 where 2 was asked.
    submission = Submission.objects.create(
        study=study,
        prolific_pid=f"screened-{language}",
        current_step=StudyStep.REVIEW,
        usage={"llms_used": ["ChatGPT"], "frequency": "daily", "satisfaction": {}, "attention_check": 5},
        attention_passed=False,
    )
    CaseFactory(submission=submission, position=1)
    page.context.add_cookies([{"name": "django_language", "value": language, "url": live_server.url}])
    page.goto(f"{live_server.url}/study/trip/resume/?token={submission.resume_token}")
    with sent_to(page, "https://app.prolific.com/submissions/complete?cc=SCR-E2E"):
        page.get_by_role("button", name=words["submit"]).click()
    assert Submission.objects.get(pk=submission.pk).excluded is True

    page.goto(f"{live_server.url}/study/trip/done/")
    expect(page.get_by_text(words["screenout"])).to_be_visible()
    expect(page.locator("#completion-code")).to_have_text("SCR-E2E")
    back = page.get_by_role("link", name=words["return"])
    expect(back).to_have_attribute("href", "https://app.prolific.com/submissions/complete?cc=SCR-E2E")
    expect(page.locator("#screened-out")).to_be_visible()
    fits_the_screen(page, page.locator("#completion-code"))
    fits_the_screen(page, back)
    # The way back is a link a thumb can follow: it leads to Prolific with the screen-out code.
    with sent_to(page, "https://app.prolific.com/submissions/complete?cc=SCR-E2E"):
        back.click()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_second_prolific_id_in_this_browser_asks_first(
    page, live_server, study, language, viewport, blocked_requests
):
    words = TEXTS[language]
    page.set_viewport_size(viewport)
    page.context.add_cookies([{"name": "django_language", "value": language, "url": live_server.url}])
    page.goto(f"{live_server.url}/study/trip/?PROLIFIC_PID=first-{language}")
    page.get_by_label(words["agree"]).check()
    page.get_by_role("button", name=words["start"], exact=True).click()
    expect(page.locator("#case-count")).to_have_text(words["cases_plural"].format(n=0))
    first = Submission.objects.get(prolific_pid=f"first-{language}")
    CaseFactory(submission=first, position=1)

    # Another ID in the same browser: a page about the browser, nothing changes hands yet.
    page.goto(f"{live_server.url}/study/trip/?PROLIFIC_PID=second-{language}")
    expect(page.get_by_role("heading", name=words["switch_heading"])).to_be_visible()
    expect(page.locator("#switch-held")).to_contain_text(words["switch_held"])
    expect(page.get_by_text(f"first-{language}")).to_have_count(0)
    assert Submission.objects.filter(study=study).count() == 1
    fits_the_screen(page, page.get_by_role("button", name=words["switch_yes"]))
    page.get_by_role("button", name=words["switch_yes"]).click()
    page.get_by_label(words["agree"]).check()
    page.get_by_role("button", name=words["start"], exact=True).click()
    expect(page.locator("#case-count")).to_have_text(words["cases_plural"].format(n=0))
    assert Submission.objects.filter(prolific_pid=f"second-{language}").count() == 1

    # The first ID back in this browser: asked again, then its own answers, nothing new.
    page.goto(f"{live_server.url}/study/trip/?PROLIFIC_PID=first-{language}")
    expect(page.get_by_role("heading", name=words["switch_heading"])).to_be_visible()
    page.get_by_role("button", name=words["switch_yes"]).click()
    expect(page.locator("#case-count")).to_have_text(words["cases"].format(n=1))
    assert Submission.objects.filter(study=study).count() == 2
    assert blocked_requests == []
