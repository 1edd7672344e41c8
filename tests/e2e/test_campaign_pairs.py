"""A researcher finds the pair that keeps a campaign from finishing and moves it on, in a real
browser, in English and Chinese, at desktop and phone width: per-pair completion, who skipped
it, nobody left to take it, the skips released from the campaign page, and the pair given to
someone through the page's one annotator picker, by keyboard alone."""

import pytest
from playwright.sync_api import expect

from annotation.campaigns import campaign_create
from annotation.services import assignment_next, assignment_skip, vote_cast
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
WORDS = {
    "en": {
        "waiting": "0 of 1 pairs have all their votes; 1 wait.",
        "stuck": "1 pair cannot be finished by anyone left",
        "release": "Release the skips of pair {pair}",
        "released": "Pair {pair} may be offered again to ann0.",
        "nobody": "nobody",
        "give": "Give pair {pair} to someone",
        "annotator": "Annotator",
        "given": "Pair {pair} is leased to ann0.",
    },
    "zh-hans": {
        "waiting": "1 个答案对中有 0 个已获得全部投票；1 个仍在等待。",
        "stuck": "1 个答案对已无人能完成",
        "release": "释放答案对 {pair} 的跳过记录",
        "released": "答案对 {pair} 可以再次分配给 ann0。",
        "nobody": "无人",
        "give": "把答案对 {pair} 交给某人",
        "annotator": "标注员",
        "given": "答案对 {pair} 已由 ann0 领取。",
    },
}


def stuck_campaign():
    """One pair wanting two votes from two annotators: ann0 skipped it, ann1 voted on it."""
    dataset = DatasetFactory()
    models = [CandidateModelFactory(name=name) for name in ("orion-large", "vega-7b")]
    item = ItemFactory(dataset=dataset, question="One question?")
    for model in models:
        AnswerFactory(item=item, model=model, text=f"{model.name} answers.")
    people = [UserFactory(username=f"ann{n}", roles=["annotator"]) for n in range(2)]
    campaign = campaign_create(
        slug="stuck",
        title="Stuck campaign",
        title_zh="卡住的标注任务",
        dataset=dataset,
        candidates=models,
        question_count=1,
        votes_per_pair=2,
        annotators=people,
    )
    skipped = assignment_next(campaign=campaign, annotator=people[0])
    assignment_skip(token=skipped.token, annotator=people[0])
    vote_cast(token=assignment_next(campaign=campaign, annotator=people[1]).token, annotator=people[1], choice="tie")
    UserFactory(username="res", roles=["researcher"])
    return skipped


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_researcher_releases_a_skipped_pair(page, live_server, log_in, blocked_requests, language, viewport):
    words = WORDS[language]
    page.set_viewport_size(viewport)
    skipped = stuck_campaign()
    page.context.add_cookies([{"name": "django_language", "value": language, "url": live_server.url}])
    log_in("res", "pw-for-tests")

    page.goto(f"{live_server.url}/campaigns/stuck/")
    expect(page.get_by_role("heading", level=1)).to_contain_text(
        "卡住的标注任务" if language == "zh-hans" else "Stuck campaign"
    )
    expect(page.locator("#pairs-summary")).to_contain_text(words["waiting"])
    expect(page.locator("#pairs-summary")).to_contain_text(words["stuck"])
    row = page.locator(f"#pair-{skipped.pair_id}")
    expect(row).to_contain_text("ann0")
    expect(row).to_contain_text(words["nobody"])
    release = page.get_by_role("button", name=words["release"].format(pair=skipped.pair_id))
    release.scroll_into_view_if_needed()
    box = release.bounding_box()
    assert box is not None and box["x"] + box["width"] <= page.viewport_size["width"]
    release.click()
    expect(page.locator(".messages")).to_contain_text(words["released"].format(pair=skipped.pair_id))
    expect(page.locator("#pairs-summary")).not_to_contain_text(words["stuck"])
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
    assert blocked_requests == []


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_researcher_gives_a_pair_to_someone_with_the_keyboard(
    page, live_server, log_in, blocked_requests, language, viewport
):
    words = WORDS[language]
    page.set_viewport_size(viewport)
    skipped = stuck_campaign()
    page.context.add_cookies([{"name": "django_language", "value": language, "url": live_server.url}])
    log_in("res", "pw-for-tests")

    page.goto(f"{live_server.url}/campaigns/stuck/")
    # The row's link chooses its pair in the one picker and puts the cursor on the name.
    page.get_by_role("link", name=words["give"].format(pair=skipped.pair_id)).focus()
    page.keyboard.press("Enter")
    annotator = page.get_by_label(words["annotator"], exact=True)
    expect(annotator).to_be_focused()
    expect(page.locator("#give-pair")).to_have_value(str(skipped.pair_id))
    page.keyboard.type("ann0")
    box = page.locator("#give button").bounding_box()
    assert box is not None and box["x"] + box["width"] <= page.viewport_size["width"]
    page.keyboard.press("Enter")
    expect(page.locator(".messages")).to_contain_text(words["given"].format(pair=skipped.pair_id))
    expect(page.locator(f"#pair-{skipped.pair_id}")).to_contain_text("ann0")
    expect(page.locator("#pairs-summary")).not_to_contain_text(words["stuck"])
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
    assert blocked_requests == []
