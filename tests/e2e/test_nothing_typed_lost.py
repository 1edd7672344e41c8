"""Nothing typed is lost, in English and Chinese, on a desktop and a phone: a study form sent
after the session ended in another tab comes back filled in after logging in (1,480 characters
of consent), and a participant's unsaved case comes back after a reload."""

import pytest
from playwright.sync_api import expect

from curation.models import Case, Study
from tests.factories import StudyFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
CONSENT = ("I agree to take part in this study and know how my answers are used. " * 25)[:1480]
WORDS = {
    "en": {
        "kept": "You were logged out before this form was sent.",
        "draft": "What you typed here before the page was reloaded is back.",
        "agree": "I have read the notice above and agree to take part.",
        "start": "Start",
        "conversation": "Your question and the assistant's answer",
        "save": "Save this case",
        "saved_one": "You have reported 1 case.",
    },
    "zh-hans": {
        "kept": "提交此表单前您已退出登录。",
        "draft": "页面重新加载前您在此输入的内容已恢复。",
        "agree": "我已阅读上述说明并同意参与。",
        "start": "开始",
        "conversation": "您的问题和助手的回答",
        "save": "保存此案例",
        "saved_one": "您已报告 1 个案例。",
    },
}


def log_in(page, live_server, username):
    page.goto(f"{live_server.url}/accounts/login/")
    page.locator("#id_username").fill(username)
    page.locator("#id_password").fill("pw-for-tests")
    page.get_by_role("button", name="Log in").or_(page.get_by_role("button", name="登录")).click()
    expect(page.locator("form.logout")).to_be_visible()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_study_form_sent_after_logging_out_elsewhere_comes_back_filled_in(browser, live_server, language, viewport):
    words = WORDS[language]
    UserFactory(username="res", roles=["researcher"])
    context = browser.new_context(viewport=viewport)
    context.add_cookies([{"name": "django_language", "value": language, "url": live_server.url}])
    page = context.new_page()
    log_in(page, live_server, "res")
    page.goto(f"{live_server.url}/studies/new/")
    page.locator("#id_slug").fill("consent-study")
    page.locator("#id_consent_en").fill(CONSENT)

    # The session ends in another tab.
    other = context.new_page()
    other.goto(f"{live_server.url}/")
    other.locator("form.logout button").click()
    expect(other.locator("form.logout")).to_have_count(0)
    other.close()

    page.get_by_role("button", name="Save study").or_(page.get_by_role("button", name="保存研究")).click()
    page.locator("#id_username").fill("res")
    page.locator("#id_password").fill("pw-for-tests")
    page.get_by_role("button", name="Log in").or_(page.get_by_role("button", name="登录")).click()
    expect(page).to_have_url(f"{live_server.url}/studies/new/")
    expect(page.locator("#kept-form-note")).to_contain_text(words["kept"])
    expect(page.locator("#kept-form-note")).to_be_visible()
    assert page.locator("#id_consent_en").input_value() == CONSENT and len(CONSENT) == 1480
    assert page.locator("#id_slug").input_value() == "consent-study"
    assert not Study.objects.filter(slug="consent-study").exists()
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    context.close()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_an_unsaved_case_comes_back_after_a_reload(browser, live_server, language, viewport):
    words = WORDS[language]
    StudyFactory(
        slug="drafts",
        min_cases=1,
        max_cases=3,
        consent_en="Please read.",
        consent_zh="请阅读。",
        services=["ChatGPT", "Other"],
    )
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    page.goto(f"{live_server.url}/study/drafts/?lang={language}")
    page.get_by_label(words["agree"]).check()
    page.get_by_role("button", name=words["start"]).click()
    page.wait_for_load_state("load")
    conversation = page.get_by_label(words["conversation"])
    text = (
        "Question: how far is the Moon?\nAnswer: about 384,400 km."
        if language == "en"
        else "问题：月球有多远？\n回答：约 384,400 公里。"
    )
    conversation.press_sequentially(text[:20])
    conversation.fill(text)

    page.reload()
    page.wait_for_load_state("load")
    expect(page.get_by_label(words["conversation"])).to_have_value(text)
    expect(page.get_by_text(words["draft"])).to_be_visible()
    assert Case.objects.count() == 0  # only in this browser until it is saved

    page.get_by_label("Which AI assistant (LLM service) did you ask?").or_(
        page.get_by_label("您向哪个 AI 助手（大语言模型服务）提问？")
    ).select_option("ChatGPT")
    page.get_by_label("What did you want to achieve?").or_(page.get_by_label("您想达成什么目的？")).select_option(
        "factual_qa"
    )
    page.get_by_role("button", name=words["save"]).click()
    expect(page.locator("#case-count")).to_have_text(words["saved_one"])
    assert Case.objects.get().conversation == text
    page.reload()
    page.wait_for_load_state("load")
    expect(page.get_by_label(words["conversation"])).to_have_value("")
    expect(page.get_by_text(words["draft"])).to_be_hidden()
    context.close()
