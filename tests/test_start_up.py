"""What every process loads as it starts (web workers, task workers, each `manage.py` command):
only what serving and judging need. SciPy (the leaderboards' fits) and drf-spectacular's
extension machinery (the API schema) cost about half a second of every start-up together,
`manage.py judge` included, where a researcher waits for it (bench/README.md, "Start-up")."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

LOADED_ON_USE = ["scipy", "scipy.special", "scipy.optimize", "scipy.stats", "drf_spectacular.plumbing"]


def modules_loaded_by_setup() -> set[str]:
    probe = "import json, sys, django; django.setup(); print(json.dumps(sorted(sys.modules)))"
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "1"}
    environment.pop("DATABASE_URL", None)
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=environment, capture_output=True, text=True, check=True
    )
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_starting_django_loads_neither_scipy_nor_the_schema_machinery():
    loaded = modules_loaded_by_setup()

    assert [name for name in LOADED_ON_USE if name in loaded] == []
    # The apps are all there: the benchmarks registered, the session authentication importable.
    assert {"judging.benchmarks.arena_hard", "core.auth", "annotation.models"} <= loaded
