"""A web process on a host of its own (a network namespace with its own address), cut off from
PostgreSQL by a partition: its packets are dropped, the database never answers and never resets
the connection. It answers 503 once DB_NETWORK_TIMEOUT and DB_CONNECT_TIMEOUT have passed,
never hangs until gunicorn kills its worker, and serves again once the network is back."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.db import connection

from tests.nethosts import DB_LINK, HTTP_LINK, Forwarder, answers, net_host  # noqa: F401 - a fixture
from tests.processes import log_tail, process_env, shared_database, stop, wait_for  # noqa: F401 - a fixture

pytestmark = [
    pytest.mark.processes,
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="needs PostgreSQL (set DATABASE_URL): the partition is of its socket"
    ),
]


def get(url: str) -> int:
    # A token that matches none: looking it up reads the database, and the answer (401) needs no
    # template or static file (DEBUG is off and collectstatic has not run).
    request = urllib.request.Request(url, headers={"Authorization": "Token no-such-token"})
    try:
        with urllib.request.urlopen(request, timeout=100) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_a_web_process_cut_off_from_postgresql_answers_503_and_serves_again_after(shared_database, net_host):
    db = connection.settings_dict
    forwarder = Forwarder(int(db["PORT"] or 5432))
    port = 8731
    url = f"http://{HTTP_LINK[1]}:{port}/api/me/"
    env = process_env(
        f"postgres://{db['USER']}@{DB_LINK[0]}:{forwarder.port}/{db['NAME']}",
        DEBUG="0",
        SECRET_KEY="a-test-key-" + "x" * 40,
        ALLOWED_HOSTS=HTTP_LINK[1],
        SECURE_SSL_REDIRECT="0",
        DB_CONNECT_TIMEOUT="3",
        DB_NETWORK_TIMEOUT="2",
    )
    gunicorn = str(Path(sys.executable).with_name("gunicorn"))
    log = open(Path(os.environ.get("TMPDIR", "/tmp")) / f"partition-web-{port}.log", "w")  # noqa: SIM115
    # One sync worker with a persistent connection (DB_CONN_MAX_AGE): the connection that goes silent.
    server = subprocess.Popen(
        ["ip", "netns", "exec", net_host.namespace, gunicorn, "config.wsgi", "--bind", f"{HTTP_LINK[1]}:{port}"]
        + ["--workers", "1", "--timeout", "120"],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    server.log_path = log.name
    try:
        wait_for(lambda: answers(HTTP_LINK[1], port), processes=[server], what="gunicorn on the web host")
        # The database answers: no such token (a first connection on a loaded machine may take a while).
        wait_for(lambda: get(url) == 401, processes=[server], what="the web host to reach PostgreSQL")
        net_host.cut_database(True)
        # The open connection goes silent: its health check times out (DB_NETWORK_TIMEOUT), the
        # reconnect times out (DB_CONNECT_TIMEOUT), and the request is answered, not killed.
        assert get(url) == 503, log_tail(server)
        assert get(url) == 503
        assert server.poll() is None
        net_host.cut_database(False)
        # Back: the link comes up again (a first attempt may meet the old connection's end), and
        # the same worker serves from a new connection.
        wait_for(lambda: get(url) == 401, processes=[server], what="the web host to serve again")
        assert server.poll() is None
    finally:
        stop(server)
        forwarder.close()
