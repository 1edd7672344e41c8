"""An annotator's main path in a real browser, in English and Chinese, at desktop and phone width.

The campaign's progress bar, the vote bar in reach however long the answers are, a wide table
that scrolls inside its answer, skip and undo (keys on a desktop, taps on a phone), a skipped
pair acknowledged, and never a model name on the page.
"""

import pytest
from playwright.sync_api import expect

from annotation.campaigns import campaign_create
from annotation.models import Assignment, Vote
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 375, "height": 740}
WORDS = {
    "en": {
        "campaigns": "Your annotation campaigns",
        "progress": "Campaign progress: {done} of 3 votes",
        "voted": "You have voted on {n} items.",
        "skipped": "Skipped. You will not see this item again.",
        "skipped_count": "You skipped 1 item.",
        "saved": "Vote saved.",
        "undone": "Your last vote was taken back.",
        "a_better": "A is better",
        "b_better": "B is better",
        "skip": "Skip this item",
        "undo": "Undo my last vote",
        "done": "Nothing is waiting for you in this campaign.",
    },
    "zh-hans": {
        "campaigns": "您的标注任务",
        "progress": "标注任务进度：已收到 {done} 票，共需 3 票",
        "voted": "您已对 {n} 个条目投票。",
        "skipped": "已跳过。您不会再看到这个条目。",
        "skipped_count": "您跳过了 1 个条目。",
        "saved": "投票已保存。",
        "undone": "您的上一票已撤回。",
        "a_better": "A 更好",
        "b_better": "B 更好",
        "skip": "跳过这个条目",
        "undo": "撤销我的上一票",
        "done": "这个标注任务中暂时没有等待您的内容",
    },
}
LONG_ANSWER = "\n\n".join(f"Paragraph {n} of a very long answer, with enough words to fill a line." for n in range(120))
WIDE_TABLE = (
    "| "
    + " | ".join(f"column {n}" for n in range(14))
    + " |\n|"
    + "---|" * 14
    + "\n| "
    + " | ".join(f"value {n}" for n in range(14))
    + " |"
)


def in_window(page, locator):
    """The element is wholly inside the window, without scrolling."""
    box = locator.bounding_box()
    size = page.viewport_size
    return (
        box is not None
        and box["y"] >= 0
        and box["y"] + box["height"] <= size["height"]
        and box["x"] >= 0
        and (box["x"] + box["width"] <= size["width"])
    )


def no_sideways_scroll(page):
    page.wait_for_load_state("load")
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_annotator_main_path(page, live_server, log_in, blocked_requests, language, viewport):
    words = WORDS[language]
    phone = viewport is PHONE
    page.set_viewport_size(viewport)
    dataset = DatasetFactory()
    models = [CandidateModelFactory(name=name) for name in ("orion-large", "vega-7b")]
    for n in range(3):
        item = ItemFactory(dataset=dataset, question=f"Question number {n}?")
        AnswerFactory(item=item, model=models[0], text=f"{WIDE_TABLE}\n\n{LONG_ANSWER}")
        AnswerFactory(item=item, model=models[1], text=f"A short answer to {n}.")
    person = UserFactory(username="ann", roles=["annotator"])
    campaign_create(
        slug="paths", title="Paths campaign", dataset=dataset, candidates=models, question_count=3, annotators=[person]
    )

    page.context.add_cookies([{"name": "django_language", "value": language, "url": live_server.url}])
    log_in("ann", "pw-for-tests")
    page.goto(f"{live_server.url}/annotate/")
    expect(page.get_by_role("heading", level=1)).to_have_text(words["campaigns"])
    page.get_by_role("link", name="Paths campaign").click()

    # The campaign's progress, as a bar with its words.
    expect(page.get_by_label(words["progress"].format(done=0))).to_have_attribute("value", "0")
    expect(page.locator("#campaign-progress")).to_have_attribute("max", "3")
    no_sideways_scroll(page)
    # The wide table scrolls inside its answer, which stays inside the window.
    table = page.locator(".answer table").first
    expect(table).to_be_visible()
    assert table.evaluate("t => t.scrollWidth > t.clientWidth")
    answer = table.locator("xpath=ancestor::article[1]").bounding_box()
    assert table.bounding_box()["x"] + table.bounding_box()["width"] <= answer["x"] + answer["width"]
    assert answer["x"] + answer["width"] <= viewport["width"]
    # The vote bar is in reach at once, and still after scrolling into the long answer.
    vote_a = page.get_by_role("button", name=words["a_better"])
    assert in_window(page, vote_a)
    page.get_by_text("Paragraph 60 of a very long answer").first.scroll_into_view_if_needed()
    assert page.evaluate("window.scrollY") > 1000
    assert in_window(page, vote_a) and in_window(page, page.get_by_role("button", name=words["skip"]))

    # Skip: acknowledged, and counted.
    expect(page.locator('#vote-form[data-keyboard="on"]')).to_be_attached()
    if phone:
        page.get_by_role("button", name=words["skip"]).click()
    else:
        page.keyboard.press("s")
    expect(page.get_by_role("status")).to_have_text(words["skipped"])
    expect(page.locator("#skipped-count")).to_have_text(words["skipped_count"])

    # Vote, then take it back and vote again.
    expect(page.locator('#vote-form[data-keyboard="on"]')).to_be_attached()
    if phone:
        vote_a.click()
    else:
        page.keyboard.press("1")
    expect(page.get_by_role("status")).to_have_text(words["saved"])
    expect(page.locator("#progress")).to_contain_text(words["voted"].format(n=1))
    expect(page.get_by_label(words["progress"].format(done=1))).to_have_attribute("value", "1")
    expect(page.locator('#vote-form[data-keyboard="on"]')).to_be_attached()
    if phone:
        page.get_by_role("button", name=words["undo"]).click()
    else:
        page.keyboard.press("u")
    expect(page.get_by_role("status")).to_contain_text(words["undone"])
    expect(page.locator("#progress")).to_contain_text(words["voted"].format(n=0))
    expect(page.locator('#vote-form[data-keyboard="on"]')).to_be_attached()
    if phone:
        page.get_by_role("button", name=words["b_better"]).click()
    else:
        page.keyboard.press("2")
    expect(page.get_by_role("status")).to_have_text(words["saved"])
    expect(page.locator('#vote-form[data-keyboard="on"]')).to_be_attached()
    vote_a.click()
    expect(page.get_by_text(words["done"])).to_be_visible()
    no_sideways_scroll(page)

    # Two votes stand (the undone one was replaced), one item was skipped.
    assert Vote.objects.filter(annotator=person).count() == 2
    assert Assignment.objects.filter(annotator=person, status="released").count() == 1
    body = page.content()
    assert "orion-large" not in body and "vega-7b" not in body
    assert blocked_requests == []
