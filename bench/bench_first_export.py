"""The first BT export a researcher downloads after `make run`, at the demo's size: the whole
request as the browser waits for it, in a fresh web process (its first request, lazy imports and
all) and again in the same process, for the campaign's export (its results page's figures) and
the dataset's. Each measurement is a new Python process on one demo database, as a freshly
started gunicorn worker would be: loaded through config/wsgi.py (which imports the URLconf as
the process starts) and, for contrast, with a bare django.setup(). "ready" is the process's own
start-up before it can take a request.

Run: .venv/bin/python bench/bench_first_export.py [--repeats 5]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# What the child process runs: Django set up, one researcher signed in, the export asked twice.
CHILD = """
import os, sys, time, json
sys.path.insert(0, os.environ["ROOT"])
started = time.perf_counter()
if os.environ["AS_WSGI"] == "1":
    from config.wsgi import application  # what a gunicorn worker loads before its first request
else:
    import django
    django.setup()
ready = time.perf_counter() - started
from django.test import Client
from django.contrib.auth import get_user_model
client = Client(HTTP_HOST="localhost")
client.force_login(get_user_model().objects.get(username="researcher"))
times = []
for _ in range(2):
    start = time.perf_counter()
    response = client.get(os.environ["EXPORT_URL"])
    body = b"".join(response.streaming_content) if response.streaming else response.content
    times.append(time.perf_counter() - start)
    assert response.status_code == 200, response.status_code
print(json.dumps({"ready": ready, "first": times[0], "second": times[1], "rows": body.count(b"\\n") - 1}))
"""


def child_env(database_url: str, url: str, as_wsgi: bool = True) -> dict:
    return {
        **os.environ,
        "ROOT": str(ROOT),
        "DATABASE_URL": database_url,
        "DEBUG": "1",
        "USERBENCH_DEMO": "1",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "LOG_LEVEL": "WARNING",
        "EXPORT_URL": url,
        "AS_WSGI": "1" if as_wsgi else "0",
    }


def measure(database_url: str, url: str, as_wsgi: bool) -> dict:
    env = child_env(database_url, url, as_wsgi)
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    database_url = os.environ.get("DATABASE_URL") or (
        f"sqlite:///{tempfile.mkdtemp(prefix='userbench-bench-')}/bench.sqlite3"
    )
    env = child_env(database_url, "")
    for command in (["migrate", "--noinput", "-v", "0"], ["seed_demo"]):
        subprocess.run([sys.executable, "manage.py", *command], cwd=ROOT, env=env, check=True, capture_output=True)
    exports = {
        "campaign BT export (?campaign=demo)": "/api/exports/bt/?campaign=demo&format=csv",
        "dataset BT export (?dataset=demo-v1)": "/api/exports/bt/?dataset=demo-v1&format=csv",
    }
    print(f"The demo after `make run` (seed_demo), {args.repeats} fresh processes each, in turns; median [min-max]:")
    starts = {"config.wsgi (as gunicorn loads it)": True, "bare django.setup()": False}
    for label, url in exports.items():
        runs: dict[str, list[dict]] = {start: [] for start in starts}
        for _ in range(args.repeats):
            for start, as_wsgi in starts.items():
                runs[start].append(measure(database_url, url, as_wsgi))
        print(f"  {label}, {runs[next(iter(starts))][0]['rows']} rows")
        for start in starts:
            line = []
            for key in ("ready", "first", "second"):
                values = [run[key] * 1000 for run in runs[start]]
                line.append(f"{key} {statistics.median(values):6.0f} ms [{min(values):.0f}-{max(values):.0f}]")
            print(f"    {start:<36} " + ", ".join(line))


if __name__ == "__main__":
    main()
