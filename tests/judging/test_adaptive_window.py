"""The adaptive window (llm/window.py): pure rules on a simulated clock, then against a real
loopback server with one slot and a queue, as llama.cpp serves."""

import heapq
import time

import pytest
from asgiref.sync import async_to_sync

from llm.calls import ChatRequest, ChatResult
from llm.config import EndpointConfig
from llm.errors import LLMCallError
from llm.stream import chat_many
from llm.window import AdaptiveWindow
from tests.judging.fake_llm import FakeLLM


def test_overload_halves_the_window_once_per_window_of_calls():
    window = AdaptiveWindow(ceiling=16)
    assert window.size == 16
    epoch = window.epoch
    window.on_overload(epoch=epoch)
    assert window.size == 8
    # Other calls of the same burst report the same congestion: no further cut.
    window.on_overload(epoch=epoch)
    window.on_overload(epoch=epoch)
    assert window.size == 8 and window.overloads == 3
    window.on_overload(epoch=window.epoch)
    assert window.size == 4


def test_success_grows_the_window_by_one_per_window_of_calls_up_to_the_ceiling():
    window = AdaptiveWindow(ceiling=6, start=2)
    sizes = []
    for _ in range(30):
        epoch = window.epoch
        for _call in range(max(4, window.size)):
            window.on_success(epoch=epoch, seconds=0.2, completion_tokens=10)
        sizes.append(window.size)
    assert sizes[:5] == [3, 4, 5, 6, 6]
    assert max(sizes) == 6
    # Replies to calls sent under an older window do not count twice.
    old = window.epoch - 1
    for _ in range(50):
        window.on_success(epoch=old, seconds=0.2)
    assert window.size == 6


def test_a_new_share_applies_at_once():
    window = AdaptiveWindow(ceiling=64)
    window.set_ceiling(32)
    assert window.size == 32
    window.set_ceiling(64)
    assert window.size == 64
    auto = AdaptiveWindow(ceiling=64, auto=True)
    assert auto.size == 1
    auto.set_ceiling(32)
    assert auto.size == 1  # auto still finds the server's capacity by itself


def simulate(slots: int, *, calls: int = 400, service: float = 1.0, ceiling: int = 64, deadline: float | None = None):
    """An N-slot server with a queue (first come, first served) and a fixed service time, fed by
    a sender that keeps `window.size` calls in flight. Returns the latencies, the window sizes
    seen, and the time taken."""
    window = AdaptiveWindow(ceiling=ceiling, auto=True)
    now = 0.0
    free_at = [0.0] * slots  # when each slot is next free
    events = []  # (finish time, sequence, sent at, epoch)
    sent = done = 0
    latencies, sizes = [], []
    while done < calls:
        while sent < calls and sent - done < window.size:
            slot_free = heapq.heappop(free_at)
            finish = max(now, slot_free) + service
            heapq.heappush(free_at, finish)
            heapq.heappush(events, (finish, sent, now, window.epoch))
            sent += 1
        finish, _seq, sent_at, epoch = heapq.heappop(events)
        now = finish
        done += 1
        latencies.append(finish - sent_at)
        window.on_success(epoch=epoch, seconds=finish - sent_at, completion_tokens=100, deadline=deadline)
        sizes.append(window.size)
    return latencies, sizes, now


@pytest.mark.parametrize("slots", [1, 2, 3, 4])
def test_auto_settles_at_the_servers_slots_without_long_queues(slots):
    latencies, sizes, elapsed = simulate(slots)
    settled = sizes[len(sizes) // 2 :]
    # The window settles at the slots, or one more so that no slot idles between two calls.
    assert set(settled) <= {slots, slots + 1}
    # Once settled, no call waits more than one service time in the server's queue.
    assert max(latencies[len(latencies) // 2 :]) <= 2.0
    # And the server is kept busy: near its capacity of `slots` calls per service time.
    ideal = 400 * 1.0 / slots
    assert elapsed <= 1.1 * ideal


def test_a_slow_one_slot_server_gets_one_call_at_a_time_so_no_queued_call_outlives_its_deadline():
    # A local model writing 2,048 tokens at 10 a second: 200 s a call, against a deadline of 340 s.
    # Two in flight (the window's usual N + 1) would make the second wait 400 s and time out while
    # the server still computes it.
    latencies, sizes, elapsed = simulate(1, calls=40, service=200.0, deadline=340.0)
    assert set(sizes) == {1}
    assert max(latencies) == 200.0
    assert elapsed == 40 * 200.0


@pytest.mark.parametrize("slots", [1, 4])
def test_a_deadline_far_above_the_service_time_changes_nothing(slots):
    with_deadline = simulate(slots, deadline=120.0)
    assert with_deadline == simulate(slots)


def ask(text):
    return ChatRequest(model="m", messages=(("user", text),), max_tokens=64)


def run_calls(endpoint, requests, window):
    async def go():
        return await chat_many(endpoint, requests, window=window)

    return async_to_sync(go)()


@pytest.mark.django_db(transaction=True)
def test_auto_against_a_one_slot_server_finishes_with_no_timeouts(fast_retries):
    """A llama.cpp-like server with one slot: calls beyond it wait in its queue, where their
    timeout runs. A fixed window of 32 times calls out; `auto` finishes every call."""
    server = FakeLLM(latency=0.1, slots=1).start()
    try:
        # Timeout 1.5 s: a call that waits behind more than fourteen others times out. `auto` keeps
        # a handful in flight at most (under 0.8 s of queue), so a machine busy with other work
        # (a stall of a few tenths of a second) still meets no timeout; the bounds below are the
        # behaviour that matters (a queue near the one slot, never near the fixed window), not
        # the exact step at which the window settles, which a busy machine's jitter moves by one.
        endpoint = EndpointConfig("one-slot", server.base_url, "K", "m", timeout_seconds=1.5, max_retries=0)
        fixed = run_calls(endpoint, [ask(f"fixed {n}") for n in range(40)], AdaptiveWindow(ceiling=32))
        failed = [r for r in fixed if isinstance(r, LLMCallError)]
        timeouts = [r for r in failed if r.reason.startswith("timeout (no reply within 1.5 s)")]
        # Calls time out while they wait in the server's queue (the server answers others, so the
        # stream goes on, its window halved by each timeout).
        assert len(timeouts) >= 3
        # Like llama.cpp, the server still computes what the client gave up on: let it drain.
        deadline = time.monotonic() + 20
        while (server.busy or server.waiting) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert server.wasted >= 3
        wasted_by_fixed = server.wasted

        server.peak_waiting = server.peak_busy = 0
        window = AdaptiveWindow(ceiling=32, auto=True)
        results = run_calls(endpoint, [ask(f"auto {n}") for n in range(40)], window)
        assert [type(r) for r in results] == [ChatResult] * 40
        assert window.overloads == 0
        assert window.size <= 3
        assert server.peak_busy == 1 and server.peak_waiting < 8
        assert server.wasted == wasted_by_fixed  # nothing computed for a client that had gone
    finally:
        server.stop()
