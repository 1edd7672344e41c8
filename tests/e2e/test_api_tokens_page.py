"""Anyone signed in makes an API token in the browser, copies it, uses it, and revokes it: in
English and Chinese, on a desktop and a phone."""

import pytest
from playwright.sync_api import expect

from core.models import ApiToken
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
WORDS = {
    "en": {
        "menu": "API tokens",
        "name": "Name",
        "make": "Make the token",
        "copy": "Copy the token",
        "copied": "Copied",
        "revoke": "Revoke",
        "confirm": "Revoke the token",
        "none": "You have no token.",
    },
    "zh-hans": {
        "menu": "API 令牌",
        "name": "名称",
        "make": "创建令牌",
        "copy": "复制令牌",
        "copied": "已复制",
        "revoke": "撤销",
        "confirm": "撤销令牌",
        "none": "您还没有令牌。",
    },
}


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_token_is_made_shown_once_used_and_revoked(browser, live_server, language, viewport):
    words = WORDS[language]
    UserFactory(username="ann", roles=["annotator"])
    context = browser.new_context(viewport=viewport)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    context.add_cookies([{"name": "django_language", "value": language, "url": live_server.url}])
    page = context.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.locator("#id_username").fill("ann")
    page.locator("#id_password").fill("pw-for-tests")
    page.get_by_role("button", name="Log in").or_(page.get_by_role("button", name="登录")).click()

    page.get_by_role("link", name=words["menu"]).click()
    page.get_by_label(words["name"], exact=True).fill("nightly script")
    page.get_by_role("button", name=words["make"]).click()
    token = page.locator("#new-token").input_value()
    assert token.startswith("ub_") and ApiToken.objects.get().name == "nightly script"
    page.get_by_role("button", name=words["copy"]).click()
    expect(page.locator("#copy-status")).to_have_text(words["copied"])
    assert page.evaluate("navigator.clipboard.readText()") == token

    # A script: no session, only the token.
    script = browser.new_context()
    answer = script.request.get(f"{live_server.url}/api/me/", headers={"Authorization": f"Token {token}"})
    assert answer.status == 200 and answer.json()["username"] == "ann"
    page.goto(page.url)
    expect(page.locator("#new-token")).to_have_count(0)  # shown once
    page.get_by_role("button", name=words["revoke"]).click()
    # Asked first: the token still works until the revocation is confirmed.
    assert script.request.get(f"{live_server.url}/api/me/", headers={"Authorization": f"Token {token}"}).status == 200
    page.get_by_role("button", name=words["confirm"], exact=True).click()
    expect(page.get_by_text(words["none"])).to_be_visible()
    assert script.request.get(f"{live_server.url}/api/me/", headers={"Authorization": f"Token {token}"}).status == 401
    script.close()
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    context.close()
