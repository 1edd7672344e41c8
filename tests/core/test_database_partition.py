"""A web process on a host of its own (a network namespace with its own address), cut off from
PostgreSQL by a partition: its packets are dropped, the database never answers and never resets
the connection. It answers 503 once DB_NETWORK_TIMEOUT and DB_CONNECT_TIMEOUT have passed,
never hangs until gunicorn kills its worker, and serves again once the network is back."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.db import connection

from tests.processes import log_tail, process_env, shared_database, stop, wait_for  # noqa: F401 - a fixture

pytestmark = [
    pytest.mark.processes,
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="needs PostgreSQL (set DATABASE_URL): the partition is of its socket"
    ),
]

# Link-local addresses on the test's own veth pairs: the web host's database link and its HTTP link.
DB_LINK = ("169.254.77.1", "169.254.77.2")
HTTP_LINK = ("169.254.78.1", "169.254.78.2")


def ip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True)


class WebHost:
    """A network namespace joined to this host by two veth pairs (database, HTTP)."""

    def __init__(self):
        tag = str(os.getpid() % 100000)
        self.namespace = f"ubweb{tag}"
        self.db_link, self.http_link = f"ubd{tag}", f"ubh{tag}"
        made = ip("netns", "add", self.namespace)
        if made.returncode != 0:
            pytest.skip(f"network namespaces cannot be made here: {made.stderr.strip()}")
        for link, (host, guest) in ((self.db_link, DB_LINK), (self.http_link, HTTP_LINK)):
            for step in (
                ("link", "add", link, "type", "veth", "peer", "name", f"{link}p"),
                ("link", "set", f"{link}p", "netns", self.namespace),
                ("addr", "add", f"{host}/30", "dev", link),
                ("link", "set", link, "up"),
                ("-n", self.namespace, "addr", "add", f"{guest}/30", "dev", f"{link}p"),
                ("-n", self.namespace, "link", "set", f"{link}p", "up"),
            ):
                done = ip(*step)
                assert done.returncode == 0, (step, done.stderr)
        ip("-n", self.namespace, "link", "set", "lo", "up")

    def cut_database(self, cut: bool) -> None:
        """Drop every packet on the database link (no reset reaches either side), or let them pass."""
        done = ip("link", "set", self.db_link, "down" if cut else "up")
        assert done.returncode == 0, done.stderr

    def close(self) -> None:
        ip("link", "del", self.db_link)
        ip("link", "del", self.http_link)
        ip("netns", "del", self.namespace)


class Forwarder:
    """PostgreSQL (on loopback) offered on the database link's host address."""

    def __init__(self, target_port: int):
        self.listener = socket.create_server((DB_LINK[0], 0))
        self.port = self.listener.getsockname()[1]
        self.target_port = target_port
        self.sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            self.sockets += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pipe(source, sink):
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self):
        """Stop listening and end every connection (the one cut off by the partition still holds a
        PostgreSQL session)."""
        self.listener.close()
        for end in self.sockets:
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            end.close()


def get(url: str) -> int:
    # A token that matches none: looking it up reads the database, and the answer (401) needs no
    # template or static file (DEBUG is off and collectstatic has not run).
    request = urllib.request.Request(url, headers={"Authorization": "Token no-such-token"})
    try:
        with urllib.request.urlopen(request, timeout=100) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


@pytest.fixture
def web_host():
    if shutil.which("ip") is None or os.geteuid() != 0:
        pytest.skip("network namespaces need iproute2 and root")
    host = WebHost()
    yield host
    host.close()


def test_a_web_process_cut_off_from_postgresql_answers_503_and_serves_again_after(shared_database, web_host):
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
        DB_CONNECT_TIMEOUT="1",
        DB_NETWORK_TIMEOUT="2",
    )
    gunicorn = str(Path(sys.executable).with_name("gunicorn"))
    log = open(Path(os.environ.get("TMPDIR", "/tmp")) / f"partition-web-{port}.log", "w")  # noqa: SIM115
    # One sync worker with a persistent connection (DB_CONN_MAX_AGE): the connection that goes silent.
    server = subprocess.Popen(
        ["ip", "netns", "exec", web_host.namespace, gunicorn, "config.wsgi", "--bind", f"{HTTP_LINK[1]}:{port}"]
        + ["--workers", "1", "--timeout", "120"],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    server.log_path = log.name
    try:
        wait_for(lambda: _answers(HTTP_LINK[1], port), processes=[server], what="gunicorn on the web host")
        assert get(url) == 401, log_tail(server)  # the database answered: no such token
        web_host.cut_database(True)
        # The open connection goes silent: its health check times out (DB_NETWORK_TIMEOUT), the
        # reconnect times out (DB_CONNECT_TIMEOUT), and the request is answered, not killed.
        assert get(url) == 503, log_tail(server)
        assert get(url) == 503
        assert server.poll() is None
        web_host.cut_database(False)
        # Back: the link comes up again (a first attempt may meet the old connection's end), and
        # the same worker serves from a new connection.
        wait_for(lambda: get(url) == 401, processes=[server], what="the web host to serve again")
        assert server.poll() is None
    finally:
        stop(server)
        forwarder.close()


def _answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False
