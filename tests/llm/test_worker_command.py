"""`manage.py db_worker` is llm's: django-tasks-db's worker, which loads the LLM client as it
starts instead of inside the first judge run it takes."""

import subprocess
import sys

import pytest
from django.core.management import get_commands

from tests.processes import ROOT, process_env, shared_database  # noqa: F401 - a fixture

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]

# Runs the worker until its queue is empty (there is nothing on it), then tells whether the
# SDK was loaded: before the worker started it was not.
SCRIPT = """
import sys
import django
django.setup()
from django.core.management import call_command
before = "openai" in sys.modules
call_command("db_worker", "--batch", "--queue-name", "nothing-queued", "--no-startup-delay", "--no-reload")
print(before, "openai" in sys.modules)
"""


def test_manage_py_db_worker_is_the_worker_that_loads_the_llm_client():
    assert get_commands()["db_worker"] == "llm"


def test_a_worker_has_the_llm_client_loaded_before_its_first_task(shared_database):
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        env=process_env(shared_database),
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-2:] == ["False", "True"]
