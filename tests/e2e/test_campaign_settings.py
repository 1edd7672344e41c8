"""A researcher changes a running campaign from its page, in a real browser, in English and
Chinese, at desktop and phone width: the title and instructions edited, an annotator added
part-way, the campaign closed and reopened, each shown before it is made and confirmed; the
annotator added meets the closed notice, then gets work once it is reopened."""

import pytest
from playwright.sync_api import expect

from annotation.campaigns import campaign_create
from annotation.services import assignment_next
from core.models import AuditEvent
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
WORDS = {
    "en": {
        "edit": "Edit the title and instructions",
        "title": "Title",
        "instructions": "Instructions (English)",
        "save": "Save changes",
        "sure": "Are you sure?",
        "yes": "Yes, change it",
        "saved": "Saved.",
        "add_label": "Annotator to add or remove",
        "add": "Add to the campaign",
        "close": "Close the campaign",
        "reopen": "Reopen the campaign",
        "closed_state": "Closed: annotators get no new items.",
        "closed_notice": "This campaign is closed: it takes no new items.",
        "question": "Question",
        "new_title": "Blind test, round 2",
    },
    "zh-hans": {
        "edit": "编辑标题和说明",
        "title": "标题",
        "instructions": "说明（英文）",
        "save": "保存修改",
        "sure": "确定吗？",
        "yes": "是的，更改",
        "saved": "已保存。",
        "add_label": "要添加或移除的标注员",
        "add": "加入标注任务",
        "close": "关闭标注任务",
        "reopen": "重新开放标注任务",
        "closed_state": "已关闭：标注员不再获得新条目。",
        "closed_notice": "此标注任务已关闭：不再分配新条目。",
        "question": "问题",
        "new_title": "盲测第二轮",
    },
}


def running_campaign():
    """Two pairs, one vote each, two annotators; ann0 holds a lease. `late` may be added."""
    dataset = DatasetFactory()
    models = [CandidateModelFactory(name=name) for name in ("orion-large", "vega-7b")]
    items = [ItemFactory(dataset=dataset, question=f"Question {n}?") for n in range(3)]
    for item in items:
        for model in models:
            AnswerFactory(item=item, model=model, text=f"{model.name} answers {item.external_id}.")
    people = [UserFactory(username=f"ann{n}", roles=["annotator"]) for n in range(2)]
    UserFactory(username="late", roles=["annotator"])
    UserFactory(username="res", roles=["researcher"])
    campaign = campaign_create(
        slug="live", title="Blind test", dataset=dataset, candidates=models, question_count=3, annotators=people
    )
    assignment_next(campaign=campaign, annotator=people[0])
    return campaign


def confirm(page, words):
    """The page that shows a change before it is made: it fits the screen, and is confirmed."""
    expect(page.get_by_role("heading", level=1)).to_have_text(words["sure"])
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
    page.get_by_role("button", name=words["yes"]).click()
    expect(page.locator(".messages")).to_contain_text(words["saved"])


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_researcher_edits_adds_an_annotator_closes_and_reopens(live_server, signed_in_page, language, viewport):
    words = WORDS[language]
    campaign = running_campaign()
    page = signed_in_page("res", language, viewport)
    page.goto(f"{live_server.url}/campaigns/live/")

    page.get_by_text(words["edit"]).click()
    page.get_by_label(words["title"], exact=True).fill(words["new_title"])
    page.get_by_label(words["instructions"]).fill("Read both answers to the end.")
    page.get_by_role("button", name=words["save"]).click()
    changes = page.locator("#campaign-changes")
    expect(changes).to_contain_text("Blind test")
    expect(changes).to_contain_text(words["new_title"])
    expect(changes).to_contain_text("Read both answers to the end.")
    confirm(page, words)
    expect(page.get_by_role("heading", level=1)).to_contain_text(words["new_title"])

    page.get_by_label(words["add_label"]).fill("late")
    page.get_by_role("button", name=words["add"], exact=True).click()
    expect(page.locator("[data-testid=confirm-question]")).to_contain_text("late")
    confirm(page, words)
    expect(page.locator("#settings-annotators")).to_contain_text("late")

    page.get_by_role("button", name=words["close"]).click()
    confirm(page, words)
    expect(page.locator("#campaign-state")).to_contain_text(words["closed_state"])
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0

    # The annotator added part-way is told plainly that it is closed...
    annotator = signed_in_page("late", language, viewport)
    annotator.goto(f"{live_server.url}/annotate/live/")
    expect(annotator.locator("#closed")).to_contain_text(words["closed_notice"])
    expect(annotator.locator("#vote-form")).to_have_count(0)

    page.get_by_role("button", name=words["reopen"]).click()
    confirm(page, words)
    expect(page.get_by_role("button", name=words["close"])).to_be_visible()

    # ... and gets work once it is reopened.
    annotator.reload()
    expect(annotator.locator("#closed")).to_have_count(0)
    expect(annotator.get_by_role("heading", name=words["question"], exact=True)).to_be_visible()
    assert annotator.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0

    entries = AuditEvent.objects.filter(action="campaign_changed", target="campaign:live").order_by("pk")
    changed = [sorted(entry.details["changes"]) for entry in entries if not entry.details.get("created")]
    assert changed == [["instructions_en", "title"], ["annotators"], ["is_open"], ["is_open"]]
    campaign.refresh_from_db()
    assert (campaign.title, campaign.is_open) == (words["new_title"], True)
