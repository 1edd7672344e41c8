"""Generating candidate answers in the background: what a dataset's answers page and the API
start, follow, cancel and resume. The `generate` command runs the same service in the
foreground (judging/answers/generation.py, `answers_generate`).

A generation is a row (judging.models.AnswerGeneration) and a task on the `judging` queue
(judging/tasks.py). The answers are the state: each attempt asks only for the items its model
has not answered, so a cancel keeps what came back and a resume sends the rest; the response
cache means a prompt sent again is never paid twice.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from core.archiving import refuse_if_archived
from core.audit import AuditAction, audit_record
from curation.datasets.importers import checked_name
from curation.models import Dataset
from judging.answers.generation import GenerationError, answers_generate, cut_off_way_on, generation_preset
from judging.answers.generation_batch import generation_batch_execute, generation_batches_settle
from judging.dispatch import generation_enqueue
from judging.models import Answer, AnswerGeneration, CandidateModel, stale_after
from llm.batch import batch_api_check
from llm.errors import EndpointError
from llm.models import Endpoint
from llm.selectors import endpoint_row_config

# How many failure reasons a generation keeps for the page (each names its item).
MAX_ERRORS_SHOWN = 10


def generation_endpoint(generation: AnswerGeneration):
    """The generation's endpoint configuration (the default one when it names none);
    EndpointError when it cannot be used. Its replies go to the dataset's workspace's cache."""
    return endpoint_row_config(generation.endpoint, cache_workspace_id=generation.dataset.workspace_id)


def generation_is_stale(generation: AnswerGeneration) -> bool:
    """A running generation whose worker has not been heard of for JUDGING_STALE_SECONDS (a
    batch generation is looked at every LLM_BATCH_POLL_SECONDS: two of those more)."""
    beat = generation.beat_at or generation.created_at
    allowed = stale_after()
    if generation.batch:
        allowed += timedelta(seconds=2 * float(settings.LLM_BATCH_POLL_SECONDS))
    return generation.status == AnswerGeneration.Status.RUNNING and timezone.now() - beat > allowed


def generation_can_resume(generation: AnswerGeneration) -> bool:
    """Whether a resume would send something: a cancelled or failed generation, a finished one
    that left items without a complete answer, or a running one whose worker is gone."""
    if generation.status in (AnswerGeneration.Status.CANCELLED, AnswerGeneration.Status.FAILED):
        return True
    if generation.status == AnswerGeneration.Status.FINISHED:
        return bool(generation.failed or generation.cut_off)
    return generation_is_stale(generation)


def generation_create(
    *,
    dataset: Dataset,
    model_name: str,
    endpoint: Endpoint | None = None,
    preset: str = "",
    max_tokens: int | None = None,
    created_by=None,
    batch: bool = False,
) -> AnswerGeneration:
    """A queued generation of `model_name`'s answers to the dataset's items it has not answered.

    Raises GenerationError (nothing written) for an unknown preset, a model already being
    generated on this dataset, or a model that has answered every item; EndpointError for an
    endpoint that cannot be used, or (with `batch`: through the provider's Batch API) one that
    does not offer the Batch API, asked before anything is written. Audited. Call
    `generation_start` to also queue it. An archived dataset: ArchivedError."""
    refuse_if_archived(dataset)
    if batch:
        batch_api_check(endpoint_row_config(endpoint, cache_workspace_id=dataset.workspace_id))
    return _generation_write(
        dataset=dataset,
        model_name=model_name,
        endpoint=endpoint,
        preset=preset,
        max_tokens=max_tokens,
        created_by=created_by,
        batch=batch,
    )


@transaction.atomic
def _generation_write(*, dataset, model_name, endpoint, preset, max_tokens, created_by, batch) -> AnswerGeneration:
    name = checked_name(model_name.strip(), "model name", CandidateModel, "name") if model_name.strip() else ""
    if not name:
        raise GenerationError(_("Name the model whose answers to generate."))
    generation_preset(preset)
    endpoint_row_config(endpoint, cache_workspace_id=dataset.workspace_id)
    model, _created = CandidateModel.objects.get_or_create(name=name, workspace_id=dataset.workspace_id)
    if AnswerGeneration.objects.filter(dataset=dataset, model=model, status__in=AnswerGeneration.ACTIVE).exists():
        raise GenerationError(
            _("%(model)s is already being generated on %(dataset)s: wait for it or cancel it.")
            % {"model": name, "dataset": dataset.name}
        )
    left = dataset.items.exclude(pk__in=Answer.objects.filter(model=model).values("item_id")).count()
    if not left:
        raise GenerationError(
            _("%(model)s has answered every item of %(dataset)s.") % {"model": name, "dataset": dataset.name}
        )
    generation = AnswerGeneration.objects.create(
        dataset=dataset,
        model=model,
        endpoint=endpoint,
        preset=preset,
        max_tokens=max_tokens,
        total=left,
        created_by=created_by,
        batch=batch,
    )
    audit_record(
        actor=created_by,
        action=AuditAction.GENERATION_STARTED,
        target=f"dataset:{dataset.name}",
        workspace=dataset.workspace_id,
        details={
            "generation": generation.pk,
            "model": name,
            "endpoint": endpoint.name if endpoint else "default",
            "batch": batch,
        },
    )
    return generation


def generation_batch_open(
    *, dataset: Dataset, model_name: str, endpoint: Endpoint | None, preset: str = "", max_tokens: int | None = None
) -> tuple[AnswerGeneration, bool]:
    """The batch generation of this model on this dataset still at work (its batches are picked
    up, never uploaded again), or a new one (`generation_create` with `batch`); and whether it
    was made now. `generate --batch` waits on it."""
    found = (
        AnswerGeneration.objects.filter(
            dataset=dataset, model__name=model_name.strip(), batch=True, status__in=AnswerGeneration.ACTIVE
        )
        .order_by("-pk")
        .first()
    )
    if found is not None:
        return found, False
    made = generation_create(
        dataset=dataset, model_name=model_name, endpoint=endpoint, preset=preset, max_tokens=max_tokens, batch=True
    )
    return made, True


def generation_start(**kwargs) -> AnswerGeneration:
    """`generation_create`, then its task queued once the row is committed."""
    generation = generation_create(**kwargs)
    generation_enqueue(generation)
    return generation


@transaction.atomic
def generation_cancel(*, generation: AnswerGeneration, actor=None) -> AnswerGeneration:
    """Stop a queued or running generation: a queued one never starts, a running one stops
    sending within about a second; what came back is kept. Audited. GenerationError otherwise."""
    locked = AnswerGeneration.objects.select_for_update().get(pk=generation.pk)
    if locked.status not in AnswerGeneration.ACTIVE:
        raise GenerationError(
            _("Only a queued or running generation can be cancelled; this one is %(status)s.")
            % {"status": str(locked.get_status_display()).lower()}
        )
    changes: dict = {"cancel_requested": True}
    if locked.status == AnswerGeneration.Status.QUEUED or generation_is_stale(locked):
        changes.update(status=AnswerGeneration.Status.CANCELLED, finished_at=timezone.now())
    AnswerGeneration.objects.filter(pk=locked.pk).update(**changes)
    audit_record(
        actor=actor,
        action=AuditAction.GENERATION_CANCELLED,
        target=f"dataset:{locked.dataset.name}",
        details={"generation": locked.pk, "was": locked.status},
        workspace=locked.dataset.workspace_id,
    )
    generation.refresh_from_db()
    return generation


def generation_resume(*, generation: AnswerGeneration, actor=None) -> AnswerGeneration:
    """Queue the generation again for the items its model still has not answered (cancelled,
    failed, left unfinished, or abandoned by its worker). Audited. GenerationError when nothing
    is left to send or it is still at work; ArchivedError when its dataset is archived. (A cancel
    is never refused: stopping the calls changes nothing of the dataset but what stops arriving.)"""
    with transaction.atomic():
        locked = AnswerGeneration.objects.select_for_update().select_related("dataset").get(pk=generation.pk)
        refuse_if_archived(locked.dataset)
        if not generation_can_resume(locked):
            raise GenerationError(_("Nothing is left to resume: this generation is at work or has finished."))
        left = locked.dataset.items.exclude(
            pk__in=Answer.objects.filter(model_id=locked.model_id).values("item_id")
        ).count()
        if not left:
            raise GenerationError(_("Nothing is left to resume: every item has an answer."))
        if locked.batch:
            generation_batches_settle(generation=locked)
        AnswerGeneration.objects.filter(pk=locked.pk).update(
            status=AnswerGeneration.Status.QUEUED,
            cancel_requested=False,
            total=left,
            generated=0,
            failed=0,
            cut_off=0,
            error="",
            beat_at=None,
            finished_at=None,
        )
        audit_record(
            actor=actor,
            action=AuditAction.GENERATION_RESUMED,
            target=f"dataset:{locked.dataset.name}",
            details={"generation": locked.pk, "was": locked.status},
            workspace=locked.dataset.workspace_id,
        )
    generation.refresh_from_db()
    generation_enqueue(generation)
    return generation


def _claim(generation_id: int) -> AnswerGeneration | None:
    """The queued generation marked running, or None when it was cancelled or taken meanwhile."""
    claimed = AnswerGeneration.objects.filter(
        pk=generation_id, status=AnswerGeneration.Status.QUEUED, cancel_requested=False
    ).update(status=AnswerGeneration.Status.RUNNING, beat_at=timezone.now())
    if not claimed:
        return None
    return AnswerGeneration.objects.select_related("dataset", "model", "endpoint").get(pk=generation_id)


def generation_execute(*, generation_id: int) -> str:
    """A worker's run of one generation (the task judging/tasks.py queues): every item its
    model has not answered is asked for, answers are saved as they arrive and the counts with
    them; a cancel stops the calls within about a second. Returns the final status. A batch
    generation takes a pass over its batches instead (judging/answers/generation_batch.py)."""
    if AnswerGeneration.objects.filter(pk=generation_id, batch=True).exists():
        return generation_batch_execute(generation_id=generation_id)
    generation = _claim(generation_id)
    if generation is None:
        return "not queued"
    rows = AnswerGeneration.objects.filter(pk=generation.pk)
    try:
        endpoint = generation_endpoint(generation)
    except EndpointError as unusable:
        rows.update(status=AnswerGeneration.Status.FAILED, error=str(unusable)[:2000], finished_at=timezone.now())
        return AnswerGeneration.Status.FAILED

    def progress(counts: dict) -> None:
        rows.update(
            generated=counts["generated"], failed=counts["failed"], cut_off=counts["cut_off"], beat_at=timezone.now()
        )

    def cancelled() -> bool:
        rows.update(beat_at=timezone.now())
        return rows.filter(cancel_requested=True).exists()

    counts = answers_generate(
        dataset=generation.dataset,
        model_name=generation.model.name,
        endpoint=endpoint,
        max_tokens=generation.max_tokens,
        preset=generation.preset or None,
        on_progress=progress,
        should_stop=cancelled,
    )
    if counts["cancelled"] or rows.filter(cancel_requested=True).exists():
        status = AnswerGeneration.Status.CANCELLED
    elif counts["stopped"]:
        status = AnswerGeneration.Status.FAILED
    else:
        status = AnswerGeneration.Status.FINISHED
    reasons = counts["stopped"] or "\n".join(
        ([cut_off_way_on(counts["cut_off"], counts["cut_off_at"]) + "."] if counts["cut_off"] else [])
        + counts["errors"][:MAX_ERRORS_SHOWN]
    )
    rows.update(
        status=status,
        total=counts["total"],
        generated=counts["generated"],
        failed=counts["failed"],
        cut_off=counts["cut_off"],
        error=reasons[:2000],
        finished_at=timezone.now(),
        beat_at=timezone.now(),
    )
    return status
