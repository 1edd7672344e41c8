"""Results pages with 100,000 votes and 100,000 judgments: served from stored figures, against
computing the figures on every request as the pages used to.

It fills a throwaway database (SQLite unless DATABASE_URL is set) with one dataset of
--items questions, --models candidate models, a finished pointwise judge run with one judgment
per item and model, and a campaign with --votes votes from --annotators annotators. Then, side
by side:

  - on request: the figures each page needs computed from the votes and judgments (BT with 1000
    bootstrap rounds, alignment with the judge, agreement and annotator quality, style-controlled
    BT with 200 rounds; the run's leaderboard with bootstrap intervals, the dataset's
    cross-validation and the judge's diagnostics);
  - stored: what the background task stores, then each page, API answer and export as a
    researcher requests it (Django's test client, in-process: the time is the app's own),
    median of --repeat requests, with its SQL query count.

Target: every stored answer under 300 ms. Nothing asserts; it prints the times.

    .venv/bin/python bench/bench_results_pages.py [--items 10000] [--models 10] [--votes 100000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench._django import setup_django  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--models", type=int, default=10)
    parser.add_argument("--votes", type=int, default=100_000)
    parser.add_argument("--annotators", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    setup_django()

    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from annotation.figures import figures_compute, figures_read
    from annotation.models import Campaign, StoredFigures, Vote
    from annotation.style_report import PAGE_ROUNDS, style_bt_report
    from core.roles import Role
    from core.workspaces import membership_set
    from curation.choices import Intent
    from curation.models import Dataset, Item
    from judging.engine.counters import run_counters_refresh
    from judging.models import CandidateModel, JudgeRun, Judgment
    from judging.results.boards import dataset_cross_validation, run_leaderboard
    from judging.results.diagnostics import run_diagnostics
    from judging.results.figures import run_figures_refresh

    rng = random.Random(0)
    started = time.perf_counter()
    dataset = Dataset.objects.create(name=f"pages-{int(time.time())}")
    intents = [Intent.FACTUAL_QA, Intent.ASK_FOR_ADVICE, Intent.LEISURE, Intent.SEEK_CREATIVITY]
    items = []
    for start in range(0, args.items, 5000):
        items += Item.objects.bulk_create(
            [
                Item(
                    dataset=dataset,
                    external_id=f"q{n}",
                    question=f"question {n}",
                    reference="r",
                    intent=intents[n % len(intents)],
                    language="en" if n % 3 else "zh",
                )
                for n in range(start, min(args.items, start + 5000))
            ]
        )
    models = [CandidateModel.objects.get_or_create(name=f"pages-model-{k}")[0] for k in range(args.models)]
    strength = {model.pk: k for k, model in enumerate(models)}
    run = JudgeRun.objects.create(
        dataset=dataset,
        mode="pointwise",
        judge_model="pages-judge",
        status=JudgeRun.Status.FINISHED,
        total=len(items) * len(models),
    )
    run.candidates.set(models)
    batch = []
    for item in items:
        for model in models:
            score = max(1, min(10, round(rng.gauss(4 + strength[model.pk] / 2, 1.5))))
            batch.append(
                Judgment(
                    run=run,
                    item=item,
                    model=model,
                    final_score=score,
                    scores={"Factuality": score, "Final Score": score},
                    raw_text="...",
                )
            )
        if len(batch) >= 5000:
            Judgment.objects.bulk_create(batch)
            batch = []
    Judgment.objects.bulk_create(batch)
    run_counters_refresh(run=run)
    campaign = Campaign.objects.create(
        slug=f"pages-{int(time.time())}", title="Pages", dataset=dataset, votes_per_pair=3
    )
    campaign.candidates.set(models)
    votes = []
    for n in range(args.votes):
        a, b = rng.sample(models, 2)
        edge = (strength[a.pk] - strength[b.pk]) / 10
        roll = rng.random()
        winner = (
            "tie"
            if roll < 0.15
            else ("cannot_determine" if roll < 0.18 else ("model_a" if rng.random() < 0.5 + edge else "model_b"))
        )
        votes.append(
            Vote(
                item=items[n % len(items)],
                model_a=a,
                model_b=b,
                winner=winner,
                campaign=campaign,
                annotator_label=f"rater{n % args.annotators}",
                seconds_spent=rng.uniform(5, 60),
            )
        )
        if len(votes) >= 5000:
            Vote.objects.bulk_create(votes)
            votes = []
    Vote.objects.bulk_create(votes)
    print(
        f"{connection.vendor}: {Vote.objects.filter(campaign=campaign).count():,} votes, "
        f"{run.judgments.count():,} judgments, {len(models)} models (made in {time.perf_counter() - started:.0f} s)"
    )

    # On request: what the pages computed for every request before.
    timings = {}
    figures, _ = StoredFigures.objects.get_or_create(
        key=f"bench:{campaign.pk}", defaults={"what": "campaign", "campaign": campaign, "run": run}
    )
    started = time.perf_counter()
    figures_compute(figures)
    style_bt_report(campaign=campaign, rounds=PAGE_ROUNDS)
    timings["campaign figures"] = time.perf_counter() - started
    started = time.perf_counter()
    run_leaderboard(run=run)
    dataset_cross_validation(dataset=dataset)
    run_diagnostics(run=run)
    timings["run figures"] = time.perf_counter() - started
    figures.delete()
    print(
        f"on request: campaign results {timings['campaign figures']:.2f} s, "
        f"run leaderboard and diagnostics {timings['run figures']:.2f} s (per request, before any page rendering)"
    )

    # Stored: what the background task does once, then the pages.
    started = time.perf_counter()
    figures_read(what="campaign", campaign=campaign, run=run, compute="missing")
    figures_read(what="campaign", campaign=campaign, compute="missing")
    figures_read(what="style", campaign=campaign, rounds=PAGE_ROUNDS, compute="missing")
    figures_read(what="bt", dataset=dataset, compute="missing")
    figures_read(what="agreement", dataset=dataset, run=run, compute="missing")
    run_figures_refresh(run_id=run.pk)
    print(f"background task: all figures computed and stored in {time.perf_counter() - started:.1f} s")

    user = get_user_model().objects.create_user(username=f"bench-{int(time.time())}", password="x")
    membership_set(user=user, roles=[Role.RESEARCHER.value])
    client = Client(HTTP_HOST="localhost")
    client.force_login(user)
    pages = {
        "/campaigns/<slug>/": f"/campaigns/{campaign.slug}/",
        "/runs/<id>/": f"/runs/{run.pk}/",
        "API campaign BT": f"/api/campaigns/{campaign.slug}/bt/",
        "API campaign alignment": f"/api/campaigns/{campaign.slug}/alignment/?run={run.pk}",
        "API campaign quality": f"/api/campaigns/{campaign.slug}/quality/",
        "API campaign style BT": f"/api/campaigns/{campaign.slug}/bt/style/?rounds={PAGE_ROUNDS}",
        "API run leaderboard": f"/api/runs/{run.pk}/leaderboard/",
        "API run diagnostics": f"/api/runs/{run.pk}/diagnostics/",
        "API run progress": f"/api/runs/{run.pk}/progress/",
        "export bt (csv)": f"/api/exports/bt/?dataset={dataset.name}",
        "export agreement (csv)": f"/api/exports/agreement/?dataset={dataset.name}&run={run.pk}",
        "export leaderboard (csv)": f"/api/exports/leaderboard/?run={run.pk}",
    }
    worst = 0.0
    for label, url in pages.items():
        times = []
        for _ in range(args.repeat):
            with CaptureQueriesContext(connection) as queries:
                started = time.perf_counter()
                response = client.get(url)
                body = b"".join(response.streaming_content) if response.streaming else response.content
                times.append(time.perf_counter() - started)
            if response.status_code != 200 or not body:
                raise SystemExit(f"{label}: HTTP {response.status_code}")
        median = statistics.median(times) * 1000
        worst = max(worst, median)
        stale = response.headers.get("X-Figures-Stale", "-")
        note = f"; stale: {stale}" if stale != "-" else ""
        print(f"  {label:<26} {median:7.1f} ms median of {args.repeat} ({len(queries)} queries{note})")
    print(
        f"slowest stored answer: {worst:.0f} ms ({'under' if worst < 300 else 'OVER'} 300 ms); on request the "
        f"campaign page alone needed {timings['campaign figures'] * 1000:.0f} ms of statistics "
        f"({timings['campaign figures'] * 1000 / worst:.0f}x the slowest stored answer)"
    )


if __name__ == "__main__":
    main()
