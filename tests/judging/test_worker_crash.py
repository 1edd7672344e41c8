"""A `db_worker` process killed with SIGKILL in the middle of a judge run: another worker
finishes the run with no one resuming it, and no call whose judgment was saved is sent again
(counted at the loopback server), on SQLite and on PostgreSQL.

Two ways a worker dies: one of two workers sharing the run (the other takes its shards over),
and the only worker (the one that comes back after it takes them over). The scenario runs in
its own process (tests/judging/crash_scenario.py) against a database the workers open too: the suite's
migrated test database copied to a file on SQLite, or the suite's PostgreSQL test database."""

import json
import os
import subprocess
import sys

import pytest
from django.conf import settings as django_settings

from tests.processes import shared_database  # noqa: F401

pytestmark = [pytest.mark.processes]

ROOT = django_settings.BASE_DIR


def scenario(database_url: str, *, workers: int) -> dict:
    env = {**os.environ, "DATABASE_URL": database_url, "DJANGO_SETTINGS_MODULE": "config.settings"}
    command = [sys.executable, "-m", "tests.judging.crash_scenario", "--workers", str(workers)]
    finished = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert finished.returncode == 0, finished.stdout[-3000:] + finished.stderr[-3000:]
    return json.loads(finished.stdout.strip().splitlines()[-1])


def check(result: dict) -> None:
    assert result["status"] == "finished"
    assert result["judgments"] == result["total"] == 120
    assert 0 < result["finished_at_kill"] < 120
    # Nothing that had a judgment at the kill was asked again; at most what was missing was sent
    # (a reply paid for but not yet saved is in the response cache, and free).
    assert result["repeated"] == []
    assert result["sent_after"] <= result["missing_at_kill"]
    # Some shard was taken over from the dead worker: claimed a second time.
    assert max(result["attempts"]) == 2


@pytest.mark.parametrize("workers", [2, 1], ids=["one-of-two-killed", "the-only-worker-killed"])
def test_another_worker_finishes_the_run_of_a_killed_one(shared_database, workers):
    check(scenario(shared_database, workers=workers))
