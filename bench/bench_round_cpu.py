"""The web CPU of one vote -> next round of the annotation API, and where it goes.

    .venv/bin/python bench/bench_round_cpu.py [--rounds 2000] [--profile FILE] [--top 40]

In one process, on a throwaway PostgreSQL database (`BENCH_POSTGRES_URL`, as
bench_annotation_load.py) with DEBUG off, the stress scenario's campaign (8 models x 200
questions, every model pair, 5 votes a pair, 200 annotators with sessions in the database).
Each round is `GET /api/annotate/<slug>/next/` then `POST .../votes/`, called through Django's
WSGI handler as gunicorn calls it (the environ it builds: the session and CSRF cookies, the
X-CSRFToken header, a JSON body), annotators in turn. What is timed is this process's CPU
(`time.process_time`), so PostgreSQL's share is left out and the figure holds under load; the
handler's own cost alone, not gunicorn's HTTP parsing. `--profile` runs the rounds under
cProfile and prints the functions by cumulative time and where the time goes by package."""

import argparse
import cProfile
import io
import json
import os
import pstats
import secrets
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._annotation_load_helpers import admin, database_url, postgres_admin_url  # noqa: E402

CHOICES = ["left", "right", "tie", "cannot_determine"]


def environ_for(method: str, path: str, session: str, csrf: str, body: bytes = b"") -> dict:
    """The WSGI environ gunicorn hands Django for this request."""
    return {
        "REQUEST_METHOD": method,
        "PATH_INFO": path.partition("?")[0],
        "QUERY_STRING": path.partition("?")[2],
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_HOST": "127.0.0.1:8000",
        "HTTP_ACCEPT": "application/json",
        "HTTP_COOKIE": f"sessionid={session}; csrftoken={csrf}",
        "HTTP_X_CSRFTOKEN": csrf,
        "CONTENT_TYPE": "application/json" if body else "",
        "CONTENT_LENGTH": str(len(body)) if body else "",
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.url_scheme": "http",
        "wsgi.version": (1, 0),
        "wsgi.multithread": False,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }


def call(handler, environ: dict) -> tuple[str, bytes]:
    status = []
    response = handler(environ, lambda line, headers, exc_info=None: status.append(line))
    try:
        content = b"".join(response)
    finally:
        response.close()
    return status[0], content


def rounds_of(
    handler, slug: str, sessions: list[str], rounds: int, start: int = 0, one_request: bool = False, shown=None
) -> int:
    """`rounds` vote -> next rounds, annotators in turn; returns how many voted. Each annotator
    holds the pair they were last shown until their next turn, as a person holds it while reading
    (`shown`, kept from one call to the next; the first is leased by next/, not counted as a round).
    A round is the vote then next/, or with `one_request` the vote that carries the annotator's
    next pair (`votes/?next=1`)."""
    voted = 0
    shown = {} if shown is None else shown
    csrf = "c" * 32
    for n in range(start, start + rounds):
        session = sessions[n % len(sessions)]
        if session not in shown:
            shown[session] = next_token(handler, slug, session, csrf)
        body = json.dumps({"token": shown.pop(session), "choice": CHOICES[n % 4]}).encode()
        path = f"/api/annotate/{slug}/votes/" + ("?next=1" if one_request else "")
        status, content = call(handler, environ_for("POST", path, session, csrf, body))
        if not status.startswith("201"):
            raise SystemExit(f"vote answered {status}: {content[:300]!r}")
        if one_request:
            shown[session] = json.loads(content)["next"]["pair"]["token"]
        else:
            shown[session] = next_token(handler, slug, session, csrf)
        voted += 1
    return voted


def next_token(handler, slug: str, session: str, csrf: str) -> str:
    status, content = call(handler, environ_for("GET", f"/api/annotate/{slug}/next/", session, csrf))
    if not status.startswith("200"):
        raise SystemExit(f"next answered {status}: {content[:300]!r}")
    return json.loads(content)["pair"]["token"]


ROUND_NAMES = {"two-requests": "the vote, then next/", "one-request": "the vote with the next pair (?next=1)"}


def backend_cpu(connection) -> float:
    """CPU seconds PostgreSQL's backend for this connection has used: its /proc entry's user and
    system ticks, when the server runs on this machine (0 otherwise, and the figure reads 0)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def by_package(stats: pstats.Stats) -> dict[str, float]:
    """Own (tottime) seconds per package: django's parts, rest_framework, the project's apps."""
    totals: dict[str, float] = defaultdict(float)
    for (filename, _line, _name), (_cc, _nc, tottime, _ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        path = filename.replace(str(ROOT) + "/", "")
        if "site-packages/" in path:
            parts = path.split("site-packages/", 1)[1].split("/")
            key = "/".join(parts[:2]) if parts[0] == "django" else parts[0]
        elif path.startswith("/") or path.startswith("<"):
            key = "python (stdlib, builtins)"
        else:
            key = path.split("/", 1)[0]
        totals[key] += tottime
    return dict(sorted(totals.items(), key=lambda item: -item[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--warm", type=int, default=200, help="rounds before timing (caches, connections)")
    parser.add_argument("--profile", default="", help="write cProfile stats here and print a summary")
    parser.add_argument("--top", type=int, default=45)
    parser.add_argument("--queries", action="store_true", help="print the SQL of one round first")
    parser.add_argument(
        "--round",
        choices=["both", "one-request", "two-requests"],
        default="both",
        help="a round as next/ then the vote, as the vote that carries the next pair, or both in turns",
    )
    options = parser.parse_args()

    name = f"ub_bench_round_cpu_{os.getpid()}"
    try:
        admin(f'CREATE DATABASE "{name}"')
    except Exception as error:  # noqa: BLE001
        print(f"PostgreSQL not reachable at {postgres_admin_url()} ({type(error).__name__}): benchmark skipped.")
        return
    os.environ.update(
        {
            "DATABASE_URL": database_url(name),
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DEBUG": "0",
            "SECRET_KEY": secrets.token_urlsafe(40),
            "ALLOWED_HOSTS": "127.0.0.1,testserver",
            "SECURE_SSL_REDIRECT": "0",
            "LOG_LEVEL": "WARNING",
            "DB_CONN_MAX_AGE": "3600",  # one backend throughout: its CPU is read from /proc
            "STATIC_ROOT": tempfile.mkdtemp(prefix="ub-bench-static-"),
        }
    )
    try:
        import django
        from django.core.management import call_command

        django.setup()
        call_command("migrate", verbosity=0)
        call_command("collectstatic", interactive=False, verbosity=0)
        from django.core.handlers.wsgi import WSGIHandler
        from django.db import connection, connections

        from bench._annotation_stress import seed_campaign, sessions_for

        campaign, people = seed_campaign(
            slug="cpu", annotators=200, questions=200, models=8, votes_per_pair=5, sampling="fixed"
        )
        sessions = sessions_for(people)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        connections.close_all()
        handler = WSGIHandler()
        shown: dict[str, str] = {}
        rounds_of(handler, campaign.slug, sessions, options.warm, shown=shown)
        # Statistics of a campaign under way, as autovacuum keeps them: planned on the empty
        # assignment table, the statements prepared during the warm-up would walk it whole.
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        connections.close_all()
        if options.queries:
            from django.test.utils import CaptureQueriesContext

            for one_request in (False, True):
                with CaptureQueriesContext(connection) as captured:
                    rounds_of(handler, campaign.slug, sessions, 1, options.warm, one_request=one_request, shown=shown)
                print(
                    f"SQL of one round, {ROUND_NAMES['one-request' if one_request else 'two-requests']}: "
                    f"{len(captured.captured_queries)} statements"
                )
                for query in captured.captured_queries:
                    print(f"  {float(query['time']) * 1000:6.2f} ms " + " ".join(query["sql"].split())[:200])
        # CPU time, not wall: waits on PostgreSQL are not the web worker's work. PostgreSQL's own
        # CPU is read from its backend process's /proc entry when it runs on this machine.
        profiler = cProfile.Profile(time.process_time) if options.profile else None
        load = os.getloadavg()
        modes = ["two-requests", "one-request"] if options.round == "both" else [options.round]
        spent = {mode: [0.0, 0.0, 0.0, 0.0] for mode in modes}  # web CPU, wall, PostgreSQL CPU, rounds
        block = max(1, options.rounds // (4 * len(modes)))
        done = 0
        while done < options.rounds:
            for mode in modes:
                backend = backend_cpu(connection)
                began_cpu, began_wall = time.process_time(), time.perf_counter()
                if profiler:
                    profiler.enable()
                voted = rounds_of(
                    handler,
                    campaign.slug,
                    sessions,
                    block,
                    start=options.warm + done,
                    one_request=mode == "one-request",
                    shown=shown,
                )
                if profiler:
                    profiler.disable()
                figures = spent[mode]
                figures[0] += time.process_time() - began_cpu
                figures[1] += time.perf_counter() - began_wall
                figures[2] += backend_cpu(connection) - backend
                figures[3] += voted
                done += block
        print(f"load average before: {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} on {os.cpu_count()} cores")
        for mode, (cpu, wall, pg_cpu, rounds) in spent.items():
            print(
                f"{rounds:.0f} rounds, {ROUND_NAMES[mode]}, through the WSGI handler: {1000 * cpu / rounds:.2f} ms of "
                f"this process's CPU a round ({'under cProfile, ' if profiler else ''}wall {1000 * wall / rounds:.2f} "
                f"ms), PostgreSQL's backend {1000 * pg_cpu / rounds:.2f} ms"
            )
        voted = int(sum(figures[3] for figures in spent.values()))
        if profiler:
            profiler.dump_stats(options.profile)
            stats = pstats.Stats(options.profile)
            total = sum(row[2] for row in stats.stats.values())  # type: ignore[attr-defined]
            print("\nown time by package (share of the profiled time):")
            for key, seconds in list(by_package(stats).items())[:20]:
                print(f"  {key:40s} {100 * seconds / total:5.1f} %  {1000 * seconds / voted:6.2f} ms a round")
            print()
            stats.sort_stats("cumulative").print_stats(options.top)
    finally:
        from django.db import connections

        connections.close_all()
        admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    print(f"PostgreSQL at {postgres_admin_url()}")
    main()
