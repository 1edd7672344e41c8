"""The length-controlled win rate beside the win rate of a pairwise run: a simulated judge that
favours long answers, and nothing else, makes a long-winded candidate win often, while its
length-controlled win rate stays at one half."""

import json
import math
import random
import statistics
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from judging.engine.execution import run_execute_inline
from judging.models import CandidateModel
from judging.results.figures import run_figures_refresh
from judging.runs.creation import run_create
from judging.runs.spec import RunSpec
from llm.models import Endpoint
from tests.factories import UserFactory
from tests.judging import simulated

pytestmark = pytest.mark.django_db(transaction=True)
COUNT = 200


@pytest.fixture
def lc_run(fake_llm, fast_retries):
    from django.contrib.auth.models import Group

    Group.objects.get_or_create(name="researcher")
    endpoint = Endpoint.objects.create(name="fake", base_url=fake_llm.base_url, max_in_flight=8, timeout_seconds=5)
    rng = random.Random(5)
    ref = [rng.randint(300, 700) for _ in range(COUNT)]
    # "wordy" writes about 1.6 times as much as the reference; "sharp" as much as it.
    wordy = [int(length * rng.uniform(0.85, 2.2)) for length in ref]
    sharp = [int(length * rng.uniform(0.8, 1.25)) for length in ref]
    dataset = simulated.build_dataset("lc", {"ref": ref, "wordy": wordy, "sharp": sharp})
    lengths = {}
    for name, values in (("ref", ref), ("wordy", wordy), ("sharp", sharp)):
        lengths.update({(f"q{i:03d}", name): value for i, value in enumerate(values)})
    sd = {
        name: statistics.stdev(a - b for a, b in zip(values, ref))
        for name, values in (("wordy", wordy), ("sharp", sharp))
    }
    fake_llm.reply = simulated.candidate_strength_judge(
        theta={"wordy": 0.0, "sharp": 1.0}, phi=1.5, lengths=lengths, sd=sd, salt="lc"
    )
    run = run_create(
        spec=RunSpec(
            dataset=dataset,
            mode="pairwise",
            judge_model="judge-m",
            candidates=list(CandidateModel.objects.filter(name__in=["wordy", "sharp"])),
            reference_model=CandidateModel.objects.get(name="ref"),
            endpoint=endpoint,
            seed=3,
            concurrency=8,
        ),
    )
    run_execute_inline(run=run)
    return run


def test_lc_win_rate_removes_the_length_advantage_and_keeps_the_real_one(lc_run, client):
    out = StringIO()
    call_command("leaderboard", "--run", str(lc_run.pk), "--format", "json", stdout=out)
    rows = {row["model"]: row for row in json.loads(out.getvalue())}
    wordy, sharp, ref = rows["wordy"], rows["sharp"], rows["ref"]
    # The judge only likes length in wordy's answers: it wins almost as often as sharp, but not
    # once lengths are equal.
    assert wordy["win_rate"] > 0.7
    assert wordy["lc_low"] < 0.5 < wordy["lc_high"]
    assert wordy["lc_win_rate"] < wordy["win_rate"] - 0.05 and wordy["lc_win_rate"] < sharp["lc_win_rate"]
    # sharp is better at equal length: sigmoid(1) = 0.731 is recovered.
    assert sharp["lc_low"] < 1 / (1 + math.exp(-1)) < sharp["lc_high"]
    assert (ref["lc_win_rate"], ref["lc_low"], ref["lc_note"]) == (
        0.5,
        None,
        "The reference model, at 50 % by definition.",
    )
    # Ranked by the plain win rate, as ChineseAlpacaEval ranks; LC is shown, not used to rank.
    by_rank = [row["model"] for row in sorted(rows.values(), key=lambda r: r["rank"])]
    assert by_rank == [row["model"] for row in sorted(rows.values(), key=lambda r: -r["win_rate"])]

    table = StringIO()
    call_command("leaderboard", "--run", str(lc_run.pk), stdout=table)
    line = next(line for line in table.getvalue().splitlines() if " wordy " in line)
    assert f"{100 * wordy['lc_win_rate']:.2f}" in line and f"[{100 * wordy['lc_low']:.1f}," in line
    assert "LC: length-controlled win rate" in table.getvalue()

    client.force_login(UserFactory(username="lc-res", roles=["researcher"]))
    run_figures_refresh(run_id=lc_run.pk)  # what the background task does once the run closes
    html = client.get(reverse("judging:run-detail", args=[lc_run.pk])).content.decode()
    assert "LC win rate (%)" in html and f"{100 * wordy['lc_win_rate']:.2f}" in html
    api = client.get(reverse("api-run-leaderboard", args=[lc_run.pk])).json()
    assert {row["model"]: row["lc_win_rate"] for row in api} == {name: row["lc_win_rate"] for name, row in rows.items()}
