"""Executing a judge run: calls flow through one window per worker, across the run's shards.

A shard is what is claimed, heartbeaten and resumed; it is not a unit of waiting. A worker
that takes a shard's task keeps the run's window full: when fewer calls wait than two windows
hold, `llm.delivery` asks for more and the worker claims the run's next queued shard (or one a
dead worker left), so the next shard's calls start while the last calls of the one before are
still out, and a slow call never holds back the rest. The other tasks of the run find their
shard taken and end at once, unless a second worker got there first: then both hold shards
and share the run's concurrency, each taking its part (`concurrency_share`) at every tick.

A task is synchronous (django-tasks-db runs one task at a time per worker); inside it an
event loop keeps the calls in flight, and replies are handed back to the task's own thread in
chunks every `FLUSH_SECONDS` (keeping SQLite correct and PostgreSQL cheap): the cache first,
then the judgments and the run's running counts. Every JUDGING_TICK_SECONDS the worker
beats (its shards and its RunWorker row: window, calls in flight, rate) and notices a cancel,
a stop, or another worker joining. SIGTERM or Ctrl-C stops the calls at once: a worker gives
its shards back to the queue, `judge --inline` cancels the run; what came back is kept.

A worker that dies (SIGKILL, the OOM killer) leaves its shards running with no heartbeat: the
worker sharing the run claims them as its calls run low, a task of the run claims them, and
the run's watchdog (`judging.engine.watchdog.run_watch`, queued while the run runs) gives them
back to the queue with a task each, so any live worker goes on with no one resuming the run. A
dead process of this machine is known at once (judging/engine/workers.py); elsewhere, once its
heartbeat is JUDGING_STALE_SECONDS old. `judge --inline` waits for shards other workers hold
and takes them over if those die.
"""

from __future__ import annotations

import logging
import signal
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace

from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError, close_old_connections, transaction

from core.processes import worker_name
from curation.models import Item
from judging.answers.versions import run_answers_of
from judging.dispatch import run_enqueue, run_watch_schedule
from judging.engine.counters import run_counters_add
from judging.engine.queue import (
    run_cancel,
    run_close_if_idle,
    run_stop,
    shard_claim,
    shard_claim_next,
    shard_finish,
    shards_release,
)
from judging.engine.workers import concurrency_share, run_worker_beat, run_worker_leave
from judging.errors import RunError
from judging.models import JudgeMode, JudgeRun, JudgeShard, JudgeTemplate, Judgment
from judging.prompts.building import (
    chat_messages,
    criteria_for_template,
    fill,
    intent_label,
    system_message_for,
)
from judging.prompts.templates import item_template_name, run_template_family
from judging.prompts.untrusted import suspicious_flags
from judging.verdicts.judgments import judgment_fields_from_reply
from llm.budget import BudgetLimits
from llm.cache import CACHE_CHUNK
from llm.calls import ChatRequest, ChatResult
from llm.config import CallKind, EndpointConfig, endpoint_signature, max_tokens_for
from llm.delivery import Delivered, TickAnswer, TickState, deliver_chunked_sync
from llm.errors import LLMCallError
from llm.models import LLMResponse
from llm.selectors import endpoint_config
from llm.window import AdaptiveWindow

logger = logging.getLogger("userbench.engine")

FLUSH_SECONDS = 0.25
RATE_WINDOW_SECONDS = 30.0
# The rate's window stretches back until it holds at least this many replies: a server taking
# two minutes a call (a local model on a CPU) still shows its pace and an ETA, not 0.0/s.
RATE_MIN_REPLIES = 3


def endpoint_for_run(run: JudgeRun) -> EndpointConfig:
    """The run's endpoint, with the run's own timeout when it has one."""
    # Looked up within the run's workspace: a run never calls another workspace's endpoint.
    config = endpoint_config(run.endpoint.name if run.endpoint is not None else None, workspace_id=run.workspace_id)
    if run.timeout_seconds:
        config = replace(config, timeout_seconds=run.timeout_seconds)
    return config


def build_prompt(
    run: JudgeRun, template: JudgeTemplate | None, item: Item, answer: str, reference_answer: str, order: int
) -> tuple[str, str]:
    """The judge prompt for one unit and the side ("model_1"/"model_2") the candidate sits on."""
    text = template.text if template else ""
    # `{instruction}` is ChineseAlpacaEval's name for the question.
    values = {
        "question": item.question,
        "instruction": item.question,
        "category": item.category,
        "intent": intent_label(item.intent, template.language if template else item.language),
    }
    if run.mode == JudgeMode.PAIRWISE:
        first, second = (answer, reference_answer) if order == 0 else (reference_answer, answer)
        side = "model_1" if order == 0 else "model_2"
        return fill(text, {**values, "output_1": first, "output_2": second}), side
    # A pointwise run with a reference model uses that model's answers as the 8-point references
    # (the cross-validation of URS 4.4); otherwise the dataset's curated reference.
    values["reference"] = reference_answer if run.reference_model_id else item.reference
    values["answer"] = answer
    return fill(text, values), ""


@dataclass(frozen=True)
class Unit:
    item_id: int
    model_id: int
    order: int
    template_id: int | None
    prompt: str
    template_text: str
    side: str
    answer: str
    criteria: tuple[str, ...]
    flags: tuple[str, ...]
    # Sent before the prompt (prompts.building.system_message_for): the run's, or the template's own.
    system_prompt: str = ""
    template_name: str = ""
    # The version of the candidate's answers judged (AnswerSet id).
    answer_set_id: int | None = None


def shard_plan(shard: JudgeShard) -> list[Unit]:
    """What the shard still has to send: its units without a judgment. (Failed calls are
    dropped by `run_resume`, which is what sends them again.)"""
    run = shard.run
    units = [tuple(unit) for unit in shard.units]
    item_ids = {unit[0] for unit in units}
    done = set(run.judgments.filter(item_id__in=item_ids).values_list("item_id", "model_id", "order"))
    return units_plan(run, [unit for unit in units if unit not in done])


def units_plan(run: JudgeRun, triples) -> list[Unit]:
    """The prompts of these (item, model, order) units of the run, as its calls send them (the live
    shards and the run's batches alike)."""
    todo = [tuple(unit) for unit in triples]
    if not todo:
        return []
    items = Item.objects.in_bulk({unit[0] for unit in todo})
    model_ids = {unit[1] for unit in todo} | ({run.reference_model_id} if run.reference_model_id else set())
    # The versions the run pinned when it was made, whatever replaced them since.
    answers, answer_sets = {}, {}
    for a in run_answers_of(run, item_ids=items.keys(), model_ids=model_ids):
        answers[(a["item_id"], a["model_id"])] = a["text"]
        answer_sets[a["model_id"]] = a["answer_set_id"]
    templates = {t.name: t for t in run.templates.all()}
    family = run_template_family(run, templates.values())
    plan = []
    for item_id, model_id, order in todo:
        item = items.get(item_id)
        if item is None:
            continue  # deleted since the run was made: nothing to send
        template = templates.get(item_template_name(run, item, family))
        answer = answers.get((item_id, model_id), "")
        reference_answer = answers.get((item_id, run.reference_model_id), "") if run.reference_model_id else ""
        prompt, side = build_prompt(run, template, item, answer, reference_answer, order)
        plan.append(
            Unit(
                item_id=item_id,
                model_id=model_id,
                order=order,
                template_id=template.pk if template else None,
                prompt=prompt,
                template_text=template.text if template else "",
                side=side,
                answer=answer,
                criteria=tuple(criteria_for_template(template.name)) if template else (),
                flags=tuple(suspicious_flags(answer)),
                system_prompt=system_message_for(template.name if template else "", run.system_prompt),
                template_name=template.name if template else "",
                answer_set_id=answer_sets.get(model_id),
            )
        )
    return plan


def unit_request(run: JudgeRun, unit: Unit, *, max_tokens: int | None) -> ChatRequest:
    """The judge call of one unit."""
    return ChatRequest(
        model=run.judge_model,
        messages=chat_messages(unit.prompt, system_prompt=unit.system_prompt),
        temperature=run.temperature,
        max_tokens=max_tokens,
    )


def judgments_save(*, run_id: int, judgments: list[Judgment]) -> None:
    """Store judgments and add them to the run's running counts, in one transaction."""
    replies_stored_once(judgments)
    with transaction.atomic():
        # ignore_conflicts: the unique (run, item, model, order) constraint makes a duplicate a no-op.
        Judgment.objects.bulk_create(judgments, ignore_conflicts=True, batch_size=500)
        run_counters_add(run_id=run_id, judgments=judgments)


def replies_stored_once(judgments: list[Judgment]) -> None:
    """A judgment whose reply the response cache holds word for word (stored there just before,
    or the reply came from it) refers to that row and keeps no copy of its own; one that the
    cache holds otherwise (a re-run asking again: the cache keeps its first reply) keeps its own."""
    keyed = [(judgment.response_id, judgment) for judgment in judgments if judgment.response_id]
    keys = sorted({key for key, _judgment in keyed})
    held: dict[str, str] = {}
    for start in range(0, len(keys), CACHE_CHUNK):
        held.update(LLMResponse.objects.filter(key__in=keys[start : start + CACHE_CHUNK]).values_list("key", "text"))
    for key, judgment in keyed:
        if held.get(key) == judgment.raw_text:
            judgment.raw_text = ""
        else:
            judgment.response_id = None


def judgment_for(
    run: JudgeRun, unit: Unit, outcome: ChatResult | LLMCallError, *, max_tokens: int | None, signature: str
) -> Judgment:
    """The row one outcome makes: a verdict, a reply cut off by max_tokens, or a failed call."""
    base = dict(
        run_id=run.pk,
        item_id=unit.item_id,
        model_id=unit.model_id,
        order=unit.order,
        template_id=unit.template_id,
        flags=list(unit.flags),
        answer_set_id=unit.answer_set_id,
    )
    if isinstance(outcome, LLMCallError):
        return Judgment(
            **base,
            call_error=outcome.reason[:300],
            call_error_kind=outcome.kind,
            error_endpoint=signature if outcome.kind == "context_length" else "",
        )
    reply = dict(
        raw_text=outcome.text,
        # Kept only until `judgments_save` finds the same text in the cache row (stored once).
        response_id=outcome.key or None,
        prompt_tokens=outcome.prompt_tokens,
        completion_tokens=outcome.completion_tokens,
        latency_ms=outcome.latency_ms,
        cached=outcome.cached,
        finish_reason=outcome.finish_reason or "",
        reported_model=outcome.model,
    )
    if outcome.cut_off:
        # Kept (it was paid for) but never scored: a verdict cut short is no verdict.
        return Judgment(
            **base,
            **reply,
            final_score=None,
            scores={},
            outcome=Judgment.Outcome.ERROR if run.mode == JudgeMode.PAIRWISE else "",
            parse_error=f"the reply was cut off at max_tokens ({max_tokens})"
            if max_tokens
            else "the reply was cut off",
        )
    fields = judgment_fields_from_reply(
        mode=run.mode,
        text=outcome.text,
        candidate_side=unit.side,
        criteria=list(unit.criteria),
        template=unit.template_text,
        answer=unit.answer,
        template_name=unit.template_name,
    )
    return Judgment(**base, **fields, **reply)


class RateMeter:
    """Replies per second over the last RATE_WINDOW_SECONDS, stretched back to hold at least
    RATE_MIN_REPLIES replies (since the start, before that).

    A window of time rather than a smoothing per tick: a server that answers once every ten
    seconds, or once every two minutes (a local model with one slot), still shows its pace and an
    ETA, instead of a rate that decays to zero between two replies. After the last reply the rate
    falls as the silence lasts."""

    def __init__(self, now: float | None = None):
        self.samples: deque[tuple[float, int]] = deque([(time.monotonic() if now is None else now, 0)])
        self.rate = 0.0

    def update(self, count: int, now: float | None = None) -> float:
        now = time.monotonic() if now is None else now
        if count != self.samples[-1][1] and now - self.samples[-1][0] >= 0.2:
            # Only a change is kept (the first tick at a new count): a silence of an hour is one sample.
            self.samples.append((now, count))
        # Keep the newest sample at or before the window's start, and enough replies after it.
        while (
            len(self.samples) > 2
            and self.samples[1][0] <= now - RATE_WINDOW_SECONDS
            and count - self.samples[1][1] >= RATE_MIN_REPLIES
        ):
            self.samples.popleft()
        since, then = self.samples[0]
        self.rate = (count - then) / (now - since) if now > since else 0.0
        return self.rate


class RunSlice:
    """What one worker does for a run: holds shards, feeds their calls into its window, saves
    what comes back, and beats. Its feed, save and tick run on the task's own thread."""

    def __init__(
        self,
        run: JudgeRun,
        endpoint: EndpointConfig,
        worker_id: str,
        *,
        first_shard_id: int | None,
        on_progress: Callable[[], None] | None = None,
        wait_for_others: bool = False,
    ):
        self.run = run
        # `--inline`: shards other workers hold are waited for, and taken over if their worker
        # dies, so the command ends with the run (a worker's slice ends when it has nothing).
        self.wait_for_others = wait_for_others
        self.waiting = False
        self.endpoint = endpoint
        self.worker_id = worker_id
        self.first_shard_id = first_shard_id
        self.on_progress = on_progress
        self.units: dict[int, tuple[int, Unit]] = {}  # stream index -> (shard, unit): what is out
        self.left: dict[int, int] = {}  # shard held -> its units not saved yet
        self.issued = 0
        self.max_tokens = max_tokens_for(CallKind.JUDGING, endpoint=endpoint, override=run.max_tokens)
        self.signature = endpoint_signature(endpoint, run.judge_model, self.max_tokens)
        self.meter = RateMeter()
        self.run_status: str = JudgeRun.Status.RUNNING

    def feed(self) -> list[ChatRequest] | None:
        """The next shard's requests; [] when the run has nothing left to claim, or None (while
        waiting for others) when other workers still hold shards that may come free."""
        self.waiting = False
        while True:
            shard: JudgeShard | None
            if self.first_shard_id is not None:
                shard = JudgeShard.objects.get(pk=self.first_shard_id)
                self.first_shard_id = None
            else:
                shard = shard_claim_next(run_id=self.run.pk, worker_id=self.worker_id)
                if shard is None:
                    if self.wait_for_others and self._others_hold_shards():
                        self.waiting = True
                        return None
                    return []
            shard.run = self.run
            plan = shard_plan(shard)
            if not plan:
                shard_finish(shard_id=shard.pk, status=JudgeShard.Status.DONE, holder=self.worker_id)
                continue
            self.left[shard.pk] = len(plan)
            requests = []
            for unit in plan:
                self.units[self.issued] = (shard.pk, unit)
                self.issued += 1
                requests.append(unit_request(self.run, unit, max_tokens=self.max_tokens))
            return requests

    def _others_hold_shards(self) -> bool:
        return (
            JudgeShard.objects.filter(run_id=self.run.pk, status=JudgeShard.Status.RUNNING)
            .exclude(pk__in=list(self.left))
            .exists()
        )

    def save(self, chunk) -> None:
        judgments, closed = [], []
        for index, outcome in chunk:
            shard_id, unit = self.units.pop(index)
            # Parsed here, on the database thread, off the event loop; the reply is already cached.
            judgments.append(
                judgment_for(self.run, unit, outcome, max_tokens=self.max_tokens, signature=self.signature)
            )
            self.left[shard_id] -= 1
            if not self.left[shard_id]:
                del self.left[shard_id]
                closed.append(shard_id)
        judgments_save(run_id=self.run.pk, judgments=judgments)
        for shard_id in closed:
            shard_finish(shard_id=shard_id, status=JudgeShard.Status.DONE, holder=self.worker_id)
        if self.on_progress is not None:
            self.on_progress()

    def beat(self, state: TickState | None = None) -> TickAnswer:
        state = state or TickState(0, 0, 0, 0, 0)
        status, concurrency, workers, place = run_worker_beat(
            run_id=self.run.pk,
            worker_id=self.worker_id,
            shard_ids=list(self.left),
            window=state.window,
            ceiling=state.ceiling,
            in_flight=state.in_flight,
            overloads=state.overloads,
            rate=round(self.meter.update(state.delivered), 4),
        )
        self.run_status = status
        if status != JudgeRun.Status.RUNNING:
            return TickAnswer(stop=True)
        # A feed waiting for other workers' shards is asked again at every tick: one of them may
        # have finished, or died and left its shards to take over.
        return TickAnswer(ceiling=concurrency_share(concurrency, workers, place), refill=self.waiting)

    def execute(self, *, interruptible: bool) -> Delivered:
        share = self.beat().ceiling or self.run.concurrency
        window = AdaptiveWindow(ceiling=share, auto=self.run.concurrency_auto)
        return deliver_chunked_sync(
            self.endpoint,
            (),
            feed=self.feed,
            save=self.save,
            window=window,
            flush_seconds=FLUSH_SECONDS,
            tick=self.beat,
            tick_seconds=float(settings.JUDGING_TICK_SECONDS),
            hold_seconds=min(float(settings.JUDGING_HOLD_SECONDS), float(settings.JUDGING_STALE_SECONDS) / 3),
            interruptible=interruptible,
            use_cache=not self.run.fresh_calls,
            # The run's concurrency is one budget for all its workers: one that joins gets only
            # the slots the others are not using, never its share on top of theirs.
            budgets=()
            if self.run.concurrency_auto
            else (BudgetLimits(key=f"run:{self.run.pk}", in_flight=self.run.concurrency),),
        )

    def close(self, delivered: Delivered, *, on_signal: str) -> str:
        """Settle the shards still held after the calls stopped; returns how the slice ended."""
        held = list(self.left)
        status: str
        if delivered.stopped is None:
            status = JudgeShard.Status.DONE
        elif delivered.stopped == "unusable":
            run_stop(run_id=self.run.pk, error=str(delivered.unusable))
            status = JudgeShard.Status.FAILED
            for shard_id in held:
                shard_finish(shard_id=shard_id, status=status, error=str(delivered.unusable), holder=self.worker_id)
        elif delivered.stopped == "signal":
            if on_signal == "release":
                shards_release(shard_ids=held)
                run_enqueue(run=JudgeRun.objects.get(pk=self.run.pk))
            else:
                try:
                    run_cancel(run=self.run)
                except RunError:
                    pass  # it was stopped or ended meanwhile: nothing is left to cancel
                for shard_id in held:
                    shard_finish(shard_id=shard_id, status=JudgeShard.Status.CANCELLED, holder=self.worker_id)
            status = "interrupted"
        else:  # a tick saw the run cancelled or stopped by another worker
            status = (
                JudgeShard.Status.CANCELLED
                if self.run_status == JudgeRun.Status.CANCELLED
                else JudgeShard.Status.FAILED
            )
            for shard_id in held:
                shard_finish(
                    shard_id=shard_id,
                    status=status,
                    error="" if status == "cancelled" else "the run stopped",
                    holder=self.worker_id,
                )
        return status


def _release_after_database_error(run: JudgeRun, worker_id: str, shard_ids: list[int], error: Exception) -> bool:
    """Give this worker's shards back once the database answers again; False while it does not
    (the run's watchdog takes them back once their heartbeat is stale)."""
    logger.warning("run %s: the database went away under worker %s (%s)", run.pk, worker_id, error)
    # The broken connection is dropped; the next query opens a new one.
    close_old_connections()
    try:
        if shards_release(shard_ids=shard_ids, holder=worker_id):
            run_enqueue(run=JudgeRun.objects.get(pk=run.pk))
    except DatabaseError:
        close_old_connections()
        return False
    return True


def _run_slice(run: JudgeRun, worker_id: str, *, first_shard_id: int | None, on_progress, on_signal: str) -> str:
    try:
        endpoint = endpoint_for_run(run)
    except Exception as error:
        # Nothing of the run can be sent: it stops with the reason, and the shards it was to
        # send (this task's, or every queued one for `--inline`) say it too.
        run_stop(run_id=run.pk, error=str(error))
        if first_shard_id is not None:
            shard_ids = [first_shard_id]
        else:
            shard_ids = list(run.shards.filter(status=JudgeShard.Status.QUEUED).values_list("pk", flat=True))
        for shard_id in shard_ids:
            shard_finish(shard_id=shard_id, status=JudgeShard.Status.FAILED, error=f"{type(error).__name__}: {error}")
        raise
    work = RunSlice(
        run,
        endpoint,
        worker_id,
        first_shard_id=first_shard_id,
        on_progress=on_progress,
        wait_for_others=on_signal == "cancel",
    )
    if on_signal == "release":
        # A worker holds the run: a watchdog looks after it should this worker die.
        run_watch_schedule(run_id=run.pk)
    try:
        delivered = work.execute(interruptible=True)
        status = work.close(delivered, on_signal=on_signal)
    except (OperationalError, InterfaceError) as error:
        # The database went away under the run (restarted, or out of reach): its replies not yet
        # saved are lost, nothing else. The shards this worker still holds go back to the queue,
        # for it or another worker to send only what they miss; the run goes on by itself.
        if not _release_after_database_error(run, worker_id, list(work.left), error):
            raise
        return "released"
    except BaseException as error:
        # Only the shards this worker still holds: cut off from the database (the error may be
        # its connection's), it may have lost them to a worker that has finished them since.
        for shard_id in list(work.left):
            shard_finish(
                shard_id=shard_id,
                status=JudgeShard.Status.FAILED,
                error=f"{type(error).__name__}: {error}",
                holder=worker_id,
            )
        raise
    finally:
        run_worker_leave(run_id=run.pk, worker_id=worker_id)
    run_close_if_idle(run=run)
    if delivered.stopped == "signal" and on_signal == "release":
        # Hand the signal on to the worker's own handler: it shuts down once this task returns.
        assert delivered.signal is not None  # a delivery stopped by a signal records its number
        signal.raise_signal(delivered.signal)
    return status


def shard_execute(*, shard_id: int, worker_id: str | None = None, on_progress: Callable[[], None] | None = None) -> str:
    """Claim the shard, then keep the run's window full with the run's next shards until none
    is left. Returns "done", "cancelled", "failed" or "interrupted" (the worker was asked to
    shut down: its shards went back to the queue), or "skipped" when the shard is taken."""
    worker_id = worker_id or worker_name()
    if JudgeRun.objects.filter(shards__pk=shard_id, batch=True).exists():
        return "skipped"  # a batch run's calls go through its batches (judging/engine/batch.py), never live
    if not shard_claim(shard_id=shard_id, worker_id=worker_id):
        return "skipped"
    run = JudgeRun.objects.select_related("dataset", "endpoint").get(shards__pk=shard_id)
    return _run_slice(run, worker_id, first_shard_id=shard_id, on_progress=on_progress, on_signal="release")


def run_execute_inline(*, run: JudgeRun, on_progress: Callable[[], None] | None = None) -> str:
    """Run the run's queued shards in this process, one window across them all (`judge --inline`).
    Ctrl-C cancels the run (what came back is kept; `judge_resume --inline` continues)."""
    JudgeRun.objects.filter(pk=run.pk, status__in=[JudgeRun.Status.PENDING, JudgeRun.Status.FAILED]).update(
        status=JudgeRun.Status.RUNNING, finished_at=None, error=""
    )
    run = JudgeRun.objects.select_related("dataset", "endpoint").get(pk=run.pk)
    if run.status != JudgeRun.Status.RUNNING:
        return run.status
    return _run_slice(run, worker_name(), first_shard_id=None, on_progress=on_progress, on_signal="cancel")
