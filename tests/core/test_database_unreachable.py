"""A web process that cannot reach its database answers 503 with Retry-After, after the connect
timeout set in settings, instead of holding the request until gunicorn kills the worker."""

from __future__ import annotations

import socket
import urllib.error
import urllib.request

import pytest
from django.db import OperationalError

from core.views import database_unreachable
from tests.processes import free_port, log_tail, start_web_server, stop, wait_for


class SilentDatabase:
    """A port that completes TCP's handshake (the kernel does, from the backlog) and then never
    says a word: a database host behind a partition, or a firewall that drops packets."""

    def __init__(self):
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(64)
        self.port = self.socket.getsockname()[1]

    def close(self):
        self.socket.close()


def get(url: str):
    try:
        with urllib.request.urlopen(url, timeout=100) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode()


@pytest.mark.processes
def test_a_web_process_that_cannot_reach_its_database_answers_503_not_a_hang():
    silent = SilentDatabase()
    port = free_port()
    # gunicorn's own timeout is 120 s here (tests/processes.py): a 503 must come from the connect
    # timeout, long before gunicorn would kill the worker and the client would see no answer.
    server = start_web_server(
        f"postgres://userbench@127.0.0.1:{silent.port}/userbench",
        port,
        workers=1,
        DB_CONNECT_TIMEOUT="1",
        # As deployed: DEBUG off (with it on, Django shows its debug page instead of the handler).
        DEBUG="0",
        SECRET_KEY="a-test-key-" + "x" * 40,
        ALLOWED_HOSTS="127.0.0.1",
        SECURE_SSL_REDIRECT="0",
    )
    try:
        wait_for(lambda: _answers(port), processes=[server], what="gunicorn to listen")
        status, headers, body = get(f"http://127.0.0.1:{port}/study/demo/")
        assert status == 503, log_tail(server)
        assert headers["Retry-After"] == "30"
        assert "The database cannot be reached. Nothing you sent was saved" in body
        assert "暂时无法连接数据库" in body
        # The worker was not killed: the same process answers again.
        assert get(f"http://127.0.0.1:{port}/api/")[0] == 503
        assert server.poll() is None
    finally:
        stop(server)
        silent.close()


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


class _Cause(Exception):
    def __init__(self, sqlstate):
        self.sqlstate = sqlstate


@pytest.mark.parametrize(
    ("sqlstate", "unreachable"),
    [(None, True), ("08006", True), ("57P01", True), ("40P01", False), ("40001", False)],
)
def test_only_a_lost_or_refused_connection_is_a_503(sqlstate, unreachable):
    # A deadlock (40P01) or a serialisation failure (40001) is the application's to fix: a 500.
    error = OperationalError("...")
    error.__cause__ = _Cause(sqlstate)
    assert database_unreachable(error) is unreachable
    assert database_unreachable(ValueError("not the database")) is False
