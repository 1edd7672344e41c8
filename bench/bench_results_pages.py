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

With --campaign-page it measures only the campaign page at a lab's scale (the campaign of
tests/annotation/scale.py: 200 annotators, 8 models x 200 questions, 5,600 pairs with 5 votes
each, 100 of them waiting, a finished judge run; figures stored with --rounds rounds): bytes and
median ms of the page as it was (the first 100 waiting pairs each with a drop-down of everyone,
every row of the long tables; kept in this file as BEFORE_PAIR_TEMPLATE and before_pair_status)
and as it is, rendered alternately in one run; then, on a second campaign of the same size whose
every pair still waits, both again while --voters processes vote for its 200 annotators through
the services (each annotator 0.5-2 s between votes, the stress pace) for --load-seconds: p50 and
p95 of each, the largest page, the answers that were not 200, the votes a second and the load
average.

    .venv/bin/python bench/bench_results_pages.py --campaign-page [--rounds 1000] [--repeat 7]
        [--voters 4] [--load-seconds 60] [--pause 0.5]
"""

from __future__ import annotations

import argparse
import heapq
import multiprocessing
import os
import random
import statistics
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench._django import setup_django  # noqa: E402

if TYPE_CHECKING:
    from django.template.backends.django import DjangoTemplates


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--models", type=int, default=10)
    parser.add_argument("--votes", type=int, default=100_000)
    parser.add_argument("--annotators", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument(
        "--campaign-page", action="store_true", help="only the campaign page at 200 annotators x 5,600 pairs"
    )
    parser.add_argument("--rounds", type=int, default=1000, help="bootstrap rounds of the campaign page's figures")
    parser.add_argument("--voters", type=int, default=4, help="processes voting while the page is timed")
    parser.add_argument("--load-seconds", type=float, default=60)
    parser.add_argument("--pause", type=float, default=0.5, help="seconds between two renders under load")
    args = parser.parse_args()
    setup_django()
    if args.campaign_page:
        campaign_page(args)
        return

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
    slug = f"pages-{int(time.time())}"
    campaign = Campaign.objects.create(slug=slug, title=slug, dataset=dataset, votes_per_pair=3)
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
                # The stubs type the test client's response as a plain HttpResponse; exports stream.
                body = b"".join(response.streaming_content) if response.streaming else response.content  # type: ignore[attr-defined]
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


# ---------------------------------------------------------------- the campaign page at a lab's scale

# The waiting pairs as the campaign page showed them before (the first 100, each with every
# annotator who may still be offered it and a drop-down of everyone it may be given to), kept
# here to be rendered beside the page as it is now.
BEFORE_PAIR_TEMPLATE = """{% load i18n %}{% with p=pair_status %}
<section aria-labelledby="pairs-heading" id="pairs">
<h2 id="pairs-heading">{% translate "Pairs" %}</h2>
<p id="pairs-summary">{% blocktranslate trimmed with done=p.done pairs=p.pairs waiting=p.waiting %}{{ done }} of {{ pairs }} pairs have all their votes; {{ waiting }} wait.{% endblocktranslate %}
{% if p.stuck %}<strong class="flagged">{% blocktranslate count counter=p.stuck %}{{ counter }} pair cannot be finished by anyone left: release its skips or give it to someone.{% plural %}{{ counter }} pairs cannot be finished by anyone left: release their skips or give them to someone.{% endblocktranslate %}</strong>{% endif %}</p>
<p id="gold-summary">{% blocktranslate trimmed with gold=p.gold_pairs votes=p.gold_votes %}Gold pairs, counted apart: {{ gold }}, with {{ votes }} votes.{% endblocktranslate %}</p>
{% if p.rows %}
<div class="table-wrap"><table id="waiting-pairs">
  <caption>{% translate "Pairs waiting for votes, and on whom" %}</caption>
  <thead><tr><th scope="col" class="num">{% translate "Pair" %}</th><th scope="col">{% translate "Question id" %}</th><th scope="col" class="num">{% translate "Votes" %}</th><th scope="col">{% translate "Leased by" %}</th><th scope="col">{% translate "Skipped by" %}</th><th scope="col">{% translate "May still be offered to" %}</th><th scope="col">{% translate "Actions" %}</th></tr></thead>
  <tbody>{% for row in p.rows %}
  <tr{% if row.stuck %} class="stuck"{% endif %} id="pair-{{ row.pair }}">
    <td class="num">{{ row.pair }}</td><td>{{ row.question }}</td><td class="num">{{ row.votes }} / {{ row.needed }}</td>
    <td>{% for lease in row.leased %}{{ lease.annotator }} ({% if lease.expired %}{% translate "lease ran out" %}{% else %}{% blocktranslate with until=lease.until|date:"H:i" %}until {{ until }}{% endblocktranslate %}{% endif %}){% if not forloop.last %}, {% endif %}{% empty %}–{% endfor %}</td>
    <td>{{ row.skipped|join:", "|default:"–" }}</td>
    <td>{% if row.free %}{{ row.free|join:", " }}{% else %}<span class="flagged">{% translate "nobody" %}</span>{% endif %}</td>
    <td class="pair-actions">
      {% if row.skipped %}<form method="post" action="{% url 'annotation:pairs' campaign.slug %}">{% csrf_token %}<input type="hidden" name="pair" value="{{ row.pair }}"><button type="submit" name="action" value="release">{% blocktranslate with pair=row.pair %}Release the skips of pair {{ pair }}{% endblocktranslate %}</button></form>{% endif %}
      {% if row.givable %}<form method="post" action="{% url 'annotation:pairs' campaign.slug %}" class="inline-form">{% csrf_token %}<input type="hidden" name="pair" value="{{ row.pair }}">
        <label for="give-{{ row.pair }}">{% blocktranslate with pair=row.pair %}Give pair {{ pair }} to{% endblocktranslate %}</label>
        <select id="give-{{ row.pair }}" name="annotator">{% for name in row.givable %}<option value="{{ name }}">{{ name }}</option>{% endfor %}</select>
        <button type="submit" name="action" value="reassign">{% translate "Give" %}</button></form>{% endif %}
    </td>
  </tr>{% endfor %}</tbody>
</table></div>
{% if p.more %}<p class="hint">{% blocktranslate count counter=p.more %}{{ counter }} more waiting pair is not listed.{% plural %}{{ counter }} more waiting pairs are not listed.{% endblocktranslate %}</p>{% endif %}
<p class="hint">{% translate "Each annotator sees a pair once, so a skipped pair may wait for ever. Releasing its skips lets those who skipped it be offered it again; giving it to someone leases it to them now (ending another's lease when every slot is held). Both are recorded in the audit log." %}</p>
{% endif %}
</section>
{% endwith %}
"""


def before_pair_status(*, campaign, now=None, limit=100, page=1):
    """The selector behind BEFORE_PAIR_TEMPLATE, as it was: counts, then a page of waiting pairs,
    then their assignments through the same query again (a pair finished in between let the
    next one in, which it had not listed: the KeyError of a live page)."""
    from django.db.models import Count, Q
    from django.utils import timezone

    from annotation.models import Assignment, Vote

    now = now or timezone.now()
    needed = campaign.votes_per_pair
    kinds = campaign.pairs.aggregate(
        pairs=Count("pk", filter=Q(is_gold=False)), gold=Count("pk", filter=Q(is_gold=True))
    )
    gold_votes = Vote.objects.filter(campaign=campaign, assignment__pair__is_gold=True).count()
    voted = Count("assignments", filter=Q(assignments__status=Assignment.Status.VOTED))
    waiting = campaign.pairs.filter(is_gold=False).annotate(votes=voted).filter(votes__lt=needed)
    waiting_count = waiting.count()
    rows = list(waiting.order_by("pk").values("pk", "item__external_id", "votes")[:limit])
    by_pair: dict[int, list[tuple]] = {row["pk"]: [] for row in rows}
    for pair_id, username, state, until in (
        Assignment.objects.filter(pair_id__in=waiting.order_by("pk").values("pk")[:limit])
        .order_by("created_at", "pk")
        .values_list("pair_id", "annotator__username", "status", "leased_until")
    ):
        by_pair[pair_id].append((username, state, until))
    members = list(campaign.annotators.filter(is_active=True).order_by("username").values_list("username", flat=True))
    shown = []
    for row in rows:
        held = by_pair[row["pk"]]
        leased = [
            {"annotator": name, "until": until, "expired": until <= now}
            for name, state, until in held
            if state == Assignment.Status.LEASED
        ]
        had = {name for name, _state, _until in held}
        running = {lease["annotator"] for lease in leased if not lease["expired"]}
        voters = {name for name, state, _until in held if state == Assignment.Status.VOTED}
        free = [name for name in members if name not in had]
        shown.append(
            {
                "pair": row["pk"],
                "question": row["item__external_id"],
                "votes": row["votes"],
                "needed": needed,
                "leased": leased,
                "skipped": [name for name, state, _until in held if state == Assignment.Status.RELEASED],
                "free": free,
                "stuck": row["votes"] + len(leased) + len(free) < needed,
                "givable": [name for name in members if name not in voters and name not in running],
            }
        )
    return {
        "pairs": kinds["pairs"],
        "done": kinds["pairs"] - waiting_count,
        "waiting": waiting_count,
        "stuck": sum(1 for row in shown if row["stuck"]),
        "gold_pairs": kinds["gold"],
        "gold_votes": gold_votes,
        "rows": shown,
        "more": max(0, waiting_count - len(shown)),
    }


@contextmanager
def page_before():
    """The campaign page as it was: the old waiting pairs and every row of its long tables at once,
    rendered by an engine of its own (cached, as the project's) that finds the old template first."""
    from django.conf import settings
    from django.http import HttpResponse
    from django.template.backends.django import DjangoTemplates

    from annotation import views

    global BEFORE_ENGINE
    if BEFORE_ENGINE is None:
        config: dict[str, Any] = settings.TEMPLATES[0]
        options = {**config.get("OPTIONS", {})}
        options["loaders"] = [
            (
                "django.template.loaders.cached.Loader",
                [
                    ("django.template.loaders.locmem.Loader", {"annotation/_pair_status.html": BEFORE_PAIR_TEMPLATE}),
                    "django.template.loaders.filesystem.Loader",
                    "django.template.loaders.app_directories.Loader",
                ],
            )
        ]
        BEFORE_ENGINE = DjangoTemplates(
            {"NAME": "before", "DIRS": config.get("DIRS", []), "APP_DIRS": False, "OPTIONS": options}
        )
    engine = BEFORE_ENGINE

    def render_before(request, name, context=None, status=None):
        return HttpResponse(engine.get_template(name).render(context, request), status=status)

    saved = views.campaign_pair_status, views.ROWS_PER_PAGE, views.render
    # Stand-ins for the page as it was, with their old signatures.
    views.campaign_pair_status, views.ROWS_PER_PAGE, views.render = before_pair_status, 10**9, render_before  # type: ignore[assignment]
    try:
        yield
    finally:
        views.campaign_pair_status, views.ROWS_PER_PAGE, views.render = saved


BEFORE_ENGINE: DjangoTemplates | None = None


def render(client, url):
    """(HTTP status, bytes, ms) of one request, in-process."""
    started = time.perf_counter()
    response = client.get(url)
    return response.status_code, len(response.content), (time.perf_counter() - started) * 1000


def voter_main(campaign_id: int, annotator_ids: list[int], stop_at: float, seed: int, counts) -> None:
    """Annotators of one process, each pausing 0.5-2 s between votes (the stress pace): the
    next one due gets its next pair and votes on it, through the services."""
    from django.contrib.auth import get_user_model

    from annotation.errors import AnnotationError
    from annotation.models import Campaign
    from annotation.services import assignment_next, vote_cast

    rng = random.Random(seed)
    campaign = Campaign.objects.get(pk=campaign_id)
    people = list(get_user_model().objects.filter(pk__in=annotator_ids))
    due = [(time.monotonic() + rng.uniform(0, 2), k) for k in range(len(people))]
    heapq.heapify(due)
    votes = 0
    while due:
        when, k = heapq.heappop(due)
        if when >= stop_at:
            break
        time.sleep(max(0.0, when - time.monotonic()))
        assignment = assignment_next(campaign=campaign, annotator=people[k])
        if assignment is None:
            continue
        try:
            vote_cast(token=assignment.token, annotator=people[k], choice=rng.choice(["left", "right", "tie"]))
            votes += 1
        except AnnotationError:
            pass
        heapq.heappush(due, (time.monotonic() + rng.uniform(0.5, 2.0), k))
    counts.put(votes)


def campaign_page(args) -> None:
    """Before and after, side by side, at 200 annotators x 5,600 pairs; then while a crowd votes."""
    from django.contrib.auth import get_user_model
    from django.db import connection, connections
    from django.test import Client

    from annotation.counters import counters_mismatches
    from annotation.figures import figures_read
    from core.roles import Role
    from core.workspaces import membership_set
    from tests.annotation.scale import large_campaign

    started = time.perf_counter()
    scale = large_campaign(prefix=f"page{int(time.time())}", waiting=100)
    assert counters_mismatches(campaign=scale.campaign) == []  # counted after its raw inserts
    for what, rounds in (("campaign", args.rounds), ("style", min(args.rounds, 200))):
        figures_read(
            what=what,
            campaign=scale.campaign,
            run=scale.run if what == "campaign" else None,
            rounds=rounds,
            compute="missing",
        )
    print(
        f"{connection.vendor}: 200 annotators, 8 models x 200 questions (5,600 pairs, 5 votes each), 100 waiting, "
        f"a finished judge run; built and figures stored ({args.rounds} rounds) in {time.perf_counter() - started:.0f} s"
    )
    user = get_user_model().objects.create_user(username=f"bench-page-{int(time.time())}", password="x")
    membership_set(user=user, roles=[Role.RESEARCHER.value])
    client = Client(HTTP_HOST="localhost", raise_request_exception=False)
    client.force_login(user)
    url = f"/campaigns/{scale.campaign.slug}/?rounds={args.rounds}"
    render(client, url)
    with page_before():
        render(client, url)
    sides: dict[str, list[tuple[int, int, float]]] = {"before": [], "after": []}
    for _ in range(args.repeat):
        with page_before():
            sides["before"].append(render(client, url))
        sides["after"].append(render(client, url))
    for side, results in sides.items():
        print(
            f"  {side:<6} {results[-1][1]:>9,} bytes  {statistics.median(r[2] for r in results):7.1f} ms median of "
            f"{args.repeat}"
        )
    before, after = (statistics.median(r[2] for r in sides[side]) for side in ("before", "after"))
    print(
        f"  after/before: {sides['after'][-1][1] / sides['before'][-1][1]:.3f} of the bytes, "
        f"{after / before:.2f} of the time"
    )

    # While a crowd votes on a campaign of the same size whose every pair still waits.
    load = large_campaign(prefix=f"load{int(time.time())}", waiting=5600, seed=1)
    # Its counters agree with its rows, so the voters' leases stop at 5 votes a pair.
    assert counters_mismatches(campaign=load.campaign) == []
    figures_read(what="campaign", campaign=load.campaign, run=load.run, rounds=args.rounds, compute="missing")
    url = f"/campaigns/{load.campaign.slug}/?rounds={args.rounds}"
    ids = [person.pk for person in load.annotators]
    connections.close_all()
    context = multiprocessing.get_context("fork")
    counts = context.Queue()
    stop_at = time.monotonic() + args.load_seconds
    voters = [
        context.Process(target=voter_main, args=(load.campaign.pk, ids[k :: args.voters], stop_at, k, counts))
        for k in range(args.voters)
    ]
    for voter in voters:
        voter.start()
    time.sleep(2)  # the voters are under way
    sides = {"before": [], "after": []}
    load_averages = []
    voting_started = time.monotonic()
    while time.monotonic() < stop_at - 2:
        with page_before():
            sides["before"].append(render(client, url))
        sides["after"].append(render(client, url))
        load_averages.append(os.getloadavg()[0])
        time.sleep(args.pause)
    votes = sum(counts.get() for _ in voters)
    for voter in voters:
        voter.join()
    seconds = time.monotonic() - voting_started + 2
    print(
        f"while {args.voters} processes voted for 200 annotators at 0.5-2 s between votes: {votes:,} votes in "
        f"{seconds:.0f} s ({votes / seconds:.0f} a second), load average {min(load_averages):.1f}-{max(load_averages):.1f}; "
        f"counters wrong after: {len(counters_mismatches(campaign=load.campaign))}"
    )
    for side, results in sides.items():
        times = sorted(r[2] for r in results)
        failed = sum(1 for r in results if r[0] != 200)
        print(
            f"  {side:<6} {len(results)} renders: p50 {statistics.median(times):7.1f} ms, p95 {percentile(times, 0.95):7.1f} ms, "
            f"{max(r[1] for r in results):>9,} bytes at most, {failed} not 200"
        )


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


if __name__ == "__main__":
    main()
