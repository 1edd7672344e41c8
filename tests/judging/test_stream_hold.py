"""A stream held by its caller (who cannot renew its hold on the work) starts no call, new or
retried, until released; calls already in flight finish."""

from __future__ import annotations

import asyncio

from asgiref.sync import async_to_sync

from llm.calls import ChatRequest
from llm.config import EndpointConfig
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
