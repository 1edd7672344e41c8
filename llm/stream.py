"""Calls to LLM endpoints flowing through a window: `CallStream`, and `chat_many` / `chat_one`.

Everything else (judging, generation, reference drafting, translation) sends through
`CallStream` (via `llm.delivery`, which stores replies in chunks), or `chat_many` /
`chat_one` for a few calls. A stream owns what the papers' one-call-at-a-time scripts
lacked: an adaptive window of calls in flight (`llm.window`), retries with exponential
backoff and jitter that honour `Retry-After` (`llm.retry`), the endpoint's limits (calls in
flight, requests and tokens per minute) kept together with every other worker (`llm.gate`,
`llm.budget`), one deadline and a size cap per call (`llm.reading`), a `max_tokens` on every call (`llm.config`), errors a researcher can act on (the URL,
the server's own message; errors retrying cannot fix are not retried, and a stream stops after
a few identical ones), and a response cache in the database (`llm.cache`) so an identical
prompt is never paid twice.

API keys are read from the environment variable the endpoint names, at call time
(`llm.pool`), and are never stored, logged or put in the cache key. Only allowed variables can
be named, and every text an upstream sends back (a reply or an error) is redacted of key values
as it becomes a ChatResult or an LLMCallError (llm.secrets).
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Awaitable, Callable, Sequence

from asgiref.sync import async_to_sync, sync_to_async
from django.conf import settings
from django.utils.translation import gettext as _

from llm.budget import BudgetLimits, request_tokens
from llm.cache import CACHE_FLUSH_SECONDS, CacheRow, cache_key, cache_lookup, cache_row, cache_store
from llm.calls import ChatRequest, ChatResult, Outcome, chat_body, read_reply
from llm.config import EndpointConfig, call_deadline
from llm.errors import EndpointUnusable, LLMCallError
from llm.gate import Gates, endpoint_budget
from llm.pool import ClientPool
from llm.reading import reply_text_cap
from llm.retry import backoff_seconds, classify, ratelimit_wait
from llm.window import AdaptiveWindow, in_flight_resolve

# A stream stops after this many identical errors that retrying cannot fix (a wrong key, an
# unknown model, a base URL without /v1), or identical errors of any kind before any call was
# answered (a server that is down): the next thousand calls would fail the same way.
FATAL_REPEATS = 3
# Replies remembered per stream so that an identical request sent later is not paid again
# before the cache row is written (bounded: memory stays flat over a long run).
RECENT_REPLIES = 2000


class _Slot:
    """A call's place in a stream's window. A call that failed and will be retried gives its
    place up for the backoff and waits for a new one before it is sent again: the window has
    usually just shrunk (a timeout, a 429), and retries that went out all at once would queue
    at the server again, time out again, and run out of attempts."""

    def __init__(self, stream: CallStream, request: ChatRequest):
        self.stream = stream
        self.request = request
        self.state = "held"  # held -> backoff -> waiting -> held ... -> gone
        self.granted: asyncio.Future | None = None

    def release_for_retry(self) -> None:
        self.stream.active -= 1
        self.stream.retrying += 1
        self.state = "backoff"
        self.stream._wake.set()

    async def reacquire(self) -> None:
        self.state = "waiting"
        self.granted = asyncio.get_running_loop().create_future()
        self.stream._retry_queue.append(self)
        self.stream._wake.set()
        await self.granted  # the stream's loop grants it when the window has room

    def grant(self) -> None:
        """Called by the stream's loop: retries take free places before calls not yet sent."""
        self.stream.retrying -= 1
        self.stream.active += 1
        self.state = "held"
        assert self.granted is not None  # set by reacquire, which queued this slot
        if not self.granted.done():
            self.granted.set_result(None)

    def finish(self) -> None:
        if self.state == "held":
            self.stream.active -= 1
        elif self.state in ("backoff", "waiting"):
            self.stream.retrying -= 1
        self.state = "gone"
        self.stream._wake.set()


async def _call_with_retries(
    clients: ClientPool,
    endpoint: EndpointConfig,
    request: ChatRequest,
    window: AdaptiveWindow,
    slot: _Slot,
    gates: Gates,
    key: str,
) -> ChatResult:
    attempt = 0
    text_cap = reply_text_cap(request.max_tokens)
    deadline = call_deadline(endpoint, request.max_tokens)
    while True:
        epoch = window.epoch
        n = clients.take()
        started = time.monotonic()
        try:
            payload = chat_body(request)
            # One deadline for the whole call (connect, wait and read): a server dripping a byte a
            # second never holds a call past it. The body is read up to its cap (llm.sending).
            async with asyncio.timeout(deadline):
                content, headers = await clients.senders[n].post(payload)
            result = read_reply(content, started, text_cap=text_cap, key=key)
            wait = ratelimit_wait(headers)
            if wait:
                gates.hold_back(wait)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - every failure is classified, none escapes raw
            failure = classify(error, endpoint, deadline=deadline)
            if failure.overload:
                window.on_overload(epoch=epoch)
            if failure.retry_after:
                gates.hold_back(failure.retry_after)
            if not failure.retryable or attempt >= endpoint.max_retries:
                reason = failure.reason
                if failure.retryable:
                    reason = _("%(reason)s after %(attempts)d attempts") % {"reason": reason, "attempts": attempt + 1}
                raise LLMCallError(reason, kind=failure.kind) from error
            delay = backoff_seconds(attempt, failure.retry_after)
        else:
            window.on_success(
                epoch=epoch,
                seconds=time.monotonic() - started,
                completion_tokens=result.completion_tokens,
                deadline=deadline,
            )
            return result
        finally:
            clients.give(n)
        slot.release_for_retry()
        await asyncio.sleep(delay)
        await slot.reacquire()
        attempt += 1


def window_for(endpoint: EndpointConfig, in_flight: int | str | None = None) -> AdaptiveWindow:
    """A fixed ceiling (`in_flight`, else the endpoint's stated limit) with AIMD below it, or,
    when neither states one (or `in_flight` is "auto"), `auto`: the window finds the server's
    capacity by itself, up to LLM_AUTO_MAX_IN_FLIGHT."""
    ceiling, auto = in_flight_resolve(
        in_flight, stated=endpoint.max_in_flight, auto_ceiling=int(settings.LLM_AUTO_MAX_IN_FLIGHT)
    )
    return AdaptiveWindow(ceiling=ceiling, auto=auto)


OnOutcome = Callable[[int, Outcome, CacheRow | None], None]


class CallStream:
    """Calls flowing through a window: as one call finishes the next starts.

    Requests come from `run(requests)` and then from `feed()`, which is asked for more while
    fewer calls wait than two windows hold (so a slow call never holds back what comes next),
    until it returns nothing; a feed that returns None has nothing yet but may have more
    later, and is asked again after `poke()`. Each request gets the next index; `on_outcome(index, outcome,
    cache_row)` hears of every outcome on the event loop, with the row to store in the cache
    for a reply that was paid for (None for a cached or shared one). Identical requests are sent
    once. `stop()` ends the stream: calls in flight are cancelled, nothing more is sent.
    FATAL_REPEATS identical errors that retrying cannot fix stop it too (`unusable` says why).
    """

    def __init__(
        self,
        endpoint: EndpointConfig,
        *,
        window: AdaptiveWindow,
        on_outcome: OnOutcome,
        feed: Callable[[], Awaitable[Sequence[ChatRequest]]] | None = None,
        use_cache: bool = True,
        budgets: Sequence[BudgetLimits] = (),
    ):
        self.endpoint = endpoint
        # False: the database cache is not read (a re-run measuring a judge's drift asks the
        # server again); identical requests within the stream still share one call.
        self.use_cache = use_cache
        self.window = window
        self.on_outcome = on_outcome
        self.feed = feed
        self.pending: deque[tuple[int, ChatRequest, str]] = deque()
        self.next_index = 0
        self.active = 0  # calls holding a place in the window
        self.retrying = 0  # calls waiting to be sent again, without a place
        self._retry_queue: deque[_Slot] = deque()
        self.stopped = False
        # Held: the caller could not renew its hold on the work (its database is out of reach):
        # no new call and no retry starts until it can; calls in flight finish.
        self.held = False
        # Calls started (new or retried), and how many may have started before the caller hears
        # from its database again (None: no bound); when they are spent, `on_allowance_spent`
        # asks it to call now.
        self.started = 0
        self.start_limit: int | None = None
        self.on_allowance_spent: Callable[[], None] | None = None
        self.exhausted = feed is None
        self.feed_waiting = False
        self.unusable: EndpointUnusable | None = None
        self.failures: Counter[str] = Counter()
        self.answered = 0  # calls that got a reply
        self._leaders: dict[str, list[int]] = {}
        self._recent: OrderedDict[str, ChatResult] = OrderedDict()
        self._tasks: set[asyncio.Task] = set()
        self._wake = asyncio.Event()
        self._clients = ClientPool(endpoint)
        # The endpoint's limits (and `budgets`, a run's concurrency) shared with every worker.
        self._gates = Gates(endpoint_budget(endpoint), self._wake.set, budgets)
        self._tokens = bool(endpoint.tokens_per_minute)

    def stop(self) -> None:
        """Send nothing more and cancel the calls in flight (what came back was handed over)."""
        self.stopped = True
        self._wake.set()

    def hold(self, held: bool) -> None:
        """Start no call (new or retried) while `held`; calls in flight go on."""
        if held != self.held:
            self.held = held
            self._wake.set()

    def allow_until(self, limit: int | None) -> None:
        """Start calls only while fewer than `limit` have started in all (None: no bound)."""
        self.start_limit = limit
        self._wake.set()

    def _may_start(self) -> bool:
        if self.start_limit is None or self.started < self.start_limit:
            return True
        if self.on_allowance_spent is not None:
            self.on_allowance_spent()
        return False

    def poke(self) -> None:
        """Ask the feed again: it said it had nothing yet (None), and something may have come."""
        self.feed_waiting = False
        self._wake.set()

    async def add(self, requests: Sequence[ChatRequest]) -> None:
        """Queue requests: what the cache holds is handed over at once, the rest waits its turn."""
        keys = [cache_key(self.endpoint, request) for request in requests]
        cached = (
            await sync_to_async(cache_lookup)(sorted(set(keys)), self.endpoint.cache_workspace_id)
            if keys and self.use_cache
            else {}
        )
        for request, key in zip(requests, keys):
            index = self.next_index
            self.next_index += 1
            hit = cached.get(key)
            if hit is not None:
                self.on_outcome(index, hit, None)
            else:
                self.pending.append((index, request, key))
        self._wake.set()

    async def _refill(self) -> None:
        assert self.feed is not None  # a stream without a feed starts exhausted and never refills
        try:
            more = await self.feed()
            if more is None:
                self.feed_waiting = True  # nothing now, more may come: asked again after poke()
            elif more:
                await self.add(more)
            else:
                self.exhausted = True
        finally:
            self._wake.set()

    async def run(self, requests: Sequence[ChatRequest] = ()) -> None:
        """Send everything (or until stopped); returns when no call is left in flight."""
        feeding: asyncio.Task | None = None
        renewing = asyncio.create_task(self._renew())
        try:
            await self.add(list(requests))
            while not self.stopped:
                self._wake.clear()
                if feeding is not None and feeding.done():
                    feeding.result()  # a feed that failed stops the stream with its error
                    feeding = None
                if (
                    not self.exhausted
                    and not self.feed_waiting
                    and feeding is None
                    and len(self.pending) < max(2 * self.window.size, 32)
                ):
                    feeding = asyncio.create_task(self._refill())
                self._send()
                if self.exhausted and feeding is None and not self.pending and self.active == 0 and self.retrying == 0:
                    break
                await self._wake.wait()
        finally:
            renewing.cancel()
            if feeding is not None:
                # Never cancelled: a feed may be claiming work in the database; let it finish so
                # what it claimed is known (and released) by the caller.
                await asyncio.wait([feeding])
            for task in list(self._tasks):
                task.cancel()
            if self._tasks:
                await asyncio.gather(*self._tasks, return_exceptions=True)
            await self._clients.close()
            await asyncio.gather(renewing, return_exceptions=True)
            await self._gates.close()

    def _estimate(self, request: ChatRequest) -> int:
        return request_tokens(request) if self._tokens else 0

    def _send(self) -> None:
        """Start what the window and the shared budgets allow: retries first, then new calls;
        ask the budgets for the rest."""
        if self.held:
            return
        gates = self._gates
        while self._retry_queue and self.active < self.window.size:
            slot = self._retry_queue[0]
            if slot.state == "waiting":
                if gates.room(self.active) < 1 or not self._may_start():
                    break
                gates.take(self._estimate(slot.request))
                self._spend()
                slot.grant()
            self._retry_queue.popleft()
        while self.pending and self.active < self.window.size:
            index, request, key = self.pending[0]
            calls = key not in self._leaders and key not in self._recent
            if calls and (gates.room(self.active) < 1 or not self._may_start()):
                break
            self.pending.popleft()
            if calls:
                gates.take(self._estimate(request))
                self._spend()
            self._start(index, request, key)
        room = self.window.size - self.active
        if room > 0 and (self.pending or self._retry_queue) and not self.stopped and self._may_start():
            # Not while the calls allowed before the database answers again are spent: nothing
            # could start with what the budgets gave. A stream waiting for that answer asked
            # them, was woken by the ask, and asked again, in a loop until the answer came:
            # 26,000-36,000 asks (each estimating a window of calls) per worker for 1,700-2,000
            # calls in a two-worker run, CPU the worker's own database writes were waiting for.
            if gates.asking is None:
                gates.ask(self.active, self._estimates(room))
            else:
                gates.ask_again()

    def _estimates(self, room: int) -> list[int]:
        """The tokens of the next `room` calls to start: retries first, then new calls."""
        ready = [slot.request for slot in self._retry_queue if slot.state == "waiting"][:room]
        if len(ready) < room:
            ready += [request for _index, request, _key in itertools.islice(self.pending, room - len(ready))]
        if not self._tokens:
            return [0] * len(ready)
        return [request_tokens(request) for request in ready]

    def _spend(self) -> None:
        self.started += 1

    async def _renew(self) -> None:
        """Keep the leases of the shared budgets alive, giving back slots not needed now."""
        while True:
            await asyncio.sleep(0.25)
            wanted = min(self.window.size, self.active + len(self.pending) + len(self._retry_queue))
            await self._gates.renew(in_use=self.active, wanted=wanted)

    def _start(self, index: int, request: ChatRequest, key: str) -> None:
        followers = self._leaders.get(key)
        if followers is not None:
            followers.append(index)  # the same request is in flight: share its reply
            return
        recent = self._recent.get(key)
        if recent is not None:
            self.on_outcome(index, _shared(recent), None)
            return
        self._leaders[key] = []
        self.active += 1
        task = asyncio.create_task(self._one(index, request, key))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _one(self, index: int, request: ChatRequest, key: str) -> None:
        slot = _Slot(self, request)
        try:
            outcome: Outcome = await _call_with_retries(
                self._clients, self.endpoint, request, self.window, slot, self._gates, key
            )
        except LLMCallError as error:
            outcome = error
        finally:
            slot.finish()
        followers = self._leaders.pop(key, [])
        row = None
        if isinstance(outcome, ChatResult):
            row = cache_row(self.endpoint, key, request, outcome)
            self._recent[key] = outcome
            if len(self._recent) > RECENT_REPLIES:
                self._recent.popitem(last=False)
        self.on_outcome(index, outcome, row)
        for follower in followers:
            self.on_outcome(follower, _shared(outcome), None)
        if isinstance(outcome, ChatResult):
            self.answered += 1
        elif outcome.kind != "context_length":
            self.failures[outcome.reason] += 1
            # Errors retrying cannot fix (a wrong key, model or path) stop the stream after a few;
            # others (a 500, a refused connection) only while no call has been answered: a
            # server that is down or a wrong URL, never a flaky server that mostly answers.
            repeated = self.failures[outcome.reason] >= FATAL_REPEATS
            if repeated and (outcome.kind == "fatal" or not self.answered) and self.unusable is None:
                reason = outcome.reason
                if self.endpoint.base_url not in reason:
                    reason = _("%(reason)s at %(url)s") % {"reason": reason, "url": self.endpoint.base_url}
                self.unusable = EndpointUnusable(
                    _("Stopped after %(count)d calls failed the same way: %(reason)s")
                    % {"count": FATAL_REPEATS, "reason": reason}
                )
                self.stop()


def _shared(outcome: Outcome) -> Outcome:
    if isinstance(outcome, ChatResult):
        return ChatResult(
            outcome.text,
            outcome.prompt_tokens,
            outcome.completion_tokens,
            outcome.latency_ms,
            True,
            outcome.finish_reason,
            outcome.model,
            outcome.key,
        )
    return outcome


async def chat_many(
    endpoint: EndpointConfig,
    requests: Sequence[ChatRequest],
    *,
    in_flight: int | None = None,
    on_result: Callable[[int, Outcome], None] | None = None,
    window: AdaptiveWindow | None = None,
    use_cache: bool = True,
) -> list[Outcome]:
    """Every request's outcome, in order: a window of calls in flight (`in_flight`, else the
    endpoint's limit, else `auto`), retries with exponential backoff and jitter on 429, 5xx,
    timeouts and connection errors, honouring Retry-After, and the response cache (keyed by
    base URL, model, messages and parameters) so an identical prompt is never paid twice.
    `on_result(index, outcome)` hears of each outcome as it arrives. Calls a stopped stream
    never sent fail with the reason it stopped. `use_cache=False` asks the server again (a
    re-run measuring a judge's drift) and still stores the new replies."""
    results: list[Outcome | None] = [None] * len(requests)
    pending_cache: list[CacheRow] = []

    def on_outcome(index: int, outcome: Outcome, row: CacheRow | None) -> None:
        results[index] = outcome
        if row is not None:
            pending_cache.append(row)
        if on_result is not None:
            maybe = on_result(index, outcome)
            if inspect.isawaitable(maybe):
                asyncio.ensure_future(maybe)

    async def flush() -> None:
        if pending_cache:
            chunk = pending_cache[:]
            pending_cache.clear()
            await sync_to_async(cache_store)(chunk)

    stopping = asyncio.Event()

    async def flusher() -> None:
        while not stopping.is_set():
            try:
                await asyncio.wait_for(stopping.wait(), CACHE_FLUSH_SECONDS)
            except TimeoutError:
                pass
            await flush()

    stream = CallStream(
        endpoint, window=window or window_for(endpoint, in_flight), on_outcome=on_outcome, use_cache=use_cache
    )
    flushing = asyncio.create_task(flusher())
    try:
        await stream.run(requests)
    finally:
        stopping.set()
        await flushing
        # Shielded: a cancelled run still keeps the replies it already paid for.
        await asyncio.shield(flush())
    if stream.unusable is not None:
        for index, outcome in enumerate(results):
            if outcome is None:
                results[index] = LLMCallError(str(stream.unusable), kind="fatal")
    return results  # type: ignore[return-value]


def chat_one(endpoint: EndpointConfig, request: ChatRequest) -> ChatResult:
    """Synchronous convenience for one call (raises LLMCallError)."""
    [outcome] = async_to_sync(chat_many)(endpoint, [request], in_flight=1)
    if isinstance(outcome, LLMCallError):
        raise outcome
    return outcome
