"""32 annotators at once against gunicorn on PostgreSQL: next-pair plus vote through the API.

What it does, and undoes, by itself:
  1. creates a throwaway database `ub_bench_annotation_<pid>` on PostgreSQL (BENCH_POSTGRES_URL,
     default postgres://postgres@127.0.0.1:5432/postgres), migrates it, and seeds one campaign
     (200 questions x 6 models, 3 pairs per question = 600 pairs, 3 votes wanted per pair) and
     32 annotators;
  2. counts the SQL queries of one next-pair and one vote in-process (CaptureQueriesContext);
  3. starts gunicorn on 127.0.0.1, port 0 (the OS picks a free one; read back from its log),
     DEBUG off, as in production except TLS;
  4. runs 32 annotators, each a process of its own: each logs in through the real log-in form,
     then loops GET /api/annotate/<campaign>/next/ + POST .../votes/ in four phases:
     "alone" (one annotator by themself: the service time without queueing), "brisk" (all 32,
     pausing about --brisk-think-ms between votes: still quicker than anyone who reads two
     answers), "paced" (all 32 at about --think-ms: a stress test, as nobody reads two answers
     in 2 s) and "saturated" (no pause at all: the server's capacity). Each stops early when
     the campaign has nothing left or the --deadline passes. Finally every annotator re-sends
     its last vote once (a double submit, which must store nothing);
  5. stops gunicorn, checks the database (no pair holds more votes or leases than wanted, every
     vote the server confirmed is stored once, no vote the server did not confirm), and drops
     the database.

It prints p50/p95 of next-pair plus vote (ms), requests per second, queries per request,
over-assignment (must be 0) and lost votes (must be 0). Only loopback traffic; no assertion on
time. Without a reachable PostgreSQL it says so and exits.

    .venv/bin/python bench/bench_annotation_load.py [--annotators 32] [--iterations 15]
        [--brisk-think-ms 10000] [--brisk-iterations 8] [--think-ms 2000]
        [--alone-iterations 40] [--workers 2 x cores] [--threads 1] [--deadline 300]
"""

import argparse
import multiprocessing
import os
import random
import re
import secrets
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._annotation_load_helpers import (  # noqa: E402 (after the path is set)
    Connection,
    admin,
    database_url,
    interpreter_speed_ms,
    percentile,
    postgres_admin_url,
    start_gunicorn,
    stop,
)

CHOICES = ["left", "right", "tie", "cannot_determine"]
PASSWORD = "bench-" + secrets.token_hex(8)


# ----------------------------------------------------------------------------- seeding


def seed(*, annotators: int, questions: int, models: int, pairs_per_question: int, votes_per_pair: int):
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password

    from annotation.campaigns import campaign_create
    from core.models import Membership, default_workspace_id
    from curation.models import Dataset, Item
    from judging.models import Answer, CandidateModel

    dataset = Dataset.objects.create(name="bench-load")
    items = Item.objects.bulk_create(
        Item(dataset=dataset, external_id=f"q{n}", question=f"Question {n}: which **answer** is better?")
        for n in range(questions)
    )
    candidates = CandidateModel.objects.bulk_create(CandidateModel(name=f"bench-model-{k}") for k in range(models))
    Answer.objects.bulk_create(
        Answer(item=item, model=model, text=f"Answer of model {k} to question {n}.\n\n- a point\n- another")
        for n, item in enumerate(items)
        for k, model in enumerate(candidates)
    )
    User = get_user_model()
    hashed = make_password(PASSWORD)  # hashed once: 33 hashes would take longer than the run
    people = User.objects.bulk_create(
        User(username=f"annotator{k:02d}", password=hashed) for k in range(annotators + 1)
    )
    workspace_id = default_workspace_id()
    Membership.objects.bulk_create(
        Membership(workspace_id=workspace_id, user=person, annotator=True) for person in people
    )
    campaign = campaign_create(
        slug="bench-load",
        title="Load benchmark",
        dataset=dataset,
        candidates=candidates,
        question_count=questions,
        pairs_per_question=pairs_per_question,
        votes_per_pair=votes_per_pair,
        annotators=people,
        seed=1,
    )
    # The last annotator only probes query counts in-process; the 32 others go through gunicorn.
    return campaign, people[:-1], people[-1]


def query_counts(campaign, probe) -> dict:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    client = Client()
    client.force_login(probe)
    next_url = reverse("api-annotate-next", args=[campaign.slug])
    vote_url = reverse("api-annotate-vote", args=[campaign.slug])
    client.get(next_url)  # warm caches (ContentTypes, permissions) so the counts are steady-state
    counts = {}
    # Each count is read as soon as its block ends: the next request clears the connection's log.
    with CaptureQueriesContext(connection) as captured:
        token = client.get(next_url).json()["pair"]["token"]
    counts["next (held lease)"] = len(captured)
    with CaptureQueriesContext(connection) as captured:
        response = client.post(vote_url, {"token": token, "choice": "left"}, content_type="application/json")
    counts["vote"] = len(captured)
    assert response.status_code == 201, response.content
    with CaptureQueriesContext(connection) as captured:
        token = client.get(next_url).json()["pair"]["token"]
    counts["next (new lease)"] = len(captured)
    client.post(vote_url, {"token": token, "choice": "tie"}, content_type="application/json")
    return counts


# ----------------------------------------------------------------------------- gunicorn


# ----------------------------------------------------------------------------- clients
#
# Each annotator is a process of its own with one keep-alive connection (http.client): 32 client
# threads in one Python process would queue on its interpreter lock and add that wait to every
# latency measured, and a heavier client would take CPU from the server on a small machine.


class Phase:
    """One measured stretch: every annotator does up to `iterations` rounds, pausing `think_ms`
    (uniformly 0.5x to 1.5x) between rounds as a person reading the answers would."""

    def __init__(self, context, name: str, think_ms: float, iterations: int, annotators: int, only: int = 0):
        self.name, self.think_ms, self.iterations = name, think_ms, iterations
        # `only` > 0: just the first `only` annotators work in this phase (the others wait).
        self.only = only
        self.gate = context.Barrier(annotators + 1)  # everyone starts the phase together
        self.done = context.Barrier(annotators + 1)
        self.rounds: list[float] = []
        self.next_ms: list[float] = []
        self.vote_ms: list[float] = []
        self.requests = 0
        self.wall = 0.0

    def plan(self) -> dict:
        return {
            "name": self.name,
            "think_ms": self.think_ms,
            "iterations": self.iterations,
            "only": self.only,
            "gate": self.gate,
            "done": self.done,
        }

    def record(self, timings: list[tuple[float, float]]) -> None:
        for next_ms, vote_ms in timings:
            self.next_ms.append(next_ms)
            self.vote_ms.append(vote_ms)
            self.rounds.append(next_ms + vote_ms)
            self.requests += 2


def annotator_main(
    index: int, base: str, username: str, password: str, slug: str, plans: list[dict], deadline: float, results
):
    """One annotator's process: log in, warm up, then work through every phase; the timings,
    confirmed tokens and errors go back through `results`."""
    import json
    from urllib.parse import urlencode

    rng = random.Random(username)
    errors: list[str] = []
    confirmed: list[str] = []
    timings: dict[str, list[tuple[float, float]]] = {plan["name"]: [] for plan in plans}
    double_submit = None
    reconnects = 0

    def report() -> None:
        results.put(
            {
                "index": index,
                "errors": errors,
                "confirmed": confirmed,
                "timings": timings,
                "double_submit": double_submit,
                "reconnects": reconnects,
            }
        )

    next_path, vote_path = f"/api/annotate/{slug}/next/", f"/api/annotate/{slug}/votes/"
    try:
        # Generous time: 32 password hashes at once queue on a few cores; log-in is not measured.
        connection = Connection(base, timeout=120)
        _, page = connection.request("GET", "/accounts/login/")
        found = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        if found is None:
            raise RuntimeError("the log-in page has no CSRF token")
        form_token = found.group(1).decode()
        status, _ = connection.request(
            "POST",
            "/accounts/login/",
            body=urlencode({"username": username, "password": password, "csrfmiddlewaretoken": form_token}).encode(),
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        if status != 302:
            raise RuntimeError(f"log-in of {username} failed with {status}")
        api_headers = {"X-CSRFToken": connection.cookies["csrftoken"], "Accept": "application/json"}
        json_headers = {**api_headers, "Content-Type": "application/json"}
        # Unmeasured warm-up: every gunicorn worker imports the API's code on its first request.
        connection.request("GET", next_path, headers=api_headers)
        connection.http.timeout = 10
    except Exception as error:  # noqa: BLE001 (reported, never hidden)
        errors.append(f"log-in or warm-up: {type(error).__name__}: {error}")
        for plan in plans:
            plan["gate"].abort()
            plan["done"].abort()
        report()
        return

    last = None
    try:
        for plan in plans:
            plan["gate"].wait(timeout=300)
            if not plan["only"] or index < plan["only"]:
                for _ in range(plan["iterations"]):
                    if time.monotonic() > deadline:
                        break
                    if plan["think_ms"]:
                        time.sleep(plan["think_ms"] * rng.uniform(0.5, 1.5) / 1000)
                    try:
                        began = time.perf_counter()
                        status, content = connection.request("GET", next_path, headers=api_headers)
                        middle = time.perf_counter()
                        if status == 204:
                            break
                        if status != 200:
                            errors.append(f"next: {status}")
                            continue
                        body = {"token": json.loads(content)["pair"]["token"], "choice": rng.choice(CHOICES)}
                        status, content = connection.request("POST", vote_path, json.dumps(body).encode(), json_headers)
                        ended = time.perf_counter()
                    except OSError as error:  # includes timeouts and dropped connections
                        errors.append(f"{type(error).__name__}: {error}")
                        connection.http.close()
                        continue
                    if status == 201:
                        confirmed.append(body["token"])
                        last = body
                    else:
                        errors.append(f"vote: {status} {content[:100]!r}")
                    timings[plan["name"]].append(((middle - began) * 1000, (ended - middle) * 1000))
            plan["done"].wait(timeout=300)
        if last is not None:  # a double submit: must store nothing new
            status, content = connection.request("POST", vote_path, json.dumps(last).encode(), json_headers)
            double_submit = (status, json.loads(content).get("created"))
    except threading.BrokenBarrierError:
        pass
    except OSError as error:
        errors.append(f"{type(error).__name__}: {error}")
    reconnects = connection.reconnects
    report()


# ----------------------------------------------------------------------------- checks


def check(campaign, confirmed: list[str]) -> dict:
    from django.db.models import Count, Q
    from django.utils import timezone

    from annotation.models import Assignment, ComparisonPair, Vote

    now = timezone.now()
    pairs = ComparisonPair.objects.filter(campaign=campaign).annotate(
        voted=Count("assignments", filter=Q(assignments__status=Assignment.Status.VOTED)),
        held=Count(
            "assignments",
            filter=Q(assignments__status=Assignment.Status.VOTED)
            | Q(assignments__status=Assignment.Status.LEASED, assignments__leased_until__gt=now),
        ),
        votes=Count("assignments__vote"),
    )
    over = pairs.filter(Q(voted__gt=campaign.votes_per_pair) | Q(held__gt=campaign.votes_per_pair)).count()
    stored = set(Vote.objects.filter(campaign=campaign).values_list("assignment__token", flat=True))
    confirmed_set = set(confirmed)
    return {
        "over_assigned_pairs": over,
        "lost_votes": len(confirmed_set - stored),
        "duplicate_confirmations": len(confirmed) - len(confirmed_set),
        # Two probe votes were cast in-process before the load.
        "unconfirmed_votes": len(stored - confirmed_set) - 2,
        "votes_stored": len(stored),
        "pairs_full": pairs.filter(voted=campaign.votes_per_pair).count(),
        "pairs": pairs.count(),
        "twice_same_pair": Assignment.objects.values("pair", "annotator")
        .annotate(n=Count("pk"))
        .filter(n__gt=1)
        .count(),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotators", type=int, default=32)
    parser.add_argument("--iterations", type=int, default=15, help="next-pair + vote rounds per annotator and phase")
    parser.add_argument("--brisk-think-ms", type=float, default=10000, help="mean pause between votes, brisk phase")
    parser.add_argument("--brisk-iterations", type=int, default=8, help="rounds per annotator in the brisk phase")
    parser.add_argument("--think-ms", type=float, default=2000, help="mean pause between votes in the paced phase")
    # As in the README's deployment notes: sync workers, two per core. Threads (gthread) keep a
    # keep-alive connection on the worker that accepted it, so requests queue behind a busy
    # worker's threads while others idle; measured here, that made the paced p95 2-5x longer.
    parser.add_argument("--workers", type=int, default=2 * (os.cpu_count() or 1))
    parser.add_argument("--threads", type=int, default=1, help="gunicorn threads per worker (1: sync workers)")
    parser.add_argument("--alone-iterations", type=int, default=40, help="rounds of the one annotator alone")
    parser.add_argument("--deadline", type=float, default=300, help="seconds before clients stop anyway")
    parser.add_argument(
        "--scenario",
        choices=["classic", "stress", "cost"],
        default="classic",
        help="classic: the four phases above; stress: --annotators (say 200) pausing 0.5-2 s for --seconds, "
        "fixed and adaptive, alone and with --researchers and a judge run (--judge-calls) beside, --db-workers "
        "workers up throughout; cost: per-request cost at 5,600 and 190,000 pairs",
    )
    parser.add_argument("--seconds", type=float, default=180, help="stress: length of each run")
    parser.add_argument("--questions", type=int, default=200, help="stress: questions")
    parser.add_argument("--models", type=int, default=8, help="stress: models (every model pair on every question)")
    parser.add_argument("--votes-per-pair", type=int, default=5, help="stress: votes per pair")
    parser.add_argument("--researchers", type=int, default=4, help="stress: researchers reloading pages")
    parser.add_argument("--client-processes", type=int, default=4, help="stress: processes the annotators share")
    parser.add_argument("--large-questions", type=int, default=1000, help="cost: questions of the 20-model campaign")
    parser.add_argument(
        "--db-workers", type=int, default=2, help="stress: db_worker processes on every queue, up throughout"
    )
    parser.add_argument("--no-judge", action="store_true", help="stress: no judge run beside the researchers")
    parser.add_argument(
        "--pause",
        type=float,
        nargs=2,
        default=[0.5, 2.0],
        metavar=("LOW", "HIGH"),
        help="stress: seconds between an annotator's votes, drawn uniformly (10 30: a human pace)",
    )
    parser.add_argument(
        "--round",
        choices=["one-request", "two-requests"],
        default="one-request",
        help="stress: a vote that carries the next pair (votes/?next=1), or next/ then the vote",
    )
    parser.add_argument(
        "--sampling",
        choices=["fixed", "adaptive", "both"],
        default="both",
        help="stress: which campaigns (default both)",
    )
    parser.add_argument(
        "--crowd-with-researchers-only",
        action="store_true",
        help="stress: only the runs with researchers (and the judge run) beside the crowd, not the crowd alone",
    )
    parser.add_argument("--judge-calls", type=int, default=2000, help="stress: calls of the judge run")
    parser.add_argument("--judge-latency", type=float, default=0.2, help="stress: seconds the LLM server takes a call")
    parser.add_argument("--judge-concurrency", type=int, default=128, help="stress: the judge run's calls in flight")
    options = parser.parse_args()
    if options.scenario == "stress" and not options.no_judge and options.db_workers < 1:
        parser.error("a judge run needs a worker: --db-workers 1 or more, or --no-judge")

    name = f"ub_bench_annotation_{os.getpid()}"
    try:
        admin(f'CREATE DATABASE "{name}"')
    except Exception as error:  # noqa: BLE001
        print(f"PostgreSQL not reachable at {postgres_admin_url()} ({type(error).__name__}): benchmark skipped.")
        return
    env = {
        **os.environ,
        "DATABASE_URL": database_url(name),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DEBUG": "0",
        "SECRET_KEY": secrets.token_urlsafe(40),
        "ALLOWED_HOSTS": "127.0.0.1,testserver",
        "SECURE_SSL_REDIRECT": "0",
        "LOG_LEVEL": "WARNING",
        "DB_CONN_MAX_AGE": "60",
        # The stress scenario's judge run calls an LLM server on loopback, an internal address (llm/egress.py).
        "LLM_ALLOWED_INTERNAL_HOSTS": "127.0.0.0/8,::1,localhost",
        # DEBUG off serves hashed static files from a manifest: collected into a temporary folder.
        "STATIC_ROOT": tempfile.mkdtemp(prefix="ub-bench-static-"),
    }
    os.environ.update(env)
    process = None
    try:
        import django
        from django.core.management import call_command

        django.setup()
        started = time.monotonic()
        call_command("migrate", verbosity=0)
        call_command("collectstatic", interactive=False, verbosity=0)
        if options.scenario != "classic":
            from bench._annotation_stress import run_cost, run_stress

            print(f"load average before: {os.getloadavg()} on {os.cpu_count()} cores")
            run_stress(options, env, name) if options.scenario == "stress" else run_cost(options)
            return
        campaign, people, probe = seed(
            annotators=options.annotators, questions=200, models=6, pairs_per_question=3, votes_per_pair=3
        )
        from django.db import connection

        with connection.cursor() as cursor:
            # A database in use has planner statistics; a freshly seeded one has none until
            # autovacuum comes by, and plans as if every table were nearly empty.
            cursor.execute("ANALYZE")
        print(
            f"database {name}: migrated and seeded in {time.monotonic() - started:.1f} s; "
            f"{campaign.pairs.count()} pairs x {campaign.votes_per_pair} votes wanted, {len(people)} annotators"
        )
        queries = query_counts(campaign, probe)
        print("SQL queries per request (in-process): " + ", ".join(f"{k} {v}" for k, v in queries.items()))

        from django.db import connections

        connections.close_all()
        process, base = start_gunicorn(env, options.workers, options.threads)
        print(f"gunicorn on {base}: {options.workers} workers x {options.threads} threads")
        load_before = os.getloadavg()[0]
        # Spawned, not forked: the parent holds Django and database connections a child must not share.
        context = multiprocessing.get_context("spawn")
        phases = [
            Phase(context, "alone", 0, options.alone_iterations, len(people), only=1),
            Phase(context, "brisk", options.brisk_think_ms, options.brisk_iterations, len(people)),
            Phase(context, "paced", options.think_ms, options.iterations, len(people)),
            Phase(context, "saturated", 0, options.iterations, len(people)),
        ]
        deadline = time.monotonic() + options.deadline
        results = context.Queue()
        plans = [phase.plan() for phase in phases]
        clients = [
            context.Process(
                target=annotator_main,
                args=(k, base, person.username, PASSWORD, campaign.slug, plans, deadline, results),
                daemon=True,
            )
            for k, person in enumerate(people)
        ]
        for client in clients:
            client.start()
        for phase in phases:
            try:
                phase.gate.wait(timeout=300)
                began = time.perf_counter()
                phase.done.wait(timeout=max(1.0, deadline - time.monotonic() + 60))
                phase.wall = time.perf_counter() - began
            except threading.BrokenBarrierError:
                break
        reports = []
        for _ in clients:
            try:
                reports.append(results.get(timeout=60))
            except Exception:  # noqa: BLE001 (a client that never reports is counted below)
                break
        for client in clients:
            client.join(timeout=30)
        stop(process)
        process = None

        for report in reports:
            for phase in phases:
                phase.record(report["timings"][phase.name])
        errors = [error for report in reports for error in report["errors"]]
        if len(reports) < len(clients):
            errors.append(f"{len(clients) - len(reports)} clients never reported")
        doubles = [report["double_submit"] for report in reports if report["double_submit"]]
        confirmed = [token for report in reports for token in report["confirmed"]]
        result = check(campaign, confirmed)

        for phase in phases:
            if not phase.rounds:
                print(f"{phase.name}: no rounds completed")
                continue
            p95 = percentile(phase.rounds, 0.95)
            pause = f"{phase.think_ms:.0f} ms mean think time" if phase.think_ms else "no think time"
            working = phase.only or len(clients)
            print(
                f"{phase.name} ({pause}): {working} annotator{'s' if working > 1 else ''}, {len(phase.rounds)} next-pair + vote rounds "
                f"in {phase.wall:.1f} s: {phase.requests / phase.wall:.0f} requests/s, "
                f"{len(phase.rounds) / phase.wall:.1f} votes/s"
            )
            print(
                f"  next-pair + vote: p50 {percentile(phase.rounds, 0.5):.1f} ms, p95 {p95:.1f} ms, "
                f"max {max(phase.rounds):.1f} ms (p95 under 50 ms: {'yes' if p95 < 50 else 'no'})"
            )
            print(
                f"  next-pair alone p50 {percentile(phase.next_ms, 0.5):.1f} / p95 {percentile(phase.next_ms, 0.95):.1f} ms; "
                f"vote alone p50 {percentile(phase.vote_ms, 0.5):.1f} / p95 {percentile(phase.vote_ms, 0.95):.1f} ms"
            )
        print(
            f"over-assignment: {result['over_assigned_pairs']} pairs (must be 0); "
            f"lost votes: {result['lost_votes']} (must be 0); votes stored without confirmation: "
            f"{result['unconfirmed_votes']}; same pair twice to one annotator: {result['twice_same_pair']}"
        )
        print(
            f"votes stored {result['votes_stored']} (incl. 2 probe votes); pairs full "
            f"{result['pairs_full']}/{result['pairs']}; double submits answered "
            f"{sorted(set(doubles))} (200, False = stored once) by {len(doubles)} annotators"
        )
        print(
            f"yardstick: a pure-Python loop of 1,000,000 steps takes {interpreter_speed_ms():.0f} ms here "
            f"(Python {sys.version.split()[0]})"
        )
        print(
            f"load average (1 min) before {load_before:.1f}, after {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores "
            f"(gunicorn, PostgreSQL and the {len(clients)} client processes share them)"
        )
        reconnects = sum(report["reconnects"] for report in reports)
        if reconnects:
            print(f"{reconnects} requests re-sent on a new connection (the server had closed an idle one)")
        if errors:
            print(f"{len(errors)} client errors, first: {errors[:3]}")
    finally:
        if process is not None:
            stop(process)
        try:
            from django.db import connections

            connections.close_all()
        except Exception:  # noqa: BLE001 (Django may not have been set up)
            pass
        admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        shutil.rmtree(env["STATIC_ROOT"], ignore_errors=True)
        print(f"database {name} dropped")


if __name__ == "__main__":
    main()
