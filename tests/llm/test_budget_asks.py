"""What asking the shared budget costs (llm/budget.py, llm/gate.py): every ask holds the budget's
row locked while every other worker waits, so a worker asks seldom, and each ask reads and
writes only what it needs. Counted in transactions and statements, never timed."""

import asyncio
import time

import pytest
from asgiref.sync import async_to_sync
from django.db import connection
from django.test.utils import CaptureQueriesContext

import llm.gate as gate_module
from llm.budget import BudgetLimits, budget_acquire, budget_row
from llm.calls import ChatResult
from llm.gate import Gates
from llm.stream import chat_many
from tests.judging.rate_limits import ProviderLimits
from tests.llm.test_shared_budget import endpoint_for, quick, requests, server  # noqa: F401 - fixtures


def statements(run) -> list[str]:
    """The statements a call runs, savepoints left out (a test's transaction makes them)."""
    with CaptureQueriesContext(connection) as captured:
        run()
    return [query["sql"] for query in captured.captured_queries if "SAVEPOINT" not in query["sql"]]


@pytest.mark.django_db
def test_an_ask_of_requests_and_tokens_reads_and_writes_only_the_buckets():
    """A budget with no calls-in-flight limit has no leases: the row locked, the buckets written
    (seven statements in a transaction before, among them a DELETE and a SELECT of leases)."""
    limits = BudgetLimits(key="endpoint:paced-only", requests_per_minute=6000, tokens_per_minute=600_000)
    budget = budget_row(limits.key)
    ask = lambda: budget_acquire(  # noqa: E731
        budget_id=budget, limits=limits, holder="a", in_use=0, want=2, estimates=[10, 10]
    )
    taken = statements(ask)
    assert len(taken) == 2, taken  # the lock, the buckets' new levels
    assert "llm_sharedbudget" in taken[0] and taken[1].startswith("UPDATE")


@pytest.mark.django_db
def test_an_ask_that_changes_no_lease_writes_none():
    """Calls in flight only: a worker that asks again with the lease it holds, a moment later,
    reads the leases and writes nothing (its lease was written by the first ask)."""
    limits = BudgetLimits(key="run:asks", in_flight=8)
    budget = budget_row(limits.key)
    first = budget_acquire(budget_id=budget, limits=limits, holder="a", in_use=0, want=8, estimates=[0] * 8)
    assert first.slots == 8
    again = statements(
        lambda: budget_acquire(budget_id=budget, limits=limits, holder="a", in_use=5, want=3, estimates=[0] * 3)
    )
    assert len(again) == 2, again  # the lock, the leases; no DELETE, no UPDATE
    assert not any(sql.startswith(("UPDATE", "DELETE", "INSERT")) for sql in again)


@pytest.mark.django_db(transaction=True)
def test_credits_are_placed_where_the_buckets_booked_them_however_late_the_answer_comes(monkeypatch, settings):
    """A grant's offsets count from when the buckets were read. Counted from when the answer
    reached the event loop, a worker whose answer came late sent its calls that much later, and
    another's calls met them closer than the buckets allow (a provider counting over 2 s refused
    some)."""
    original = gate_module.budget_acquire
    answered: list[float] = []

    def slow_answer(**arguments):
        grant = original(**arguments)
        answered.append(time.monotonic())
        time.sleep(0.1)  # the answer waits (a busy machine, a busy event loop) before it is read
        return grant

    monkeypatch.setattr(gate_module, "budget_acquire", slow_answer)
    # 1,200 a minute in bursts of 5 s: seven calls at once, the next ones about 54 ms apart,
    # each sent up to 5/14 s after its moment (a grant later than that is dropped unsent).
    settings.LLM_RATE_WINDOW_SECONDS = 60
    settings.LLM_BURST_SECONDS = 5
    endpoint = BudgetLimits(key="endpoint:late-answer", requests_per_minute=1200)

    async def ask():
        gates = Gates(endpoint, lambda: None)
        gates.ask(0, [0] * 9)
        await gates.asking
        credits = list(gates.budgets[0].credits)
        await gates.close()
        return credits

    credits = async_to_sync(ask)()
    assert len(credits) == 9
    # The first credits are the moment the buckets were read (before the answer came back), not
    # 0.1 s after it; the next ones count from there.
    assert credits[0] <= answered[0]
    assert credits[8] - credits[0] == pytest.approx(2 * 60 / 1200 / (1 - 1 / 14), abs=0.01)


@pytest.mark.django_db(transaction=True)
def test_two_streams_at_the_requests_per_minute_ask_the_budget_less_than_once_per_call(
    server,  # noqa: F811 - the fixture
    quick,  # noqa: F811
    monkeypatch,
    settings,
):
    """Two streams at 1,200 requests a minute (20 a second, a 2-second provider): each ask books
    the calls of about a quarter second, and a stream holding calls booked ahead asks again only
    when the last of them is near. Asking as each call came within reach, or as each call
    ended, they asked the database about twice per call (1.8-1.9 in five runs; 0.5 now)."""
    settings.LLM_RATE_WINDOW_SECONDS = 60
    settings.LLM_BURST_SECONDS = 1
    asks: list[str] = []
    original = gate_module.budget_acquire

    def counting(**arguments):
        asks.append(arguments["holder"])
        return original(**arguments)

    monkeypatch.setattr(gate_module, "budget_acquire", counting)
    server.latency = 0.2
    server.limits = ProviderLimits(rpm=40, window=2.0)
    endpoint = endpoint_for(server, max_in_flight=16, requests_per_minute=1200)

    async def both():
        return await asyncio.gather(
            chat_many(endpoint, requests(40, tag="a"), in_flight=8, use_cache=False),
            chat_many(endpoint, requests(40, tag="b"), in_flight=8, use_cache=False),
        )

    first, second = async_to_sync(both)()
    assert all(isinstance(outcome, ChatResult) for outcome in first + second)
    assert server.limits.refused <= 2
    assert len(asks) < len(first + second), len(asks)


@pytest.mark.django_db(transaction=True)
def test_an_ask_that_finds_the_calls_booked_already_does_not_wake_the_stream(settings):
    """The stream holds calls booked for a moment later: asking again changes nothing, and
    waking the stream for it made it ask again at once, in a loop until their moment."""
    settings.LLM_RATE_WINDOW_SECONDS = 60
    settings.LLM_BURST_SECONDS = 10  # 1,200 a minute: 14 calls at once, the next 54 ms apart
    endpoint = BudgetLimits(key="endpoint:booked", requests_per_minute=1200)
    woken: list[int] = []

    async def ask_twice():
        gates = Gates(endpoint, lambda: woken.append(1))
        gates.ask(0, [0] * 20)  # the database books 20: six of them for later
        await gates.asking
        asked = len(woken)
        gates.ask(0, [0] * 20)  # covered by the calls booked
        await gates.asking
        await gates.close()
        return asked

    assert async_to_sync(ask_twice)() == 1
    assert len(woken) == 1


@pytest.mark.django_db(transaction=True)
def test_a_stream_waiting_for_its_database_to_answer_asks_no_budget(server, monkeypatch):  # noqa: F811
    """Its calls allowed before the database answers again are spent (llm/delivery.py's bound):
    nothing may start, so the budgets are not asked. Asked, an ask woke the stream, which asked
    again: thousands of asks a second until the database answered."""
    from llm.stream import CallStream, window_for

    counted: list[int] = []
    original = Gates._ask

    async def counting(self, in_use, estimates):
        counted.append(in_use)
        await original(self, in_use, estimates)

    monkeypatch.setattr(Gates, "_ask", counting)
    endpoint = endpoint_for(server, max_in_flight=8)

    async def wait_for_the_database():
        stream = CallStream(endpoint, window=window_for(endpoint, 8), on_outcome=lambda *_: None, use_cache=False)
        stream.allow_until(0)  # nothing may start until the database answers
        running = asyncio.create_task(stream.run(requests(8, tag="held")))
        await asyncio.sleep(0.3)
        stream.stop()
        await running

    async_to_sync(wait_for_the_database)()
    assert server.count == 0
    assert len(counted) <= 1, len(counted)
