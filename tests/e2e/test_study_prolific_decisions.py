"""A researcher decides flagged submissions for Prolific in a real browser, in English and Chinese,
at desktop and phone width: a speeder and a Prolific ID used twice wait in neither list; each is
decided on its row (one approved, one rejected) after a page that asks first (going back there
changes nothing), lands in its list, and the decision is in the audit log with before and after."""

import datetime

import pytest
from playwright.sync_api import expect

from core.models import AuditEvent
from curation.models import Submission
from tests.e2e.conftest import requests_kept_home
from tests.factories import SUBMISSIONS_T0, StudyFactory, SubmissionFactory, UserFactory, finished_submission

pytestmark = pytest.mark.django_db(transaction=True)

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
# What the page says under the lists: what is in them, and how many wait for a decision.
LIST_NOTE = "section[aria-labelledby=decisions-heading] > p.hint"
T0 = SUBMISSIONS_T0  # the moment finished_submission's cases consented
WORDS = {
    "en": {
        "waiting": "Waiting for you",
        "shared": "Prolific ID used more than once",
        "speeder": "Speeder",
        "approve": "Approve…",
        "reject": "Reject…",
        "ask_approve": "Approve this submission on Prolific?",
        "ask_reject": "Reject this submission on Prolific?",
        "yes_approve": "Yes, approve it",
        "yes_reject": "Yes, reject it",
        "no": "No, go back",
        "approved": "Submission #{id} is in the list to approve.",
        "rejected": "Submission #{id} is in the list to reject.",
        "decided_approve": "Approve",
        "decided_reject": "Reject",
        "two_wait": "2 finished submissions wait for your decision.",
        "action": "Action",
        "decided": "Decided a flagged submission for Prolific",
        "show": "Show",
        "audit_submission": "submission: {id};",
        "audit_approve": "prolific_decision: — → approve",
        "audit_reject": "prolific_decision: — → reject",
    },
    "zh-hans": {
        "waiting": "等待您处理",
        "shared": "Prolific ID 被多次使用",
        "speeder": "过快作答",
        "approve": "批准…",
        "reject": "拒绝…",
        "ask_approve": "在 Prolific 上批准这份提交吗？",
        "ask_reject": "在 Prolific 上拒绝这份提交吗？",
        "yes_approve": "是，批准",
        "yes_reject": "是，拒绝",
        "no": "不，返回",
        "approved": "提交 #{id} 已列入待批准列表。",
        "rejected": "提交 #{id} 已列入待拒绝列表。",
        "decided_approve": "批准",
        "decided_reject": "拒绝",
        "two_wait": "2 份已完成的提交等待您的决定。",
        "action": "操作",
        "decided": "为 Prolific 决定了已标记的提交",
        "show": "显示",
        "audit_submission": "提交：{id};",
        "audit_approve": "prolific_decision：— → 批准",
        "audit_reject": "prolific_decision：— → 拒绝",
    },
}


def flagged_study():
    """Finished in 10, 12 and 9 minutes (the last screened out), a speeder in 1 minute, and a
    Prolific ID used twice (finished once in 11 minutes, and begun in another browser)."""
    study = StudyFactory(slug="decide", title_en="Decisions", completion_code="DONE-1", screenout_code="SCR-1")
    finished = {}
    for pid, minutes, excluded in (("aaa", 10, False), ("bbb", 12, False), ("scr", 9, True), ("fast", 1, False)):
        finished[pid] = finished_submission(study, pid, minutes, excluded=excluded)
    finished["twice"] = SubmissionFactory(
        study=study, prolific_pid="twice", consented_at=T0, submitted_at=T0 + datetime.timedelta(minutes=11)
    )
    SubmissionFactory(study=study, prolific_pid="twice", status=Submission.Status.IN_PROGRESS)
    UserFactory(username="res", roles=["researcher"])
    return finished


def fits_the_screen(page):
    page.wait_for_load_state("load")
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0


def lists_hold(page, approve: str, reject: str) -> None:
    """The IDs to paste into Prolific's bulk approve and bulk reject dialogs."""
    expect(page.locator("#ids-approve")).to_have_value(approve)
    expect(page.locator("#ids-reject")).to_have_value(reject)


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_flagged_submissions_wait_in_neither_list_until_decided_on_their_row(
    live_server, signed_in_page, language, viewport
):
    words = WORDS[language]
    finished = flagged_study()
    page = signed_in_page("res", language, viewport)
    outside = requests_kept_home(page, live_server.url)
    page.goto(f"{live_server.url}/studies/decide/submissions/")
    rows = page.locator("#submissions-table tbody tr")
    expect(rows).to_have_count(6)
    speeder = rows.filter(has=page.locator("code", has_text="fast"))
    shared = rows.filter(has=page.locator("code", has_text="twice")).filter(has=page.locator("td.decision a"))
    expect(speeder).to_contain_text(words["speeder"])
    expect(speeder.locator("td.decision")).to_contain_text(words["waiting"])
    expect(shared).to_have_count(1)  # the unfinished one has nothing to decide
    expect(shared).to_contain_text(words["shared"])
    expect(shared.locator("td.decision")).to_contain_text(words["waiting"])
    # Flagged: in neither list, and the page says how many wait.
    lists_hold(page, "aaa, bbb", "scr")
    expect(page.locator(LIST_NOTE)).to_contain_text(words["two_wait"])
    fits_the_screen(page)

    # The page asks first; going back from it decides nothing.
    shared.get_by_role("link", name=words["approve"]).click()
    expect(page.get_by_role("heading", level=1)).to_have_text(words["ask_approve"])
    expect(page.locator("#decide-pid")).to_have_text("twice")
    fits_the_screen(page)
    page.get_by_role("link", name=words["no"]).click()
    expect(shared.locator("td.decision")).to_contain_text(words["waiting"])
    lists_hold(page, "aaa, bbb", "scr")
    assert not AuditEvent.objects.filter(action="prolific_decided").exists()

    # The ID used twice approved, the speeder rejected, each on its own row.
    shared.get_by_role("link", name=words["approve"]).click()
    page.get_by_role("button", name=words["yes_approve"]).click()
    expect(page.locator(".messages")).to_contain_text(words["approved"].format(id=finished["twice"].pk))
    expect(shared.locator("td.decision strong")).to_have_text(words["decided_approve"])
    speeder.get_by_role("link", name=words["reject"]).click()
    expect(page.get_by_role("heading", level=1)).to_have_text(words["ask_reject"])
    expect(page.locator("#decide-pid")).to_have_text("fast")
    fits_the_screen(page)
    page.get_by_role("button", name=words["yes_reject"]).click()
    expect(page.locator(".messages")).to_contain_text(words["rejected"].format(id=finished["fast"].pk))
    expect(speeder.locator("td.decision strong")).to_have_text(words["decided_reject"])
    lists_hold(page, "aaa, bbb, twice", "fast, scr")
    expect(page.locator(LIST_NOTE)).not_to_contain_text(words["two_wait"])
    fits_the_screen(page)

    # The audit log has each decision, with what it was before and after.
    page.goto(f"{live_server.url}/audit/")
    page.get_by_label(words["action"], exact=True).select_option(label=words["decided"])
    page.get_by_role("button", name=words["show"], exact=True).click()
    entries = page.locator("[data-testid=audit-log] tbody tr")
    expect(entries).to_have_count(2)
    for pid, after in (("twice", words["audit_approve"]), ("fast", words["audit_reject"])):
        entry = entries.filter(has_text=words["audit_submission"].format(id=finished[pid].pk))
        expect(entry).to_have_count(1)
        expect(entry).to_contain_text("study:decide")
        expect(entry.locator("td").last).to_contain_text(after)
    fits_the_screen(page)
    changes = [
        (event.details["submission"], event.details["changes"])
        for event in AuditEvent.objects.filter(action="prolific_decided").order_by("pk")
    ]
    assert changes == [
        (finished["twice"].pk, {"prolific_decision": ["", "approve"]}),
        (finished["fast"].pk, {"prolific_decision": ["", "reject"]}),
    ]
    assert outside == []
