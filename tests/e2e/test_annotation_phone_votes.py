"""Voting on a phone (390 x 844, touch): the vote buttons wait until both answers have been on
screen, answer B included, which starts below the fold; the skip button never waits; no key
hints on a touch screen. A desktop keyboard is not held back."""

import pytest
from playwright.sync_api import expect

from annotation.models import Campaign, Vote
from home.demo import demo_seed
from judging.models import Answer

pytestmark = pytest.mark.django_db(transaction=True)

PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
DESKTOP = {"viewport": {"width": 1280, "height": 800}}
WAIT_NOTE = {
    "en": "Scroll to answer B to vote.",
    "zh-hans": "滚动到回答 B 即可投票。",
}


@pytest.fixture
def long_answers(settings):
    """The demo campaign, its answers long enough that answer B starts below a phone's fold."""
    settings.DEMO_MODE = True
    demo_seed()
    dataset = Campaign.objects.get(slug="demo").dataset
    Answer.objects.filter(item__dataset=dataset).update(
        text="\n\n".join(f"Step {n}: a paragraph of the answer, long enough to fill a line." for n in range(40))
    )


def open_vote_page(browser, live_server, device: dict, language: str):
    context = browser.new_context(**device)
    context.add_cookies([{"name": "django_language", "value": language, "url": live_server.url}])
    page = context.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.locator("#id_username").fill("annotator")
    page.locator("#id_password").fill("demo-annotator")
    page.locator("form:has(#id_password) [type=submit]").click()
    page.wait_for_url(lambda url: "/accounts/login/" not in url)
    page.goto(f"{live_server.url}/annotate/demo/")
    expect(page.locator("#vote-form")).to_be_visible()
    return page


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_on_a_phone_the_buttons_wait_for_answer_b(browser, live_server, long_answers, language):
    page = open_vote_page(browser, live_server, PHONE, language)
    form = page.locator("#vote-form")
    choices = page.locator(".vote-bar .choices button")
    expect(form).to_have_attribute("data-vote-ready", "no")
    assert page.locator("#answer-b").bounding_box()["y"] > 844  # below the fold
    for k in range(choices.count()):
        expect(choices.nth(k)).to_be_disabled()
    expect(page.locator(".vote-bar .skip")).to_be_enabled()
    expect(page.locator("#vote-wait")).to_have_text(WAIT_NOTE[language])
    # No key hints on a touch screen.
    expect(page.locator(".vote-bar kbd").first).to_be_hidden()
    expect(page.locator(".shortcuts")).to_be_hidden()

    # Answer A read: still waiting for B.
    page.evaluate("document.getElementById('answer-a').scrollIntoView({block: 'start'})")
    page.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
    expect(form).to_have_attribute("data-vote-ready", "no")
    expect(choices.first).to_be_disabled()

    # Answer B on screen: the buttons work, the note goes.
    page.evaluate("document.getElementById('answer-b').scrollIntoView({block: 'start'})")
    expect(form).to_have_attribute("data-vote-ready", "yes")
    for k in range(choices.count()):
        expect(choices.nth(k)).to_be_enabled()
    expect(page.locator("#vote-wait")).to_be_hidden()
    page.locator('.vote-bar button[value="right"]').tap()
    expect(page.locator("#vote-form")).to_have_attribute("data-vote-ready", "no")  # the next pair waits again
    assert Vote.objects.filter(annotator__username="annotator").count() == 1


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_desktop_keyboard_votes_at_once(browser, live_server, long_answers, language):
    page = open_vote_page(browser, live_server, DESKTOP, language)
    form = page.locator("#vote-form")
    expect(form).to_have_attribute("data-vote-ready", "yes")
    expect(form).to_have_attribute("data-keyboard", "on")
    expect(page.locator("#vote-wait")).to_be_hidden()
    expect(page.locator(".vote-bar kbd").first).to_be_visible()
    page.keyboard.press("2")
    expect(page.locator("#progress")).to_contain_text("1")
    assert Vote.objects.filter(annotator__username="annotator").count() == 1
