"""`make run` leaves a checkout where manage.py needs no variable typed by hand, and production
still needs its SECRET_KEY from the real environment."""

import os
import signal
import socket
import subprocess
import sys
import time

from django.conf import settings

ROOT = settings.BASE_DIR
SETTINGS_VARIABLES = {"DEBUG", "SECRET_KEY", "DJANGO_SETTINGS_MODULE", "ALLOWED_HOSTS", "USERBENCH_DEMO"}
SHOW = "from django.conf import settings as s; print(s.DEBUG, s.SECRET_KEY, s.ALLOWED_HOSTS, s.DEMO_MODE)"


def manage(*args, env_file, **env):
    """manage.py in a fresh process with none of the settings variables but `env`."""
    clean = {k: v for k, v in os.environ.items() if k not in SETTINGS_VARIABLES}
    clean.update(env, USERBENCH_ENV_FILE=str(env_file))
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=120
    )


def write_env(tmp_path):
    target = tmp_path / ".env"
    result = subprocess.run(
        [str(ROOT / "scripts" / "write-local-env"), sys.executable, str(target)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return target


def test_make_run_writes_the_env_file_once_with_a_generated_key(tmp_path):
    target = write_env(tmp_path)
    first = target.read_text()
    lines = dict(line.split("=", 1) for line in first.splitlines() if line and not line.startswith("#"))
    assert lines["DEBUG"] == "1" and lines["USERBENCH_DEMO"] == "1"
    assert lines["ALLOWED_HOSTS"] == "localhost,127.0.0.1,[::1]"
    assert len(lines["SECRET_KEY"]) >= 60
    assert oct(target.stat().st_mode & 0o777) == "0o600"
    target.write_text(first + "OPENAI_MODEL=edited\n")
    write_env(tmp_path)  # a second `make run` keeps the file and the edit
    assert target.read_text() == first + "OPENAI_MODEL=edited\n"
    (tmp_path / "other").mkdir()
    assert write_env(tmp_path / "other").read_text() != first  # each checkout gets its own key


def test_manage_py_reads_the_env_file_with_no_variables_typed(tmp_path):
    target = write_env(tmp_path)
    key = next(line.split("=", 1)[1] for line in target.read_text().splitlines() if line.startswith("SECRET_KEY="))
    result = manage("shell", "--no-imports", "-c", SHOW, env_file=target)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", key, "['localhost',", "'127.0.0.1',", "'[::1]']", "True"]


def test_the_real_environment_wins_over_the_env_file(tmp_path):
    target = write_env(tmp_path)
    result = manage(
        "shell", "--no-imports", "-c", SHOW, env_file=target, SECRET_KEY="from-the-environment", ALLOWED_HOSTS="a.test"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[1:3] == ["from-the-environment", "['a.test']"]


def test_production_never_takes_its_secret_key_from_the_env_file(tmp_path):
    target = write_env(tmp_path)
    result = manage("check", env_file=target, DEBUG="0")
    assert result.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off." in result.stderr
    # Without the file, and without DEBUG, the same refusal.
    result = manage("check", env_file="")
    assert "SECRET_KEY must be set when DEBUG is off." in result.stderr


def test_env_file_is_git_ignored():
    result = subprocess.run(["git", "check-ignore", "-q", ".env"], cwd=ROOT)
    assert result.returncode == 0


FAKE_PYTHON = """#!{python}
# Stands in for `.venv/bin/python manage.py ...`: the worker idles; the web server binds its
# port only after a delay, as runserver does while it loads the project.
import http.server, os, sys, time
command = sys.argv[2]
if command == "runserver":
    host, port = sys.argv[3].rsplit(":", 1)
    time.sleep({delay})
    if {fail}:
        sys.exit(1)
    http.server.HTTPServer((host, int(port)), http.server.SimpleHTTPRequestHandler).serve_forever()
else:
    if os.environ.get("WORKER_PIDS"):
        with open(os.environ["WORKER_PIDS"], "a") as pids:
            pids.write(f"{{os.getpid()}}\\n")
    time.sleep(60)
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def serve_demo(tmp_path, *, delay: float, fail: bool = False, **env):
    fake = tmp_path / "python"
    fake.write_text(FAKE_PYTHON.format(python=sys.executable, delay=delay, fail=fail))
    fake.chmod(0o755)
    port = free_port()
    process = subprocess.Popen(
        [str(ROOT / "scripts" / "serve-demo"), str(fake)],
        cwd=ROOT,
        env={**os.environ, "HOST": "127.0.0.1", "PORT": str(port), "WAIT_SECONDS": "20", **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        # Ctrl-C reaches `make run` from a terminal. A suite started in the background by a script
        # (`.ci/run &`) inherits SIGINT ignored, and a shell cannot trap a signal ignored at its
        # start: the stop below then waited for the fake worker's minute of sleep.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    return process, port


def test_serving_line_appears_once_the_server_answers(tmp_path):
    process, port = serve_demo(tmp_path, delay=1.5)
    started = time.monotonic()
    try:
        line = process.stdout.readline()
        waited = time.monotonic() - started
        assert line == f"Userbench is serving on http://127.0.0.1:{port}/ with one worker. Ctrl-C stops both.\n"
        assert waited >= 1.0  # not printed while the server was still loading
        with socket.create_connection(("127.0.0.1", port), timeout=30):
            pass
    finally:
        process.send_signal(2)
        # A bound for a hang, not a measure: stopping took over 10 s on a 2-core machine at load 13.
        process.wait(timeout=60)
    assert process.returncode == 0


def test_a_server_that_never_answers_is_reported(tmp_path):
    process, port = serve_demo(tmp_path, delay=0.2, fail=True)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 1
    assert out == ""
    assert f"The web server stopped before it answered on 127.0.0.1:{port}" in err


def test_a_killed_worker_is_started_again_and_the_web_server_stays_up(tmp_path):
    pids = tmp_path / "worker-pids"
    process, port = serve_demo(tmp_path, delay=0.2, WORKER_PIDS=str(pids), RESTART_PAUSE_SECONDS="0")
    try:
        assert process.stdout.readline().startswith("Userbench is serving on")
        first = int(pids.read_text().split()[0])
        os.kill(first, signal.SIGKILL)  # as the OOM killer would
        # bash reports the killed job first ("... Killed ..."), then our line.
        lines = [process.stderr.readline(), process.stderr.readline()]
        assert "Killed" in lines[0]
        assert lines[1] == (
            "The background worker stopped (exit status 137); starting it again. Runs it held resume by themselves.\n"
        )
        # The web server still answers, and a second worker was started (the file's second line
        # is written by the new process itself once it runs).
        with socket.create_connection(("127.0.0.1", port), timeout=30):
            pass
        deadline = time.monotonic() + 60  # a bound for a hang, not a measure
        while len(pids.read_text().split()) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        second = int(pids.read_text().split()[1])
        assert second != first
        os.kill(second, 0)  # alive
    finally:
        process.send_signal(2)
        process.wait(timeout=60)
    assert process.returncode == 0
