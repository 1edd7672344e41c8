"""A judge run through the provider's Batch API (`judge --batch`, the Batch choice of
`/runs/new/`, `"batch": true` in `POST /api/runs/`): its units go to the provider as batches
instead of live calls, and come back through the live path's own steps (the response cache,
`judgment_for`, the run's running counts), so a batched reply is parsed, cut off and counted as a
live one. The bookkeeping that makes a crash cost nothing twice is judging/batching.py's.

A batch run makes no live call and holds no shard: its shards stay queued while it waits and are
closed with the run. A pass (`run_batch_pass`) sends what has no result and is in no batch yet,
takes each open batch a step, and closes the run once every unit has a result; workers run it as
a task, queued again every LLM_BATCH_POLL_SECONDS while batches are out (`batch_poll_schedule`),
and `judge --batch --inline` runs it in a loop (`run_batch_inline`). Failed or expired lines are
failed calls, which `judge_resume` sends again: in a new batch, or live with `--live`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from django.db import transaction
from django.utils import timezone

from judging.batching import BatchUnit, batch_pass, passes_until_done
from judging.dispatch import batch_poll_schedule
from judging.engine.execution import (
    Unit,
    endpoint_for_run,
    judgment_for,
    judgments_save,
    unit_request,
    units_plan,
)
from judging.engine.queue import run_close_if_idle, run_stop
from judging.models import BatchJob, JudgeRun, JudgeShard
from llm.calls import ChatRequest, Outcome
from llm.config import CallKind, endpoint_signature, max_tokens_for
from llm.errors import EndpointError


def custom_id(unit) -> str:
    """A run's unit as a batch line names it: item, model and order."""
    item_id, model_id, order = (unit.item_id, unit.model_id, unit.order) if isinstance(unit, Unit) else unit
    return f"{item_id}:{model_id}:{order}"


def unit_of(custom: str) -> tuple[int, int, int] | None:
    """The (item, model, order) a custom id names, or None when it names none."""
    parts = custom.split(":")
    if len(parts) != 3 or not all(part.isdigit() for part in parts):
        return None
    item_id, model_id, order = (int(part) for part in parts)
    return item_id, model_id, order


class RunBatches:
    """A judge run as judging/batching.py's owner."""

    held_statuses: tuple[str, ...] = tuple(BatchJob.OPEN)

    def __init__(self, run: JudgeRun):
        self.run = run
        self.endpoint = endpoint_for_run(run)
        self.max_tokens = max_tokens_for(CallKind.JUDGING, endpoint=self.endpoint, override=run.max_tokens)
        self.signature = endpoint_signature(self.endpoint, run.judge_model, self.max_tokens)
        self.use_cache = not run.fresh_calls
        self.label = f"run-{run.pk}"
        self._units: dict[str, Unit] = {}

    def jobs(self):
        return BatchJob.objects.filter(run_id=self.run.pk)

    def job_fields(self) -> dict:
        return {"run_id": self.run.pk}

    def _status(self) -> str:
        return JudgeRun.objects.values_list("status", flat=True).get(pk=self.run.pk)

    def lock(self) -> bool:
        status, batch = JudgeRun.objects.select_for_update().values_list("status", "batch").get(pk=self.run.pk)
        return status == JudgeRun.Status.RUNNING and batch

    def sending(self) -> bool:
        return self._status() == JudgeRun.Status.RUNNING

    def cancelled(self) -> bool:
        return self._status() == JudgeRun.Status.CANCELLED

    def pending(self, held: set[str]) -> Iterator[list[BatchUnit]]:
        done = set(self.run.judgments.values_list("item_id", "model_id", "order"))
        for units in self.run.shards.order_by("index").values_list("units", flat=True):
            todo = [tuple(unit) for unit in units if tuple(unit) not in done and custom_id(unit) not in held]
            yield [
                BatchUnit(custom_id(unit), unit_request(self.run, unit, max_tokens=self.max_tokens))
                for unit in units_plan(self.run, todo)
            ]

    def rebuild(self, custom_ids: list[str]) -> dict[str, ChatRequest]:
        triples = [unit for unit in map(unit_of, custom_ids) if unit is not None]
        self._units = {custom_id(unit): unit for unit in units_plan(self.run, triples)}
        return {key: unit_request(self.run, unit, max_tokens=self.max_tokens) for key, unit in self._units.items()}

    def save(self, outcomes: list[tuple[str, Outcome]]) -> None:
        wanted = [key for key, _outcome in outcomes if key not in self._units]
        if wanted:
            triples = [unit for unit in map(unit_of, wanted) if unit is not None]
            self._units.update({custom_id(unit): unit for unit in units_plan(self.run, triples)})
        judgments = [
            judgment_for(self.run, self._units[key], outcome, max_tokens=self.max_tokens, signature=self.signature)
            for key, outcome in outcomes
            if key in self._units
        ]
        judgments_save(run_id=self.run.pk, judgments=judgments)

    def stop(self, reason: str) -> None:
        run_stop(run_id=self.run.pk, error=reason)


def run_batch_pass(*, run_id: int) -> str:
    """One pass over a batch run (see the module's docstring). Returns "waiting" while batches
    are out, else the run's status."""
    run = JudgeRun.objects.select_related("dataset", "endpoint").get(pk=run_id)
    try:
        owner = RunBatches(run)
    except EndpointError as error:
        run_stop(run_id=run.pk, error=str(error))
        return JudgeRun.Status.FAILED
    report = batch_pass(owner)
    if report.open:
        return "waiting"
    if _nothing_left(run):
        with transaction.atomic():
            # Every unit has a result: the shards that never ran live close with the run.
            JudgeShard.objects.filter(run_id=run.pk).exclude(status=JudgeShard.Status.DONE).update(
                status=JudgeShard.Status.DONE, finished_at=timezone.now()
            )
            run_close_if_idle(run=run)
    return JudgeRun.objects.values_list("status", flat=True).get(pk=run.pk)


def _nothing_left(run: JudgeRun) -> bool:
    status = JudgeRun.objects.values_list("status", flat=True).get(pk=run.pk)
    if status != JudgeRun.Status.RUNNING:
        return False
    done = set(run.judgments.values_list("item_id", "model_id", "order"))
    return all(tuple(unit) in done for units in run.shards.values_list("units", flat=True) for unit in units)


def run_batch_execute(*, run_id: int) -> str:
    """A worker's pass (the task judging/tasks.py queues): one pass, then another queued for
    LLM_BATCH_POLL_SECONDS later while batches are out."""
    status = run_batch_pass(run_id=run_id)
    if status == "waiting":
        batch_poll_schedule(run_id=run_id)
    return status


def run_batch_inline(*, run: JudgeRun, on_progress: Callable[[], None] | None = None) -> str:
    """Send the run's batches from this process and wait for them, a pass every
    LLM_BATCH_POLL_SECONDS (`judge --batch --inline`, `judge_resume --inline`). Ctrl-C stops the
    waiting, never the batches: they stay at the provider, and `judge_resume` picks them up.
    Returns the run's status, or "interrupted"."""
    JudgeRun.objects.filter(pk=run.pk, status__in=[JudgeRun.Status.PENDING, JudgeRun.Status.FAILED]).update(
        status=JudgeRun.Status.RUNNING, finished_at=None, error=""
    )
    return passes_until_done(lambda: run_batch_pass(run_id=run.pk), on_progress)
