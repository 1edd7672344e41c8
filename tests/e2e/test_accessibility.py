"""axe-core over every page a person uses, in English and Chinese, at desktop and phone width;
and none of them scrolls sideways.

The demo data gives every page something to show. Each role signs in once per language and
viewport and visits its pages; axe runs on each (the copy that the axe-playwright-python wheel
ships, injected through the DevTools protocol, so the page's Content-Security-Policy is untouched)
and any serious or critical violation fails the test, listed with the page and the elements.
"""

import pytest
from axe_playwright_python.sync_playwright import Axe

from annotation.models import Campaign
from curation.models import Case, Dataset, Item
from home.demo import demo_seed
from judging.models import JudgeRun, JudgeTemplate
from llm.models import Endpoint

pytestmark = pytest.mark.django_db(transaction=True)

AXE = Axe()
BLOCKING = {"serious", "critical"}
# Every rule axe runs by default, and the one that tells a button's visible label from its
# accessible name (off by default as "experimental"): speech users say what they see.
OPTIONS = {"resultTypes": ["violations"], "rules": {"label-content-name-mismatch": {"enabled": True}}}
VIEWPORTS = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
ACCOUNTS = {
    "researcher": "demo-researcher",
    "reviewer": "demo-reviewer",
    "annotator": "demo-annotator",
}


def researcher_pages() -> list[str]:
    dataset = Dataset.objects.get(name="demo-v1")
    run = JudgeRun.objects.order_by("pk").first()
    # The demo has no endpoint of its own (its judge run came from a file); the form needs one.
    endpoint = Endpoint.objects.create(name="local-llama", base_url="http://127.0.0.1:8080/v1", default_model="gemma")
    template = JudgeTemplate.objects.order_by("pk").first()
    assert run and endpoint and template
    return [
        "/dashboard/",
        "/people/",
        "/endpoints/",
        "/endpoints/new/",
        f"/endpoints/{endpoint.pk}/",
        "/audit/",
        "/studies/new/",
        "/studies/demo/",
        "/studies/demo/edit/",
        "/studies/demo/submissions/",
        "/datasets/",
        f"/datasets/{dataset.name}/",
        f"/datasets/{dataset.name}/answers/",
        "/review/datasets/import/",
        "/account/tokens/",
        "/runs/",
        "/runs/new/",
        f"/runs/{run.pk}/",
        "/judge-templates/",
        f"/judge-templates/{template.pk}/",
        "/campaigns/new/",
        f"/campaigns/{Campaign.objects.get(slug='demo').slug}/",
    ]


def reviewer_pages() -> list[str]:
    dataset = Dataset.objects.get(name="demo-v1")
    return [
        "/review/",
        "/review/datasets/",
        f"/review/datasets/{dataset.pk}/",
        f"/review/items/{Item.objects.filter(dataset=dataset).order_by('pk').first().pk}/",
        f"/review/cases/{Case.objects.order_by('pk').first().pk}/",
    ]


def annotator_pages() -> list[str]:
    return ["/annotate/", "/annotate/demo/"]


def participant_pages() -> list[str]:
    return ["/study/demo/", "/study/demo/about/"]


def violations_on(page, url: str) -> list[str]:
    page.goto(url)
    results = AXE.run(page, options=OPTIONS)
    found = []
    for violation in results.response["violations"]:
        if violation["impact"] in BLOCKING:
            targets = ", ".join(" ".join(node["target"]) for node in violation["nodes"][:4])
            found.append(f"{url}: {violation['id']} ({violation['impact']}): {violation['help']} at {targets}")
    # Reflow (WCAG 1.4.10), which axe does not check: the page never scrolls sideways; a wide
    # table scrolls in its own box.
    sideways = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    if sideways > 0:
        found.append(f"{url}: scrolls sideways by {sideways} px at {page.viewport_size['width']} px wide")
    return found


@pytest.mark.parametrize("viewport", VIEWPORTS)
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_no_page_has_a_serious_accessibility_violation(settings, browser, live_server, language, viewport):
    settings.DEMO_MODE = True
    demo_seed()
    pages = {
        "researcher": researcher_pages(),
        "reviewer": reviewer_pages(),
        "annotator": annotator_pages(),
        None: participant_pages() + ["/accounts/login/"],
    }
    found: list[str] = []
    for account, paths in pages.items():
        context = browser.new_context(viewport=VIEWPORTS[viewport], locale=language)
        context.add_cookies([{"name": "django_language", "value": language, "url": live_server.url}])
        page = context.new_page()
        if account is not None:
            page.goto(f"{live_server.url}/accounts/login/")
            page.locator("#id_username").fill(account)
            page.locator("#id_password").fill(ACCOUNTS[account])
            page.locator("form:has(#id_password) [type=submit]").click()
            page.wait_for_url(lambda url: "/accounts/login/" not in url)
        for path in paths:
            found += violations_on(page, live_server.url + path)
        context.close()
    assert found == [], "\n".join(found)
