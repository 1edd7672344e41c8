"""32 annotators at once against gunicorn on PostgreSQL: next-pair plus vote through the API.

What it does, and undoes, by itself:
  1. creates a throwaway database `ub_bench_annotation_<pid>` on PostgreSQL (BENCH_POSTGRES_URL,
     default postgres://postgres@127.0.0.1:5432/postgres), migrates it, and seeds one campaign
     (150 questions x 6 models, 3 pairs per question = 450 pairs, 3 votes wanted per pair) and
     32 annotators;
  2. counts the SQL queries of one next-pair and one vote in-process (CaptureQueriesContext);
  3. starts gunicorn on 127.0.0.1, port 0 (the OS picks a free one; read back from its log),
     DEBUG off, as in production except TLS;
  4. runs 32 client threads: each logs in through the real log-in form, then loops
     GET /api/annotate/<campaign>/next/ + POST .../votes/ in two phases of --iterations rounds:
     "paced", pausing about --think-ms between votes as people reading answers do, and
     "saturated", with no pause at all (the worst case: the server's capacity); an "alone" phase
     first has one annotator work by themself (the service time without queueing). Each stops
     early when the campaign has nothing left or the --deadline passes. Finally every
     annotator re-sends its last vote once (a double submit, which must store nothing);
  5. stops gunicorn, checks the database (no pair holds more votes or leases than wanted, every
     vote the server confirmed is stored once, no vote the server did not confirm), and drops
     the database.

It prints p50/p95 of next-pair plus vote (ms), requests per second, queries per request,
over-assignment (must be 0) and lost votes (must be 0). Only loopback traffic; no assertion on
time. Without a reachable PostgreSQL it says so and exits.

    .venv/bin/python bench/bench_annotation_load.py [--annotators 32] [--iterations 15]
        [--think-ms 2000] [--workers 5] [--threads 2] [--deadline 240]
"""

import argparse
import os
import random
import re
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHOICES = ["left", "right", "tie", "cannot_determine"]
PASSWORD = "bench-" + secrets.token_hex(8)


def postgres_admin_url() -> str:
    return os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")


def database_url(name: str) -> str:
    parts = urlsplit(postgres_admin_url())
    return urlunsplit(parts._replace(path=f"/{name}"))


def admin(sql: str) -> None:
    import psycopg

    with psycopg.connect(postgres_admin_url(), autocommit=True, connect_timeout=5) as connection:
        connection.execute(sql)


def percentile(values, fraction):
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    position = fraction * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


# ----------------------------------------------------------------------------- seeding


def seed(*, annotators: int, questions: int, models: int, pairs_per_question: int, votes_per_pair: int):
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import Group

    from annotation.services import campaign_create
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
    group = Group.objects.get(name="annotator")
    group.user_set.add(*people)
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


def start_gunicorn(env: dict, workers: int, threads: int):
    command = [
        str(ROOT / ".venv" / "bin" / "gunicorn"), "config.wsgi:application",
        "--bind", "127.0.0.1:0", "--workers", str(workers), "--threads", str(threads),
        "--timeout", "30", "--graceful-timeout", "10", "--log-level", "info",
        # Longer than the think time: otherwise the server closes idle connections between votes
        # and a client reusing one just then sees it dropped.
        "--keep-alive", "30",
    ]
    process = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    port = None
    lines: list[str] = []
    started = time.monotonic()
    while port is None:
        line = process.stderr.readline()
        if not line:
            raise RuntimeError("gunicorn stopped while starting:\n" + "".join(lines[-20:]))
        lines.append(line)
        found = re.search(r"Listening at: http://127\.0\.0\.1:(\d+)", line)
        if found:
            port = int(found.group(1))
        if time.monotonic() - started > 30:
            process.terminate()
            raise RuntimeError("gunicorn did not start within 30 s:\n" + "".join(lines[-20:]))
    # Keep reading its log so the pipe never fills and blocks it.
    threading.Thread(target=lambda: [None for _ in process.stderr], daemon=True).start()
    return process, f"http://127.0.0.1:{port}"


def stop(process) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# ----------------------------------------------------------------------------- clients


class Phase:
    """One measured stretch: every annotator does up to `iterations` rounds, pausing `think_ms`
    (uniformly 0.5x to 1.5x) between rounds as a person reading the answers would."""

    def __init__(self, name: str, think_ms: float, iterations: int, annotators: int, only: int = 0):
        self.name, self.think_ms, self.iterations = name, think_ms, iterations
        # `only` > 0: just the first `only` annotators work in this phase (the others wait).
        self.only = only
        self.gate = threading.Barrier(annotators + 1)  # everyone starts the phase together
        self.done = threading.Barrier(annotators + 1)
        self.lock = threading.Lock()
        self.rounds: list[float] = []
        self.next_ms: list[float] = []
        self.vote_ms: list[float] = []
        self.requests = 0
        self.wall = 0.0

    def record(self, next_ms: float, vote_ms: float) -> None:
        with self.lock:
            self.next_ms.append(next_ms)
            self.vote_ms.append(vote_ms)
            self.rounds.append(next_ms + vote_ms)
            self.requests += 2


class Annotator(threading.Thread):
    def __init__(self, index: int, base: str, username: str, slug: str, phases: list[Phase], deadline: float):
        super().__init__(daemon=True)
        self.index = index
        self.base, self.username, self.slug, self.phases, self.deadline = base, username, slug, phases, deadline
        self.confirmed: list[str] = []
        self.errors: list[str] = []
        self.double_submit = None

    def log_in(self, http):
        # Cookies are sent by hand: the session and CSRF cookies are marked Secure (DEBUG off),
        # which an HTTP client rightly keeps off plain http, even on loopback.
        # Generous time: 32 password hashes at once queue on a few cores; log-in is not measured.
        page = http.get(f"{self.base}/accounts/login/", timeout=120)
        form_token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        cookies = {"csrftoken": page.cookies["csrftoken"]}
        answer = http.post(
            f"{self.base}/accounts/login/",
            data={"username": self.username, "password": PASSWORD, "csrfmiddlewaretoken": form_token},
            headers={"Cookie": "; ".join(f"{k}={v}" for k, v in cookies.items())},
            timeout=120,
        )
        if answer.status_code != 302:
            raise RuntimeError(f"log-in of {self.username} failed with {answer.status_code}")
        cookies.update({name: answer.cookies[name] for name in ("sessionid", "csrftoken") if name in answer.cookies})
        http.cookies.clear()
        return {
            "Cookie": "; ".join(f"{k}={v}" for k, v in cookies.items()),
            "X-CSRFToken": cookies["csrftoken"],
            "Accept": "application/json",
        }

    def abort(self):
        for phase in self.phases:
            phase.gate.abort()
            phase.done.abort()

    def run(self):
        import httpx

        rng = random.Random(self.username)
        with httpx.Client(timeout=10, follow_redirects=False) as http:
            next_url = f"{self.base}/api/annotate/{self.slug}/next/"
            vote_url = f"{self.base}/api/annotate/{self.slug}/votes/"
            try:
                headers = self.log_in(http)
                # Unmeasured warm-up: every gunicorn worker imports the API's code on its first request.
                http.get(next_url, headers=headers, timeout=120)
            except Exception as error:  # noqa: BLE001 (reported, never hidden)
                self.errors.append(f"log-in or warm-up: {type(error).__name__}: {error}")
                self.abort()
                return
            last = None
            try:
                for phase in self.phases:
                    phase.gate.wait(timeout=300)
                    if not phase.only or self.index < phase.only:
                        last = self.work(http, headers, phase, rng, next_url, vote_url) or last
                    phase.done.wait(timeout=300)
            except threading.BrokenBarrierError:
                return
            if last is not None:
                again = http.post(vote_url, json=last, headers=headers)
                self.double_submit = (again.status_code, again.json().get("created"))

    def work(self, http, headers, phase, rng, next_url, vote_url):
        import httpx

        last = None
        for _ in range(phase.iterations):
            if time.monotonic() > self.deadline:
                break
            if phase.think_ms:
                time.sleep(phase.think_ms * rng.uniform(0.5, 1.5) / 1000)
            try:
                began = time.perf_counter()
                shown = http.get(next_url, headers=headers)
                middle = time.perf_counter()
                if shown.status_code == 204:
                    break
                if shown.status_code != 200:
                    self.errors.append(f"next: {shown.status_code}")
                    continue
                token = shown.json()["pair"]["token"]
                body = {"token": token, "choice": rng.choice(CHOICES)}
                stored = http.post(vote_url, json=body, headers=headers)
                ended = time.perf_counter()
            except httpx.HTTPError as error:
                self.errors.append(f"{type(error).__name__}: {error}")
                continue
            if stored.status_code == 201:
                self.confirmed.append(token)
                last = body
            else:
                self.errors.append(f"vote: {stored.status_code} {stored.text[:100]}")
            phase.record((middle - began) * 1000, (ended - middle) * 1000)
        return last


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
    parser.add_argument("--think-ms", type=float, default=2000, help="mean pause between votes in the paced phase")
    parser.add_argument("--workers", type=int, default=2 * (os.cpu_count() or 1) + 1)
    parser.add_argument("--threads", type=int, default=2, help="gunicorn threads per worker")
    parser.add_argument("--deadline", type=float, default=240, help="seconds before clients stop anyway")
    options = parser.parse_args()

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
        campaign, people, probe = seed(
            annotators=options.annotators, questions=150, models=6, pairs_per_question=3, votes_per_pair=3
        )
        print(f"database {name}: migrated and seeded in {time.monotonic() - started:.1f} s; "
              f"{campaign.pairs.count()} pairs x {campaign.votes_per_pair} votes wanted, {len(people)} annotators")
        queries = query_counts(campaign, probe)
        print("SQL queries per request (in-process): " + ", ".join(f"{k} {v}" for k, v in queries.items()))

        from django.db import connections

        connections.close_all()
        process, base = start_gunicorn(env, options.workers, options.threads)
        print(f"gunicorn on {base}: {options.workers} workers x {options.threads} threads")
        load_before = os.getloadavg()[0]
        phases = [
            Phase("alone", 0, options.iterations, len(people), only=1),
            Phase("paced", options.think_ms, options.iterations, len(people)),
            Phase("saturated", 0, options.iterations, len(people)),
        ]
        deadline = time.monotonic() + options.deadline
        clients = [
            Annotator(k, base, person.username, campaign.slug, phases, deadline) for k, person in enumerate(people)
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
        for client in clients:
            client.join(timeout=30)
        stop(process)
        process = None

        errors = [error for client in clients for error in client.errors]
        doubles = [client.double_submit for client in clients if client.double_submit]
        confirmed = [token for client in clients for token in client.confirmed]
        result = check(campaign, confirmed)

        for phase in phases:
            if not phase.rounds:
                print(f"{phase.name}: no rounds completed")
                continue
            p95 = percentile(phase.rounds, 0.95)
            pause = f"{phase.think_ms:.0f} ms mean think time" if phase.think_ms else "no think time"
            working = phase.only or len(clients)
            print(f"{phase.name} ({pause}): {working} annotator{'s' if working > 1 else ''}, {len(phase.rounds)} next-pair + vote rounds "
                  f"in {phase.wall:.1f} s: {phase.requests / phase.wall:.0f} requests/s, "
                  f"{len(phase.rounds) / phase.wall:.1f} votes/s")
            print(f"  next-pair + vote: p50 {percentile(phase.rounds, 0.5):.1f} ms, p95 {p95:.1f} ms, "
                  f"max {max(phase.rounds):.1f} ms (p95 under 50 ms: {'yes' if p95 < 50 else 'no'})")
            print(f"  next-pair alone p50 {percentile(phase.next_ms, 0.5):.1f} / p95 {percentile(phase.next_ms, 0.95):.1f} ms; "
                  f"vote alone p50 {percentile(phase.vote_ms, 0.5):.1f} / p95 {percentile(phase.vote_ms, 0.95):.1f} ms")
        print(f"over-assignment: {result['over_assigned_pairs']} pairs (must be 0); "
              f"lost votes: {result['lost_votes']} (must be 0); votes stored without confirmation: "
              f"{result['unconfirmed_votes']}; same pair twice to one annotator: {result['twice_same_pair']}")
        print(f"votes stored {result['votes_stored']} (incl. 2 probe votes); pairs full "
              f"{result['pairs_full']}/{result['pairs']}; double submits answered "
              f"{sorted(set(doubles))} (200, False = stored once) by {len(doubles)} annotators")
        print(f"load average (1 min) before {load_before:.1f}, after {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores "
              f"(gunicorn, PostgreSQL and the {len(clients)} client threads share them)")
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
