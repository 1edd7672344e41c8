"""Set up Django for a benchmark: a throwaway database, migrated, unless DATABASE_URL is given.

Import this first in every benchmark script (`from bench._django import setup_django`).
"""

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The shared public data, read in place: next to the checkout, or where USERBENCH_SHARED_DATA says.
DATA = Path(os.environ.get("USERBENCH_SHARED_DATA") or ROOT.parent / "shared" / "data")


def setup_django() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DEBUG", "1")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    # The fake servers benchmarks call are on loopback, an internal address (llm/egress.py).
    os.environ.setdefault("LLM_ALLOWED_INTERNAL_HOSTS", "127.0.0.0/8,::1,localhost")
    if not os.environ.get("DATABASE_URL"):
        folder = tempfile.mkdtemp(prefix="userbench-bench-")
        os.environ["DATABASE_URL"] = f"sqlite:///{folder}/bench.sqlite3"
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
