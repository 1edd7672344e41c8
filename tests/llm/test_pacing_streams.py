"""Streams that share an endpoint's requests and tokens per minute (llm/budget.py's buckets),
against a loopback provider that counts its limits over 2-second windows, as providers that
quantise a minute's limits do: no window gets more than its share, counted by the provider."""

import asyncio

import pytest
from asgiref.sync import async_to_sync

from llm.calls import ChatRequest, ChatResult
from llm.config import EndpointConfig
from llm.stream import chat_many
from tests.judging.fake_llm import FakeLLM
from tests.judging.rate_limits import ProviderLimits, provider_tokens

pytestmark = pytest.mark.django_db(transaction=True)

STREAMS = 4
CALLS = 10  # per stream


@pytest.fixture
def server():
    fake = FakeLLM(latency=0.02).start()
    yield fake
    fake.stop()


@pytest.fixture
def paced(settings):
    """A real minute (60 s), bursts of half a second; a refusal is retried at once (the count,
    not the retry, is what is asserted)."""
    settings.LLM_RATE_WINDOW_SECONDS = 60
    settings.LLM_BURST_SECONDS = 0.5
    settings.JUDGING_RETRY_BASE_SECONDS = 0.01
    settings.JUDGING_RETRY_CAP_SECONDS = 0.05


def endpoint_for(server, **limits) -> EndpointConfig:
    return EndpointConfig(
        name="quantised",
        base_url=server.base_url,
        api_key_env="FAKE_LLM_KEY",
        default_model="m",
        timeout_seconds=30.0,
        max_retries=30,
        max_in_flight=16,
        **limits,
    )


def requests(tag: str, max_tokens: int) -> list[ChatRequest]:
    return [
        ChatRequest(model="m", messages=(("user", f"question {tag} {n}"),), max_tokens=max_tokens) for n in range(CALLS)
    ]


def streams_at_once(endpoint, max_tokens: int):
    async def together():
        return await asyncio.gather(
            *(
                chat_many(endpoint, requests(f"s{stream}", max_tokens), use_cache=False, in_flight=8)
                for stream in range(STREAMS)
            )
        )

    return [outcome for outcomes in async_to_sync(together)() for outcome in outcomes]


def test_streams_at_the_requests_per_minute_never_pass_a_two_second_windows_share(server, paced):
    # 600 a minute: 20 in every 2 seconds; the minute's whole allowance would go at once before.
    server.limits = ProviderLimits(rpm=20, window=2.0)
    outcomes = streams_at_once(endpoint_for(server, requests_per_minute=600), max_tokens=20)
    assert all(isinstance(outcome, ChatResult) for outcome in outcomes)
    assert server.count == STREAMS * CALLS
    assert server.limits.refused == 0  # no call came in a window that was already full


def test_streams_at_the_tokens_per_minute_never_pass_a_two_second_windows_share(server, paced):
    tokens = provider_tokens({"messages": [{"content": "question s0 0"}], "max_tokens": 200})
    # About 10 calls a second by their tokens, as the provider counts them; requests do not bind.
    per_minute = 600 * tokens
    server.limits = ProviderLimits(tpm=per_minute * 2 // 60, window=2.0)
    outcomes = streams_at_once(endpoint_for(server, tokens_per_minute=per_minute), max_tokens=200)
    assert all(isinstance(outcome, ChatResult) for outcome in outcomes)
    assert server.count == STREAMS * CALLS
    assert server.limits.refused == 0
