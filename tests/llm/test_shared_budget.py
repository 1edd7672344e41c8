"""Provider limits as one budget in the database (llm/budget.py, llm/gate.py): calls in flight,
requests and tokens per minute, shared by every stream of every worker, and a provider's
"wait" (Retry-After, x-ratelimit-*) holding them all back. Measured at a loopback server that
enforces the limits with 429s (tests/judging/rate_limits.py)."""

import asyncio
import random
import time
from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync
from django.utils import timezone

from llm.budget import BudgetLimits, budget_acquire, budget_hold_back, budget_renew, budget_row, request_tokens
from llm.calls import ChatRequest, ChatResult
from llm.config import EndpointConfig
from llm.gate import STARVED_SECONDS, Gates
from llm.models import BudgetLease, SharedBudget
from llm.pacing import BURST_FRACTION
from llm.stream import chat_many
from tests.judging.fake_llm import FakeLLM
from tests.judging.rate_limits import ProviderLimits, provider_tokens

pytestmark = pytest.mark.django_db


@pytest.fixture
def server():
    fake = FakeLLM().start()
    yield fake
    fake.stop()


@pytest.fixture
def quick(settings):
    settings.JUDGING_RETRY_BASE_SECONDS = 0.01
    settings.JUDGING_RETRY_CAP_SECONDS = 0.05


def endpoint_for(server, **limits) -> EndpointConfig:
    return EndpointConfig(
        name="limited",
        base_url=server.base_url,
        api_key_env="FAKE_LLM_KEY",
        default_model="m",
        timeout_seconds=10.0,
        max_retries=30,
        **limits,
    )


def requests(count: int, *, tag: str = "", max_tokens: int = 20) -> list[ChatRequest]:
    return [
        ChatRequest(model="m", messages=(("user", f"question {tag}{n}"),), max_tokens=max_tokens) for n in range(count)
    ]


def acquire(budget_id, limits, holder, *, in_use=0, want=0, estimates=()):
    return budget_acquire(
        budget_id=budget_id, limits=limits, holder=holder, in_use=in_use, want=want, estimates=list(estimates)
    )


def test_a_worker_that_joins_gets_only_the_slots_no_one_holds():
    limits = BudgetLimits(key="endpoint:x", in_flight=4)
    budget = budget_row(limits.key)
    assert acquire(budget, limits, "a", want=4, estimates=[0] * 4).slots == 4
    joined = acquire(budget, limits, "b", want=4, estimates=[0] * 4)
    assert (joined.slots, joined.calls) == (0, 0)
    # Both want the whole limit: each is capped at half, and the first gives back what it holds above.
    assert joined.share == 2
    budget_renew(budget_id=budget, holder="a", slots=2, wanted=4)
    assert acquire(budget, limits, "b", want=4, estimates=[0] * 4).slots == 2
    assert sum(BudgetLease.objects.values_list("slots", flat=True)) == 4


def test_a_killed_workers_slots_come_back_when_its_lease_lapses():
    limits = BudgetLimits(key="endpoint:y", in_flight=3)
    budget = budget_row(limits.key)
    acquire(budget, limits, "killed", want=3, estimates=[0] * 3)
    assert acquire(budget, limits, "alive", want=3, estimates=[0] * 3).slots == 0
    BudgetLease.objects.filter(holder="killed").update(expires_at=timezone.now() - timedelta(seconds=1))
    assert acquire(budget, limits, "alive", want=3, estimates=[0] * 3).slots == 3


def test_requests_and_tokens_per_minute_are_one_bucket_for_every_holder(settings):
    # A minute of an hour: 1,200 requests refill at 0.317 a second (3.16 s apart), the bucket
    # holding one; nothing here moves by a request while the test runs.
    settings.LLM_RATE_WINDOW_SECONDS = 3600
    settings.LLM_BURST_SECONDS = 1
    limits = BudgetLimits(key="endpoint:z", requests_per_minute=1200, tokens_per_minute=240_000)
    budget = budget_row(limits.key)
    step = 3600 / (1200 * (1 - BURST_FRACTION))
    first = acquire(budget, limits, "a", estimates=[10] * 8)
    # The one request in the bucket goes at once; the next is due beyond the quarter second booked.
    assert (first.calls, first.offsets, first.wait) == (1, (0.0,), 0.0)
    assert step - 0.25 - 1 < first.again <= step - 0.25 + 1e-6
    # Another worker draws from the same bucket: nothing for it now, and nothing holds it back.
    second = acquire(budget, limits, "b", estimates=[10])
    assert (second.calls, second.wait) == (0, 0.0) and 0 < second.again <= step - 0.25 + 1e-6
    row = SharedBudget.objects.get(pk=budget)
    assert row.requests_level < 1 and row.paced_at is not None  # no whole request in it


def test_the_provider_saying_wait_holds_every_worker_back():
    limits = BudgetLimits(key="endpoint:w", requests_per_minute=100)
    budget = budget_row(limits.key)
    budget_hold_back(budget_id=budget, seconds=5)
    held = acquire(budget, limits, "other", estimates=[1])
    assert held.calls == 0 and 4 < held.wait <= 5
    # The buckets are empty at the end of the wait: they refill from then, not from before it.
    row = SharedBudget.objects.get(pk=budget)
    assert (row.requests_level, row.tokens_level) == (0.0, 0.0) and row.paced_at == row.not_before


def test_a_prompt_is_never_counted_below_what_the_provider_counts():
    for text in ("plain English words " * 50, "中文的问题" * 40, "mixed 混合 text"):
        request = ChatRequest(model="m", messages=(("system", "be fair"), ("user", text)), max_tokens=64)
        body = {"messages": [{"role": r, "content": c} for r, c in request.messages], "max_tokens": 64}
        assert request_tokens(request) >= provider_tokens(body)


def two_streams_at_once(endpoint, count):
    async def both():
        return await asyncio.gather(
            chat_many(endpoint, requests(count, tag="a"), use_cache=False),
            chat_many(endpoint, requests(count, tag="b"), use_cache=False),
        )

    return async_to_sync(both)()


def test_two_streams_keep_together_to_the_endpoints_calls_in_flight(server, quick):
    server.latency = 0.05
    first, second = two_streams_at_once(endpoint_for(server, max_in_flight=3), 12)
    assert all(isinstance(outcome, ChatResult) for outcome in first + second)
    assert server.count == 24
    assert server.peak_busy <= 3
    assert BudgetLease.objects.count() == 0  # every slot was given back


def test_two_streams_keep_together_to_the_requests_and_tokens_per_minute(server, quick, settings):
    settings.LLM_RATE_WINDOW_SECONDS = 1.0
    server.limits = ProviderLimits(rpm=6, tpm=6 * 40, window=1.0)
    endpoint = endpoint_for(server, max_in_flight=8, requests_per_minute=6, tokens_per_minute=6 * 40)
    first, second = two_streams_at_once(endpoint, 9)
    assert all(isinstance(outcome, ChatResult) for outcome in first + second)
    # At six a window the bucket holds one call, and a grant may go out a little late
    # (Pace.lateness, llm/pacing.py): on a machine loaded by three suites late calls have landed in the next
    # window (1 and 2 refusals in 18; 4 once, with a benchmark running beside the three suites). A
    # storm (each refused call backing off alone) is far more.
    assert server.limits.refused <= 5
    # The server records every request it receives, a refused one too: each call answered once,
    # and a refused call sent again once per refusal.
    assert server.count == 18 + server.limits.refused


def test_a_429_and_the_ratelimit_headers_slow_every_call_not_just_the_one_refused(server, quick):
    """The endpoint states no limit: the provider's headers are all the client knows. Without
    them, each refused call backs off alone while the others keep sending: a storm of 429s."""
    server.limits = ProviderLimits(rpm=4, window=0.5)
    results = async_to_sync(chat_many)(endpoint_for(server, max_in_flight=4), requests(16), use_cache=False)
    assert all(isinstance(outcome, ChatResult) for outcome in results)
    # A handful: the calls already out when the provider first says "wait" (16 calls here; 57
    # were refused when each refused call backed off alone). 4-8 on a quiet machine; the bound
    # leaves room for a busy one's late calls and still tells pacing from a storm.
    assert server.limits.refused <= 16


@pytest.mark.django_db(transaction=True)
def test_a_call_of_the_minute_is_granted_only_when_a_slot_can_carry_it():
    """A run's calls in flight (here 1) and its endpoint's requests per minute (here 10): a stream
    that asks for 5 calls is granted 1 of the minute, not 5 of which 4 are spent unsent. With four
    workers this waste made a run at its provider's limits take 1.31x the time they allow."""
    # 6,000 a minute: the bucket holds BURST_FRACTION of a second's 100 requests.
    endpoint = BudgetLimits(key="endpoint:paced", requests_per_minute=6000)
    run = BudgetLimits(key="run:narrow", in_flight=1)

    async def ask_for_five():
        gates = Gates(endpoint, lambda: None, [run])
        gates.ask(0, [10] * 5)
        await gates.asking
        room = gates.room(0)
        await gates.close()
        return room

    assert async_to_sync(ask_for_five)() == 1
    assert SharedBudget.objects.get(key="endpoint:paced").requests_level == pytest.approx(
        100 * BURST_FRACTION - 1, abs=0.5
    )


@pytest.fixture
def asks(monkeypatch):
    """Every time a stream asks its budgets (llm/gate.py `Gates._ask`), counted: the ask itself runs."""
    counted = []
    original = Gates._ask

    async def counting(self, in_use, estimates):
        counted.append(in_use)
        await original(self, in_use, estimates)

    monkeypatch.setattr(Gates, "_ask", counting)
    return counted


def asks_allowed(calls: int, elapsed: float) -> float:
    """An ask per call that ended and per timer that fired, with room to spare. A stream that
    spins asks thousands of times a second; the bound grows with the time the run took, so a slow
    machine cannot fail it."""
    return 2 * (calls + elapsed / STARVED_SECONDS) + 10


def test_a_stream_at_its_limit_waits_without_asking_again_and_again(server, quick, asks):
    """A window wider than the endpoint's one slot: most of the run the stream is starved. It
    asks again when a call ends or a quarter-second timer fires, never in a loop: each ask used to
    wake the stream, which asked again at once, and a worker at its limit spun a core (39,073 and
    49,387 asks in two runs of about 2 s; 12 now)."""
    server.latency = 0.2
    started = time.monotonic()
    results = async_to_sync(chat_many)(endpoint_for(server, max_in_flight=1), requests(5), in_flight=5, use_cache=False)
    elapsed = time.monotonic() - started
    assert all(isinstance(outcome, ChatResult) for outcome in results)
    assert server.peak_busy == 1
    assert len(asks) <= asks_allowed(len(results), elapsed), len(asks)


def test_a_stream_the_provider_holds_back_waits_without_asking_again_and_again(server, quick, asks):
    """The provider says wait (its first reply a 429 with Retry-After: 1): the stream waits for
    the timer set then, not asking its budgets again and again in the meantime (66,761 asks
    before, in a run of about 2 s)."""
    server.script = ["429"]
    server.retry_after = "1"
    started = time.monotonic()
    results = async_to_sync(chat_many)(endpoint_for(server, max_in_flight=4), requests(8), use_cache=False)
    elapsed = time.monotonic() - started
    assert all(isinstance(outcome, ChatResult) for outcome in results)
    assert server.statuses[429] == 1  # the provider did say wait
    assert len(asks) <= asks_allowed(len(results), elapsed), len(asks)


def test_a_texts_tokens_count_a_quarter_per_ascii_character_and_one_per_other():
    from llm.budget import text_tokens

    assert [text_tokens(text) for text in ("", "abcd", "abcde", "长城有多长", "a长b", "é" * 5 + "abcd")] == [
        0, 1, 2, 5, 2, 6,
    ]  # fmt: skip
    rng = random.Random(7)
    for _ in range(200):
        text = "".join(rng.choice("ab \n，长€😀\x7f\x80") for _ in range(rng.randrange(40)))
        ascii_chars = sum(1 for char in text if ord(char) < 128)
        assert text_tokens(text) == -(-ascii_chars // 4) + len(text) - ascii_chars
