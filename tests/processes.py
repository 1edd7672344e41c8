"""Real processes for the fault tests: gunicorn and `db_worker` run as a deployment runs them,
on a database the test shares with them, and killed with SIGKILL.

The processes cannot see SQLite's usual test database (it lives in this process's memory), so
`shared_database` copies it, migrated and empty, to a file and points this process at that file
for the test; on PostgreSQL it is the test database itself. Either way the test reads and
writes through the ORM as usual, and the processes get a DATABASE_URL for the same data.

Waits poll the database or the server for a state, with generous bounds: these tests share
two cores with the rest of the suite, and they are about what survives a crash, not about speed.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.db import connection

ROOT = Path(django_settings.BASE_DIR)
# Long enough for a process to start on a loaded machine: waits poll, so a fast run is not slowed.
PATIENCE_SECONDS = 240.0


@pytest.fixture
def shared_database(transactional_db, tmp_path):
    """A DATABASE_URL for processes that see what this test writes, and this test what they write."""
    if connection.vendor == "postgresql":
        db = connection.settings_dict
        _role_groups()
        yield f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
        return
    assert connection.vendor == "sqlite" and connection.is_in_memory_db()
    path = tmp_path / "shared.sqlite3"
    connection.ensure_connection()
    memory = connection.connection
    copy = sqlite3.connect(path)
    memory.backup(copy)  # the migrated, empty test database, in milliseconds
    copy.close()
    # The in-memory database lives as long as a connection holds it: keep this one aside and
    # give it back afterwards, so the tests that follow find it as it was.
    name = connection.settings_dict["NAME"]
    connection.connection = None
    connection.settings_dict["NAME"] = str(path)
    _role_groups()
    try:
        yield f"sqlite:///{path}"
    finally:
        connection.close()
        connection.settings_dict["NAME"] = name
        connection.connection = memory


def _role_groups() -> None:
    """The role groups the migration makes: an earlier transactional test's flush removed them."""
    from django.contrib.auth.models import Group

    from core.roles import Role

    for role in Role:
        Group.objects.get_or_create(name=role.value)


def process_env(database_url: str, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "DEBUG": "1",
        "DATABASE_URL": database_url,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        # A developer's local .env must not point the processes elsewhere.
        "USERBENCH_ENV_FILE": "",
        # As config/settings_test.py: the test servers are on loopback, and so are their fake keys.
        "LLM_ALLOWED_INTERNAL_HOSTS": ",".join(django_settings.LLM_ALLOWED_INTERNAL_HOSTS),
        "LLM_KEY_HOSTS": json.dumps(django_settings.LLM_KEY_HOSTS),
        **extra,
    }


def _start(command: list[str], database_url: str, name: str, **env: str) -> subprocess.Popen:
    # The log goes to a file, not a pipe: a pipe nobody reads fills up and blocks the process.
    log = tempfile.NamedTemporaryFile(prefix=f"{name}-", suffix=".log", delete=False)
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env=process_env(database_url, **env),
        stdout=log,
        stderr=subprocess.STDOUT,
        # Its own process group, so that SIGKILL reaches a server's workers too.
        start_new_session=True,
    )
    process.log_path = log.name
    return process


def start_worker(
    database_url: str, name: str, queue: str = "judging", *, namespace: str | None = None, **env: str
) -> subprocess.Popen:
    """`manage.py db_worker` on `queue`, as a deployment runs it (`env`: settings it reads), in
    network `namespace` when given (a host of its own, tests/nethosts.py)."""
    command = [sys.executable, "manage.py", "db_worker", "--queue-name", queue, "--interval", "0.1"]
    command += ["--no-startup-delay", "--no-reload", "--worker-id", name]
    if namespace is not None:
        command = ["ip", "netns", "exec", namespace, *command]
    return _start(command, database_url, f"worker-{name}", **env)


def start_command(database_url: str, arguments: list[str], name: str, **env: str) -> subprocess.Popen:
    """`manage.py <arguments>` as a researcher runs it (`env`: settings it reads)."""
    return _start([sys.executable, "manage.py", *arguments], database_url, f"command-{name}", **env)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_web_server(database_url: str, port: int, workers: int = 2, **env: str) -> subprocess.Popen:
    """gunicorn serving config.wsgi on a loopback port, as the README deploys it; `env` adds
    environment variables (settings) for the server."""
    gunicorn = str(Path(sys.executable).with_name("gunicorn"))
    command = [gunicorn, "config.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", str(workers)]
    command += ["--timeout", "120", "--graceful-timeout", "1"]
    return _start(command, database_url, f"gunicorn-{port}", **env)


def kill(process: subprocess.Popen) -> None:
    """SIGKILL the process and everything it started (its process group): no cleanup runs."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait(timeout=60)


def stop(process: subprocess.Popen) -> None:
    """End a process the test started, gently, then for sure."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=30)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            kill(process)


def wait_for(condition, *, timeout: float = PATIENCE_SECONDS, processes=(), what: str = "a condition"):
    """Poll `condition` until it is true; on timeout, fail with what the processes logged."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        for process in processes:
            if process.poll() is not None:
                raise AssertionError(f"{process.args[:3]} exited with {process.returncode}\n{log_tail(process)}")
        time.sleep(0.05)
    logs = "\n".join(log_tail(process) for process in processes)
    raise AssertionError(f"timed out waiting for {what}\n{logs}")


def log_tail(process: subprocess.Popen, size: int = 3000) -> str:
    return f"--- {process.log_path}:\n{Path(process.log_path).read_text(errors='replace')[-size:]}"
