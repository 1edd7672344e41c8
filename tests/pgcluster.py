"""A PostgreSQL cluster of a test's own (initdb + pg_ctl from the installed binaries), on its own
port and socket directory: a test may restart or stop it without touching the suite's server.

The binaries are found through `pg_config --bindir`, else the newest /usr/lib/postgresql/*/bin
(Debian's layout); the test is skipped, with the reason, when there are none. PostgreSQL refuses
to run as root: as root, the cluster belongs to the `postgres` user and its commands run as it."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest


def postgres_bindir() -> Path | None:
    candidates = []
    if shutil.which("pg_config"):
        found = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True)
        if found.returncode == 0:
            candidates.append(Path(found.stdout.strip()))
    versions = sorted(
        glob.glob("/usr/lib/postgresql/*/bin"), key=lambda path: int(Path(path).parent.name), reverse=True
    )
    candidates += [Path(path) for path in versions if Path(path).parent.name.isdigit()]
    for bindir in candidates:
        if (bindir / "initdb").is_file() and (bindir / "pg_ctl").is_file():
            return bindir
    return None


class Cluster:
    def __init__(self, bindir: Path, port: int):
        self.bindir = bindir
        self.port = port
        self.root = Path(tempfile.mkdtemp(prefix="ub-pgcluster-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.owner: str | None = None
        if os.geteuid() == 0:
            try:
                owner = pwd.getpwnam("postgres")
            except KeyError:
                pytest.skip("PostgreSQL will not run as root, and there is no 'postgres' user to run it as")
            self.owner = owner.pw_name
            os.chown(self.root, owner.pw_uid, owner.pw_gid)
        self.run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C")
        # Its own socket directory and loopback port: nothing is shared with another server.
        options = f"-p {port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        self.run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "-t", "120", "start")

    def run(self, program: str, *args: str) -> None:
        command = [str(self.bindir / program), *args]
        if self.owner is not None:
            command = ["runuser", "-u", self.owner, "--", *command]
        # Bounded: a server left holding the output pipe must fail the test, not hang it.
        done = subprocess.run(command, capture_output=True, text=True, cwd=self.root, timeout=180)
        assert done.returncode == 0, (command, done.stdout, done.stderr, self.log_tail())

    def restart(self) -> None:
        """A fast restart: sessions are ended at once, the server is back with the same options."""
        # The server's output goes to its log: left on pg_ctl's pipe, the pipe would never close.
        self.run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-m", "fast", "-w", "-t", "120", "restart")

    def url(self, name: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{name}"

    def log_tail(self, size: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-size:] if self.log.exists() else ""

    def close(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self.run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture
def private_cluster():
    """A running cluster of the test's own; skipped where PostgreSQL's binaries are missing."""
    from tests.processes import free_port

    bindir = postgres_bindir()
    if bindir is None:
        pytest.skip("no PostgreSQL binaries (initdb, pg_ctl) found by pg_config or in /usr/lib/postgresql/*/bin")
    cluster = Cluster(bindir, free_port())
    yield cluster
    cluster.close()
