"""`manage.py db_worker`: django-tasks-db's worker, with the LLM client loaded before it polls.

The openai SDK takes about a second to import. Loaded lazily, that second fell inside the
first task of a judge run, after its shard was claimed and before its first call: every run
a fresh worker took started a second late. A worker loads it once, as it starts.
"""

from typing import Any

from django_tasks_db.management.commands.db_worker import Command as DatabaseWorkerCommand

from llm.sdk import load_sdk


class Command(DatabaseWorkerCommand):
    # Every option passes through to the worker's own handle, whose signature lists them.
    def handle(self, *args: Any, **options: Any) -> None:  # type: ignore[override]
        load_sdk()
        return super().handle(*args, **options)
