"""Helpers of bench/bench_annotation_load.py: the throwaway PostgreSQL database, gunicorn, a
keep-alive HTTP connection, percentiles and the CPU time of processes (from /proc)."""

import os
import re
import signal
import subprocess
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent


def postgres_admin_url() -> str:
    return os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")


def database_url(name: str) -> str:
    parts = urlsplit(postgres_admin_url())
    return urlunsplit(parts._replace(path=f"/{name}"))


def admin(sql: str) -> None:
    import psycopg

    with psycopg.connect(postgres_admin_url(), autocommit=True, connect_timeout=5) as connection:
        connection.execute(sql)


def interpreter_speed_ms() -> float:
    """The best of five runs of a fixed pure-Python loop: a yardstick for comparing these
    figures across machines, as next-pair + vote is mostly Python time."""
    best = float("inf")
    for _ in range(5):
        began = time.perf_counter()
        total = 0
        for step in range(1_000_000):
            total += step * step
        best = min(best, time.perf_counter() - began)
    return best * 1000


def percentile(values, fraction):
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    position = fraction * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def start_gunicorn(env: dict, workers: int, threads: int):
    command = [str(ROOT / ".venv" / "bin" / "gunicorn"), "config.wsgi:application", "--bind", "127.0.0.1:0"]
    command += ["--workers", str(workers), "--threads", str(threads), "--log-level", "info"]
    command += ["--timeout", "30", "--graceful-timeout", "10"]
    # Longer than the think time: otherwise the server closes idle connections between votes
    # and a client reusing one just then sees it dropped.
    command += ["--keep-alive", "30"]
    process = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    stderr = process.stderr
    assert stderr is not None  # a pipe, as asked
    port = None
    lines: list[str] = []
    started = time.monotonic()
    while port is None:
        line = stderr.readline()
        if not line:
            raise RuntimeError("gunicorn stopped while starting:\n" + "".join(lines[-20:]))
        lines.append(line)
        found = re.search(r"Listening at: http://127\.0\.0\.1:(\d+)", line)
        if found:
            port = int(found.group(1))
        if time.monotonic() - started > 30:
            process.terminate()
            raise RuntimeError("gunicorn did not start within 30 s:\n" + "".join(lines[-20:]))
    # Keep reading its log so the pipe never fills and blocks it.
    threading.Thread(target=lambda: [None for _ in stderr], daemon=True).start()
    return process, f"http://127.0.0.1:{port}"


def wait_serving(base: str, patience: float = 120.0) -> float:
    """Wait until the server answers its log-in page (its workers import the app only after
    gunicorn says it listens: seconds on a busy machine); returns the seconds waited."""
    began = time.monotonic()
    while True:
        connection = Connection(base, timeout=patience)
        try:
            status, _content = connection.request("GET", "/accounts/login/")
        except OSError:
            status = None
        connection.http.close()
        if status == 200:
            return time.monotonic() - began
        if time.monotonic() - began > patience:
            raise RuntimeError(f"the server did not answer its log-in page within {patience:.0f} s (last: {status})")
        time.sleep(0.2)


def stop(process) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class Connection:
    """One keep-alive HTTP connection with the session's cookies sent by hand: they are marked
    Secure (DEBUG off), which a client rightly keeps off plain http, even on loopback."""

    def __init__(self, base: str, timeout: float):
        import http.client

        parts = urlsplit(base)
        self.http = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=timeout)
        self.cookies: dict[str, str] = {}
        self.reconnects = 0

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None):
        import http.client
        from http.cookies import SimpleCookie

        sent = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items()), **(headers or {})}
        try:
            self.http.request(method, path, body=body, headers=sent)
            response = self.http.getresponse()
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            # The server closed an idle keep-alive connection just as it was reused: send again on
            # a new one, as browsers do. Safe for votes too: a vote re-sent is stored once.
            self.reconnects += 1
            self.http.close()
            self.http.request(method, path, body=body, headers=sent)
            response = self.http.getresponse()
        content = response.read()
        for header in response.headers.get_all("Set-Cookie") or []:
            for name, morsel in SimpleCookie(header).items():
                self.cookies[name] = morsel.value
        return response.status, content


def cpu_seconds(pid: int, children: bool = True) -> float:
    """User plus system CPU seconds of a process (and, with `children`, of its live descendants),
    from /proc; 0 for a process that is gone."""
    total = 0.0
    ticks = os.sysconf("SC_CLK_TCK")
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / ticks
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return 0.0
    if children:
        for task in Path(f"/proc/{pid}/task").glob("*/children"):
            for child in task.read_text().split():
                total += cpu_seconds(int(child))
    return total


def machine_cpu_seconds() -> float:
    """CPU seconds spent by the whole machine (every core, idle and I/O wait excluded), from /proc/stat."""
    with open("/proc/stat") as stat:
        fields = [int(x) for x in stat.readline().split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")
