"""The questionnaire's finer points in a real browser, in English and Chinese, on a desktop and
a phone: the character counter and an over-long paste, a failed save's focus and summary, the
confirmation before a removal, the page of a refused form, checkboxes that keep their size,
the satisfaction grid on a narrow screen, and 您 with single punctuation in Chinese."""

import re

import pytest
from playwright.sync_api import expect

from curation.models import Case
from tests.factories import StudyFactory

pytestmark = pytest.mark.django_db(transaction=True)

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
LONG_SERVICE = "A service with a very long name that wraps onto several lines on a narrow phone screen, really"

WORDS = {
    "en": {
        "agree": "I have read the notice above and agree to take part.",
        "start": "Start",
        "service": "Which AI assistant (LLM service) did you ask?",
        "conversation": "Your question and the assistant's answer",
        "intent": "What did you want to achieve?",
        "save": "Save this case",
        "continue": "Continue to the next page",
        "count": "20,010 of 20,000 characters: 10 too many. Please shorten it before saving; nothing has been cut.",
        "count_ok": "19,990 of 20,000 characters",
        "too_long": "“Your question and the assistant's answer” has 20,010 characters, more than the 20,000 that fit.",
        "saved_one": "You have reported 1 case.",
        "saved_two": "You have reported 2 cases.",
        "summary": "There are problems with 3 answers",
        "remove": "Remove case 2",
        "confirm_remove": "Remove case 2? What you entered for it will be deleted.",
        "yes_remove": "Yes, remove case 2",
        "refused": "This form could not be sent",
        "open_again": "Open the page again",
        "save_continue": "Save and continue",
        "frequency_error": "Please choose how often you use them.",
        "kind_of_use": "Kind of use",
        "satisfied": "Satisfied",
        "factual_qa": "Factual QA",
    },
    "zh-hans": {
        "agree": "我已阅读上述说明并同意参与。",
        "start": "开始",
        "service": "您向哪个 AI 助手（大语言模型服务）提问？",
        "conversation": "您的问题和助手的回答",
        "intent": "您想达成什么目的？",
        "save": "保存此案例",
        "continue": "继续下一页",
        "count": "已输入 20,010 个字符，上限为 20,000 个，超出 10 个。请在保存前删减；内容没有被截断。",
        "count_ok": "已输入 19,990 个字符，上限为 20,000 个",
        "too_long": "“您的问题和助手的回答”共有 20,010 个字符，超过了 20,000 个字符的上限。",
        "saved_one": "您已报告 1 个案例。",
        "saved_two": "您已报告 2 个案例。",
        "summary": "有 3 处回答需要修改",
        "remove": "删除案例 2",
        "confirm_remove": "删除案例 2？您为它填写的内容将被删除。",
        "yes_remove": "是的，删除案例 2",
        "refused": "无法提交此表单",
        "open_again": "重新打开页面",
        "save_continue": "保存并继续",
        "frequency_error": "请选择您的使用频率。",
        "kind_of_use": "用途",
        "satisfied": "满意",
        "factual_qa": "事实问答",
    },
}

CJK = "\u3400-\u4dbf\u4e00-\u9fff"
FULL_WIDTH = "，。！？：；、"
DOUBLED = re.compile(rf"[{FULL_WIDTH}][,.!?:;{FULL_WIDTH}]|[,.!?:;][{FULL_WIDTH}]|[{CJK}][,!?:;](?=\s|$)")


def conversation_of(length: int, language: str) -> str:
    head = "Question: how far is the Moon?\nAnswer: " if language == "en" else "问题：月球有多远？\n回答："
    return head + "a" * (length - len(head))


@pytest.fixture
def study(db):
    return StudyFactory(
        slug="ui",
        min_cases=1,
        max_cases=4,
        consent_en="Please read this notice.",
        consent_zh="请阅读本说明。",
        services=["ChatGPT", "ERNIE Bot", LONG_SERVICE, "Other"],
    )


def start(page, live_server, language):
    words = WORDS[language]
    page.goto(f"{live_server.url}/study/ui/?lang={language}")
    page.get_by_label(words["agree"]).check()
    page.get_by_role("button", name=words["start"]).click()
    page.wait_for_load_state("load")  # study.js (deferred) has set up the counters


def fill_case(page, words, conversation):
    page.get_by_label(words["service"]).select_option("ChatGPT")
    page.get_by_label(words["conversation"]).fill(conversation)
    page.get_by_label(words["intent"]).select_option("factual_qa")


def chinese_style_problems(page) -> list[str]:
    text = page.evaluate("document.body.innerText")
    return [line for line in text.splitlines() if "你" in line or DOUBLED.search(line)]


def no_sideways_scroll(page):
    page.wait_for_load_state("load")
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_participant_path_with_limits_errors_removal_and_the_grid(
    browser, live_server, study, blocked_requests, language, viewport
):
    words = WORDS[language]
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    start(page, live_server, language)
    style_problems = {}

    # A failed save: a summary at the top, linked to the fields, and the first error has the focus.
    page.get_by_role("button", name=words["save"]).click()
    summary = page.get_by_test_id("error-summary")
    expect(summary).to_contain_text(words["summary"])
    expect(summary.get_by_role("link")).to_have_count(3)
    expect(page.get_by_label(words["service"])).to_be_focused()
    summary.get_by_role("link", name=words["intent"]).click()
    expect(page).to_have_url(re.compile("#id_intent$"))
    style_problems["cases, errors"] = chinese_style_problems(page)
    no_sideways_scroll(page)

    # An over-long paste arrives whole; the counter warns and saving waits, losing nothing.
    too_long = conversation_of(20_010, language)
    fill_case(page, words, too_long)
    conversation = page.get_by_label(words["conversation"])
    assert len(conversation.input_value()) == 20_010
    counter = page.locator("#id_conversation_counter")
    expect(counter).to_have_text(words["count"])
    expect(counter).to_have_class(re.compile(r"\bover\b"))
    page.get_by_role("button", name=words["save"]).click()
    expect(conversation).to_be_focused()
    expect(counter).to_have_attribute("role", "alert")
    assert conversation.input_value() == too_long
    assert Case.objects.count() == 0
    conversation.fill(conversation_of(19_990, language))
    expect(counter).to_have_text(words["count_ok"])
    page.get_by_role("button", name=words["save"]).click()
    expect(page.locator("#case-count")).to_have_text(words["saved_one"])
    assert len(Case.objects.get().conversation) == 19_990

    fill_case(page, words, conversation_of(100, language))
    page.get_by_role("button", name=words["save"]).click()
    expect(page.locator("#case-count")).to_have_text(words["saved_two"])

    # Remove asks first: dismissed, nothing happens; accepted, the case goes.
    asked = []
    page.wait_for_load_state("load")  # study.js (deferred) asks before removing
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
    page.get_by_role("button", name=words["remove"]).click()
    expect(page.locator("#case-count")).to_have_text(words["saved_two"])
    assert asked == [words["confirm_remove"]] and Case.objects.count() == 2
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
    page.get_by_role("button", name=words["remove"]).click()
    expect(page.locator("#case-count")).to_have_text(words["saved_one"])
    assert Case.objects.count() == 1
    style_problems["cases"] = chinese_style_problems(page)

    page.get_by_role("button", name=words["continue"]).click()
    page.get_by_role("button", name=words["save_continue"]).click()

    # The usage page: the checkboxes keep their size with a long label; the grid fits the screen.
    expect(page.get_by_role("columnheader", name=words["kind_of_use"])).to_be_attached()
    short = page.get_by_label("ChatGPT", exact=True).bounding_box()
    long = page.get_by_label(LONG_SERVICE).bounding_box()
    label = page.locator("label", has_text=LONG_SERVICE).bounding_box()
    assert label["height"] > 1.5 * long["height"]  # the label wraps...
    assert (round(long["width"], 1), round(long["height"], 1)) == (round(short["width"], 1), round(short["height"], 1))
    assert 16 <= long["width"] <= 24  # ...and the box keeps its 1.25rem
    no_sideways_scroll(page)
    row = page.get_by_role("row", name=re.compile("^" + re.escape(words["factual_qa"])))
    choice = row.get_by_label(words["satisfied"], exact=True)
    box = choice.bounding_box()
    assert 16 <= box["width"] <= 24 and box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"]
    header = page.get_by_role("columnheader", name=words["satisfied"], exact=True)
    choice_label = row.locator(".rating-label", has_text=re.compile("^" + words["satisfied"] + "$"))
    if viewport is PHONE:
        # Stacked: the header row is out of sight and each choice shows its own label.
        expect(choice_label).to_be_visible()
        assert page.locator(".rating-grid thead").bounding_box()["width"] <= 1
    else:
        expect(header).to_be_visible()
        assert choice_label.bounding_box()["width"] <= 1
        assert (
            abs((box["x"] + box["width"] / 2) - (header.bounding_box()["x"] + header.bounding_box()["width"] / 2)) < 4
        )

    page.get_by_role("button", name=words["save_continue"]).click()
    expect(page.get_by_test_id("error-summary")).to_contain_text(words["frequency_error"])
    expect(page.locator("#id_frequency_0")).to_be_focused()
    no_sideways_scroll(page)
    style_problems["usage, errors"] = chinese_style_problems(page)
    if language == "zh-hans":
        assert {name: found for name, found in style_problems.items() if found} == {}
    assert blocked_requests == []
    context.close()


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_without_javascript_the_server_refuses_an_over_long_field_and_removal_asks_on_a_page(
    browser, live_server, study, language
):
    words = WORDS[language]
    context = browser.new_context(java_script_enabled=False, viewport=PHONE)
    page = context.new_page()
    start(page, live_server, language)
    too_long = conversation_of(20_010, language)
    fill_case(page, words, too_long)
    page.get_by_role("button", name=words["save"]).click()
    expect(page.locator("#id_conversation_error")).to_contain_text(words["too_long"])
    expect(page.get_by_test_id("error-summary")).to_contain_text(words["too_long"])
    assert page.get_by_label(words["conversation"]).input_value() == too_long
    assert Case.objects.count() == 0

    for _ in range(2):
        fill_case(page, words, conversation_of(100, language))
        page.get_by_role("button", name=words["save"]).click()
    expect(page.locator("#case-count")).to_have_text(words["saved_two"])
    page.get_by_role("button", name=words["remove"]).click()
    expect(page.get_by_role("button", name=words["yes_remove"])).to_be_visible()
    assert Case.objects.count() == 2
    no_sideways_scroll(page)
    page.get_by_role("button", name=words["yes_remove"]).click()
    expect(page.locator("#case-count")).to_have_text(words["saved_one"])
    if language == "zh-hans":
        assert chinese_style_problems(page) == []
    context.close()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_form_sent_with_a_stale_token_gets_a_page_that_says_what_to_do(
    browser, live_server, study, language, viewport
):
    words = WORDS[language]
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    start(page, live_server, language)
    fill_case(page, words, conversation_of(100, language))
    # The token as a page left open too long would send it.
    page.evaluate("document.querySelectorAll('input[name=csrfmiddlewaretoken]').forEach(i => i.value = 'x'.repeat(64))")
    page.get_by_role("button", name=words["save"]).click()
    expect(page.get_by_role("heading", level=1)).to_have_text(words["refused"])
    expect(page.locator("html")).to_have_attribute("lang", language)
    no_sideways_scroll(page)
    if language == "zh-hans":
        assert chinese_style_problems(page) == []
    assert Case.objects.count() == 0
    # The way back works: the page again, and saving goes through.
    page.get_by_role("link", name=words["open_again"]).click()
    fill_case(page, words, conversation_of(100, language))
    page.get_by_role("button", name=words["save"]).click()
    expect(page.locator("#case-count")).to_have_text(words["saved_one"])
    context.close()
