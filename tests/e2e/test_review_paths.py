"""A reviewer's main path in a real browser, in English and Chinese, at desktop and phone width:
the queues page, take a case, reject one with a reason and accept the next with the buttons, and
read the case's history. The page never scrolls sideways."""

import pytest
from playwright.sync_api import expect

from curation.models import Case, ReviewEvent
from curation.review.services import case_process
from tests.factories import CaseFactory, StudyFactory, SubmissionFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 375, "height": 740}
WORDS = {
    "en": {
        "heading": "Review queues",
        "take": "Take next",
        "task": "Quality and personal-information review",
        "reason": "Reason (needed to reject)",
        "reject": "Reject R",
        "accept": "Accept A",
        "saved": "Saved.",
        "empty": "This queue is empty for now.",
        "history": "History of this case",
        "rejected": "Rejected: ",
    },
    "zh-hans": {
        "heading": "审核队列",
        "take": "领取下一条",
        "task": "质量与个人信息审核",
        "reason": "理由（拒绝时必填）",
        "reject": "拒绝 R",
        "accept": "接受 A",
        "saved": "已保存。",
        "empty": "此队列暂时为空。",
        "history": "此案例的历史",
        "rejected": "已拒绝：",
    },
}


WIDER_THAN_THE_WINDOW = """() => [...document.querySelectorAll("body *")]
    .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1)
    .filter((el) => !el.closest(".table-wrap"))
    .map((el) => `${el.tagName}.${el.className} ${Math.round(el.getBoundingClientRect().right)}`)"""


def no_sideways_scroll(page):
    """Nothing outside a scrolling table wrapper is wider than the window (measured once the
    style sheets have loaded: the text can be there before them)."""
    page.wait_for_load_state("load")
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0, page.evaluate(
        WIDER_THAN_THE_WINDOW
    )


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_reviewer_main_path(page, live_server, log_in, blocked_requests, language, viewport):
    words = WORDS[language]
    page.set_viewport_size(viewport)
    UserFactory(username="rev", roles=["reviewer"])
    submission = SubmissionFactory(study=StudyFactory(slug="paths"))
    long_line = "A long pasted line without spaces: " + "x" * 400
    first = CaseFactory(submission=submission, position=1, conversation=f"Q: What is DNS exactly?\nA: {long_line}")
    second = CaseFactory(submission=submission, position=2, conversation="Q: 长城有多长？\nA: 约两万千米。")
    for case in (first, second):
        case_process(case=case)

    page.context.add_cookies([{"name": "django_language", "value": language, "url": live_server.url}])
    log_in("rev", "pw-for-tests")
    page.goto(f"{live_server.url}/review/")
    expect(page.get_by_role("heading", level=1)).to_have_text(words["heading"])
    no_sideways_scroll(page)
    take = page.locator('tr[data-queue="quality"]').get_by_role("button", name=words["take"])
    # In reach without scrolling sideways.
    assert take.bounding_box()["x"] + take.bounding_box()["width"] <= viewport["width"]
    take.click()

    expect(page.get_by_role("heading", level=1)).to_have_text(words["task"])
    expect(page.locator(".conversation")).to_contain_text("What is DNS exactly?")
    no_sideways_scroll(page)
    page.get_by_label(words["reason"]).fill("Not a real conversation")
    page.get_by_role("button", name=words["reject"]).click()

    expect(page.get_by_role("status")).to_contain_text(words["saved"])
    expect(page.locator(".conversation")).to_contain_text("长城有多长？")
    no_sideways_scroll(page)
    page.get_by_role("button", name=words["accept"]).click()
    expect(page.get_by_role("status")).to_contain_text(words["empty"])
    expect(page.locator('tr[data-queue="quality"] td').nth(3)).to_have_text("2 / 2")

    page.goto(f"{live_server.url}/review/cases/{first.pk}/")
    expect(page.locator("table.history")).to_contain_text(words["rejected"] + "Not a real conversation")
    no_sideways_scroll(page)
    assert dict(Case.objects.values_list("pk", "review_status")) == {first.pk: "rejected", second.pk: "accepted"}
    assert ReviewEvent.objects.filter(actor__username="rev").count() == 2
    assert blocked_requests == []
