"""Statistics are shown honestly on the pages, in the commands and through the API.

As reported: "Spearman 1.000 p 0.0000" with three models, and three tied 50 % models ranked 1, 2
and 3. Below the minimum number of models or votes a correlation, p-value or rank is greyed with
the reason; equal values share a rank; a zero-width interval is explained.
"""

import json

import pytest
from django.core.management import call_command
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import translation

from annotation.report import bt_report
from core.templatetags.numbers import pvalue
from judging.models import JudgeMode, JudgeRun
from stats.correlation import correlations
from stats.sample_size import MIN_DECISIVE, ranks_verdict, sign_test_floor
from tests.factories import (
    CampaignFactory,
    CandidateModelFactory,
    DatasetFactory,
    ItemFactory,
    JudgeRunFactory,
    JudgmentFactory,
    VoteFactory,
)
from tests.figures import get_computed

pytestmark = pytest.mark.django_db


@pytest.fixture
def three_models():
    """Three models, two votes (alpha beat beta, beta beat gamma), judge scores 9 > 6 > 3."""
    dataset = DatasetFactory(name="tiny")
    models = [CandidateModelFactory(name=name) for name in ("alpha", "beta", "gamma")]
    campaign = CampaignFactory(slug="tiny", title="Tiny campaign", dataset=dataset)
    campaign.candidates.set(models)
    items = [ItemFactory(dataset=dataset, external_id=f"q{n}") for n in range(2)]
    alpha, beta, gamma = models
    VoteFactory(campaign=campaign, item=items[0], model_a=alpha, model_b=beta, winner="model_a")
    VoteFactory(campaign=campaign, item=items[1], model_a=beta, model_b=gamma, winner="model_a")
    run = JudgeRunFactory(dataset=dataset, status=JudgeRun.Status.FINISHED)
    for item in items:
        for model, score in zip(models, (9, 6, 3), strict=True):
            JudgmentFactory(run=run, item=item, model=model, final_score=score)
    return campaign, run


def test_the_sign_test_floor_behind_the_minimum():
    # Five straight wins are not significant at 5 %, six are.
    assert sign_test_floor(MIN_DECISIVE - 1) == 0.0625 and sign_test_floor(MIN_DECISIVE) == 0.03125
    assert ranks_verdict({"a": 6, "b": 9}) == {"meaningful": True, "reason": None, "too_few": []}
    verdict = ranks_verdict({"a": 6, "b": 2, "c": 5})
    assert verdict["meaningful"] is False
    assert verdict["too_few"] == [{"label": "b", "decisive": 2}, {"label": "c", "decisive": 5}]
    assert verdict["reason"] == (
        "Fewer than 6 decisive outcomes for b (2), c (5): below 6 even a clean sweep is not significant "
        "(two-sided sign test p = 0.0625 for 5 of 5), so these ranks only restate a few outcomes."
    )
    assert ranks_verdict({"a": 9, "b": 9}, has_intervals=False)["reason"] == (
        "No bootstrap intervals: the ranks follow the point scores alone and are not tested."
    )


def test_three_models_give_no_p_value_and_greyed_ranks_on_the_results_page(three_models, client, researcher):
    campaign, run = three_models
    client.force_login(researcher)
    page = get_computed(client, reverse("annotation:results", args=[campaign.slug]), {"rounds": 50}).text
    # BT against the judge over three models: Spearman is 1.000 but has no p-value.
    assert '<table class="correlation not-meaningful" aria-describedby="bt-vs-judge-why" id="bt-vs-judge">' in page
    assert '<th scope="row">Spearman</th><td class="num">1.000</td><td class="num">–</td>' in page
    assert "0.0000" not in page
    assert "only 3 points: below 5, no ordering of so few points can be told apart from chance" in page
    # Two votes: the ranks are greyed, with the models that have too few decisive votes.
    assert '<table id="bt-table" class="ranks-not-meaningful" aria-describedby="bt-ranks-why">' in page
    assert "fewer than 6 decisive votes (wins and losses) for alpha (1), gamma (1), beta (2)." in page
    assert "All bootstrap rounds gave the same value" not in page

    with translation.override("zh-hans"):
        chinese = client.get(
            reverse("annotation:results", args=[campaign.slug]), {"rounds": 50}, HTTP_ACCEPT_LANGUAGE="zh-hans"
        ).text
    assert "不具意义：" in chinese and "仅有 3 个点" in chinese
    assert "排名不具意义：" in chinese and "0.0000" not in chinese


def test_the_api_says_when_ranks_and_correlations_mean_nothing(three_models, client, researcher):
    campaign, run = three_models
    client.force_login(researcher)
    bt = client.get(reverse("api-campaign-bt", args=[campaign.slug]), {"rounds": 20}).json()
    assert (bt["ranks_meaningful"], bt["min_decisive"]) == (False, 6)
    assert bt["ranks_too_few"] == [
        {"label": "alpha", "decisive": 1},
        {"label": "gamma", "decisive": 1},
        {"label": "beta", "decisive": 2},
    ]
    assert bt["ranks_reason"].startswith("Fewer than 6 decisive outcomes for alpha (1), gamma (1), beta (2)")
    alignment = client.get(reverse("api-campaign-alignment", args=[campaign.slug]), {"rounds": 20}).json()
    spearman = alignment["bt_vs_judge"]
    assert (spearman["n"], spearman["meaningful"], spearman["spearman"]["p"]) == (3, False, None)
    assert spearman["reason"].startswith("Only 3 points: below 5 no p-value or interval is reported")


def test_the_commands_print_no_p_value_below_the_minimum(three_models, capsys):
    campaign, run = three_models
    call_command("alignment", "--dataset", "tiny", "--run", str(run.pk), "--bootstrap", "20")
    out = capsys.readouterr().out
    assert "  not meaningful (n = 3): Only 3 points: below 5 no p-value or interval is reported" in out
    assert "(pearson r = 0.998, spearman r = 1.000, kendall r = 1.000)" in out
    assert "p = 0.0000" not in out and "p =" not in out.split("Agreement")[0]
    call_command("bt", "--dataset", "tiny", "--bootstrap", "20")
    out = capsys.readouterr().out
    assert "Ranks not meaningful: Fewer than 6 decisive outcomes for alpha (1), gamma (1), beta (2)" in out
    assert " (1)  alpha " in out  # a rank that means nothing is printed in brackets
    call_command("bt", "--dataset", "tiny", "--bootstrap", "20", "--format", "csv")
    header, first = capsys.readouterr().out.splitlines()[:2]
    assert header.endswith(",ranked,rank_meaningful,note")
    assert first.endswith(",True,False,")


@pytest.fixture
def one_sided_duel():
    """Two models, three votes, all for alpha: every bootstrap round redraws the same votes."""
    dataset = DatasetFactory(name="duel")
    alpha, beta = CandidateModelFactory(name="alpha"), CandidateModelFactory(name="beta")
    campaign = CampaignFactory(slug="duel", title="Duel", dataset=dataset)
    campaign.candidates.set([alpha, beta])
    item = ItemFactory(dataset=dataset)
    for _ in range(3):
        VoteFactory(campaign=campaign, item=item, model_a=alpha, model_b=beta, winner="model_a")
    return campaign


def test_a_zero_width_interval_is_explained_on_the_page_and_in_the_command(one_sided_duel, client, researcher, capsys):
    client.force_login(researcher)
    page = get_computed(client, reverse("annotation:results", args=["duel"]), {"rounds": 30}).text
    assert page.count('<a href="#bt-zero-width" class="note-mark"') == 2
    assert "All bootstrap rounds gave the same value, so the interval has no width" in page
    call_command("bt", "--dataset", "duel", "--bootstrap", "30")
    out = capsys.readouterr().out
    assert "^1 all bootstrap rounds gave the same value: too few votes or a single outcome" in out
    call_command("bt", "--dataset", "duel", "--bootstrap", "30", "--format", "csv")
    first = capsys.readouterr().out.splitlines()[1]
    assert first.endswith(",True,False,all bootstrap rounds gave the same value: too few votes or a single outcome")


def test_enough_votes_rank_without_a_warning(three_models):
    campaign, run = three_models
    alpha, beta, gamma = campaign.candidates.order_by("name")
    item = campaign.dataset.items.first()
    for winner, loser in ((alpha, beta), (beta, gamma), (alpha, gamma)):
        for k in range(6):
            VoteFactory(
                campaign=campaign, item=item, model_a=winner, model_b=loser, winner="model_a" if k else "model_b"
            )
    report = bt_report(campaign=campaign, rounds=50)
    assert (report["ranks_meaningful"], report["ranks_reason"], report["ranks_too_few"]) == (True, None, [])
    assert bt_report(campaign=campaign, rounds=0)["ranks_reason"] == (
        "No bootstrap intervals: the ranks follow the point scores alone and are not tested."
    )


def test_a_tiny_p_value_is_never_printed_as_zero():
    assert (pvalue(3e-7), pvalue(0.0001), pvalue(0.01234), pvalue(None)) == ("< 0.0001", "0.0001", "0.0123", "–")
    corr = correlations([1, 2, 3, 4, 5, 6, 7], [2, 4, 6, 8, 10, 12, 14])
    html = render_to_string("annotation/_corr.html", {"corr": corr, "corr_id": "c", "min_points": 5})
    assert '<table class="correlation" id="c">' in html
    assert '<th scope="row">Pearson</th><td class="num">1.000</td><td class="num">&lt; 0.0001</td>' in html
    # A perfect correlation's interval has no width: explained.
    assert "A perfect correlation: the interval has no width. That is not certainty" in html


def test_tied_pairwise_models_share_a_rank_on_the_run_page_and_api(client, researcher):
    dataset = DatasetFactory(name="pairs")
    reference = CandidateModelFactory(name="ref-model")
    models = [CandidateModelFactory(name=name) for name in ("m-one", "m-two", "m-three")]
    run = JudgeRunFactory(
        dataset=dataset, mode=JudgeMode.PAIRWISE, reference_model=reference, status=JudgeRun.Status.FINISHED
    )
    run.candidates.set(models)
    items = [ItemFactory(dataset=dataset, external_id=f"i{n}") for n in range(2)]
    for model in models:
        JudgmentFactory(run=run, item=items[0], model=model, final_score=None, outcome="win")
        JudgmentFactory(run=run, item=items[1], model=model, final_score=None, outcome="lose")
    client.force_login(researcher)
    rows = client.get(reverse("api-run-leaderboard", args=[run.pk])).json()
    assert [(row["model"], row["rank"], row["rank_meaningful"]) for row in rows] == [
        ("m-one", 1, False),
        ("m-three", 1, False),
        ("m-two", 1, False),
        ("ref-model", 1, False),
    ]
    page = client.get(reverse("judging:run-detail", args=[run.pk])).text
    assert page.count('<td class="num rank">1</td>') == 4
    assert '<table id="pairwise-table" class="ranks-not-meaningful" aria-describedby="pairwise-ranks-why">' in page
    assert "fewer than 6 decisive judgments (wins and losses against the reference) for" in page
    assert "m-one (2), m-three (2), m-two (2)." in page


def test_the_leaderboard_command_footnotes_a_zero_width_interval(capsys):
    dataset = DatasetFactory(name="one-score")
    run = JudgeRunFactory(dataset=dataset, status=JudgeRun.Status.FINISHED)
    JudgmentFactory(run=run, item=ItemFactory(dataset=dataset), model=CandidateModelFactory(name="solo"), final_score=7)
    call_command("leaderboard", "--run", str(run.pk), "--by", "intent")
    out = capsys.readouterr().out
    assert "7.00 [7.00,7.00]***^1" in out
    assert "^1 a single score: there is nothing to resample, so the interval has no width; that is not certainty" in out
    rows = json.loads(_command_json(run, capsys))
    assert rows[0]["note"].startswith("a single score")


def _command_json(run, capsys):
    call_command("leaderboard", "--run", str(run.pk), "--format", "json")
    return capsys.readouterr().out


def test_bootstrap_rounds_out_of_range_are_named_by_the_api_and_the_page_still_shows(three_models, client, researcher):
    campaign, _run = three_models
    client.force_login(researcher)
    url = reverse("api-campaign-bt", args=[campaign.slug])
    for raw in ("", "abc", "9000"):
        response = client.get(url, {"rounds": raw})
        assert response.status_code == 400, raw
        assert list(response.json()) == ["rounds"], raw
    page = client.get(reverse("annotation:results", args=[campaign.slug]), {"rounds": 9000})
    assert page.status_code == 200


def test_an_alignment_that_cannot_be_computed_is_an_answer_with_its_reason(client, monkeypatch, three_models):
    """When a correlation cannot be computed (here the numerics fail, as scipy can on degenerate
    input), the BT fit still stands and the alignment API answers 200 with the reason, as the
    style fit's "not estimable" does; it answered 404, which a script reads as "no such campaign"."""
    from stats import correlation
    from tests.factories import UserFactory

    campaign, run = three_models

    def degenerate(*_args, **_kwargs):
        raise ArithmeticError("the correlation's variance is zero")

    monkeypatch.setattr(correlation, "correlations", degenerate)
    client.force_login(UserFactory(roles=["researcher"]))
    url = reverse("api-campaign-alignment", args=[campaign.slug])
    response = get_computed(client, url, {"rounds": 5})
    assert response.status_code == 200
    data = response.json()
    assert (data["estimable"], data["run"], data["dataset"]) == (False, run.pk, "tiny")
    assert data["reason"] == "not estimable: the correlation's variance is zero"
    assert data["bt"] is None and data["agreement"] is None and data["bt_vs_judge"] is None
    # The plain BT fit, computed all the same, is on its own endpoint.
    bt = client.get(reverse("api-campaign-bt", args=[campaign.slug]), {"rounds": 5}).json()
    assert [row["label"] for row in bt["scores"]] == ["alpha", "beta", "gamma"]
