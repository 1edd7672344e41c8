"""Hosts of the project's own for the partition tests: a network namespace joined to this
machine by two veth pairs (one carrying its database traffic, one its HTTP), each pair with a
link-local address on either end, and a forwarder that offers a loopback service on this
machine's end of a link. Cutting the database link drops its packets: neither side hears a
reset, as in a real partition."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading

import pytest

# Link-local addresses on the test's own veth pairs: the web host's database link and its HTTP link.
DB_LINK = ("169.254.77.1", "169.254.77.2")
HTTP_LINK = ("169.254.78.1", "169.254.78.2")


# The settings a partition's workers run with (tests/judging/test_worker_partition.py and
# bench/bench_partition.py): the provider is on this machine's end of the HTTP link, and a
# deployment's 30 s of heartbeat staleness is scaled down so that the other worker takes the
# shards over sooner and the cut-off worker's budget slots come back sooner. Its hold on new calls
# is then at most a third of that (2 s); the bound on calls between two answers of the database
# holds whatever the times.
PARTITION_SETTINGS = {
    "LLM_ALLOWED_INTERNAL_HOSTS": f"127.0.0.0/8,::1,localhost,{HTTP_LINK[0]}/32",
    "JUDGING_STALE_SECONDS": "6",
    "JUDGING_HEARTBEAT_SECONDS": "1",
    "LLM_BUDGET_LEASE_SECONDS": "4",
    "DB_CONNECT_TIMEOUT": "3",
    "DB_NETWORK_TIMEOUT": "3",
}


def ip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True)


class NetHost:
    """A network namespace joined to this machine by two veth pairs (database, HTTP)."""

    def __init__(self):
        tag = str(os.getpid() % 100000)
        self.namespace = f"ubhost{tag}"
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
    """A loopback service (PostgreSQL, an LLM server) offered on `host`, this machine's end of a link."""

    def __init__(self, target_port: int, host: str = DB_LINK[0]):
        self.listener = socket.create_server((host, 0))
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
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=10)
            except OSError:
                client.close()  # the service itself is down: the client hears it at once
                continue
            upstream.settimeout(None)
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


@pytest.fixture
def net_host():
    """A host of the test's own; skipped where namespaces cannot be made (not root, no iproute2)."""
    if shutil.which("ip") is None or os.geteuid() != 0:
        pytest.skip("network namespaces need iproute2 and root")
    host = NetHost()
    yield host
    host.close()


def answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False
