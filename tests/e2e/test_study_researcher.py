"""A researcher opens the demo study from the dashboard and reads its figures in both languages."""

import pytest
from playwright.sync_api import expect

from home.demo import demo_seed

pytestmark = pytest.mark.django_db(transaction=True)


def test_researcher_reads_the_study_page(settings, page, live_server, log_in, blocked_requests):
    settings.DEMO_MODE = True
    demo_seed()
    log_in("researcher", "demo-researcher")
    page.get_by_role("link", name="How do you use AI chat assistants?").click()
    expect(page).to_have_url(f"{live_server.url}/studies/demo/")
    expect(page.locator("#stat-submitted")).to_have_text("3")
    expect(page.locator("#stat-excluded")).to_have_text("1")
    # The participant screened out by the attention check is counted apart, not as a completion.
    expect(page.locator("#stat-completion")).to_have_text("67 %")
    expect(page.locator("#stat-screened-out")).to_have_text("1 (33 %)")
    expect(page.locator("#stat-median")).to_have_text("12.0 min")
    reason = "Failed the attention check: chose 4 where the instruction asked for 2."
    expect(page.get_by_role("cell", name=reason)).to_be_visible()
    with page.expect_download() as download:
        page.get_by_role("link", name="cases (CSV)").click()
    lines = open(download.value.path(), encoding="utf-8").read().splitlines()
    assert lines[0].startswith("\ufeffcase_id,submission_id,study,position,service,question,conversation")
    assert "resume" not in "\n".join(lines)

    page.get_by_label("Language").select_option("zh-hans")
    page.get_by_role("button", name="Switch").click()
    expect(page.get_by_role("heading", name="各意图的满意度（1-5）")).to_be_visible()
    expect(page.locator("#stat-median")).to_have_text("12.0 分钟")
    expect(page.get_by_role("cell", name="事实问答")).to_have_count(2)  # satisfaction and intents tables
    # The exclusion reason is stored in English and read in Chinese.
    expect(page.get_by_role("cell", name="未通过注意力检查：题目要求选择 2，实际选择了 4。")).to_be_visible()
    assert blocked_requests == []
