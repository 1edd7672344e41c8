"""A researcher follows the dashboard link to a campaign's results, in English and in Chinese."""

import pytest
from playwright.sync_api import expect

from annotation.campaigns import campaign_create
from annotation.figures import figures_read
from annotation.services import assignment_next, vote_cast
from tests.factories import (
    AnswerFactory,
    CandidateModelFactory,
    DatasetFactory,
    ItemFactory,
    JudgeRunFactory,
    JudgmentFactory,
    StudyFactory,
    SubmissionFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db(transaction=True)

INTENTS = ["factual_qa", "ask_for_advice", "seek_creativity", "factual_qa"]


def build_finished_campaign():
    """Three models, every pair voted twice: alpha always beats beta and gamma, beta ties gamma."""
    study = StudyFactory()
    dataset = DatasetFactory(name="results-set", study=study)
    models = [CandidateModelFactory(name=name) for name in ("alpha", "beta", "gamma")]
    items = [ItemFactory(dataset=dataset, question=f"Q{n}?", intent=INTENTS[n]) for n in range(4)]
    for item in items:
        for model in models:
            AnswerFactory(item=item, model=model, text=f"{model.name} says {item.question}")
    people = [UserFactory(username=f"rater{k}", roles=["annotator"]) for k in range(2)]
    campaign = campaign_create(
        slug="results",
        title="Results campaign",
        dataset=dataset,
        candidates=models,
        question_count=4,
        pairs_per_question=3,
        votes_per_pair=2,
        annotators=people,
    )
    for person in people:
        while (assignment := assignment_next(campaign=campaign, annotator=person)) is not None:
            pair = assignment.pair
            names = (pair.model_a.name, pair.model_b.name)
            if "alpha" not in names:
                choice = "tie"
            else:
                choice = "left" if (names[0] == "alpha") == assignment.model_a_on_left else "right"
            vote_cast(token=assignment.token, annotator=person, choice=choice)
    run = JudgeRunFactory(dataset=dataset, status="finished")
    for item in items:
        for model, score in zip(models, (9, 6, 5)):
            JudgmentFactory(run=run, item=item, model=model, final_score=score)
    SubmissionFactory(study=study, usage={"satisfaction": {"factual_qa": 5, "ask_for_advice": 3, "seek_creativity": 4}})
    UserFactory(username="lead", roles=["researcher"])
    # What the background task does once the votes are in.
    figures_read(what="campaign", campaign=campaign, run=run, compute="missing")
    return campaign


def test_researcher_opens_campaign_results_from_the_dashboard(page, live_server, log_in, blocked_requests):
    build_finished_campaign()
    errors = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))

    log_in("lead", "pw-for-tests")
    expect(page.get_by_role("heading", level=1)).to_have_text("Researcher dashboard")
    page.get_by_role("link", name="Results campaign").click()
    expect(page).to_have_url(f"{live_server.url}/campaigns/results/")
    expect(page.get_by_role("heading", level=1)).to_have_text("Results: Results campaign")
    rows = page.locator("#bt-table tbody tr")
    expect(rows).to_have_count(3)
    # 12 pairs voted twice: alpha won all 16 of its votes; beta and gamma tied all 8 of theirs.
    expect(rows.nth(0)).to_contain_text("alpha")
    expect(rows.nth(0).locator("td").nth(4)).to_have_text("16")
    expect(page.locator("svg.plot")).to_have_count(3)
    expect(page.get_by_role("img", name="BT scores with intervals")).to_be_visible()
    expect(page.get_by_role("img", name="BT score against judge score")).to_be_visible()
    expect(page.get_by_role("img", name="Satisfaction against judge score")).to_be_visible()
    expect(page.locator("#agreement-table")).to_contain_text("Fleiss' kappa")
    # Three models: the BT-judge correlation is greyed with its reason, never given a p-value.
    expect(page.locator("#bt-vs-judge")).to_have_class("correlation not-meaningful")
    expect(page.locator("#bt-vs-judge-why")).to_contain_text("Not meaningful: only 3 points: below 5")
    assert "0.0000" not in page.content()

    page.get_by_label("Language").select_option("zh-hans")
    page.get_by_role("button", name="Switch").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("结果：Results campaign")
    expect(page.get_by_role("heading", name="Bradley-Terry 排名")).to_be_visible()
    expect(page.locator("#bt-table tbody tr")).to_have_count(3)
    expect(page.locator("svg.plot")).to_have_count(3)
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    expect(page.locator("#bt-vs-judge-why")).to_contain_text("不具意义：")

    page.get_by_role("link", name="研究者面板").click()
    expect(page.get_by_role("link", name="Results campaign")).to_be_visible()
    assert errors == []
    assert blocked_requests == []
