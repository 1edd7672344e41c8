"""Sending a judge run's or a generation's calls through the provider's Batch API, and taking
its replies back: the bookkeeping both share (judging/engine/batch.py for runs,
judging/answers/generation_batch.py for generations), over llm/batch.py's protocol.

A pass (`batch_pass`) does what is due, then returns:

1. Units without a result and in no open batch are gathered, in one transaction with the
   owner's row locked (two passes never put a unit in two batches). A unit whose request the
   response cache holds is saved at once and never sent; identical requests go as one line.
   The rest is cut into batches of at most LLM_BATCH_MAX_REQUESTS lines and
   LLM_BATCH_MAX_BYTES bytes, each a BatchJob row holding its units' custom ids, committed
   before anything is sent.
2. Each open batch advances one step, each step committed before the next is sent: its file
   uploaded (the file id stored), its batch made (the batch id stored; a file whose batch was
   made just before a crash finds that batch rather than making a second), its state read, and
   once it ended its output and error files read. A stored file id is never uploaded again and
   a stored batch id never made again, so a crash, Ctrl-C, a restart or a resume costs nothing
   twice.
3. A result line becomes the same outcome a live call has (llm/batch.py): the paid replies go to
   the response cache first, then every unit's outcome to the owner's `save` (the live path's
   own), with the batch marked collected, in one transaction. A line whose custom id the batch
   does not hold, or that names a request a second time, is ignored and counted on the batch
   (`unknown_lines`, `duplicate_lines`); a unit the batch gave no line for is a failed call,
   sent again by a resume.
4. A provider is not trusted to be well-behaved: a results file over its caps (bytes once
   inflated, seconds to read), cut short, an error file that is not JSONL, or a batch said to be
   completed with no file at all, fail the requests without a result once, with the reason, and
   the batch is collected: its files are never read again, whatever became of the owner. A
   batch id the provider already gave another batch (of any owner: ids are unique per
   provider, `BatchJob.endpoint_url`) is refused: the owner stops with a reason that names no
   other owner, and its requests in that batch fail.

A step is taken by one process at a time (the row's `holder`, until `held_until`; a holder of
this machine whose process is gone frees it at once). A cancelled owner sends no new batch and
asks the provider to stop the ones it has; what they finished is still collected.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Protocol

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet
from django.tasks import task_backends
from django.utils import timezone
from django.utils.translation import gettext as _

from core.processes import worker_is_gone, worker_name
from judging.models import BatchJob
from llm.batch import (
    BatchCallError,
    BatchFileUnusable,
    BatchState,
    LineCounts,
    batch_cancel,
    batch_create,
    batch_file_download,
    batch_find,
    batch_line,
    batch_state,
    batch_upload,
    result_lines,
    result_outcome,
)
from llm.cache import CacheRow, cache_key, cache_lookup, cache_row, cache_store
from llm.calls import ChatRequest, ChatResult, Outcome
from llm.config import EndpointConfig
from llm.errors import LLMCallError

logger = logging.getLogger("userbench.engine")


@dataclass(frozen=True)
class BatchUnit:
    """One call of an owner: its custom id (what a result line names) and its request."""

    custom_id: str
    request: ChatRequest


class BatchOwner(Protocol):
    """What a judge run or a generation tells the passes."""

    endpoint: EndpointConfig
    use_cache: bool
    # How its files and batches are named at the provider ("run-12", "generation-3").
    label: str
    # The batches whose units are not gathered again: open ones, and for a generation (whose
    # failed items leave no row) the collected ones too, until a resume settles them.
    held_statuses: tuple[str, ...]

    def jobs(self) -> QuerySet[BatchJob]: ...

    def job_fields(self) -> dict: ...

    def lock(self) -> bool:
        """Lock the owner's row (inside the caller's transaction); True when it may send."""
        ...

    def sending(self) -> bool:
        """Whether the owner may send now (a fresh read): running, not cancelled."""
        ...

    def cancelled(self) -> bool: ...

    def pending(self, held: set[str]) -> Iterator[list[BatchUnit]]:
        """Units without a result that `held` (the custom ids of its held batches) lacks, in groups."""
        ...

    def rebuild(self, custom_ids: list[str]) -> dict[str, ChatRequest]:
        """The requests of these custom ids, as they were sent (those it still knows)."""
        ...

    def save(self, outcomes: list[tuple[str, Outcome]]) -> None:
        """Store outcomes as the live path does (called inside a transaction)."""
        ...

    def stop(self, reason: str) -> None:
        """Nothing more can be sent as things are (a refused key, a missing path): say why."""
        ...


@dataclass
class PassReport:
    """What a pass did and what is left: `open` batches still at work (or waiting to be sent)."""

    made: int = 0
    cached: int = 0
    collected: int = 0
    open: int = 0
    errors: list[str] = field(default_factory=list)
    stopped: str = ""


def batch_pass(owner: BatchOwner) -> PassReport:
    """Gather new batches, then take every open batch one step; see the module's docstring."""
    report = PassReport()
    report.made, report.cached = _gather(owner)
    for job_id in list(owner.jobs().filter(status__in=BatchJob.OPEN).values_list("pk", flat=True)):
        try:
            _advance(owner, job_id, report)
        except BatchCallError as error:
            BatchJob.objects.filter(pk=job_id).update(error=str(error)[:500])
            report.errors.append(str(error))
            logger.warning("%s batch job %s: %s", owner.label, job_id, error)
            if not error.retryable:
                report.stopped = str(error)
                owner.stop(str(error))
                break
    report.open = owner.jobs().filter(status__in=BatchJob.OPEN).count()
    return report


def provider_url(endpoint: EndpointConfig) -> str:
    """The provider a batch goes to, as BatchJob.endpoint_url holds it: its base URL, normalised."""
    return endpoint.base_url.rstrip("/").lower()[:400]


def _gather(owner: BatchOwner) -> tuple[int, int]:
    """New BatchJob rows for the units left (and the cache's replies saved); returns how many
    rows and how many cached replies."""
    limit_lines = int(settings.LLM_BATCH_MAX_REQUESTS)
    limit_bytes = int(settings.LLM_BATCH_MAX_BYTES)
    with transaction.atomic():
        if not owner.lock():
            return 0, 0
        held = held_custom_ids(owner.jobs(), owner.held_statuses)
        chunks: list[dict] = []  # {"ids": [...], "lines": n, "bytes": n}
        leader_chunk: dict[str, int] = {}  # cache key -> the chunk its line went to
        cached: list[tuple[str, Outcome]] = []
        for group in owner.pending(held):
            keys = {unit.custom_id: cache_key(owner.endpoint, unit.request) for unit in group}
            hits = (
                cache_lookup(sorted(set(keys.values())), owner.endpoint.cache_workspace_id)
                if owner.use_cache and keys
                else {}
            )
            for unit in group:
                key = keys[unit.custom_id]
                if key in hits:
                    cached.append((unit.custom_id, hits[key]))
                    continue
                if key in leader_chunk:
                    # The same request is already a line: its reply will serve this unit too.
                    chunks[leader_chunk[key]]["ids"].append(unit.custom_id)
                    continue
                size = len(batch_line(unit.custom_id, unit.request))
                chunk = chunks[-1] if chunks else None
                if chunk is None or chunk["lines"] + 1 > limit_lines or chunk["bytes"] + size > limit_bytes:
                    chunk = {"ids": [], "lines": 0, "bytes": 0}
                    chunks.append(chunk)
                chunk["ids"].append(unit.custom_id)
                chunk["lines"] += 1
                chunk["bytes"] += size
                leader_chunk[key] = len(chunks) - 1
        BatchJob.objects.bulk_create(
            [
                BatchJob(
                    **owner.job_fields(),
                    endpoint_url=provider_url(owner.endpoint),
                    custom_ids=chunk["ids"],
                    requests=chunk["lines"],
                    bytes=chunk["bytes"],
                )
                for chunk in chunks
            ]
        )
        if cached:
            owner.save(cached)
    return len(chunks), len(cached)


def _lease() -> timedelta:
    # Long enough for the largest upload; a holder that died on this machine frees it at once.
    return timedelta(seconds=float(settings.LLM_BATCH_TRANSFER_SECONDS) + 60)


def _claim(job_id: int) -> bool:
    """This process takes the batch's next step, unless another live one holds it."""
    now, me = timezone.now(), worker_name()
    free = Q(held_until__isnull=True) | Q(held_until__lt=now) | Q(holder=me)
    if BatchJob.objects.filter(pk=job_id).filter(free).update(holder=me, held_until=now + _lease()):
        return True
    holder = BatchJob.objects.filter(pk=job_id).values_list("holder", flat=True).first()
    return bool(
        holder
        and worker_is_gone(holder)
        and BatchJob.objects.filter(pk=job_id, holder=holder).update(holder=me, held_until=now + _lease())
    )


def _release(job_id: int) -> None:
    BatchJob.objects.filter(pk=job_id, holder=worker_name()).update(holder="", held_until=None)


def _advance(owner: BatchOwner, job_id: int, report: PassReport) -> None:
    if not _claim(job_id):
        return
    try:
        job = BatchJob.objects.get(pk=job_id)
        if job.status == BatchJob.Status.PREPARING and owner.sending():
            _upload(owner, job)
        if job.status == BatchJob.Status.UPLOADED and owner.sending():
            _submit(owner, job)
        if job.status == BatchJob.Status.SUBMITTED:
            if owner.cancelled() and not job.cancel_sent:
                batch_cancel(owner.endpoint, job.batch_id or "")
                BatchJob.objects.filter(pk=job.pk).update(cancel_sent=True)
            try:
                state = batch_state(owner.endpoint, job.batch_id or "")
            except BatchCallError as error:
                if error.status != 404:
                    raise
                # The provider no longer knows the batch: its units fail, and a resume sends them again.
                state = BatchState("gone", 0, 0, 0, "", "", errors=str(error)[:300])
            now = timezone.now()
            BatchJob.objects.filter(pk=job.pk).update(
                provider_status=state.status,
                completed=state.completed,
                failed=state.failed,
                checked_at=now,
                error="",
            )
            if state.finished or state.status == "gone":
                report.collected += _collect(owner, job, state)
    finally:
        _release(job_id)


def _upload(owner: BatchOwner, job: BatchJob) -> None:
    requests = owner.rebuild(job.custom_ids)
    seen: set[str] = set()
    lines = []
    for custom_id in job.custom_ids:
        request = requests.get(custom_id)
        if request is None:
            continue  # gone since (its answer deleted): its unit gets no line, and fails alone
        key = cache_key(owner.endpoint, request)
        if key not in seen:
            seen.add(key)
            lines.append(batch_line(custom_id, request))
    content = b"".join(lines)
    file_id = batch_upload(owner.endpoint, content, name=f"userbench-{owner.label}-job-{job.pk}.jsonl")
    # Stored the moment it exists: from here on the file is never uploaded again.
    BatchJob.objects.filter(pk=job.pk).update(
        input_file_id=file_id, status=BatchJob.Status.UPLOADED, requests=len(lines), bytes=len(content)
    )
    job.input_file_id, job.status = file_id, BatchJob.Status.UPLOADED


def _submit(owner: BatchOwner, job: BatchJob) -> None:
    # A batch made of this file just before a crash is found, not made (and paid) again.
    batch_id = batch_find(owner.endpoint, input_file_id=job.input_file_id)
    if batch_id is None:
        batch_id = batch_create(
            owner.endpoint,
            input_file_id=job.input_file_id,
            metadata={"userbench": owner.label, "userbench_job": str(job.pk)},
        )
    now = timezone.now()
    taken = BatchJob.objects.filter(endpoint_url=job.endpoint_url, batch_id=batch_id).exclude(pk=job.pk).exists()
    if not taken:
        try:
            with transaction.atomic():
                BatchJob.objects.filter(pk=job.pk).update(
                    batch_id=batch_id, status=BatchJob.Status.SUBMITTED, submitted_at=now
                )
        except IntegrityError:
            taken = True  # another process stored the same id meanwhile
    if taken:
        _refuse_batch_id(owner, job, batch_id)
        return
    job.batch_id, job.status, job.submitted_at = batch_id, BatchJob.Status.SUBMITTED, now
    logger.info("%s batch job %s: batch %s made of file %s", owner.label, job.pk, batch_id, job.input_file_id)


def _refuse_batch_id(owner: BatchOwner, job: BatchJob, batch_id: str) -> None:
    """The provider named this batch with an id it already gave another batch: Userbench cannot
    tell their results apart, so this one is not followed (nor cancelled: the id is the other
    batch's too). Its requests fail, once; the owner stops, saying why and how to go on, and
    naming no other owner."""
    reason = _(
        "The provider at %(url)s named a new batch %(id)s, an id it had already given another batch: its results "
        "could not be told apart, so this batch is not followed and its requests failed. Check the provider's "
        "Batch API, then resume to send them again."
    ) % {"url": owner.endpoint.base_url, "id": batch_id[:60]}
    logger.warning("%s batch job %s: %s", owner.label, job.pk, reason)
    with transaction.atomic():
        locked = BatchJob.objects.select_for_update().get(pk=job.pk)
        if locked.status != BatchJob.Status.UPLOADED:
            return
        requests = owner.rebuild(job.custom_ids)
        owner.save([(custom_id, LLMCallError(reason)) for custom_id in job.custom_ids if custom_id in requests])
        BatchJob.objects.filter(pk=job.pk).update(
            status=BatchJob.Status.COLLECTED, provider_status="refused", finished_at=timezone.now(), error=reason[:500]
        )
    job.status = BatchJob.Status.COLLECTED
    owner.stop(reason)


def _collect(owner: BatchOwner, job: BatchJob, state: BatchState) -> int:
    """Read the ended batch's files and save every unit's outcome; returns how many units."""
    requests = owner.rebuild(job.custom_ids)
    keys = {custom_id: cache_key(owner.endpoint, request) for custom_id, request in requests.items()}
    leaders: dict[str, str] = {}
    for custom_id in job.custom_ids:
        if custom_id in keys:
            leaders.setdefault(keys[custom_id], custom_id)
    lines = set(leaders.values())
    found: dict[str, Outcome] = {}
    duplicates = unknown = 0
    problems: list[str] = []
    if state.status == "completed" and not state.output_file_id and not state.error_file_id:
        problems.append(_("the provider named no results file"))
    for file_id in (state.output_file_id, state.error_file_id):
        if not file_id:
            continue
        try:
            stream = batch_file_download(owner.endpoint, file_id)
        except BatchFileUnusable as error:
            # Never read again: the batch is collected with its requests failed (a resume sends them).
            problems.append(str(error))
            continue
        except BatchCallError as error:
            if error.status != 404:
                raise
            # The file is gone (providers delete them after a while): its units find no result.
            state = replace(state, errors=str(error)[:300])
            continue
        counts = LineCounts()
        with stream:
            for record in result_lines(stream, counts):
                custom_id = record.get("custom_id")
                if not isinstance(custom_id, str) or custom_id not in lines:
                    unknown += 1  # another batch's, or none: ignored
                elif custom_id in found:
                    duplicates += 1  # the first line for a request counts
                else:
                    found[custom_id] = result_outcome(
                        record, max_tokens=requests[custom_id].max_tokens, key=keys[custom_id]
                    )
        unknown += counts.not_json
        if counts.not_json and file_id == state.error_file_id:
            problems.append(
                _("the error file %(id)s is not JSONL (line %(line)d is not a JSON object)")
                % {"id": file_id, "line": counts.first_not_json}
            )
    if problems:
        state = replace(state, errors="; ".join([*problems, *([state.errors] if state.errors else [])])[:300])
    missing = _("the batch ended %(status)s without a result for this request") % {"status": state.status}
    if state.errors:
        missing += f" ({state.errors})"
    outcomes: list[tuple[str, Outcome]] = []
    paid: list[CacheRow] = []
    for custom_id in job.custom_ids:
        if custom_id not in keys:
            outcomes.append((custom_id, LLMCallError(missing)))
            continue
        leader = leaders[keys[custom_id]]
        outcome = found.get(leader) or LLMCallError(missing)
        if isinstance(outcome, ChatResult):
            if leader == custom_id:
                request = requests[custom_id]
                paid.append(cache_row(owner.endpoint, keys[custom_id], request, outcome))
            else:
                outcome = replace(outcome, cached=True)  # one line answered both: paid once
        outcomes.append((custom_id, outcome))
    replies = [outcome for custom_id, outcome in outcomes if isinstance(outcome, ChatResult) and not outcome.cached]
    with transaction.atomic():
        locked = BatchJob.objects.select_for_update().get(pk=job.pk)
        if locked.status != BatchJob.Status.SUBMITTED:
            return 0  # collected by another pass meanwhile
        # The cache first: a reply is kept before anything parses it.
        cache_store(paid)
        owner.save(outcomes)
        BatchJob.objects.filter(pk=job.pk).update(
            status=BatchJob.Status.COLLECTED,
            output_file_id=state.output_file_id,
            error_file_id=state.error_file_id,
            finished_at=timezone.now(),
            prompt_tokens=sum(reply.prompt_tokens or 0 for reply in replies),
            completion_tokens=sum(reply.completion_tokens or 0 for reply in replies),
            duplicate_lines=duplicates,
            unknown_lines=unknown,
            error=state.errors[:500],
        )
    return len(outcomes)


class StopWaiting:
    """Ctrl-C or SIGTERM while a command waits on batches: `asked` is set and noticed between two
    passes (a pass is never cut in the middle of an upload); a second one interrupts at once."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.previous: dict[int, object] = {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self.previous[signum] = signal.signal(signum, self._handle)
        return self

    def _handle(self, signum, frame):
        if self.asked.is_set():
            raise KeyboardInterrupt
        self.asked.set()

    def __exit__(self, *exc):
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]
        return False


def passes_until_done(one_pass: Callable[[], str], on_progress: Callable[[], None] | None = None) -> str:
    """A command waiting on its batches: `one_pass()` every LLM_BATCH_POLL_SECONDS until it says
    anything but "waiting" (returned), or Ctrl-C between two passes ("interrupted")."""
    with StopWaiting() as stop:
        while True:
            status = one_pass()
            if on_progress is not None:
                on_progress()
            if status != "waiting":
                return status
            if stop.asked.wait(float(settings.LLM_BATCH_POLL_SECONDS)) or stop.asked.is_set():
                return "interrupted"


def batch_jobs_progress(jobs: Iterable[BatchJob], *, now=None) -> dict:
    """What a batch run or generation shows while it waits: each batch's step, the provider's
    status and counts, and how long it has waited; and the totals."""
    now = now or timezone.now()
    rows: list[dict] = []
    for job in jobs:
        waited_until = job.finished_at or now
        rows.append(
            {
                "id": job.pk,
                "batch_id": job.batch_id or "",
                "status": job.status,
                "status_label": str(job.get_status_display()),
                "provider_status": job.provider_status,
                "requests": job.requests,
                "completed": job.completed,
                "failed": job.failed,
                "waiting_seconds": int((waited_until - job.submitted_at).total_seconds()) if job.submitted_at else 0,
                "duplicate_lines": job.duplicate_lines,
                "unknown_lines": job.unknown_lines,
                "error": job.error,
            }
        )
    open_rows = [row for row in rows if row["status"] in BatchJob.OPEN]
    return {
        "batches": rows,
        "open": len(open_rows),
        "requests": sum(row["requests"] for row in rows),
        "completed": sum(row["completed"] for row in rows),
        "failed": sum(row["failed"] for row in rows),
        "duplicate_lines": sum(row["duplicate_lines"] for row in rows),
        "unknown_lines": sum(row["unknown_lines"] for row in rows),
        "waiting_seconds": max((int(row["waiting_seconds"]) for row in open_rows), default=0),
    }


def held_custom_ids(jobs: QuerySet[BatchJob], statuses: Iterable[str] = BatchJob.OPEN) -> set[str]:
    """The custom ids of the batches in these statuses."""
    return {cid for ids in jobs.filter(status__in=list(statuses)).values_list("custom_ids", flat=True) for cid in ids}


def batch_pass_defer(*, owner: QuerySet, task, argument: int) -> bool:
    """Queue `task(argument)` LLM_BATCH_POLL_SECONDS from now, for the one row in `owner` (a run
    or a generation), one chain of passes at a time: the row records when its next pass is due,
    and only a caller that moves that time on (none set, or one already past) queues one. True
    if one was queued. Only backends that can defer a task poll by themselves; elsewhere the
    command that waits polls."""
    if not task_backends[task.backend].supports_defer:
        return False
    now = timezone.now()
    due = now + timedelta(seconds=float(settings.LLM_BATCH_POLL_SECONDS))
    claimed = owner.filter(Q(batch_poll_at__isnull=True) | Q(batch_poll_at__lte=now)).update(batch_poll_at=due)
    if claimed:
        task.using(run_after=due).enqueue(argument)
    return bool(claimed)
