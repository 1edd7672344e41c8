"""A participant completes the demo study in a real browser, in English and in Chinese."""

import re

import pytest
from django.conf import settings
from django.core.management import call_command
from playwright.sync_api import expect

from curation.models import Case, Submission
from tests.e2e.conftest import sent_to

pytestmark = pytest.mark.django_db(transaction=True)

CONVERSATION = "Question: How far is the Moon?\nAnswer: About 384,400 km on average."
HOSTILE = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">'


@pytest.fixture
def demo_study(db):
    call_command("loaddata", str(settings.BASE_DIR / "fixtures" / "demo.json"), verbosity=0)


@pytest.fixture
def prolific(page):
    """Stand in for app.prolific.com where the browser routes a redirect's target (the desktop
    Chromium does; tests/e2e/conftest.py `sent_to`)."""
    page.route(
        re.compile(r"^https://app\.prolific\.com/.*"),
        lambda route: route.fulfill(status=200, content_type="text/html", body="<h1>Prolific</h1>"),
    )


def add_case(page, service, intent, conversation=CONVERSATION, save="Save this case", labels=None):
    labels = labels or {
        "service": "Which AI assistant (LLM service) did you ask?",
        "conversation": "Your question and the assistant's answer",
        "intent": "What did you want to achieve?",
    }
    page.get_by_label(labels["service"]).select_option(service)
    page.get_by_label(labels["conversation"]).fill(conversation)
    page.get_by_label(labels["intent"]).select_option(intent)
    page.get_by_role("button", name=save).click()


def rate_grid(page, choices):
    """choices: the row's heading (start) -> the column's answer (exact)."""
    for heading, option in choices.items():
        page.get_by_role("row", name=re.compile("^" + re.escape(heading))).get_by_label(option, exact=True).check()


def test_english_flow_from_a_prolific_link_with_errors_and_a_language_switch(
    page, live_server, demo_study, blocked_requests, prolific
):
    page.goto(f"{live_server.url}/study/demo/?PROLIFIC_PID=e2e-pid-1&STUDY_ID=st-1&SESSION_ID=se-1&lang=en")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page.get_by_role("heading", name="Before you start")).to_be_visible()
    expect(page.get_by_text("may be published for research")).to_be_visible()
    page.get_by_role("button", name="Start").click()
    expect(page.locator("#id_agree_error")).to_have_text("Please tick the box to agree before you start.")
    expect(page.get_by_test_id("error-summary")).to_contain_text("Please tick the box to agree before you start.")
    expect(page.get_by_label("I have read the notice above and agree to take part.")).to_be_focused()
    page.get_by_label("I have read the notice above and agree to take part.").check()
    page.get_by_role("button", name="Start").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Your cases")

    # A badly formatted conversation: the error sits beside the field and the text stays.
    add_case(page, "ChatGPT", "factual_qa", conversation="the moon is far")
    conversation = page.get_by_label("Your question and the assistant's answer")
    expect(conversation).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#id_conversation_error")).to_have_text(
        "Please mark the turns: start with “Question:” and put “Answer:” before the reply."
    )
    expect(conversation).to_have_value("the moon is far")
    conversation.fill(CONVERSATION)
    page.get_by_role("button", name="Save this case").click()
    expect(page.locator("#case-count")).to_have_text("You have reported 1 case.")

    for number, (service, intent) in enumerate(
        [("Claude", "text_assistant"), ("Qwen", "ask_for_advice"), ("DeepSeek", "leisure")], start=2
    ):
        add_case(page, service, intent)
        expect(page.locator("#case-count")).to_have_text(f"You have reported {number} cases.")

    # Continue below the minimum of five: a clear message, nothing lost.
    page.get_by_role("button", name="Continue to the next page").click()
    expect(page.get_by_text("Please report at least 5 cases; you have 4 so far.")).to_be_visible()

    # Switch to Chinese half-way through typing the fifth case: the typed text survives.
    page.wait_for_load_state("load")  # study.js (deferred) keeps a draft and has taken over the switcher
    page.add_init_script(
        "window.draftsAtStart = Object.keys(localStorage).filter(k => k.startsWith('userbench-case-draft:'))"
    )
    page.get_by_label("Which AI assistant (LLM service) did you ask?").select_option("Kimi/Moonshot")
    page.get_by_label("Your question and the assistant's answer").fill("Question: 半句话\nAnswer: 还没写完")
    assert page.evaluate("Object.keys(localStorage).filter(k => k.startsWith('userbench-case-draft:'))") != []
    page.get_by_label("Language").select_option("zh-hans")
    page.get_by_role("button", name="Switch").click()
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    expect(page.get_by_role("heading", level=1)).to_have_text("您的案例")
    expect(page.get_by_label("您的问题和助手的回答")).to_have_value("Question: 半句话\nAnswer: 还没写完")
    expect(page.get_by_label("您向哪个 AI 助手（大语言模型服务）提问？")).to_have_value("Kimi/Moonshot")
    # The switch handed the typing to the server: no stale copy was left in this browser to come
    # back, before the page's script ran, over what is chosen next.
    assert page.evaluate("window.draftsAtStart") == []
    page.wait_for_load_state("load")
    page.get_by_label("您想达成什么目的？").select_option("seek_creativity")
    page.get_by_role("button", name="继续下一页").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("关于您")

    # Back to English for the rest.
    page.get_by_label("语言").select_option("en")
    page.get_by_role("button", name="切换").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("About you")
    page.get_by_label("Age group").select_option("25-34")
    page.get_by_role("textbox", name="Occupation").fill("Nurse")
    page.get_by_label("Prefer not to say (country)").check()
    page.get_by_role("button", name="Save and continue").click()

    expect(page.get_by_role("heading", level=1)).to_have_text("Your use of AI assistants")
    page.get_by_role("button", name="Save and continue").click()
    expect(page.locator("#id_frequency_error")).to_have_text("Please choose how often you use them.")
    page.get_by_label("ChatGPT").check()
    page.get_by_label("Every week").check()
    rate_grid(page, {"Factual QA": "Satisfied", "Solve professional problem": "Neutral",
                     "Text assistant": "Very satisfied", "Attention check": "Dissatisfied",
                     "Ask for advice": "Not used", "Seek creativity": "Satisfied", "Leisure": "Very dissatisfied"})  # fmt: skip
    page.get_by_role("button", name="Save and continue").click()

    expect(page.get_by_role("heading", level=1)).to_have_text("Review and submit")
    expect(page.get_by_text("Question: 半句话")).to_be_visible()
    with sent_to(page, "https://app.prolific.com/submissions/complete?cc=C1USERB"):
        page.get_by_role("button", name="Submit my answers").click()

    submission = Submission.objects.get(prolific_pid="e2e-pid-1")
    assert (submission.prolific_study_id, submission.prolific_session_id) == ("st-1", "se-1")
    assert submission.status == "submitted" and submission.excluded is False
    assert (submission.occupation, submission.country, submission.language) == ("Nurse", "prefer_not_to_say", "en")
    assert submission.cases.count() == 5
    assert blocked_requests == []


def test_chinese_flow_with_a_failed_attention_check_ends_with_the_screen_out_code(
    page, live_server, demo_study, blocked_requests, prolific
):
    labels = {"service": "您向哪个 AI 助手（大语言模型服务）提问？", "conversation": "您的问题和助手的回答",
              "intent": "您想达成什么目的？"}  # fmt: skip
    page.goto(f"{live_server.url}/study/demo/?PROLIFIC_PID=e2e-pid-2&STUDY_ID=st-1&SESSION_ID=se-2&lang=zh-hans")
    expect(page.get_by_role("heading", name="开始之前")).to_be_visible()
    page.get_by_label("我已阅读上述说明并同意参与。").check()
    page.get_by_role("button", name="开始").click()
    for number in range(5):
        add_case(page, "ERNIE Bot", "factual_qa", conversation="问题：长城有多长？\n回答：约两万公里。",
                 save="保存此案例", labels=labels)  # fmt: skip
        expect(page.locator("#case-count")).to_have_text(f"您已报告 {number + 1} 个案例。")
    page.wait_for_load_state("load")  # study.js (deferred) asks before removing
    page.once("dialog", lambda dialog: dialog.accept())  # "删除案例 5？……"
    page.get_by_role("button", name="删除案例 5").click()
    expect(page.locator("#case-count")).to_have_text("您已报告 4 个案例。")
    add_case(page, "Other", "other", conversation="问题：写一首诗\n回答：床前明月光", save="保存此案例", labels=labels)
    expect(page.locator("#id_service_other_error")).to_have_text("请填写您使用的服务名称。")
    expect(page.locator("#id_intent_other_error")).to_have_text("请用几个词描述您的意图。")
    page.get_by_label("用您自己的话填写服务名称").fill("豆包")
    page.get_by_label("用您自己的话描述意图").fill("写诗")
    page.get_by_role("button", name="保存此案例").click()
    expect(page.locator("#case-count")).to_have_text("您已报告 5 个案例。")
    page.get_by_role("button", name="继续下一页").click()

    page.get_by_label("年龄段").select_option("prefer_not_to_say")
    page.get_by_role("button", name="保存并继续").click()
    page.get_by_label("Kimi", exact=True).check()  # Kimi/Moonshot by its Chinese name
    page.get_by_label("每天").check()
    rate_grid(page, {"事实问答": "满意", "解决专业问题": "满意", "文本助手": "满意", "注意力检查": "非常满意",
                     "寻求建议": "满意", "寻求创意": "满意", "休闲娱乐": "满意"})  # fmt: skip
    page.get_by_role("button", name="保存并继续").click()
    # Failing the check never stops anyone: the review page comes as usual.
    expect(page.get_by_role("heading", level=1)).to_have_text("检查并提交")
    expect(page.get_by_text("豆包")).to_be_visible()
    with sent_to(page, "https://app.prolific.com/submissions/complete?cc=S0USERB"):
        page.get_by_role("button", name="提交我的回答").click()

    submission = Submission.objects.get(prolific_pid="e2e-pid-2")
    assert submission.excluded is True and submission.language == "zh"
    assert submission.exclusion_reason == "Failed the attention check: chose 5 where the instruction asked for 2."
    assert list(submission.cases.values_list("position", "service")) == [
        (1, "ERNIE Bot"), (2, "ERNIE Bot"), (3, "ERNIE Bot"), (4, "ERNIE Bot"), (5, "豆包"),
    ]  # fmt: skip

    # The same browser opening the link again sees the thank-you page with the code; another
    # browser (no cookies) with the same PROLIFIC_PID is refused politely.
    page.goto(f"{live_server.url}/study/demo/?PROLIFIC_PID=e2e-pid-2")
    expect(page.get_by_role("heading", level=1)).to_have_text("谢谢！")
    expect(page.locator("#completion-code")).to_have_text("S0USERB")
    page.context.clear_cookies()
    page.goto(f"{live_server.url}/study/demo/?PROLIFIC_PID=e2e-pid-2&STUDY_ID=st-1&SESSION_ID=se-3&lang=zh-hans")
    expect(page.get_by_role("heading", level=1)).to_have_text("您已经参与过")
    assert Submission.objects.filter(prolific_pid="e2e-pid-2").count() == 1
    assert blocked_requests == []


def test_resume_after_closing_the_browser(browser, live_server, demo_study):
    """The Prolific link alone brings nothing back (anyone may know the ID); the private link does."""
    link = f"{live_server.url}/study/demo/?PROLIFIC_PID=e2e-pid-3&STUDY_ID=st-1&SESSION_ID=se-4"
    first = browser.new_context()
    page = first.new_page()
    page.goto(link)
    page.get_by_label("I have read the notice above and agree to take part.").check()
    page.get_by_role("button", name="Start").click()
    add_case(page, "ChatGPT", "factual_qa")
    add_case(page, "Claude", "leisure")
    private_link = page.get_by_label("Your private link to continue").input_value()
    first.close()  # the browser is gone, with its cookies

    second = browser.new_context()
    page = second.new_page()
    page.goto(link)
    expect(page.get_by_role("heading", name="This study is already in progress elsewhere")).to_be_visible()
    page.goto(private_link)
    expect(page.get_by_role("heading", level=1)).to_have_text("Your cases")
    expect(page.locator("#case-count")).to_have_text("You have reported 2 cases.")
    expect(page.get_by_role("heading", name="Case 2")).to_be_visible()
    second.close()
    assert Submission.objects.filter(prolific_pid="e2e-pid-3").count() == 1


def test_private_resume_link_and_inert_html_on_every_page(browser, live_server, demo_study):
    context = browser.new_context(viewport={"width": 375, "height": 740})
    page = context.new_page()
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(f"{live_server.url}/study/demo/")
    page.get_by_label("I have read the notice above and agree to take part.").check()
    page.get_by_role("button", name="Start").click()
    for _ in range(5):
        page.get_by_label("Which AI assistant (LLM service) did you ask?").select_option("Other")
        page.get_by_label("Service in your own words").fill(HOSTILE[:100])
        page.get_by_label("Your question and the assistant's answer").fill(f"Question: {HOSTILE}\nAnswer: {HOSTILE}")
        page.get_by_label("What did you want to achieve?").select_option("other")
        page.get_by_label("Your intent in your own words").fill(HOSTILE)
        page.get_by_role("button", name="Save this case").click()
    # Phone width: nothing wider than the screen.
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    page.get_by_role("button", name="Continue to the next page").click()
    page.get_by_role("textbox", name="Occupation").fill(HOSTILE)
    page.get_by_label("Country or region where you live").fill(HOSTILE[:64])
    page.get_by_role("button", name="Save and continue").click()
    assert page.evaluate("document.documentElement.scrollWidth") <= 375

    resume = page.get_by_label("Your private link to continue").input_value()
    token = Submission.objects.get(prolific_pid="").resume_token
    assert resume == f"{live_server.url}/study/demo/resume/?token={token}"
    context.close()

    context = browser.new_context()
    page = context.new_page()
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(resume)
    expect(page.get_by_role("heading", level=1)).to_have_text("Your use of AI assistants")
    page.get_by_label("Every day").check()
    rate_grid(page, {"Factual QA": "Satisfied", "Solve professional problem": "Satisfied",
                     "Text assistant": "Satisfied", "Attention check": "Dissatisfied", "Ask for advice": "Satisfied",
                     "Seek creativity": "Satisfied", "Leisure": "Satisfied"})  # fmt: skip
    page.get_by_role("button", name="Save and continue").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Review and submit")
    # Shown as text: the conversation, the service and intent in own words, the occupation.
    expect(page.get_by_text(f"Question: {HOSTILE}")).to_have_count(5)
    expect(page.get_by_text(f"Other: {HOSTILE}")).to_have_count(5)
    # Five services in own words plus the occupation; the country was cut to its 64-character limit.
    expect(page.get_by_text(HOSTILE, exact=True)).to_have_count(6)
    expect(page.get_by_text(HOSTILE[:64], exact=True)).to_have_count(1)
    for path in ("review/", "cases/", "cases/1/", "about/"):
        page.goto(f"{live_server.url}/study/demo/{path}")
        assert page.locator("img[src='x']").count() == 0
        assert page.locator("script", has_text="pwned").count() == 0
        assert page.evaluate("window.pwned") is None
    assert page.get_by_role("textbox", name="Occupation").input_value() == HOSTILE
    assert dialogs == []
    assert Case.objects.filter(intent_other=HOSTILE).count() == 5
    context.close()
