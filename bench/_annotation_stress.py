"""The stress scenario and the per-request cost of bench/bench_annotation_load.py.

Stress: N annotators (threads spread over a few client processes, each annotator with its own
keep-alive connection and a session made in the database, so that 200 password hashes do not
take the server's first minute) loop next + vote through the API, pausing 0.5-2 s between votes,
for a fixed time, optionally with researchers reloading the campaign page and its BT API. Each
round is recorded with its start time, so rounds per 30-s slice show whether the server slows as
the campaign fills.

Cost: in-process, one next + progress + vote round at a time on a campaign of a given size, its
SQL queries, the rows PostgreSQL touched (pg_stat_xact_user_tables: this transaction's reads
and writes) and its time.
"""

import json
import random
import secrets
import threading
import time
from collections import Counter

from bench._annotation_load_helpers import Connection, percentile

CHOICES = ["left", "right", "tie", "cannot_determine"]


def seed_campaign(*, slug, annotators, questions, models, votes_per_pair, sampling, password_hash="!"):
    """A dataset of `questions` answered by `models` candidates, `annotators` annotators and a
    campaign with every model pair on every question (fixed), or a budget for all of them (adaptive)."""
    from django.contrib.auth import get_user_model

    from annotation.campaigns import campaign_create
    from core.models import Membership, default_workspace_id
    from curation.models import Dataset, Item
    from judging.models import Answer, CandidateModel

    dataset = Dataset.objects.create(name=f"bench-{slug}")
    items = Item.objects.bulk_create(
        Item(dataset=dataset, external_id=f"q{n}", question=f"Question {n}: which **answer** is better?")
        for n in range(questions)
    )
    candidates = CandidateModel.objects.bulk_create(
        CandidateModel(name=f"bench-{slug}-model-{k}") for k in range(models)
    )
    Answer.objects.bulk_create(
        (
            Answer(item=item, model=model, text=f"Answer of model {k} to question {n}.\n\n- a point")
            for n, item in enumerate(items)
            for k, model in enumerate(candidates)
        ),
        batch_size=5000,
    )
    User = get_user_model()
    people = User.objects.bulk_create(
        User(username=f"{slug}-annotator{k:03d}", password=password_hash) for k in range(annotators)
    )
    Membership.objects.bulk_create(
        Membership(workspace_id=default_workspace_id(), user=person, annotator=True) for person in people
    )
    pairs_per_question = models * (models - 1) // 2
    design = (
        {"sampling": "adaptive", "budget": questions * pairs_per_question * votes_per_pair}
        if sampling == "adaptive"
        else {"question_count": questions, "pairs_per_question": pairs_per_question}
    )
    campaign = campaign_create(
        slug=slug, title=slug, dataset=dataset, candidates=candidates, votes_per_pair=votes_per_pair,
        annotators=people, seed=1, **design,
    )  # fmt: skip
    return campaign, people


def sessions_for(people) -> list[str]:
    """A logged-in session per person, written to the database as log-in would."""
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore

    keys = []
    for person in people:
        session = SessionStore()
        session[SESSION_KEY] = str(person.pk)
        # The backend that loads a person with their roles, as a real log-in records it: a session
        # naming a backend the settings do not list is anonymous (401 on every request).
        session[BACKEND_SESSION_KEY] = "core.auth.RoleLoadingBackend"
        session[HASH_SESSION_KEY] = person.get_session_auth_hash()
        session.create()
        assert session.session_key is not None  # create() made it
        keys.append(session.session_key)
    return keys


def client_process(base, slug, sessions, began_at, seconds, think, results):
    """One client process: a thread per annotator session, each looping next + vote with a pause
    of `think` (low, high) seconds until `seconds` after `began_at` (wall clock)."""
    rounds: list[tuple[float, float]] = []
    confirmed: list[str] = []
    errors: list[str] = []
    lock = threading.Lock()

    def annotator(session_key):
        rng = random.Random(session_key)
        csrf = secrets.token_hex(16)
        connection = Connection(base, timeout=30)
        connection.cookies.update({"sessionid": session_key, "csrftoken": csrf})
        headers = {"X-CSRFToken": csrf, "Accept": "application/json"}
        posting = {**headers, "Content-Type": "application/json"}
        time.sleep(max(0.0, began_at - time.time()) + rng.uniform(0, think[1]))
        while time.time() < began_at + seconds:
            try:
                started = time.perf_counter()
                status, content = connection.request("GET", f"/api/annotate/{slug}/next/", headers=headers)
                if status == 204:
                    break
                if status != 200:
                    errors.append(f"next {status}")
                    continue
                body = {"token": json.loads(content)["pair"]["token"], "choice": rng.choice(CHOICES)}
                status, content = connection.request(
                    "POST", f"/api/annotate/{slug}/votes/", json.dumps(body).encode(), posting
                )
                elapsed = (time.perf_counter() - started) * 1000
            except OSError as error:
                errors.append(type(error).__name__)
                connection.http.close()
                continue
            with lock:
                if status == 201:
                    confirmed.append(body["token"])
                    rounds.append((time.time() - began_at, elapsed))
                else:
                    errors.append(f"vote {status}")
            time.sleep(rng.uniform(*think))

    threads = [threading.Thread(target=annotator, args=(key,)) for key in sessions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    results.put({"rounds": rounds, "confirmed": confirmed, "errors": errors})


def researcher_thread(base, slug, session_key, began_at, seconds, statuses):
    """A researcher reloading the campaign page and its BT API until the end, as fast as they come."""
    connection = Connection(base, timeout=60)
    connection.cookies.update({"sessionid": session_key})
    paths = [f"/campaigns/{slug}/", f"/api/campaigns/{slug}/bt/"]
    while time.time() < began_at:
        time.sleep(0.05)
    n = 0
    while time.time() < began_at + seconds:
        started = time.perf_counter()
        try:
            status, _content = connection.request("GET", paths[n % 2], headers={"Accept": "text/html"})
        except OSError as error:
            status = type(error).__name__
            connection.http.close()
        statuses.append((paths[n % 2], status, (time.perf_counter() - started) * 1000))
        n += 1
        time.sleep(1.0)


def slices(rounds, seconds, width=30.0) -> list[int]:
    """Rounds completed in each `width`-second slice of the run, first to last."""
    counts = Counter(int(at // width) for at, _ms in rounds if at < seconds)
    return [counts.get(k, 0) for k in range(int(seconds // width))]


def summary(name, rounds, seconds) -> str:
    per_slice = slices(rounds, seconds)
    times = [ms for _at, ms in rounds]
    ratio = per_slice[-1] / per_slice[0] if per_slice and per_slice[0] else float("nan")
    return (
        f"{name}: {len(rounds)} vote->next rounds in {seconds:.0f} s = {len(rounds) / seconds:.1f}/s; "
        f"p50 {percentile(times, 0.5):.0f} ms, p95 {percentile(times, 0.95):.0f} ms; per 30 s "
        f"{[round(n / 30, 1) for n in per_slice]} rounds/s, last/first {ratio:.2f}"
    )


def request_cost(campaign, person, rounds=20) -> dict:
    """Mean SQL queries, rows touched and milliseconds of one next (with progress) and one vote,
    in-process, each in its own transaction as a request would be."""
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    from annotation.selectors import annotator_progress
    from annotation.services import assignment_next, vote_cast

    def touched() -> Counter:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT relname, seq_tup_read + COALESCE(idx_tup_fetch, 0) + n_tup_ins + n_tup_upd + n_tup_del "
                "FROM pg_stat_xact_user_tables"
            )
            return Counter(dict(cursor.fetchall()))

    by_table: Counter = Counter()

    totals = {"next": [0, 0, 0.0], "vote": [0, 0, 0.0]}
    for _ in range(rounds):
        for step in ("next", "vote"):
            with transaction.atomic(), CaptureQueriesContext(connection) as captured:
                before = touched()
                started = time.perf_counter()
                if step == "next":
                    given = assignment_next(campaign=campaign, annotator=person)
                    annotator_progress(campaign=campaign, annotator=person)
                else:
                    assert given is not None  # the campaign was built with pairs to spare
                    vote_cast(token=given.token, annotator=person, choice="tie")
                elapsed = (time.perf_counter() - started) * 1000
                rows_by_table = touched() - before
                rows = sum(rows_by_table.values())
                by_table.update({f"{step} {table}": n for table, n in rows_by_table.items()})
            totals[step][0] += len(captured) - 2  # the two reads of pg_stat_xact_user_tables
            totals[step][1] += rows
            totals[step][2] += elapsed
    print("  rows touched per request, by table:", {k: round(v / rounds, 1) for k, v in by_table.most_common(8)})
    return {step: (q / rounds, r / rounds, ms / rounds) for step, (q, r, ms) in totals.items()}


def run_stress(options, env, name) -> None:
    """The stress scenario, fixed then adaptive, each alone and then with researchers beside, on
    a fresh campaign each; prints rounds per 30-s slice, latency, CPU by side and the checks."""
    import multiprocessing
    import os

    from django.db import connection, connections

    from annotation.counters import counters_mismatches
    from annotation.models import Vote
    from bench._annotation_load_helpers import cpu_seconds, machine_cpu_seconds, start_gunicorn, stop
    from core.models import Membership, default_workspace_id

    context = multiprocessing.get_context("spawn")
    runs = [(sampling, researchers) for sampling in ("fixed", "adaptive") for researchers in (0, options.researchers)]
    for number, (sampling, researchers) in enumerate(runs):
        slug = f"stress-{sampling}-{number}"
        started = time.monotonic()
        campaign, people = seed_campaign(
            slug=slug, annotators=options.annotators, questions=options.questions, models=options.models,
            votes_per_pair=options.votes_per_pair, sampling=sampling,
        )  # fmt: skip
        from django.contrib.auth import get_user_model

        chiefs = get_user_model().objects.bulk_create(
            get_user_model()(username=f"{slug}-researcher{k}", password="!") for k in range(researchers)
        )
        Membership.objects.bulk_create(
            Membership(workspace_id=default_workspace_id(), user=chief, researcher=True) for chief in chiefs
        )
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        keys, chief_keys = sessions_for(people), sessions_for(chiefs)
        planned = campaign.pairs_planned
        print(
            f"\n{slug}: {planned} pairs x {campaign.votes_per_pair} votes, {len(people)} annotators, "
            f"{researchers} researchers; seeded in {time.monotonic() - started:.0f} s"
        )
        connections.close_all()
        process, base = start_gunicorn(env, options.workers, 1)
        try:
            began_at = time.time() + 5
            results = context.Queue()
            groups = [keys[k :: options.client_processes] for k in range(options.client_processes)]
            clients = [
                context.Process(
                    target=client_process,
                    args=(base, slug, group, began_at, options.seconds, (0.5, 2.0), results),
                    daemon=True,
                )
                for group in groups
            ]
            for client in clients:
                client.start()
            statuses: list = []
            readers = [
                threading.Thread(target=researcher_thread, args=(base, slug, key, began_at, options.seconds, statuses))
                for key in chief_keys
            ]
            for reader in readers:
                reader.start()
            time.sleep(max(0.0, began_at - time.time()))
            load_before = os.getloadavg()
            cpu_before = (cpu_seconds(process.pid), machine_cpu_seconds())
            client_pids = [client.pid for client in clients if client.pid is not None]  # all started
            client_cpu = [cpu_seconds(pid) for pid in client_pids]
            time.sleep(options.seconds)
            cpu_after = (cpu_seconds(process.pid), machine_cpu_seconds())
            client_cpu = [cpu_seconds(pid) - before for pid, before in zip(client_pids, client_cpu, strict=True)]
            load_after = os.getloadavg()
            reports = [results.get(timeout=120) for _ in clients]
            for client in clients:
                client.join(timeout=30)
            for reader in readers:
                reader.join(timeout=90)
        finally:
            stop(process)
        rounds = [r for report in reports for r in report["rounds"]]
        confirmed = [t for report in reports for t in report["confirmed"]]
        errors = Counter(e for report in reports for e in report["errors"])
        print(summary(slug, rounds, options.seconds))
        web = cpu_after[0] - cpu_before[0]
        machine = cpu_after[1] - cpu_before[1]
        clients_total = sum(client_cpu)
        rest = machine - web - clients_total
        print(
            f"  CPU over the run: web (gunicorn) {web:.0f} s, clients {clients_total:.0f} s, PostgreSQL and the rest "
            f"{rest:.0f} s of {machine:.0f} s busy ({options.seconds * (os.cpu_count() or 1):.0f} s available); per "
            f"round web {1000 * web / max(1, len(rounds)):.1f} ms, PostgreSQL+rest "
            f"{1000 * rest / max(1, len(rounds)):.1f} ms; {len(rounds) / max(1e-9, web + rest):.0f} rounds per "
            f"server core-second"
        )
        print(f"  load average before {load_before[0]:.1f}, after {load_after[0]:.1f} (1 min)")
        if statuses:
            by_path = Counter((path, status) for path, status, _ms in statuses)
            times = [ms for _p, _s, ms in statuses]
            print(
                f"  researchers: {dict(by_path)}; p50 {percentile(times, 0.5):.0f} ms, p95 {percentile(times, 0.95):.0f} ms"
            )
        stored = Counter(Vote.objects.filter(campaign=campaign).values_list("assignment__token", flat=True))
        lost = len(set(confirmed) - set(stored))
        doubled = sum(1 for n in stored.values() if n > 1) + (len(confirmed) - len(set(confirmed)))
        unconfirmed = len(set(stored) - set(confirmed))
        print(
            f"  votes stored {sum(stored.values())}, confirmed {len(confirmed)}: lost {lost}, doubled {doubled}, "
            f"stored unconfirmed {unconfirmed} (in flight at the end); counters wrong: "
            f"{len(counters_mismatches(campaign=campaign))}; errors {dict(errors) or 'none'}"
        )


def run_cost(options) -> None:
    """Per-request cost in-process at two sizes: 8 models x 200 questions (5,600 pairs) and
    20 models x 1,000 questions (190,000 pairs), each half full of votes."""
    from django.db import connection

    from annotation.models import Assignment, ComparisonPair

    for models, questions in ((8, 200), (20, options.large_questions)):
        started = time.monotonic()
        campaign, people = seed_campaign(
            slug=f"cost-{models}", annotators=6, questions=questions, models=models, votes_per_pair=5, sampling="fixed"
        )
        seeded = time.monotonic() - started
        # Half the pairs full: their five votes counted on the pairs, as a campaign half done
        # (the assignments themselves are not needed by the requests measured).
        pairs = list(campaign.pairs.order_by("pk").values_list("pk", flat=True))
        ComparisonPair.objects.filter(pk__in=pairs[: len(pairs) // 2]).update(votes_cast=5, needs_votes=False)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        cost = request_cost(campaign, people[0])
        print(
            f"{len(pairs):,} pairs ({models} models x {questions} questions, seeded in {seeded:.0f} s): "
            + "; ".join(
                f"{step} {q:.1f} queries, {r:.0f} rows touched, {ms:.1f} ms" for step, (q, r, ms) in cost.items()
            )
        )
        assert Assignment.objects.filter(pair__campaign=campaign, status="voted").count() == 20
