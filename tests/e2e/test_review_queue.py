"""A reviewer works the quality queue in Chinese in a real browser, with keyboard shortcuts."""

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from curation.models import Case, ReviewEvent, ReviewTask
from curation.review.services import case_process
from tests.factories import CaseFactory, StudyFactory, SubmissionFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

PII_CASE = "问题：我的邮箱是zhang.san@example.com，帮我写一封请假邮件\n回答：好的，以下是邮件……"
PLAIN_CASE = "问题：长城有多长？\n回答：约两万一千千米。"


def test_reviewer_accepts_and_rejects_with_keys_in_chinese(page, live_server, log_in, blocked_requests):
    Group.objects.get_or_create(name="reviewer")
    UserFactory(username="rev", roles=["reviewer"])
    submission = SubmissionFactory(study=StudyFactory(slug="e2e"), language="zh")
    first = CaseFactory(submission=submission, position=1, conversation=PII_CASE)
    second = CaseFactory(submission=submission, position=2, conversation=PLAIN_CASE)
    for case in (first, second):
        case_process(case=case)

    page.context.add_cookies([{"name": "django_language", "value": "zh-hans", "url": live_server.url}])
    log_in("rev", "pw-for-tests")
    page.goto(f"{live_server.url}/review/")
    expect(page.get_by_role("heading", level=1)).to_have_text("审核队列")
    row = page.locator('tr[data-queue="quality"]')
    expect(row.get_by_role("rowheader")).to_have_text("质量与个人信息")
    expect(row.locator("td").first).to_have_text("2")
    row.get_by_role("button", name="领取下一条").click()

    # The case with an email address: the hint is highlighted, the text is shown as typed.
    expect(page.get_by_role("heading", level=1)).to_have_text("质量与个人信息审核")
    expect(page.locator("mark.pii")).to_have_text("zhang.san@example.com")
    expect(page.get_by_test_id("pii-count")).to_contain_text("1 处可能的个人信息")
    expect(page.get_by_label("数据集中的问题（第一个有效问题）")).to_have_value(
        "我的邮箱是zhang.san@example.com，帮我写一封请假邮件"
    )
    page.wait_for_selector("html[data-shortcuts=on]", state="attached")
    # Typing "r" in a field types; it does not reject.
    page.get_by_label("理由（拒绝时必填）").fill("含有邮箱地址")
    page.get_by_label("理由（拒绝时必填）").press("r")
    expect(page.get_by_label("理由（拒绝时必填）")).to_have_value("含有邮箱地址r")
    page.get_by_label("理由（拒绝时必填）").fill("含有邮箱地址")
    page.locator("h1").click()
    page.keyboard.press("r")

    # Saved, and the next case is leased at once.
    expect(page.get_by_role("status")).to_contain_text("已保存。")
    expect(page.locator(".conversation")).to_contain_text("长城有多长？")
    page.wait_for_selector("html[data-shortcuts=on]", state="attached")
    page.locator("h1").click()
    page.keyboard.press("a")
    expect(page).to_have_url(f"{live_server.url}/review/")
    expect(page.get_by_role("status")).to_contain_text("此队列暂时为空。")
    expect(page.locator('tr[data-queue="quality"] td').nth(3)).to_have_text("2 / 2")

    assert dict(Case.objects.values_list("pk", "review_status")) == {first.pk: "rejected", second.pk: "accepted"}
    rejected = ReviewEvent.objects.get(case=first, action="rejected")
    assert rejected.reason == "含有邮箱地址" and rejected.actor.username == "rev"
    assert ReviewTask.objects.filter(status="done").count() == 2

    # The case's history page shows every step, in Chinese.
    page.goto(f"{live_server.url}/review/cases/{first.pk}/")
    history = page.locator("table.history")
    expect(history).to_contain_text("自动步骤已运行")
    expect(history).to_contain_text("已拒绝：含有邮箱地址")
    expect(history).not_to_contain_text("None")
    assert blocked_requests == []
