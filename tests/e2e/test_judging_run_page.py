"""A researcher reads a judge run's page, re-parses it, edits a template: English and Chinese, nothing from outside."""

import pytest
from playwright.sync_api import expect

from home.demo import demo_seed
from judging.models import JudgeTemplate, Judgment
from judging.prompts.templates import templates_ensure_defaults

pytestmark = pytest.mark.django_db(transaction=True)


def test_run_page_leaderboard_reparse_and_chinese(settings, page, live_server, log_in, blocked_requests):
    settings.DEMO_MODE = True
    demo_seed()
    failed = Judgment.objects.filter(run_id=1).exclude(parse_error="").get()
    # The judge's reply was fine after all: a parser fix is simulated by correcting the stored text.
    Judgment.objects.filter(pk=failed.pk).update(raw_text="Looks right.\n{'Final Score': 6}")

    log_in("researcher", "demo-researcher")
    page.get_by_role("link", name="#1").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Judge run #1")
    expect(page.get_by_role("heading", name="Leaderboard")).to_be_visible()
    expect(page.locator("figure.judging-chart svg")).to_be_visible()
    expect(page.get_by_role("heading", name="By intent")).to_be_visible()
    expect(page.locator("#progress [data-field=parse_failures]")).to_have_text("1")

    page.get_by_role("button", name="Parse again").click()
    expect(page.get_by_role("status")).to_contain_text("1 judgment(s) changed after parsing again.")
    expect(page.locator("#progress [data-field=parse_failures]")).to_have_text("0")
    assert Judgment.objects.get(pk=failed.pk).final_score == 6

    page.get_by_label("Language").select_option("zh-hans")
    page.get_by_role("button", name="Switch").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("评判运行 #1")
    expect(page.get_by_role("heading", name="排行榜")).to_be_visible()
    expect(page.get_by_role("button", name="重新解析")).to_be_visible()
    assert blocked_requests == []


def test_template_edit_makes_a_new_version(settings, page, live_server, log_in, blocked_requests):
    settings.DEMO_MODE = True
    demo_seed()
    templates_ensure_defaults()  # a transactional test starts from a flushed database
    log_in("researcher", "demo-researcher")
    page.goto(f"{live_server.url}/judge-templates/")
    page.get_by_role("link", name="urs/leisure/en").click()
    # The built-in template is read-only: it is copied to the workspace (its next version) to be changed.
    copy = JudgeTemplate.objects.filter(name="urs/leisure/en").order_by("-version").first().version + 1
    expect(page.get_by_role("button", name="Save as a new version")).to_have_count(0)
    page.get_by_role("button", name="Copy to this workspace").click()
    expect(page.get_by_role("status")).to_contain_text(f"as version {copy}; edit it here.")
    page.get_by_label("Template text").fill("no placeholder at all")
    page.get_by_role("button", name="Save as a new version").click()
    expect(page.get_by_role("alert")).to_have_text("A pointwise template must contain the {answer} placeholder.")
    page.get_by_label("Template text").fill("Score {answer} against {refrence}.")
    page.get_by_role("button", name="Save as a new version").click()
    expect(page.get_by_role("alert")).to_contain_text("unknown placeholder {refrence} (did you mean {reference}?)")
    page.get_by_label("Template text").fill("Score {answer} against {reference} for {question}.")
    page.get_by_role("button", name="Save as a new version").click()
    expect(page.get_by_role("status")).to_contain_text(f"Saved as version {copy + 1}.")
    expect(page.get_by_role("heading", level=1)).to_contain_text(f"v{copy + 1}")
    page.get_by_role("button", name="Save as a new version").click()
    expect(page.get_by_role("status")).to_contain_text(f"Nothing changed: the text is the same as version {copy + 1}")
    page.get_by_role("link", name=f"changes since v{copy}").click()
    expect(page.get_by_role("heading", level=1)).to_have_text(f"urs/leisure/en: changes from v{copy} to v{copy + 1}")
    expect(page.locator("ins").first).to_contain_text("Score {answer} against {reference} for {question}.")
    assert JudgeTemplate.objects.filter(name="urs/leisure/en", workspace__isnull=False).count() == 2
    assert blocked_requests == []
