"""The stress scenario and the per-request cost of bench/bench_annotation_load.py.

Stress: N annotators (threads spread over a few client processes, each annotator with its own
keep-alive connection and a session made in the database, so that 200 password hashes do not
take the server's first minute) loop next + vote through the API, pausing 0.5-2 s between votes,
for a fixed time, optionally with researchers reloading the campaign page and its BT API and a
judge run going on (bench/_judge_beside.py), with `db_worker` processes up throughout as
deployed. Each round is recorded with its start time, so rounds per 30-s slice show whether the
server slows as the campaign fills (or while the judge run goes on).

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


def client_process(base, slug, sessions, began_at, seconds, think, results, one_request=True):
    """One client process: a thread per annotator session, each voting with a pause of `think`
    (low, high) seconds until `seconds` after `began_at` (wall clock), holding the pair shown while
    it pauses, as a person reading it does. A round is what an annotator waits for between choosing
    and seeing the next pair: with `one_request`, the vote that carries the next pair
    (`votes/?next=1`); without, the vote and then `next/`."""
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
        vote_url = f"/api/annotate/{slug}/votes/" + ("?next=1" if one_request else "")

        def next_pair():
            """The pair next/ leases, None when it has none (204), or an error's name."""
            status, content = connection.request("GET", f"/api/annotate/{slug}/next/", headers=headers)
            return json.loads(content) if status == 200 else None if status == 204 else f"next {status}"

        time.sleep(max(0.0, began_at - time.time()) + rng.uniform(0, think[1]))
        shown = None  # the pair on the annotator's screen
        while time.time() < began_at + seconds:
            try:
                if shown is None:  # the session's first pair, or the one held after an error: not a round
                    shown = next_pair()
                    if shown is None:
                        break
                    if isinstance(shown, str):
                        errors.append(shown)
                        shown = None
                        time.sleep(rng.uniform(*think))  # as after every error: a failing server is not hammered
                        continue
                started = time.perf_counter()
                body = {"token": shown["pair"]["token"], "choice": rng.choice(CHOICES)}
                status, content = connection.request("POST", vote_url, json.dumps(body).encode(), posting)
                following = None
                if status == 201:
                    following = json.loads(content)["next"] if one_request else next_pair()
                elapsed = (time.perf_counter() - started) * 1000
            except OSError as error:
                errors.append(type(error).__name__)
                connection.http.close()
                shown = None
                time.sleep(rng.uniform(*think))
                continue
            failed = f"vote {status}" if status != 201 else following if isinstance(following, str) else ""
            with lock:
                if status == 201:
                    confirmed.append(body["token"])
                    rounds.append((time.time() - began_at, elapsed))
                if failed:
                    errors.append(failed)
            if not failed and following is None:  # nothing left for this annotator (done, or held by others)
                break
            shown = None if failed else following  # after an error, next/ offers the pair held again
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
    """The stress scenario, fixed then adaptive, each alone and then with researchers (and, unless
    --no-judge, a judge run) beside, on a fresh campaign each, with --db-workers workers up
    throughout as deployed; prints each run's rounds per 30-s slice, latency, CPU by side and
    checks, then a summary of all."""
    import tempfile
    from pathlib import Path

    from bench._judge_beside import JudgeBeside
    from bench.bench_judge_throughput import start_workers, stop

    samplings = ("fixed", "adaptive") if options.sampling == "both" else (options.sampling,)
    crowds = (options.researchers,) if options.crowd_with_researchers_only else (0, options.researchers)
    runs = [(sampling, researchers) for sampling in samplings for researchers in crowds]
    logs = Path(tempfile.mkdtemp(prefix="ub-bench-stress-"))
    workers = start_workers(options.db_workers, env, logs, queue="*") if options.db_workers else []
    judge = None
    if not options.no_judge:
        judge = JudgeBeside(
            env, workers, calls=options.judge_calls, latency=options.judge_latency, concurrency=options.judge_concurrency
        )  # fmt: skip
        judge.start()
        print(
            f"{len(workers)} db_worker(s) on every queue throughout; a judge run of {judge.calls} calls "
            f"({judge.concurrency} in flight, {judge.latency * 1000:.0f} ms each: ideal {judge.ideal:.1f} s) beside "
            f"the runs with researchers, from a third of the way in, and alone just before each"
        )
    else:
        print(f"{len(workers)} db_worker(s) on every queue throughout; no judge run")
    outcomes = []
    try:
        for number, (sampling, researchers) in enumerate(runs):
            beside = judge if researchers else None
            slug = f"stress-{sampling}-{number}"
            outcomes.append(stress_run(options, env, slug, sampling, researchers, workers, beside))
    finally:
        if judge is not None:
            judge.close()
        stop(workers)
    print("\nsummary (load average in each run's lines above):")
    for outcome in outcomes:
        print("  " + summary_line(outcome))


def stress_run(options, env, slug, sampling, researchers, workers, judge) -> dict:
    """One run of the stress scenario on a fresh campaign; prints its figures and checks, and
    returns them. With `judge`, a judge run alone just before the crowd (the same workers, no
    web traffic), then one beside it from a third of the way in."""
    import multiprocessing
    import os

    from django.contrib.auth import get_user_model
    from django.db import connection, connections

    from bench._annotation_load_helpers import cpu_seconds, machine_cpu_seconds, start_gunicorn, stop, wait_serving
    from core.models import Membership, default_workspace_id

    context = multiprocessing.get_context("spawn")
    started = time.monotonic()
    campaign, people = seed_campaign(
        slug=slug, annotators=options.annotators, questions=options.questions, models=options.models,
        votes_per_pair=options.votes_per_pair, sampling=sampling,
    )  # fmt: skip
    chiefs = get_user_model().objects.bulk_create(
        get_user_model()(username=f"{slug}-researcher{k}", password="!") for k in range(researchers)
    )
    Membership.objects.bulk_create(
        Membership(workspace_id=default_workspace_id(), user=chief, researcher=True) for chief in chiefs
    )
    datasets = [judge.dataset(), judge.dataset()] if judge else []
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    keys, chief_keys = sessions_for(people), sessions_for(chiefs)
    print(
        f"\n{slug}: {campaign.pairs_planned} pairs x {campaign.votes_per_pair} votes, {len(people)} annotators, "
        f"{researchers} researchers{', a judge run' if judge else ''}; seeded in {time.monotonic() - started:.0f} s; "
        f"a round is {'the vote with the next pair' if options.round == 'one-request' else 'the vote, then next/'}, "
        f"{options.pause[0]:g}-{options.pause[1]:g} s apart"
    )
    alone = judge.launch(datasets[0]).outcome() if judge else None
    connections.close_all()
    process, base = start_gunicorn(env, options.workers, 1)
    try:
        print(f"  gunicorn answered {wait_serving(base):.1f} s after it listened")
        began_at = time.time() + 5
        results = context.Queue()
        groups = [keys[k :: options.client_processes] for k in range(options.client_processes)]
        clients = [
            context.Process(
                target=client_process,
                args=(
                    base,
                    slug,
                    group,
                    began_at,
                    options.seconds,
                    tuple(options.pause),
                    results,
                    options.round == "one-request",
                ),
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
        # From a third of the way in: the crowd is at its pace by then, with slices after to compare.
        judging = judge.launch(datasets[1], at=began_at + options.seconds / 3) if judge else None
        time.sleep(max(0.0, began_at - time.time()))
        load_before = os.getloadavg()
        client_pids = [client.pid for client in clients if client.pid is not None]  # all started
        sides = {
            "web": lambda: cpu_seconds(process.pid),
            "workers": lambda: sum(cpu_seconds(worker.pid) for worker in workers),
            "LLM server": lambda: judge.server_cpu() if judge else 0.0,
            # The annotators' processes and this one (the researchers' threads, the judge's timer).
            "clients": lambda: sum(cpu_seconds(pid) for pid in client_pids) + cpu_seconds(os.getpid(), children=False),
            "machine": machine_cpu_seconds,
        }
        before = {side: read() for side, read in sides.items()}
        time.sleep(options.seconds)
        cpu = {side: read() - before[side] for side, read in sides.items()}
        load = (load_before[0], os.getloadavg()[0])
        reports = [results.get(timeout=120) for _ in clients]
        for client in clients:
            client.join(timeout=30)
        for reader in readers:
            reader.join(timeout=90)
    finally:
        stop(process)
    beside = judging.outcome() if judging else None
    if beside is not None:
        # The command that started and waited for the run (read while it lived: /proc forgets it).
        cpu["judge command"] = beside["command_cpu"]
    outcome = {"slug": slug, "load": load, "researchers": statuses, "alone": alone, "beside": beside}
    outcome.update(stress_checks(campaign, reports, options.seconds))
    print(outcome["line"])
    print(cpu_line(cpu, len(outcome["rounds"]), options.seconds))
    print(f"  load average before {load[0]:.1f}, after {load[1]:.1f} (1 min)")
    if statuses:
        by_path = Counter((path, status) for path, status, _ms in statuses)
        times = [ms for _p, _s, ms in statuses]
        print(
            f"  researchers: {dict(by_path)}; p50 {percentile(times, 0.5):.0f} ms, p95 {percentile(times, 0.95):.0f} ms"
        )
    print(outcome["checks"])
    if alone is not None and beside is not None:
        print("  " + judge_line(alone, beside, began_at, options.seconds))
    return outcome


def stress_checks(campaign, reports, seconds) -> dict:
    """The run's rounds and the nothing-lost check: every confirmed vote stored once, counters
    equal to what they count."""
    from annotation.counters import counters_mismatches
    from annotation.models import Vote

    rounds = [r for report in reports for r in report["rounds"]]
    confirmed = [t for report in reports for t in report["confirmed"]]
    errors = Counter(e for report in reports for e in report["errors"])
    stored = Counter(Vote.objects.filter(campaign=campaign).values_list("assignment__token", flat=True))
    lost = len(set(confirmed) - set(stored))
    doubled = sum(1 for n in stored.values() if n > 1) + (len(confirmed) - len(set(confirmed)))
    unconfirmed = len(set(stored) - set(confirmed))
    wrong = len(counters_mismatches(campaign=campaign))
    checks = (
        f"  votes stored {sum(stored.values())}, confirmed {len(confirmed)}: lost {lost}, doubled {doubled}, "
        f"stored unconfirmed {unconfirmed} (in flight at the end); counters wrong: {wrong}; "
        f"errors {dict(errors) or 'none'}"
    )
    return {
        "rounds": rounds,
        "line": summary(campaign.slug, rounds, seconds),
        "checks": checks,
        "lost": lost,
        "doubled": doubled,
        "wrong": wrong,
        "errors": sum(errors.values()),
    }


def cpu_line(cpu: dict, rounds: int, seconds: float) -> str:
    """CPU seconds by side over the run (PostgreSQL: what the machine spent that no other side
    did), per round, and rounds per server core-second (web plus PostgreSQL)."""
    import os

    sides = {side: spent for side, spent in cpu.items() if side != "machine" and spent}
    rest = cpu["machine"] - sum(sides.values())
    per_round = 1000 / max(1, rounds)
    return (
        "  CPU over the run: "
        + ", ".join(f"{side} {spent:.0f} s" for side, spent in sides.items())
        + f", PostgreSQL and the rest {rest:.0f} s of {cpu['machine']:.0f} s busy ({seconds * (os.cpu_count() or 1):.0f} s "
        f"available); per round web {cpu['web'] * per_round:.1f} ms, PostgreSQL+rest {rest * per_round:.1f} ms, "
        f"workers {cpu['workers'] * per_round:.1f} ms; {rounds / max(1e-9, cpu['web'] + rest):.0f} rounds per "
        "server core-second"
    )


def judge_line(alone: dict, beside: dict, began_at: float, seconds: float) -> str:
    """The judge run beside the crowd against alone: times, their ratio, where in the run it went
    (its 30-s slices) and whether it finished with exactly its calls judged."""
    start, end = beside["began"] - began_at, beside["ended"] - began_at
    over = f", {end - seconds:.0f} s after the crowd stopped" if end > seconds else ""
    made = (beside["made_to_finished"], alone["made_to_finished"])
    said = (
        f"judge run: {beside['seconds']:.1f} s beside the crowd, {alone['seconds']:.1f} s alone = "
        f"{judge_ratio(beside, alone):.2f}x (the command's start-up included; from the run made to finished "
        f"{made[0]:.1f} s and {made[1]:.1f} s = {made[0] / max(1e-9, made[1]):.2f}x); beside from {start:.0f} s to "
        f"{end:.0f} s of the run (slices {int(start // 30) + 1}-{int(end // 30) + 1}){over}"
    )
    for name, run in (("beside", beside), ("alone", alone)):
        said += (
            f"; {name}: {run['status']}, {run['judged']} of {run['calls']} calls judged, "
            f"{run['stored']} judgments stored" + ("" if run["ok"] else f" (NOT exactly its calls)\n{run['tail']}")
        )
    return said


def judge_ratio(beside: dict, alone: dict) -> float:
    """The judge run's time beside the crowd over its time alone, as its researcher feels it."""
    return beside["seconds"] / max(1e-9, alone["seconds"])


def summary_line(outcome: dict) -> str:
    """One run in the summary: rounds a second, p95, last/first, nothing lost, researchers, judge."""
    line = outcome["line"].replace(" vote->next rounds in", " rounds in").split("; per 30 s")[0]
    slices_said = outcome["line"].split("last/first ")[1]
    said = f"{line}, last/first {slices_said}; lost {outcome['lost']}, doubled {outcome['doubled']}, "
    said += f"counters wrong {outcome['wrong']}, errors {outcome['errors']}"
    if outcome["researchers"]:
        times = [ms for _p, _s, ms in outcome["researchers"]]
        failed = sum(1 for _p, status, _ms in outcome["researchers"] if status != 200)
        said += f"; researchers p95 {percentile(times, 0.95):.0f} ms, {failed} of {len(times)} not 200"
    alone, beside = outcome["alone"], outcome["beside"]
    if alone and beside:
        ratio = judge_ratio(beside, alone)
        exact = "exactly its calls" if alone["ok"] and beside["ok"] else "NOT exactly its calls"
        made = beside["made_to_finished"] / max(1e-9, alone["made_to_finished"])
        said += (
            f"; judge {beside['seconds']:.1f} s beside / {alone['seconds']:.1f} s alone = {ratio:.2f}x (from its "
            f"row to its end {made:.2f}x), {exact}"
        )
    return said


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
        # By range, not by a list of ids: PostgreSQL takes at most 65,535 parameters a statement.
        ComparisonPair.objects.filter(campaign=campaign, pk__lte=pairs[len(pairs) // 2 - 1]).update(
            votes_cast=5, needs_votes=False
        )
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
