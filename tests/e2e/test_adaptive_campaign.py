"""A researcher creates an adaptive campaign on /campaigns/new/ in a real browser, in English and
Chinese; an annotator then votes on the pairs it chooses, blind, until the budget is spent; the
campaign's page shows its design."""

import pytest
from playwright.sync_api import expect

from annotation.models import Campaign, Vote
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

WORDS = {
    "en": {
        "title": "Title",
        "slug": "Slug",
        "adaptive": "Adaptive: pairs chosen from the votes so far",
        "budget": "Vote budget",
        "share": "Share of uniformly drawn pairs",
        "create": "Create campaign",
        "created": "Campaign adaptive-1 created: it chooses up to 3 pairs as the votes come in.",
        "design": "Adaptive sampling",
        "drawn_none": "0 of 3 pairs drawn so far (a budget of 3 votes).",
        "done": "Nothing is waiting for you in this campaign",
        "drawn_all": "3 of 3 pairs drawn so far (a budget of 3 votes).",
        "needs_budget": "An adaptive campaign needs a vote budget.",
    },
    "zh-hans": {
        "title": "标题",
        "slug": "短名称（slug）",
        "adaptive": "自适应：根据已有投票选择回答对",
        "budget": "投票预算",
        "share": "均匀抽取的回答对比例",
        "create": "创建标注任务",
        "created": "已创建标注任务 adaptive-1：它会随着投票陆续选择最多 3 对回答。",
        "design": "自适应抽样",
        "drawn_none": "目前已抽取 3 对中的 0 对（预算 3 票）。",
        "done": "这个标注任务中暂时没有等待您的内容",
        "drawn_all": "目前已抽取 3 对中的 3 对（预算 3 票）。",
        "needs_budget": "自适应标注任务需要投票预算。",
    },
}


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_an_adaptive_campaign_from_the_page_to_the_votes(
    page, browser, live_server, log_in, blocked_requests, language
):
    words = WORDS[language]
    dataset = DatasetFactory(name="pilot")
    models = [CandidateModelFactory(name=name) for name in ("north", "south", "east")]
    for n in range(3):
        item = ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"Question {n}?")
        for k, model in enumerate(models):
            AnswerFactory(item=item, model=model, text=f"Answer number {k} to question {n}.")
    UserFactory(username="res", roles=["researcher"])
    UserFactory(username="ann", roles=["annotator"])

    page.context.add_cookies([{"name": "django_language", "value": language, "url": live_server.url}])
    log_in("res", "pw-for-tests")
    page.goto(f"{live_server.url}/campaigns/new/?dataset=pilot")
    page.get_by_label(words["title"], exact=True).fill("Adaptive pilot")
    page.get_by_label(words["slug"], exact=True).fill("adaptive-1")
    for k in range(3):
        page.locator(f"#id_candidates_{k}").check()
    page.get_by_label("ann", exact=True).check()
    page.get_by_label(words["adaptive"]).check()
    # No budget yet: the page says so beside the field and keeps what was typed.
    page.get_by_role("button", name=words["create"]).click()
    expect(page.locator("#id_budget_error")).to_contain_text(words["needs_budget"])
    expect(page.get_by_label(words["adaptive"])).to_be_checked()
    page.get_by_label(words["budget"]).fill("3")
    expect(page.get_by_label(words["share"])).to_have_value("0.2")
    page.get_by_role("button", name=words["create"]).click()
    expect(page.get_by_text(words["created"])).to_be_visible()
    expect(page.get_by_role("heading", name=words["design"])).to_be_visible()
    expect(page.locator("#design-summary")).to_contain_text(words["drawn_none"])
    campaign = Campaign.objects.get(slug="adaptive-1")
    assert (campaign.sampling, campaign.budget, campaign.pairs.count()) == ("adaptive", 3, 0)

    # The annotator in a browser of their own, held to the live server as the researcher's is.
    annotate_context = browser.new_context()
    annotate_context.add_cookies([{"name": "django_language", "value": language, "url": live_server.url}])
    annotator = annotate_context.new_page()
    annotator.route(
        "**/*",
        lambda route: (
            route.continue_()
            if route.request.url.startswith(live_server.url)
            else (blocked_requests.append(route.request.url), route.abort())
        ),
    )
    annotator.goto(f"{live_server.url}/accounts/login/")
    annotator.get_by_label("Username").or_(annotator.get_by_label("用户名")).fill("ann")
    annotator.get_by_label("Password").or_(annotator.get_by_label("密码")).fill("pw-for-tests")
    annotator.get_by_role("button", name="Log in").or_(annotator.get_by_role("button", name="登录")).click()
    annotator.goto(f"{live_server.url}/annotate/adaptive-1/")
    for _ in range(3):
        content = annotator.content()
        assert "north" not in content and "south" not in content and "east" not in content
        annotator.locator('button[name="choice"][value="left"]').click()
        annotator.wait_for_load_state()
    expect(annotator.get_by_text(words["done"])).to_be_visible()
    votes = list(Vote.objects.filter(campaign=campaign))
    assert len(votes) == 3 and all(0 < vote.choice_probability <= 1 for vote in votes)
    page.goto(f"{live_server.url}/campaigns/adaptive-1/")
    expect(page.locator("#design-summary")).to_contain_text(words["drawn_all"])
    assert blocked_requests == []
    annotate_context.close()
