"""A researcher (the role, not a superuser) goes from an empty database to a finished judge run
and a campaign with two annotators, through /endpoints/, /datasets/, /runs/new/, /people/ and
/campaigns/new/, against a loopback endpoint, without /admin/: in English and in Chinese, at
desktop and at phone width. Every page is checked for labelled controls and for content wider
than the screen."""

import json
import re

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from annotation.models import Campaign, Vote
from core.workspaces import membership_set
from judging.models import JudgeRun
from llm.models import Endpoint
from tests.factories import UserFactory
from tests.judging.fake_llm import FakeLLM

pytestmark = pytest.mark.django_db(transaction=True)

IMMEDIATE = {
    "default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend", "QUEUES": ["default", "judging"]}
}
VIEWPORTS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}

# What the researcher reads and clicks, in each language.
WORDS = {
    "en": {
        "endpoints": "Endpoints",
        "new_endpoint": "New endpoint",
        "name": "Name",
        "base_url": "Base URL",
        "default_model": "Default model",
        "in_flight": "Calls in flight at most",
        "timeout": "Timeout per call (seconds)",
        "retries": "Retries after a failed call",
        "price_in": "Price per million input tokens",
        "price_out": "Price per million output tokens",
        "save_endpoint": "Save endpoint",
        "test": "Test connection",
        "works": "Connection to loopback works: judge-m answered",
        "datasets": "Datasets",
        "language": "Language",
        "show": "Show",
        "two_items": "2 items",
        "new_run": "New judge run",
        "next": "Next",
        "endpoint": "Endpoint",
        "judge_model": "Judge model",
        "calls_in_flight": "Calls in flight",
        "count": "Count calls and cost",
        "calls": "This run makes 8 calls to the judge",
        "start": "Start the run",
        "finished": "Finished",
        "leaderboard": "Leaderboard",
        "people": "People",
        "username": "Username",
        "password": "Password",
        "password_again": "Password confirmation",
        "create_account": "Create account",
        "annotator": "Annotator",
        "make_link": "Make an invitation link",
        "link": "Link",
        "create_mine": "Create my account",
        "new_campaign": "New campaign",
        "use_dataset": "Use this dataset",
        "title": "Title",
        "slug": "Slug",
        "questions": "Questions",
        "votes_per_pair": "Votes per pair",
        "gold_every": "A gold pair every N items",
        "create_campaign": "Create campaign",
        "gold_warning": "A gold pair every 2 items needs gold pairs",
        "question_id": "Question id",
        "model_a": "Model A",
        "model_b": "Model B",
        "expected": "Expected vote",
        "a_better": "A is better",
        "done": "Nothing is waiting for you in this campaign",
        "results": "Results: Pilot comparison",
        "bt": "Bradley-Terry ranking",
    },
    "zh": {
        "endpoints": "端点",
        "new_endpoint": "新建端点",
        "name": "名称",
        "base_url": "基础 URL",
        "default_model": "默认模型",
        "in_flight": "同时进行的调用上限",
        "timeout": "每次调用的超时（秒）",
        "retries": "调用失败后的重试次数",
        "price_in": "每百万输入词元的价格",
        "price_out": "每百万输出词元的价格",
        "save_endpoint": "保存端点",
        "test": "测试连接",
        "works": "与 loopback 的连接正常：judge-m 在",
        "datasets": "数据集",
        "language": "语言",
        "show": "显示",
        "two_items": "2 个条目",
        "new_run": "新建评判运行",
        "next": "下一步",
        "endpoint": "端点",
        "judge_model": "评判模型",
        "calls_in_flight": "同时进行的调用数",
        "count": "计算调用次数和费用",
        "calls": "此运行将调用评判模型 8 次",
        "start": "开始运行",
        "finished": "已完成",
        "leaderboard": "排行榜",
        "people": "人员",
        "username": "用户名",
        "password": "密码",
        "password_again": "密码确认",
        "create_account": "创建账户",
        "annotator": "标注员",
        "make_link": "制作邀请链接",
        "link": "链接",
        "create_mine": "创建我的账户",
        "new_campaign": "新建标注任务",
        "use_dataset": "使用此数据集",
        "title": "标题",
        "slug": "短名称（slug）",
        "questions": "问题数",
        "votes_per_pair": "每对回答的投票数",
        "gold_every": "每 N 个条目插入一个金标准对",
        "create_campaign": "创建标注任务",
        "gold_warning": "每 2 个条目插入一个金标准对需要有金标准对",
        "question_id": "问题编号",
        "model_a": "模型 A",
        "model_b": "模型 B",
        "expected": "预期投票",
        "a_better": "A 更好",
        "done": "这个标注任务中暂时没有等待您的内容",
        "results": "结果：Pilot comparison",
        "bt": "Bradley-Terry 排名",
    },
}

ITEMS = [
    {
        "question": "What is the capital of France?",
        "reference_ans": "Paris.",
        "user_intent": "Factual_QA",
        "language": "EN",
    },
    {
        "question": "How do I undo my last git commit?",
        "reference_ans": "git reset --soft HEAD~1",
        "user_intent": "Solve_Professional_Problem",
        "language": "EN",
    },
    {
        "question": "给我的猫起三个名字。",
        "reference_ans": "团子、年糕、芝麻。",
        "user_intent": "Seek_Creativity",
        "language": "CN",
    },
    {
        "question": "周末去哪里爬山比较好？",
        "reference_ans": "可以去附近的郊野公园。",
        "user_intent": "Ask_for_Advice",
        "language": "CN",
    },
]
ANSWERS = {
    "north": [
        "Paris is the capital of France.",
        "Run git reset --soft HEAD~1 to keep your changes.",
        "团子、年糕、芝麻，都圆滚滚的。",
        "可以去郊野公园，路线平缓，风景也好。",
    ],
    "south": ["Maybe Lyon.", "Delete the repository.", "猫。", "在家。"],
}


def judge_reply(body):
    """The loopback judge: north's answers score 8, south's 4."""
    prompt = body["messages"][-1]["content"]
    if "Connection test" in prompt:
        return "OK"
    good = any(answer in prompt for answer in ANSWERS["north"])
    return "Reasoning.\n" + json.dumps({"Factuality": 7, "Final Score": 8 if good else 4})


def import_files(tmp_path):
    """What a researcher runs once on the command line: a public dataset and two models' answers."""
    import csv

    path = tmp_path / "pilot.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(ITEMS[0]))
        writer.writeheader()
        writer.writerows(ITEMS)
    call_command("import_dataset", str(path), "--format", "urs", "--name", "pilot")
    for model, texts in ANSWERS.items():
        answers = tmp_path / f"{model}.jsonl"
        answers.write_text(
            "".join(
                json.dumps({"instruction": item["question"], "response": text}, ensure_ascii=False) + "\n"
                for item, text in zip(ITEMS, texts)
            ),
            encoding="utf-8",
        )
        call_command("import_answers", str(answers), "--dataset", "pilot", "--model", model)


def check_page(page, width):
    """Every visible control has a name, and nothing but scroll areas is wider than the screen."""
    page.wait_for_load_state()
    unlabelled = page.evaluate(
        """() => [...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
            .filter(el => el.offsetParent !== null)
            .filter(el => !(el.labels && el.labels.length) && !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby'))
            .map(el => el.name || el.id)"""
    )
    assert unlabelled == [], page.url
    wide = page.evaluate(
        """(limit) => [...document.querySelectorAll('body *')]
            .filter(el => !(el.parentElement && el.parentElement.closest('.table-wrap')))
            .filter(el => el.getBoundingClientRect().right > limit + 1 || (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX === 'visible' && el.clientWidth > 0))
            .map(el => el.tagName + '.' + el.className + '#' + el.id)""",
        width,
    )
    assert page.evaluate("document.documentElement.scrollWidth") <= width, (page.url, wide)


def guard(page, live_server, outside):
    def check(route):
        url = route.request.url
        if url.startswith(live_server.url) or url.startswith("data:"):
            route.continue_()
        else:
            outside.append(url)
            route.abort()

    page.route("**/*", check)


def sign_in(page, live_server, words, username, password):
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label(words["username"]).fill(username)
    page.get_by_label(words["password"]).fill(password)
    page.get_by_role("button", name="Log in").or_(page.get_by_role("button", name="登录")).click()


def vote_until_done(page, words):
    """Vote for north's answer every time, as an attentive annotator would (gold pairs included)."""
    for _ in range(10):
        if page.get_by_text(words["done"]).is_visible():
            return
        left = page.locator("article.answer").first.inner_text()
        side = "left" if any(answer in left for answer in ANSWERS["north"]) else "right"
        page.locator(f'button[name="choice"][value="{side}"]').click()
        page.wait_for_load_state()
    expect(page.get_by_text(words["done"])).to_be_visible()


@pytest.mark.parametrize("width_name", ["desktop", "phone"])
@pytest.mark.parametrize("language", ["en", "zh"])
def test_researcher_sets_up_and_runs_everything_from_the_browser(
    browser, live_server, settings, tmp_path, language, width_name
):
    settings.TASKS = IMMEDIATE
    settings.JUDGING_RETRY_BASE_SECONDS = 0.01
    words = WORDS[language]
    viewport = VIEWPORTS[width_name]
    width = viewport["width"]
    server = FakeLLM(reply=judge_reply).start()
    outside = []

    def new_page():
        context = browser.new_context(viewport=viewport)
        context.add_cookies(
            [{"name": "django_language", "value": "zh-hans" if language == "zh" else "en", "url": live_server.url}]
        )
        fresh = context.new_page()
        guard(fresh, live_server, outside)
        return fresh

    try:
        import_files(tmp_path)
        # The lead administers the team's workspace: /people/ below makes and invites members.
        membership_set(user=UserFactory(username="lead", roles=["researcher"]), roles=["researcher"], admin=True)
        page = new_page()
        sign_in(page, live_server, words, "lead", "pw-for-tests")
        expect(page).to_have_url(f"{live_server.url}/dashboard/")
        check_page(page, width)

        # /endpoints/: the loopback server, with prices, tested with one cheap call.
        page.get_by_role("link", name=words["endpoints"], exact=True).click()
        check_page(page, width)
        page.get_by_role("link", name=words["new_endpoint"]).click()
        page.get_by_label(words["name"], exact=True).fill("loopback")
        page.get_by_label(words["base_url"]).fill(server.base_url)
        page.get_by_label(words["default_model"]).fill("judge-m")
        page.get_by_label(words["in_flight"]).fill("4")
        page.get_by_label(words["timeout"]).fill("10")
        page.get_by_label(words["retries"]).fill("1")
        page.get_by_label(words["price_in"], exact=True).fill("2")
        page.get_by_label(words["price_out"], exact=True).fill("8")
        check_page(page, width)
        page.get_by_role("button", name=words["save_endpoint"]).click()
        # From the keyboard: the test button takes the focus and Enter presses it.
        page.get_by_role("button", name=words["test"]).focus()
        page.keyboard.press("Enter")
        expect(page.get_by_role("status")).to_contain_text(words["works"])
        assert Endpoint.objects.get().base_url == server.base_url

        # /datasets/: the imported dataset and its items, filtered.
        page.goto(f"{live_server.url}/dashboard/")
        page.get_by_role("link", name=words["datasets"], exact=True).first.click()
        check_page(page, width)
        page.get_by_role("link", name="pilot", exact=True).click()
        page.locator("#f-language").select_option("zh")
        page.get_by_role("button", name=words["show"], exact=True).click()
        expect(page.get_by_role("status")).to_contain_text(words["two_items"])
        check_page(page, width)

        # /runs/new/: the numbers first, then the run, executed against the loopback endpoint.
        page.goto(f"{live_server.url}/dashboard/")
        page.get_by_role("link", name=words["new_run"]).first.click()
        page.get_by_role("button", name=words["next"]).click()
        page.get_by_label(words["endpoint"], exact=True).select_option("loopback")
        page.get_by_label(words["judge_model"]).fill("judge-m")
        page.get_by_label("north").check()
        page.get_by_label("south").check()
        page.get_by_label(words["calls_in_flight"]).fill("4")
        check_page(page, width)
        page.get_by_label(words["calls_in_flight"]).press("Enter")  # the form's first submit button counts
        expect(page.locator("#preview")).to_contain_text(words["calls"])
        expect(page.locator("#preview")).to_be_focused()
        expect(page.locator("#preview")).to_contain_text("0.0")  # a price is known: a cost, not "unknown"
        check_page(page, width)
        page.get_by_role("button", name=words["start"]).click()
        expect(page.locator("#progress [data-field=status]")).to_have_text(words["finished"])
        expect(page.get_by_role("heading", name=words["leaderboard"])).to_be_visible()
        run = JudgeRun.objects.get()
        assert (run.status, run.judgments.count(), run.endpoint.name) == ("finished", 8, "loopback")
        assert sorted(run.judgments.values_list("final_score", flat=True)) == [4, 4, 4, 4, 8, 8, 8, 8]
        check_page(page, width)

        # /people/: one annotator account made here, one invited with a one-time link.
        page.goto(f"{live_server.url}/people/")
        page.get_by_label(words["username"], exact=True).fill("ann-made")
        page.locator("#id_account-password1").fill("kettle-window-42")
        page.get_by_label(words["password_again"]).fill("kettle-window-42")
        check_page(page, width)
        page.get_by_role("button", name=words["create_account"]).click()
        expect(page.get_by_role("heading", name="ann-made")).to_be_visible()
        page.get_by_role("button", name=words["make_link"]).click()
        link = page.get_by_label(words["link"], exact=True).input_value()
        assert re.fullmatch(rf"{re.escape(live_server.url)}/invite/\?token=[\w-]{{40,}}", link)
        check_page(page, width)

        invitee = new_page()
        invitee.goto(link)
        check_page(invitee, width)
        invitee.get_by_label(words["username"]).fill("ann-invited")
        invitee.locator("#id_password1").fill("kettle-window-43")
        invitee.get_by_label(words["password_again"]).fill("kettle-window-43")
        invitee.get_by_role("button", name=words["create_mine"]).click()
        expect(invitee).to_have_url(f"{live_server.url}/annotate/")

        # /campaigns/new/: both annotators; "gold every 2" is refused until a gold pair is chosen.
        page.goto(f"{live_server.url}/campaigns/new/?dataset=pilot")
        page.get_by_label(words["title"], exact=True).fill("Pilot comparison")
        page.get_by_label(words["slug"], exact=True).fill("pilot-1")
        page.locator("#id_candidates_0").check()
        page.locator("#id_candidates_1").check()
        page.get_by_label(words["questions"], exact=True).fill("2")
        page.get_by_label(words["votes_per_pair"]).fill("2")
        page.get_by_label("ann-made").check()
        page.get_by_label("ann-invited").check()
        page.get_by_label(words["gold_every"]).fill("2")
        check_page(page, width)
        page.get_by_role("button", name=words["create_campaign"]).click()
        expect(page.locator("#id_gold_every_error")).to_contain_text(words["gold_warning"])
        row = page.get_by_role("group", name=re.compile("1$"))
        # The page offers the dataset's question ids (answered by two models or more).
        first_id = page.locator("#gold-questions option").first.get_attribute("value")
        row.get_by_label(words["question_id"]).fill(first_id)
        row.get_by_label(words["model_a"]).select_option("north")
        row.get_by_label(words["model_b"]).select_option("south")
        row.get_by_label(words["expected"]).select_option("model_a")
        page.get_by_role("button", name=words["create_campaign"]).click()
        expect(page.get_by_role("heading", level=1)).to_have_text(words["results"])
        campaign = Campaign.objects.get(slug="pilot-1")
        assert sorted(campaign.annotators.values_list("username", flat=True)) == ["ann-invited", "ann-made"]
        assert campaign.pairs.filter(is_gold=True).count() == 1 and campaign.pairs_drawn == 2

        # Both annotators vote, blind.
        invitee.goto(f"{live_server.url}/annotate/pilot-1/")
        vote_until_done(invitee, words)
        made = new_page()
        sign_in(made, live_server, words, "ann-made", "kettle-window-42")
        made.goto(f"{live_server.url}/annotate/pilot-1/")
        assert "north" not in made.content() and "south" not in made.content()
        check_page(made, width)
        vote_until_done(made, words)
        assert Vote.objects.filter(campaign=campaign).count() == 6  # two ordinary pairs and the gold pair, each

        # The alignment page: Bradley-Terry from the votes beside the judge run.
        page.goto(f"{live_server.url}/campaigns/pilot-1/")
        expect(page.get_by_role("heading", name=words["bt"])).to_be_visible()
        expect(page.locator("#bt-table tbody tr").first).to_contain_text("north")
        expect(page.locator("#bt-table tbody tr").nth(1)).to_contain_text("south")
        check_page(page, width)
        assert outside == []
        assert page.context.request.get(f"{live_server.url}/admin/").url.endswith("/admin/login/?next=/admin/")
    finally:
        server.stop()  # the pages' contexts are closed after the test (tests/e2e/conftest.py)
