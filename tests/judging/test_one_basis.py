"""One basis per row: the raw and the length-controlled win rates of a pairwise leaderboard row
handle parse failures the same way (as losses, ChineseAlpacaEval's rule), and the page says so.

As reported: the raw win rate counted parse failures as losses while the LC rate beside it
dropped them, so a long-answering model read "win 85.0 %, LC 86.5 %" although, on one basis,
length control lowered it.
"""

import pytest
from django.urls import reverse

from judging.models import JudgeMode, JudgeRun
from judging.results.boards import run_leaderboard
from tests.factories import (
    AnswerFactory,
    CandidateModelFactory,
    DatasetFactory,
    ItemFactory,
    JudgeRunFactory,
    JudgmentFactory,
)
from tests.figures import get_computed

pytestmark = pytest.mark.django_db


@pytest.fixture
def run_with_failures():
    """40 items; the candidate wins 20, loses 10 and 10 replies are parse failures. Its answers
    are exactly as long as the reference's, so length control has nothing to remove."""
    dataset = DatasetFactory(name="basis")
    reference, candidate = CandidateModelFactory(name="ref"), CandidateModelFactory(name="cand")
    run = JudgeRunFactory(
        dataset=dataset, mode=JudgeMode.PAIRWISE, reference_model=reference, status=JudgeRun.Status.FINISHED
    )
    run.candidates.set([candidate])
    for n in range(40):
        item = ItemFactory(dataset=dataset, external_id=f"b{n:02d}")
        for model in (reference, candidate):
            AnswerFactory(item=item, model=model, text="x" * 400)
        outcome = "win" if n < 20 else "lose" if n < 30 else "error"
        JudgmentFactory(
            run=run,
            item=item,
            model=candidate,
            final_score=None,
            outcome=outcome,
            raw_text="[{'model': 'model_1', 'rank': 1}, {'model': 'model_2', 'rank': 2}]"
            if outcome != "error"
            else "?",
            parse_error="no [...] list of models and ranks in the reply" if outcome == "error" else "",
        )
    return run


def test_raw_and_lc_win_rates_count_a_parse_failure_the_same_way(run_with_failures):
    row = next(row for row in run_leaderboard(run=run_with_failures)["pairwise"] if row["model"] == "cand")
    assert row["error_rate"] == 0.25
    # 20 wins of 40: a failure is a loss in the win rate...
    assert row["win_rate"] == 0.5
    # ...and in the LC win rate: with nothing to remove (equal lengths) the two are equal. On the
    # old basis the LC rate dropped the failures and read 20 of 30, 66.7 %.
    assert row["lc_win_rate"] == pytest.approx(0.5, abs=1e-9)
    assert row["failures_as"] == "loss"


def test_the_page_states_the_basis_under_the_table(run_with_failures, client, researcher):
    client.force_login(researcher)
    html = get_computed(client, reverse("judging:run-detail", args=[run_with_failures.pk])).text
    assert "both count a parse failure (Error column) as a loss" in html
    assert '<td class="num">50.00</td>' in html
    assert "66.67" not in html


def _small_run(outcomes, lengths):
    dataset = DatasetFactory()
    reference = CandidateModelFactory(name=f"sref-{dataset.pk}")
    candidate = CandidateModelFactory(name=f"scand-{dataset.pk}")
    run = JudgeRunFactory(
        dataset=dataset, mode=JudgeMode.PAIRWISE, reference_model=reference, status=JudgeRun.Status.FINISHED
    )
    run.candidates.set([candidate])
    for outcome, length in zip(outcomes, lengths, strict=True):
        item = ItemFactory(dataset=dataset)
        AnswerFactory(item=item, model=reference, text="x" * 300)
        AnswerFactory(item=item, model=candidate, text="x" * length)
        JudgmentFactory(run=run, item=item, model=candidate, final_score=None, outcome=outcome, raw_text="[...]")
    return run


def test_an_lc_rate_below_the_minimum_is_greyed_and_one_not_estimable_says_why(client, researcher):
    few = _small_run(["win", "lose"] * 5, [200 + 40 * n for n in range(10)])
    row = next(row for row in run_leaderboard(run=few)["pairwise"] if row["model"].startswith("scand"))
    assert row["lc_win_rate"] is not None and row["lc_too_few"] is True
    client.force_login(researcher)
    html = get_computed(client, reverse("judging:run-detail", args=[few.pk])).text
    assert '<td class="num not-meaningful">' in html and "(too few judgments)" in html
    # Every answer longer and every judgment a win: no finite estimate, and the page says so.
    swept = _small_run(["win"] * 12, [400 + 10 * n for n in range(12)])
    row = next(row for row in run_leaderboard(run=swept)["pairwise"] if row["model"].startswith("scand"))
    assert row["lc_win_rate"] is None and row["lc_note"]
    html = get_computed(client, reverse("judging:run-detail", args=[swept.pk])).text
    assert f'<small class="why" lang="en">{row["lc_note"]}' in html.replace("&#x27;", "'")
