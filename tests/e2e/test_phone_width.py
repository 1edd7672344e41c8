"""Pages that scrolled sideways on a phone, in English and Chinese: each fits the screen now."""

import pytest
from playwright.sync_api import expect

from core.audit import AuditAction, audit_record
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
