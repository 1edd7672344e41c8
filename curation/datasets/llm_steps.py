"""Background LLM steps of curation: reference drafting and translation with localisation.

State lives in our own rows (ReferenceDraft, Translation): each result is stored as it
arrives, a rerun only sends what is still pending, finished items are never sent again, and
llm.cache's response cache means an identical prompt is never paid twice. A job that failed
can be started again (`curation_job_restart`), on another endpoint if its own is down: only
its failed rows are sent again. Every call has a
max_tokens (reference drafting's or translation's default, the endpoint's, or the command's);
a reply cut off by it is never stored as a draft or a translation: its row fails at once with
the reason (sending the same request again would get the same reply from the cache).
"""

import time
from dataclasses import replace

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from core.errors import UserbenchError
from curation.datasets.llm_prompts import clean_reply, localise_request, reference_request, translate_request
from curation.datasets.llm_results import reference_draft_store, reference_redraft_failed, translation_store
from curation.datasets.services import VersionError, dataset_check_working
from curation.models import (
    CurationJob,
    Dataset,
    Item,
    ReferenceDraft,
    ReviewQueue,
    ReviewTask,
    StepStatus,
    Translation,
)
from llm.config import CallKind, max_tokens_for
from llm.delivery import deliver_chunked_sync
from llm.errors import EndpointError, LLMCallError
from llm.selectors import endpoint_config
from llm.stream import window_for

# A row that failed this many times for good is marked failed; restarting its job retries it.
MAX_ATTEMPTS = 3
# The reason a row gets when its reply was cut off by max_tokens (counted by `job_cut_off_count`).
CUT_OFF = "cut off at max_tokens"


class CurationJobError(UserbenchError):
    """A curation job that cannot be started again as asked; nothing was changed."""


def _previous_drafts(job: CurationJob, rows) -> dict[int, str]:
    """The latest finished draft of each row's item from an earlier job: item id -> text."""
    found = (
        ReferenceDraft.objects.filter(item_id__in=[row.item_id for row in rows], status=StepStatus.DONE)
        .exclude(job=job)
        .order_by("item_id", "finished_at", "id")
        .values_list("item_id", "text")
    )
    return dict(found)  # later rows win: the latest draft of each item


def curation_model_for(*, kind: str, chosen: str = "", endpoint_name: str = "", workspace_id: int | None = None) -> str:
    """The model a curation step sends: the one chosen on the form or command line, else the
    setting for that step (CURATION_REFERENCE_MODEL, CURATION_TRANSLATION_MODEL, empty unless set),
    else the endpoint's own default model (OPENAI_MODEL for the default endpoint). VersionError
    when none is known, so that no job starts with a model the endpoint may not serve."""
    setting = (
        settings.CURATION_REFERENCE_MODEL if kind == CurationJob.Kind.REFERENCE else settings.CURATION_TRANSLATION_MODEL
    )
    model = (chosen or "").strip() or setting.strip()
    if model:
        return model
    try:
        model = endpoint_config(endpoint_name or None, workspace_id=workspace_id).default_model.strip()
    except EndpointError:
        model = ""
    if not model:
        raise VersionError(
            _(
                "No model to send: name one, or give the endpoint a default model (OPENAI_MODEL for the "
                "default endpoint)."
            )
        )
    return model


def curation_model_or_none(*, kind: str, endpoint_name: str = "", workspace_id: int | None = None) -> str | None:
    """curation_model_for with nothing chosen, or None when no model is known (for the page)."""
    try:
        return curation_model_for(kind=kind, endpoint_name=endpoint_name, workspace_id=workspace_id)
    except VersionError:
        return None


@transaction.atomic
def reference_job_create(
    *, dataset: Dataset, model: str = "", endpoint_name: str = "", created_by=None, items=None, reopen: bool = False
) -> CurationJob:
    """A reference-drafting job over the given items, or every item of a working dataset that
    has no reference and no draft in progress. `reopen` drafts again items that have one.
    `model` empty: see curation_model_for; the job records the model it sends."""
    dataset_check_working(dataset=dataset)
    if items is None:
        items = dataset.items.filter(excluded=False, reference="")
        if not reopen:
            items = items.exclude(reference_drafts__status__in=[StepStatus.PENDING, StepStatus.DONE])
    items = list(items)
    if not items:
        raise VersionError(_("No item needs a reference draft."))
    model = curation_model_for(
        kind=CurationJob.Kind.REFERENCE, chosen=model, endpoint_name=endpoint_name, workspace_id=dataset.workspace_id
    )
    job = CurationJob.objects.create(
        kind=CurationJob.Kind.REFERENCE,
        dataset=dataset,
        model=model,
        endpoint_name=endpoint_name,
        total=len(items),
        created_by=created_by,
    )
    ReferenceDraft.objects.bulk_create([ReferenceDraft(job=job, item=item, language=item.language) for item in items])
    return job


@transaction.atomic
def translation_job_create(
    *, dataset: Dataset, model: str = "", endpoint_name: str = "", created_by=None
) -> CurationJob:
    """A translation job over the English items of a working dataset not yet translated.
    `model` empty: see curation_model_for; the job records the model it sends."""
    dataset_check_working(dataset=dataset)
    items = list(
        dataset.items.filter(excluded=False, language="en").exclude(
            translations__status__in=[StepStatus.PENDING, StepStatus.TRANSLATED, StepStatus.DONE]
        )
    )
    if not items:
        raise VersionError(_("No English item needs translating."))
    model = curation_model_for(
        kind=CurationJob.Kind.TRANSLATION, chosen=model, endpoint_name=endpoint_name, workspace_id=dataset.workspace_id
    )
    job = CurationJob.objects.create(
        kind=CurationJob.Kind.TRANSLATION,
        dataset=dataset,
        model=model,
        endpoint_name=endpoint_name,
        total=len(items),
        created_by=created_by,
    )
    Translation.objects.bulk_create([Translation(job=job, item=item, source_text=item.question) for item in items])
    return job


def _enqueue(job: CurationJob) -> CurationJob:
    # The service <-> task loop of a queued app: curation/tasks.py runs the jobs made here.
    from curation.tasks import curation_job_task

    # After commit: the worker must find the job's rows.
    transaction.on_commit(lambda: curation_job_task.enqueue(job.pk))
    return job


def reference_job_enqueue(**kwargs) -> CurationJob:
    """Create a reference job and start it on the `default` queue once the transaction commits."""
    return _enqueue(reference_job_create(**kwargs))


def translation_job_enqueue(**kwargs) -> CurationJob:
    """Create a translation job and start it on the `default` queue once the transaction commits."""
    return _enqueue(translation_job_create(**kwargs))


def _still_wanted(rows: list, job: CurationJob, now) -> list:
    """The failed rows whose items still wait for what they were to make, in three queries
    however many rows. An item another job took over since (one still at work on it, or one that
    finished it after the row was made: a later "draft again", a new translation job) is left to
    that job; an item a reviewer has since written a reference for, or is correcting right now,
    is left to them."""
    if not rows:
        return []
    item_ids = {row.item_id for row in rows}
    in_progress = [StepStatus.PENDING, StepStatus.TRANSLATED]
    others: dict[int, list[tuple[str, int]]] = {}
    for item_id, status, pk in (
        type(rows[0])
        .objects.filter(item_id__in=item_ids, status__in=[*in_progress, StepStatus.DONE])
        .exclude(job=job)
        .values_list("item_id", "status", "pk")
    ):
        others.setdefault(item_id, []).append((status, pk))
    held = set()
    if job.kind == CurationJob.Kind.REFERENCE:
        held = set(
            ReviewTask.objects.filter(
                queue=ReviewQueue.REFERENCE, item_id__in=item_ids, leased_to__isnull=False, lease_expires_at__gt=now
            ).values_list("item_id", flat=True)
        )

    def wanted(row) -> bool:
        item = row.item
        superseded = any(
            status in in_progress or (status == StepStatus.DONE and pk > row.pk)
            for status, pk in others.get(row.item_id, ())
        )
        if item.excluded or superseded:
            return False
        if job.kind == CurationJob.Kind.TRANSLATION:
            return item.language == "en"
        return not item.reference and item.pk not in held

    return [row for row in rows if wanted(row)]


@transaction.atomic
def curation_job_restart(*, job_id: int, endpoint_name: str | None = None) -> tuple[CurationJob, int]:
    """Make a failed job ready to run again, on `endpoint_name` if given ("" is the default
    endpoint): its rows that failed go back to pending, with their attempts counted afresh.
    What succeeded stays as it is and is not sent again; a translation whose first step
    succeeded only sends its second. Items with a new owner meanwhile (a reviewer's reference,
    another job) are not sent again. Returns the job and how many rows will be sent.

    Raises CurationJobError when the job is not failed or nothing needs sending again, and
    EndpointError when the endpoint cannot be used; nothing is changed then."""
    job = CurationJob.objects.select_for_update().select_related("dataset").filter(pk=job_id).first()
    if job is None:
        raise CurationJobError(_("There is no curation job %(job)s.") % {"job": job_id})
    if job.status != CurationJob.Status.FAILED:
        raise CurationJobError(
            _("Job %(job)s is %(status)s: only a failed job can be started again.")
            % {"job": job.pk, "status": job.get_status_display().lower()}
        )
    dataset_check_working(dataset=job.dataset)
    if endpoint_name is not None:
        job.endpoint_name = endpoint_name.strip()
    # Checked before anything changes: a restart on an endpoint that cannot be used would only fail again.
    endpoint_config(job.endpoint_name or None, workspace_id=job.dataset.workspace_id)
    now = timezone.now()
    rows = list(
        _rows_of(job)
        .filter(status__in=[StepStatus.FAILED, StepStatus.PENDING, StepStatus.TRANSLATED])
        .select_related("item")
        .order_by("pk")
    )
    wanted = _still_wanted(rows, job, now)
    if not wanted:
        raise CurationJobError(
            _(
                "Nothing of job %(job)s needs sending again: its failed items have been written or "
                "drafted since, or left the dataset."
            )
            % {"job": job.pk}
        )
    for row in wanted:
        if isinstance(row, Translation) and row.translation:
            row.status = StepStatus.TRANSLATED
        else:
            row.status = StepStatus.PENDING
        row.attempts = 0
        row.error = ""
    type(wanted[0]).objects.bulk_update(wanted, ["status", "attempts", "error"])
    if job.kind == CurationJob.Kind.REFERENCE:
        # Back to "waiting for a new draft": the queues page lists them as such, and no reviewer
        # takes an item whose draft is on its way.
        ReviewTask.objects.filter(
            Q(leased_to__isnull=True) | Q(lease_expires_at__lte=now),
            queue=ReviewQueue.REFERENCE,
            item_id__in=[row.item_id for row in wanted],
            status=ReviewTask.Status.OPEN,
        ).update(status=ReviewTask.Status.WAITING, leased_to=None, lease_expires_at=None)
    job.status = CurationJob.Status.PENDING
    job.failed = _rows_of(job).filter(status=StepStatus.FAILED).count()
    job.last_error = ""
    job.finished_at = None
    job.save(update_fields=["endpoint_name", "status", "failed", "last_error", "finished_at"])
    return job, len(wanted)


def curation_job_endpoint_set(*, job_id: int, endpoint_name: str) -> CurationJob:
    """Point an unfinished job at another endpoint ("" is the default one), for the rows it has
    not sent yet. Raises EndpointError, changing nothing, when that endpoint cannot be used."""
    endpoint_name = endpoint_name.strip()
    job = CurationJob.objects.select_related("dataset").get(pk=job_id)
    endpoint_config(endpoint_name or None, workspace_id=job.dataset.workspace_id)
    CurationJob.objects.filter(pk=job_id).update(endpoint_name=endpoint_name)
    return CurationJob.objects.get(pk=job_id)


def curation_job_restart_enqueue(**kwargs) -> tuple[CurationJob, int]:
    """Restart a failed job and start it on the `default` queue once the transaction commits."""
    job, count = curation_job_restart(**kwargs)
    return _enqueue(job), count


def _fail(row, reason: str, *, final: bool = False) -> None:
    """Count a failed attempt; the row fails for good after MAX_ATTEMPTS, or at once when
    sending the same request again cannot help (`final`)."""
    row.attempts += 1
    row.error = reason[:300]
    if final or row.attempts >= MAX_ATTEMPTS:
        row.status = StepStatus.FAILED
    row.save(update_fields=["attempts", "error", "status"])
    if row.status == StepStatus.FAILED and isinstance(row, ReferenceDraft):
        reference_redraft_failed(item=row.item)


def job_cut_off_count(job: CurationJob) -> int:
    """Rows of the job whose reply was cut off by max_tokens (failed, never stored as complete)."""
    return _rows_of(job).filter(status=StepStatus.FAILED, error__startswith=CUT_OFF).count()


PROGRESS_EVERY_SECONDS = 1.0
_progress_saved_at: dict[int, float] = {}


def _rows_of(job: CurationJob):
    return job.reference_drafts if job.kind == CurationJob.Kind.REFERENCE else job.translations


def _heartbeat(job: CurationJob) -> None:
    """Record that the job is alive, with its running done/failed counts so the dataset page
    and the command show progress mid-run. At most once a second: replies can arrive faster."""
    now = time.monotonic()
    if now - _progress_saved_at.get(job.pk, 0.0) < PROGRESS_EVERY_SECONDS:
        return
    _progress_saved_at[job.pk] = now
    counts = _rows_of(job).aggregate(
        done=Count("pk", filter=Q(status=StepStatus.DONE)), failed=Count("pk", filter=Q(status=StepStatus.FAILED))
    )
    CurationJob.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now(), **counts)


def _run_rows(job, endpoint, rows, make_request, store, window, on_progress, interruptible):
    """Send one request per row; store each result (or failure) as chunks of them arrive.
    Returns how the delivery ended (llm.delivery.Delivered)."""
    requests = [make_request(row) for row in rows]

    def save(chunk) -> None:
        for index, outcome in chunk:
            row = rows[index]
            if isinstance(outcome, LLMCallError):
                _fail(row, outcome.reason, final=outcome.kind == "context_length")
            elif outcome.cut_off:
                _fail(row, f"{CUT_OFF} ({requests[index].max_tokens}): raise --max-tokens and run again", final=True)
            elif not (text := clean_reply(outcome.text)):
                _fail(row, "empty reply")
            else:
                store(row, text, outcome)
            # Per row, so the count a page or the command shows moves one item at a time.
            _heartbeat(job)
            if on_progress:
                on_progress(job)

    return deliver_chunked_sync(endpoint, requests, save=save, window=window, interruptible=interruptible)


def curation_job_run(
    *,
    job_id: int,
    in_flight: int | str | None = None,
    on_progress=None,
    max_tokens: int | None = None,
    timeout_seconds: float | None = None,
    interruptible: bool = False,
) -> CurationJob:
    """Do (or continue) a job: send every pending row, retrying failed rows up to MAX_ATTEMPTS.

    Safe to run again after a crash or a stop: only rows not finished are sent. `in_flight`
    is a number of calls, "auto", or None (the endpoint's limit, else auto); `max_tokens`
    overrides the endpoint's and the kind's default. With `interruptible`, Ctrl-C stops the
    calls at once. The job returned says how it ended: `stopped` is "signal", "unusable"
    (every call failed the same way; `last_error` says how) or "".
    """
    job = CurationJob.objects.select_related("dataset").get(pk=job_id)
    CurationJob.objects.filter(pk=job.pk).update(
        status=CurationJob.Status.RUNNING, runs=job.runs + 1, heartbeat_at=timezone.now()
    )
    try:
        # Looked up in the dataset's workspace (another team's endpoint of the same name is never
        # used), whose cache the replies go to.
        endpoint = endpoint_config(job.endpoint_name or None, workspace_id=job.dataset.workspace_id)
        if timeout_seconds:
            endpoint = replace(endpoint, timeout_seconds=timeout_seconds)
        stopped = _send_pending(
            job, endpoint, in_flight, on_progress, max_tokens=max_tokens, interruptible=interruptible
        )
    except (Exception, KeyboardInterrupt) as error:
        # Whatever stopped it (no endpoint, the database, Ctrl-C, a bug), the job says it failed
        # and why, so a person can start it again, instead of showing "running" for ever.
        if isinstance(error, KeyboardInterrupt):
            reason = "interrupted"
        elif isinstance(error, UserbenchError):
            reason = str(error)
        else:
            reason = f"{type(error).__name__}: {error}"
        _job_failed(job, reason)
        raise
    job = job_counts_refresh(job_id=job.pk)
    job.stopped = stopped.stopped if stopped is not None and stopped.stopped else ""
    if stopped is not None and stopped.unusable is not None:
        # Every call failed the same way (a wrong model, URL or key): the job failed, and can be
        # started again, at another endpoint if need be.
        _job_failed(job, str(stopped.unusable))
    return job


def _job_failed(job: CurationJob, reason: str) -> None:
    job.status = CurationJob.Status.FAILED
    job.last_error = reason[:300]
    job.finished_at = timezone.now()
    CurationJob.objects.filter(pk=job.pk).update(
        status=job.status, last_error=job.last_error, finished_at=job.finished_at
    )
    if job.kind == CurationJob.Kind.REFERENCE:
        # Items waiting for a new draft go back to the queue, where the error is shown.
        for item in Item.objects.filter(reference_drafts__job=job, reference_drafts__status=StepStatus.PENDING):
            reference_redraft_failed(item=item)


def _send_pending(
    job: CurationJob,
    endpoint,
    in_flight: int | str | None,
    on_progress,
    *,
    max_tokens: int | None,
    interruptible: bool,
):
    """Send the job's pending rows, up to MAX_ATTEMPTS rounds; returns how the last round ended."""
    model = job.model
    # One window for the whole job: what it learnt about the server carries over between steps.
    window = window_for(endpoint, in_flight)
    kind = CallKind.REFERENCE if job.kind == CurationJob.Kind.REFERENCE else CallKind.TRANSLATION
    limit = max_tokens_for(kind, endpoint=endpoint, override=max_tokens)
    stopped = None
    for _attempt in range(MAX_ATTEMPTS):
        if job.kind == CurationJob.Kind.REFERENCE:
            rows = list(job.reference_drafts.filter(status=StepStatus.PENDING).select_related("item", "job"))
            previous = _previous_drafts(job, rows)

            def store_reference(row, text, outcome):
                reference_draft_store(
                    draft=row,
                    text=text,
                    prompt_tokens=outcome.prompt_tokens,
                    completion_tokens=outcome.completion_tokens,
                )

            if rows:
                stopped = _run_rows(
                    job,
                    endpoint,
                    rows,
                    lambda row, previous=previous: reference_request(
                        row.item, model, previous.get(row.item_id, ""), max_tokens=limit
                    ),
                    store_reference,
                    window,
                    on_progress,
                    interruptible,
                )
            left = job.reference_drafts.filter(status=StepStatus.PENDING).exists()
        else:
            first = list(job.translations.filter(status=StepStatus.PENDING).select_related("item"))

            def store_translation(row, text, outcome):
                row.translation = text
                row.status = StepStatus.TRANSLATED
                row.error = ""
                row.attempts = 0
                row.save(update_fields=["translation", "status", "error", "attempts"])

            if first:
                stopped = _run_rows(
                    job,
                    endpoint,
                    first,
                    lambda row: translate_request(row.source_text, model, limit),
                    store_translation,
                    window,
                    on_progress,
                    interruptible,
                )
            second = []
            if stopped is None or stopped.stopped is None:
                second = list(job.translations.filter(status=StepStatus.TRANSLATED).select_related("item"))

            def store_localised(row, text, outcome):
                row.localised = text
                translation_store(translation=row)

            if second:
                stopped = _run_rows(
                    job,
                    endpoint,
                    second,
                    lambda row: localise_request(row.translation, model, limit),
                    store_localised,
                    window,
                    on_progress,
                    interruptible,
                )
            left = job.translations.filter(status__in=[StepStatus.PENDING, StepStatus.TRANSLATED]).exists()
        if not left or (stopped is not None and stopped.stopped is not None):
            break
    return stopped


def job_counts_refresh(*, job_id: int) -> CurationJob:
    """Recount done and failed rows and set the job's status from them."""
    job = CurationJob.objects.get(pk=job_id)
    rows = _rows_of(job)
    job.done = rows.filter(status=StepStatus.DONE).count()
    job.failed = rows.filter(status=StepStatus.FAILED).count()
    last = rows.exclude(error="").order_by("-id").values_list("error", flat=True).first()
    job.last_error = last or ""
    if job.done + job.failed >= job.total:
        job.status = CurationJob.Status.DONE if job.failed == 0 else CurationJob.Status.FAILED
        job.finished_at = timezone.now()
    else:
        job.status = CurationJob.Status.PENDING
    job.save(update_fields=["done", "failed", "last_error", "status", "finished_at"])
    return job
