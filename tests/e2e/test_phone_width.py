"""Pages that scrolled sideways on a phone, in English and Chinese: each fits the screen now."""

import pytest
from playwright.sync_api import expect

from core.audit import AuditAction, audit_record
from home.demo import DEMO_ACCOUNTS, demo_seed
from llm.models import Endpoint
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

PHONE = {"width": 390, "height": 844}


def sideways(page) -> int:
    """How far the page scrolls sideways, in pixels (0 when it fits the screen)."""
    page.wait_for_load_state("load")
    return page.evaluate("document.documentElement.scrollWidth - window.innerWidth")


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_audit_log_and_its_action_filter_fit_a_phone(live_server, signed_in_page, language):
    """The action filter lists long sentences: the select was as wide as the longest one."""
    researcher = UserFactory(username="res", roles=["researcher"])
    audit_record(actor=researcher, action=AuditAction.PROLIFIC_DECIDED, target="study:s", details={"submission": 1})
    page = signed_in_page("res", language, PHONE)
    page.goto(f"{live_server.url}/audit/")
    action = page.locator("#audit-action")
    box = action.bounding_box()
    assert box is not None and box["x"] + box["width"] <= PHONE["width"], box
    assert sideways(page) == 0
    action.select_option(AuditAction.PROLIFIC_DECIDED.value)
    page.locator("#audit-action ~ button[type=submit]").click()
    expect(page.locator("[data-testid=audit-log] tbody tr")).to_have_count(1)
    assert sideways(page) == 0


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_wide_table_with_text_for_screen_readers_scrolls_on_its_own(live_server, signed_in_page, language):
    """The endpoints table's "Test connection" buttons name their endpoint for screen readers in
    text positioned out of sight: it widened the page instead of scrolling with the table."""
    UserFactory(username="res", roles=["researcher"])
    Endpoint.objects.create(name="local-llama", base_url="http://127.0.0.1:8080/v1", default_model="gemma")
    page = signed_in_page("res", language, PHONE)
    page.goto(f"{live_server.url}/endpoints/")
    expect(page.get_by_role("link", name="local-llama")).to_be_visible()
    assert sideways(page) == 0
    table = page.locator(".table-wrap")
    assert table.evaluate("wrap => wrap.scrollWidth > wrap.clientWidth")  # the table scrolls within


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_campaigns_correlations_scroll_on_their_own(browser, live_server, settings, language):
    """The demo campaign's judge alignment: a correlation table with its intervals was wider than
    a phone (by 11 px in English) and sat in no scroll box of its own."""
    settings.DEMO_MODE = True
    demo_seed()
    context = browser.new_context(viewport=PHONE)
    context.add_cookies([{"name": "django_language", "value": language, "url": live_server.url}])
    page = context.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    researcher = next(account for account in DEMO_ACCOUNTS if account.username == "researcher")
    page.locator("#id_username").fill(researcher.username)
    page.locator("#id_password").fill(researcher.password)
    page.locator("form:has(#id_password) [type=submit]").click()
    expect(page.locator("form.logout")).to_be_visible()
    page.goto(f"{live_server.url}/campaigns/demo/")
    expect(page.locator(".table-wrap > table.correlation")).to_have_count(2)
    expect(page.locator("#satisfaction-vs-judge td.num").last).not_to_have_text("–")  # with its interval
    assert sideways(page) == 0
