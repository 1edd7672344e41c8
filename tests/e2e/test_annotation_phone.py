"""The vote page on a phone (390 x 844, touch) and on a desktop: the answers are on the first
screen, the vote bar is one compact row, nothing sticky covers the comment box, and key badges
show only where there are keys."""

import pytest
from playwright.sync_api import expect

from home.demo import demo_seed

pytestmark = pytest.mark.django_db(transaction=True)

PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
DESKTOP = {"viewport": {"width": 1280, "height": 800}}


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


def uncovered(page, selector: str) -> bool:
    """The element's centre, as the window shows it now, is the element itself (nothing on top)."""
    return page.evaluate(
        """selector => {
            const element = document.querySelector(selector);
            const box = element.getBoundingClientRect();
            const top = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
            return top === element || element.contains(top);
        }""",
        selector,
    )


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_on_a_phone_the_answers_come_first_and_the_bar_is_one_row(settings, browser, live_server, language):
    settings.DEMO_MODE = True
    demo_seed()
    page = open_vote_page(browser, live_server, PHONE, language)

    # The first screen reaches the first answer.
    assert page.locator("#answer-a").bounding_box()["y"] < 844
    # One row: every choice and skip side by side, a small share of the screen.
    buttons = page.locator(".vote-bar button")
    tops = {round(buttons.nth(k).bounding_box()["y"]) for k in range(buttons.count())}
    assert len(tops) == 1
    assert page.locator(".vote-bar").bounding_box()["height"] < 844 * 0.1
    # Every button is a touch-sized target.
    assert min(buttons.nth(k).bounding_box()["height"] for k in range(buttons.count())) >= 44
    # No key badges and no shortcut list on a touch screen.
    expect(page.locator(".vote-bar kbd").first).to_be_hidden()
    expect(page.locator(".shortcuts")).to_be_hidden()
    # Typing a comment: the box scrolls clear of the bar.
    page.locator("#comment").focus()
    page.keyboard.type("close call")
    assert uncovered(page, "#comment")
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_on_a_desktop_the_comment_box_is_never_under_the_bar(settings, browser, live_server, language):
    settings.DEMO_MODE = True
    demo_seed()
    page = open_vote_page(browser, live_server, DESKTOP, language)
    expect(page.locator(".vote-bar kbd").first).to_be_visible()
    # Scrolled so that the comment box would sit just under the sticky bar, then focused.
    page.evaluate("window.scrollTo(0, 0)")
    page.locator("#comment").focus()
    assert uncovered(page, "#comment")
    bar = page.locator(".vote-bar").bounding_box()
    comment = page.locator("#comment").bounding_box()
    assert comment["y"] + comment["height"] <= bar["y"] or comment["y"] >= bar["y"] + bar["height"]
