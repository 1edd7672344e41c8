"""Handing LLM replies to the database in chunks while the calls are still in flight.

Judging, generation and the curation LLM steps all send many requests through one
`llm.stream.CallStream` and store each reply as it arrives. Writing one row per reply from
the event loop would make every reply wait for the database; so replies are buffered and
handed over in chunks, on the database thread (`sync_to_async`), every `flush_seconds`:
first the paid replies go to the response cache, then the chunk goes to `save`. That order
matters: a reply is kept before anything parses it, so a parser that fails never costs a call.
The chunk handler runs off the event loop, so turning replies into rows (parsing judge
replies, say) never holds up the calls in flight.

The stream need not be known in advance: `feed()` is asked for more requests whenever fewer
wait than the window holds, so a run's calls flow on across its shards without the window
ever draining. An optional `tick` runs on a timer (heartbeats, progress, noticing a cancel,
sharing a run's concurrency with other workers). With `interruptible`, Ctrl-C (SIGINT) or
SIGTERM stops the calls at once: what came back is saved, and the result says so.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from asgiref.sync import async_to_sync, sync_to_async
from django.db import connection

from llm.budget import BudgetLimits
from llm.cache import CacheRow, cache_store
from llm.calls import ChatRequest, Outcome
from llm.config import EndpointConfig
from llm.errors import EndpointUnusable
from llm.stream import CallStream, window_for
from llm.window import AdaptiveWindow

FLUSH_SECONDS = 0.25

# A chunk: the replies handed to `save` at one flush, as (index, outcome). ("Batch" is kept for
# the provider's Batch API, llm/batch.py.)
Chunk = list[tuple[int, Outcome]]


@dataclass(frozen=True)
class TickState:
    """What a tick sees: outcomes delivered so far, calls in flight, the window and its bound."""

    delivered: int
    in_flight: int
    window: int
    ceiling: int
    overloads: int


@dataclass(frozen=True)
class TickAnswer:
    """What a tick asks for: stop the calls, a new bound for the window, and/or asking the feed
    again (it had nothing, and now may have)."""

    stop: bool = False
    ceiling: int | None = None
    refill: bool = False


@dataclass
class Delivered:
    """How a delivery ended. `stopped`: None (everything was sent), "tick" (a tick asked),
    "signal" (Ctrl-C or SIGTERM; `signal` holds which) or "unusable" (identical errors that
    retrying cannot fix; `unusable` says which)."""

    delivered: int = 0
    stopped: str | None = None
    signal: int | None = None
    unusable: EndpointUnusable | None = None
    window: int = 0
    overloads: int = 0


@dataclass
class _Interrupt:
    """Filled in by the signal handler (main thread), read by the event loop."""

    stop: Callable[[int], object] | None = None
    received: list[int] = field(default_factory=list)


def database_answers() -> None:
    """One round trip to the database: it answers (a worker cut off from it waits here)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


async def deliver_chunked(
    endpoint: EndpointConfig,
    requests: Sequence[ChatRequest] = (),
    *,
    save: Callable[[Chunk], None],
    feed: Callable[[], Sequence[ChatRequest]] | None = None,
    in_flight: int | None = None,
    window: AdaptiveWindow | None = None,
    flush_seconds: float = FLUSH_SECONDS,
    tick: Callable[[TickState], bool | TickAnswer | None] | None = None,
    tick_seconds: float = 1.0,
    use_cache: bool = True,
    budgets: Sequence[BudgetLimits] = (),
    hold_seconds: float | None = None,
    _interrupt: _Interrupt | None = None,
) -> Delivered:
    """Send `requests`, then what `feed()` hands out until it returns nothing, and hand every
    (index, outcome) to `save` in chunks, in arrival order (indexes count across `requests`
    and every feed).

    `save(chunk)`, `feed()` and `tick(state)` run on the database thread. A tick runs every
    `tick_seconds`; it returns True (or TickAnswer(stop=True)) to stop: calls still in flight
    are cancelled, and what came back is saved. Every outcome that arrived is saved before
    this returns, whatever happens. The window is `window`, else one for `in_flight` (else the
    endpoint's limit, else `auto`). `use_cache=False` asks the server again for what the cache
    holds (a re-run measuring a judge's drift) and still stores the new replies. `budgets` are
    shared limits beyond the endpoint's (a run's concurrency across its workers).

    `hold_seconds` (with a `tick`): the caller holds its work (shards, budget leases) only while
    it can renew that hold in the database; cut off from it, another worker takes the work over
    and calls again, and every reply the cut-off worker gets is paid twice. So, in two ways, no
    new call (nor retry) starts once the database stops answering:
    - after the last step the database answered (a flush that wrote replies, a tick), at most
      one window of calls starts, counted from when that step was sent: once they are spent,
      the flush and tick run at once and calls wait for them to come back. Every reply that
      arrived before a step was sent is saved by it; so whatever the calls' latency, a worker
      whose database fell silent loses (and another worker pays again) at most the calls it had
      in flight then and one window more: its window twice.
    - when no tick has come back for `hold_seconds`, nothing starts until one does (slow calls
      that free no place in the window for minutes start no call on a stale hold either).
    Calls in flight go on. Every round trip (flush, tick, feed, the budgets' asks and renewals)
    runs on the one database thread, so a budget lease that cannot be renewed holds up the
    flushes too. With a healthy database a flush takes milliseconds and the bound never bites:
    it only slows sending when a database step takes longer than a whole call.
    """
    buffer: Chunk = []
    paid: list[CacheRow] = []
    result = Delivered()
    window = window or window_for(endpoint, in_flight)

    def on_outcome(index: int, outcome: Outcome, row: CacheRow | None) -> None:
        result.delivered += 1
        buffer.append((index, outcome))
        if row is not None:
            paid.append(row)

    def store(rows: list[CacheRow], chunk: Chunk) -> None:
        # The cache first: a reply is kept before anything parses it.
        if rows:
            cache_store(rows)
        if chunk:
            save(chunk)

    async def flush() -> None:
        if buffer or paid:
            rows, chunk = paid[:], buffer[:]
            paid.clear()
            buffer.clear()
            await sync_to_async(store)(rows, chunk)

    stream = CallStream(
        endpoint,
        window=window,
        on_outcome=on_outcome,
        feed=sync_to_async(feed) if feed is not None else None,
        use_cache=use_cache,
        budgets=budgets,
    )
    loop = asyncio.get_running_loop()
    if _interrupt is not None:

        def stop_on_signal(signum: int) -> None:
            if result.stopped is None:
                result.stopped, result.signal = "signal", signum
            stream.stop()

        _interrupt.stop = lambda signum: loop.call_soon_threadsafe(stop_on_signal, signum)
        for signum in _interrupt.received:  # arrived before the loop was ready
            stop_on_signal(signum)

    # The keeper is told to stop, never cancelled: a cancel landing while a chunk waits for the
    # database thread would drop that chunk.
    stopping = asyncio.Event()
    # Set to run the keeper's next step now: the calls allowed since the database last answered
    # are spent, or the delivery is ending.
    nudge = asyncio.Event()
    failure: list[BaseException] = []
    ticked_at = [loop.time()]
    guarded = bool(hold_seconds) and tick is not None
    if guarded:
        stream.on_allowance_spent = nudge.set
        stream.allow_until(window.size)

    async def hold_watch() -> None:
        assert hold_seconds is not None
        while not stopping.is_set():
            stream.hold(loop.time() - ticked_at[0] > hold_seconds)
            try:
                await asyncio.wait_for(stopping.wait(), min(0.25, hold_seconds / 4))
            except TimeoutError:
                pass

    async def keeper() -> None:
        next_tick = loop.time()
        first = True
        while not stopping.is_set():
            if not first:  # the first tick runs at once: the window shows from the start
                try:
                    await asyncio.wait_for(nudge.wait(), flush_seconds)
                except TimeoutError:
                    pass
            first = False
            spent = nudge.is_set() and not stopping.is_set()
            nudge.clear()
            try:
                wrote = bool(buffer or paid)
                if guarded and spent and wrote:
                    # The calls allowed are spent and replies wait to be written: the quickest
                    # answer from the database comes first, so the stream goes on while they
                    # are written (a flush of a window of judgments takes tens of milliseconds,
                    # more on a busy machine, and the window drained while it ran).
                    sent_before = stream.started
                    await sync_to_async(database_answers)()
                    stream.allow_until(sent_before + window.size)
                sent_before = stream.started  # what this step answers for: every reply before it
                await flush()
                # Spent with nothing to write (retries free no place and deliver nothing): the
                # tick is the round trip that says the database still answers.
                due = loop.time() >= next_tick or (spent and not wrote)
                if tick is not None and due and not stopping.is_set():
                    state = TickState(result.delivered, stream.active, window.size, window.ceiling, window.overloads)
                    answer = await sync_to_async(tick)(state)
                    ticked_at[0] = next_tick = loop.time()
                    next_tick += tick_seconds
                    if isinstance(answer, TickAnswer):
                        if answer.ceiling is not None:
                            window.set_ceiling(answer.ceiling)
                        if answer.refill:
                            stream.poke()
                        answer = answer.stop
                    if answer and result.stopped is None:
                        result.stopped = "tick"
                        stream.stop()
                if guarded and (wrote or due):
                    # The database answered: one window may start after what the step was sent with.
                    stream.allow_until(sent_before + window.size)
            except BaseException as error:  # noqa: BLE001 - a failed save stops the calls, then is raised
                failure.append(error)
                stream.stop()
                return

    keeping = asyncio.create_task(keeper())
    watching = asyncio.create_task(hold_watch()) if hold_seconds and tick is not None else None
    try:
        await stream.run(requests)
    finally:
        stopping.set()
        nudge.set()
        await keeping
        if watching is not None:
            await watching
        await asyncio.shield(flush())
    if failure:
        raise failure[0]
    if stream.unusable is not None and result.stopped is None:
        result.stopped, result.unusable = "unusable", stream.unusable
    result.window, result.overloads = window.size, window.overloads
    return result


def deliver_chunked_sync(
    endpoint: EndpointConfig, requests: Sequence[ChatRequest] = (), *, interruptible: bool = False, **options: Any
) -> Delivered:
    """`deliver_chunked` from synchronous code (a task, a command, a view).

    With `interruptible` (and on the main thread), SIGINT and SIGTERM stop the calls at once
    instead of killing the process: what came back is saved, `stopped` is "signal", and the
    caller says how to continue. A second Ctrl-C while the last replies are saved is left to
    the handler that was there before. The handlers are restored on return."""
    if not requests and options.get("feed") is None:
        return Delivered()
    if not interruptible or threading.current_thread() is not threading.main_thread():
        return async_to_sync(deliver_chunked)(endpoint, requests, **options)
    interrupt = _Interrupt()
    previous: dict[int, Callable[[int, FrameType | None], Any] | int | None] = {
        signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)
    }

    def on_signal(signum: int, frame: FrameType | None) -> None:
        if interrupt.received:  # asked twice: the previous handler decides (Ctrl-C: KeyboardInterrupt)
            handler = previous.get(signum)
            if callable(handler):
                handler(signum, frame)
            elif handler == signal.SIG_DFL and signum == signal.SIGINT:
                raise KeyboardInterrupt
            return
        interrupt.received.append(signum)
        if interrupt.stop is not None:
            try:
                interrupt.stop(signum)
            except RuntimeError:  # the delivery's loop has closed: the signal is handed on below
                pass

    for signum in previous:
        signal.signal(signum, on_signal)
    try:
        delivered = async_to_sync(deliver_chunked)(endpoint, requests, _interrupt=interrupt, **options)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if interrupt.received and delivered.stopped != "signal":
        # It came as the delivery ended (or after another stop), too late to stop any call: the
        # handler that was there before gets it, as if it had come a moment later. Swallowed, a
        # worker's SIGTERM would leave it running on until it was killed.
        signal.raise_signal(interrupt.received[0])
    return delivered
