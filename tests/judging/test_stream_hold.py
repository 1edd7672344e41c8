"""A stream held by its caller (who cannot renew its hold on the work) starts no call, new or
retried, until released; calls already in flight finish. A delivery whose database falls silent
starts at most one window of calls more, however fast the calls come back."""

from __future__ import annotations

import asyncio
import threading
import time

from asgiref.sync import async_to_sync

from llm.calls import ChatRequest
from llm.config import EndpointConfig
from llm.delivery import deliver_chunked_sync
from llm.stream import CallStream
from llm.window import AdaptiveWindow


def ask(n: int) -> ChatRequest:
    return ChatRequest(model="m", messages=(("user", f"held {n}"),), max_tokens=16)


def test_a_held_stream_starts_nothing_until_released(fake_llm, db):
    # No stated limit: no shared budget to wait for, so only the hold can keep a call from starting.
    endpoint = EndpointConfig(
        name="fake",
        base_url=fake_llm.base_url,
        api_key_env="FAKE_LLM_KEY",
        default_model="m",
        timeout_seconds=2.0,
        max_retries=0,
    )
    outcomes: list[int] = []

    async def scenario():
        stream = CallStream(
            endpoint, window=AdaptiveWindow(ceiling=4), on_outcome=lambda index, outcome, row: outcomes.append(index)
        )
        stream.hold(True)
        running = asyncio.create_task(stream.run([ask(n) for n in range(10)]))
        # Once the ten are queued, the same step of the stream would have started four of them.
        while len(stream.pending) + stream.active + len(outcomes) < 10:
            await asyncio.sleep(0.01)
        held = (stream.active, len(stream.pending), fake_llm.count)
        stream.hold(False)
        await running
        return held

    held = async_to_sync(scenario)()
    assert held == (0, 10, 0)
    assert sorted(outcomes) == list(range(10)) and fake_llm.count == 10


def test_a_delivery_whose_database_falls_silent_starts_at_most_one_window_more(fake_llm, db):
    # Calls much faster than the hold's timer: only the bound on calls started between two
    # answers from the database keeps the delivery from sending everything while it is silent.
    fake_llm.latency = 0.02
    endpoint = EndpointConfig(
        name="fake", base_url=fake_llm.base_url, api_key_env="FAKE_LLM_KEY", default_model="m", max_retries=0
    )
    silent, silenced = threading.Event(), threading.Event()
    saved: list[int] = []
    answered_before: list[int] = []

    def save(chunk) -> None:
        saved.extend(index for index, _ in chunk)
        if len(saved) >= 8 and not silenced.is_set():
            answered_before.append(fake_llm.count)
            silenced.set()
            silent.wait(60)  # the database stops answering: this save, and every tick, wait

    sent_while_silent: list[int] = []

    def watch() -> None:
        # Off the delivery's thread: it counts what reaches the server while the database is silent.
        if silenced.wait(60):
            # Without the bound, the 200 calls go out within a second or two; wait for that long
            # (or for all of them) before counting.
            for _ in range(40):
                if fake_llm.count >= 200:
                    break
                time.sleep(0.05)
            sent_while_silent.append(fake_llm.count - answered_before[0])
        silent.set()

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        delivered = deliver_chunked_sync(
            endpoint,
            [ask(n) for n in range(200)],
            save=save,
            window=AdaptiveWindow(ceiling=4),
            tick=lambda state: None,
            tick_seconds=0.1,
            hold_seconds=60.0,
        )
    finally:
        silent.set()
        watcher.join(60)
    # At most the four calls in flight when the database fell silent, and one window (four) more.
    assert sent_while_silent[0] <= 8
    assert sorted(saved) == list(range(200)) and fake_llm.count == 200
    assert delivered.stopped is None
