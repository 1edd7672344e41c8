"""A generation through the provider's Batch API (`generate --batch`, the Batch choice of a
dataset's answers page, `"batch": true` in its API): the items its model has not answered go
to the provider as batches, and their replies come back through the live path's own steps (the
response cache, `answers_save`). The bookkeeping that makes a crash cost nothing twice is
judging/batching.py's.

A failed or expired line leaves its item without an answer, as a failed live call does; its
batch stays held until a resume settles it (`generation_batches_settle`), and the resume sends
those items again in a new batch. A worker runs a pass as the generation's task, queued again
every LLM_BATCH_POLL_SECONDS while batches are out; `generate --batch` runs passes in a loop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from django.db.models import F, Q
from django.utils import timezone

from judging.answers.generation import answers_save, generation_preset, generation_request
from judging.batching import BatchUnit, batch_pass, passes_until_done
from judging.dispatch import generation_batch_schedule
from judging.models import Answer, AnswerGeneration, BatchJob
from llm.calls import ChatRequest, Outcome
from llm.config import CallKind, max_tokens_for
from llm.errors import EndpointError
from llm.selectors import endpoint_row_config

# How many failure reasons a generation keeps for the page (each names its item).
MAX_ERRORS_KEPT = 10
GROUP = 500


class GenerationBatches:
    """A generation as judging/batching.py's owner."""

    # A failed item leaves no row: its collected batch holds it until a resume settles it.
    held_statuses: tuple[str, ...] = (*BatchJob.OPEN, BatchJob.Status.COLLECTED)

    def __init__(self, generation: AnswerGeneration):
        self.generation = generation
        # In the dataset's workspace, whose cache its replies go to.
        self.endpoint = endpoint_row_config(generation.endpoint, cache_workspace_id=generation.dataset.workspace_id)
        self.preset = generation_preset(generation.preset or None)
        asked = generation.max_tokens if generation.max_tokens is not None else self.preset.max_tokens
        self.max_tokens = max_tokens_for(CallKind.GENERATION, endpoint=self.endpoint, override=asked)
        self.use_cache = True
        self.label = f"generation-{generation.pk}"
        self.model = generation.model
        self.rows = AnswerGeneration.objects.filter(pk=generation.pk)

    def jobs(self):
        return BatchJob.objects.filter(generation_id=self.generation.pk)

    def job_fields(self) -> dict:
        return {"generation_id": self.generation.pk}

    def lock(self) -> bool:
        status, cancel = self.rows.select_for_update().values_list("status", "cancel_requested").get()
        return status == AnswerGeneration.Status.RUNNING and not cancel

    def sending(self) -> bool:
        return self.rows.filter(status=AnswerGeneration.Status.RUNNING, cancel_requested=False).exists()

    def cancelled(self) -> bool:
        return self.rows.filter(Q(cancel_requested=True) | Q(status=AnswerGeneration.Status.CANCELLED)).exists()

    def _request(self, item) -> ChatRequest:
        return generation_request(item, model_name=self.model.name, preset=self.preset, max_tokens=self.max_tokens)

    def pending(self, held: set[str]) -> Iterator[list[BatchUnit]]:
        items = self.generation.dataset.items.exclude(pk__in=Answer.objects.filter(model=self.model).values("item_id"))
        items = items.order_by("id")
        todo = [item for item in items if str(item.pk) not in held]
        for start in range(0, len(todo), GROUP):
            yield [BatchUnit(str(item.pk), self._request(item)) for item in todo[start : start + GROUP]]

    def _items(self, custom_ids):
        wanted = [int(key) for key in custom_ids if key.isdigit()]
        return self.generation.dataset.items.in_bulk(wanted)

    def rebuild(self, custom_ids: list[str]) -> dict[str, ChatRequest]:
        return {str(pk): self._request(item) for pk, item in self._items(custom_ids).items()}

    def save(self, outcomes: list[tuple[str, Outcome]]) -> None:
        items = self._items([key for key, _outcome in outcomes])
        counts: dict = {"failed": 0, "cut_off": 0, "errors": []}
        kept = answers_save(
            model=self.model,
            preset=self.preset,
            endpoint_name=self.endpoint.name,
            outcomes=[
                (items[int(key)], self._request(items[int(key)]), outcome)
                for key, outcome in outcomes
                if key.isdigit() and int(key) in items
            ],
            counts=counts,
        )
        self.rows.update(
            generated=F("generated") + kept,
            failed=F("failed") + counts["failed"],
            cut_off=F("cut_off") + counts["cut_off"],
            beat_at=timezone.now(),
        )
        if counts["errors"]:
            error = self.rows.values_list("error", flat=True).get()
            shown = [line for line in error.splitlines() if line][:MAX_ERRORS_KEPT]
            shown += counts["errors"][: max(0, MAX_ERRORS_KEPT - len(shown))]
            self.rows.update(error="\n".join(shown)[:2000])

    def stop(self, reason: str) -> None:
        self.rows.update(status=AnswerGeneration.Status.FAILED, error=reason[:2000], finished_at=timezone.now())


def generation_batch_pass(*, generation_id: int) -> str:
    """One pass over a batch generation: sends what is left, takes each batch a step, and ends
    the generation (finished, or cancelled) once no batch is out. Returns "waiting" while
    batches are out, else the generation's status."""
    generation = AnswerGeneration.objects.select_related("dataset", "model", "endpoint").get(pk=generation_id)
    rows = AnswerGeneration.objects.filter(pk=generation_id)
    try:
        owner = GenerationBatches(generation)
    except EndpointError as error:
        rows.update(status=AnswerGeneration.Status.FAILED, error=str(error)[:2000], finished_at=timezone.now())
        return AnswerGeneration.Status.FAILED
    report = batch_pass(owner)
    now = timezone.now()
    rows.update(beat_at=now)
    if report.open:
        return "waiting"
    ended = {"finished_at": now}
    rows.filter(status=AnswerGeneration.Status.RUNNING, cancel_requested=True).update(
        status=AnswerGeneration.Status.CANCELLED, **ended
    )
    rows.filter(status=AnswerGeneration.Status.RUNNING).update(status=AnswerGeneration.Status.FINISHED, **ended)
    return rows.values_list("status", flat=True).get()


def generation_batch_claim(*, generation_id: int) -> bool:
    """Whether a pass should run: a queued batch generation is marked running; a running one, or
    one stopped with batches still out (to cancel and collect them), goes on."""
    rows = AnswerGeneration.objects.filter(pk=generation_id, batch=True)
    if rows.filter(status=AnswerGeneration.Status.QUEUED, cancel_requested=False).update(
        status=AnswerGeneration.Status.RUNNING, beat_at=timezone.now()
    ):
        return True
    if rows.filter(status=AnswerGeneration.Status.RUNNING).exists():
        return True
    return BatchJob.objects.filter(generation_id=generation_id, status__in=BatchJob.OPEN).exists()


def generation_batch_execute(*, generation_id: int) -> str:
    """A worker's pass (the generation's task), queued again while batches are out."""
    if not generation_batch_claim(generation_id=generation_id):
        return "not queued"
    status = generation_batch_pass(generation_id=generation_id)
    if status == "waiting":
        generation_batch_schedule(generation_id=generation_id)
    return status


def generation_batches_settle(*, generation: AnswerGeneration) -> None:
    """A resume hands back the items the collected batches left without an answer."""
    BatchJob.objects.filter(generation=generation, status=BatchJob.Status.COLLECTED).update(
        status=BatchJob.Status.SETTLED
    )


def generation_batch_wait(*, generation: AnswerGeneration, on_progress: Callable[[], None] | None = None) -> str:
    """Passes from this process until no batch is out (`generate --batch`), every
    LLM_BATCH_POLL_SECONDS. Ctrl-C ends the waiting between two passes, never the batches: the
    same command picks them up. Returns the generation's status, or "interrupted"."""

    def one_pass() -> str:
        if generation_batch_claim(generation_id=generation.pk):
            return generation_batch_pass(generation_id=generation.pk)
        return AnswerGeneration.objects.values_list("status", flat=True).get(pk=generation.pk)

    return passes_until_done(one_pass, on_progress)
