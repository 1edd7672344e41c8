"""`manage.py db_worker`: django-tasks-db's worker, with the LLM client loaded before it polls,
and kept alive while its database is out of reach.

The openai SDK takes about a second to import. Loaded lazily, that second fell inside the
first task of a judge run, after its shard was claimed and before its first call: every run
a fresh worker took started a second late. A worker loads it once, as it starts.

django-tasks-db's worker exits on the first database error that is not a locked SQLite file:
PostgreSQL restarted, or a network partition between a worker host and the database, would
stop every worker for good, and a task whose end could not be recorded would stay "running".
Here the worker says so, drops its broken connections, waits and polls again, and records the
end of that task once the database answers.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from django.db import DatabaseError, close_old_connections, connections
from django_tasks_db.management.commands import db_worker as library_worker
from django_tasks_db.management.commands.db_worker import Command as DatabaseWorkerCommand
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult

from llm.sdk import load_sdk

logger = logging.getLogger("django_tasks_db")

# How long a worker whose database is out of reach waits before trying again (each attempt
# also waits DB_CONNECT_TIMEOUT for the connection).
RECONNECT_SECONDS = 1.0


class SteadfastWorker(Worker):
    """A worker that outlives its database's outages (a restart, a partition)."""

    def __init__(self, **options: Any):
        super().__init__(**options)
        # A task that ended while the database was away: its end is recorded once it is back.
        self.unrecorded: tuple[DBTaskResult, DatabaseError] | None = None

    def run(self) -> None:
        while True:
            try:
                self._record_unrecorded()
                super().run()
                return
            except DatabaseError as error:
                if not self.running:
                    raise
                logger.warning(
                    "Worker %s cannot reach its database (%s); trying again in %s s",
                    self.worker_id,
                    str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__,
                    RECONNECT_SECONDS,
                )
                _drop_connections()
                self.startup_delay = False
                time.sleep(RECONNECT_SECONDS)

    def run_task(self, db_task_result: DBTaskResult) -> None:
        try:
            super().run_task(db_task_result)
        except DatabaseError as error:
            # Recording the task's end failed: the database went away under it.
            self.unrecorded = (db_task_result, error)
            raise

    def _record_unrecorded(self) -> None:
        if self.unrecorded is None:
            return
        db_task_result, error = self.unrecorded
        close_old_connections()
        db_task_result.set_failed(error)
        self.unrecorded = None
        logger.warning("Task id=%s ended while the database was away: recorded as failed", db_task_result.id)


def _drop_connections() -> None:
    """Close every connection, broken ones included: the next query opens a new one."""
    for connection in connections.all(initialized_only=True):
        try:
            connection.close()
        except DatabaseError:
            connection.connection = None


class Command(DatabaseWorkerCommand):
    def handle(self, *args: Any, **options: Any) -> None:
        load_sdk()
        # The library's handle builds its module's `Worker` from the options it parsed; in this
        # process (one worker command) that is the steadfast worker, the rest is the library's.
        library_worker.Worker = SteadfastWorker  # type: ignore[misc]
        super().handle(*args, **options)
