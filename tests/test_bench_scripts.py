"""Every script in bench/ still imports: a module moved or renamed in the project breaks a
benchmark nobody runs in `make test`, so each is imported here without running its `main`.

A script sets Django up at import time (`bench._django.setup_django`: a throwaway database,
migrated). The test session has Django set up already, so that step is replaced by nothing, and
no database is touched. Imports inside a script's functions (the scripts that set Django up in
`main`) are checked by resolving each one: the module is found and every imported name exists.

The stress scenario of bench_annotation_load.py, with its processes (gunicorn, workers, an LLM
server, the judge command), also runs once end to end at a tiny size, on PostgreSQL.
"""

import ast
import importlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import bench._django

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted((ROOT / "bench").glob("bench_*.py"))


def _imports_unresolved(path: Path) -> list[str]:
    """`file:line: what` for each import in the script (at any depth) that does not resolve."""
    missing = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            wanted = [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module != "__future__":
            wanted = [(node.module, alias.name) for alias in node.names]
        else:
            continue
        for module_name, name in wanted:
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            try:
                module = importlib.import_module(module_name)
            except ImportError as error:
                missing.append(f"{where}: {module_name} ({error})")
                continue
            if name is None or name == "*" or hasattr(module, name):
                continue
            if importlib.util.find_spec(f"{module_name}.{name}") is None:
                missing.append(f"{where}: {name} from {module_name}")
    return missing


def test_there_are_bench_scripts():
    assert len(SCRIPTS) >= 10, SCRIPTS


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda path: path.name)
def test_a_bench_script_imports(path, monkeypatch):
    monkeypatch.setattr(bench._django, "setup_django", lambda: None)
    importlib.import_module(f"bench.{path.stem}")
    assert _imports_unresolved(path) == []


def _postgres_reachable() -> bool:
    import psycopg

    from bench._annotation_load_helpers import postgres_admin_url

    try:
        with psycopg.connect(postgres_admin_url(), connect_timeout=5):
            return True
    except psycopg.Error:
        return False


@pytest.mark.processes
def test_the_stress_scenario_runs_end_to_end_at_a_tiny_size_with_a_judge_run_beside():
    """bench_annotation_load.py --scenario stress, tiny (its figures mean nothing here, and none
    is checked): the adaptive run with everything beside it goes through gunicorn, the workers and a judge run beside the
    researchers, lose and double no vote, keep every counter right, and the judge runs, alone and
    beside, judge exactly their calls; the throwaway database is dropped."""
    if not _postgres_reachable():
        pytest.skip("the stress scenario needs PostgreSQL (BENCH_POSTGRES_URL)")
    command = [sys.executable, "bench/bench_annotation_load.py", "--scenario", "stress", "--seconds", "6"]
    command += ["--annotators", "4", "--questions", "6", "--models", "3", "--votes-per-pair", "2"]
    command += ["--researchers", "1", "--client-processes", "1", "--workers", "2", "--db-workers", "2"]
    command += ["--judge-calls", "12", "--judge-latency", "0.01", "--judge-concurrency", "4"]
    # One run of the four (the adaptive one, with everything beside it): the same code paths in a
    # quarter of the time.
    command += ["--sampling", "adaptive", "--crowd-with-researchers-only"]
    # A developer's local .env must not point the benchmark elsewhere.
    done = subprocess.run(
        command, cwd=ROOT, env={**os.environ, "USERBENCH_ENV_FILE": ""}, capture_output=True, text=True, timeout=1200
    )
    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-3000:]
    checks = re.findall(r"lost (\d+), doubled (\d+), stored unconfirmed \d+ .*; counters wrong: (\d+);", out)
    assert checks == [("0", "0", "0")], out[-3000:]
    judged = re.findall(r"(beside|alone): (\w+), (\d+) of (\d+) calls judged, (\d+) judgments stored", out)
    assert judged == [(side, "finished", "12", "12", "12") for side in ("beside", "alone")], out[-3000:]
    summary = out.split("\nsummary")[1]
    assert summary.count("exactly its calls") == 1 and "NOT exactly" not in summary, summary
    assert re.search(r"database ub_bench_annotation_\d+ dropped", out)
