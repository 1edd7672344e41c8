"""llm/stream.py against a real loopback server, driven by the real openai client."""

import pytest
from asgiref.sync import async_to_sync

from llm.cache import cache_key
from llm.calls import ChatRequest, ChatResult
from llm.config import EndpointConfig
from llm.errors import LLMCallError
from llm.models import Endpoint, LLMResponse
from llm.retry import retry_after_seconds
from llm.selectors import endpoint_config
from llm.stream import chat_many, chat_one
from llm.window import AdaptiveWindow

pytestmark = pytest.mark.django_db(transaction=True)


def ask(text, model="judge-m", temperature=0.0):
    return ChatRequest(model=model, messages=(("user", text),), temperature=temperature)


def run(coro):
    """Drive a coroutine the way the app does (async_to_sync): database work stays on this
    thread and its connection, which the test database teardown can then close."""

    async def wrapper():
        return await coro

    return async_to_sync(wrapper)()


def test_one_call_returns_text_tokens_and_fills_the_cache(endpoint, fake_llm):
    fake_llm.reply = lambda body: "four words in reply"
    result = chat_one(endpoint, ask("2+2?"))
    assert (result.text, result.prompt_tokens, result.completion_tokens, result.cached) == (
        "four words in reply",
        10,
        4,
        False,
    )
    assert fake_llm.requests[0]["messages"] == [{"role": "user", "content": "2+2?"}]
    assert fake_llm.requests[0]["temperature"] == 0.0
    assert LLMResponse.objects.count() == 1

    again = chat_one(endpoint, ask("2+2?"))
    assert again.cached is True and again.text == "four words in reply"
    assert fake_llm.count == 1  # the identical prompt was not paid twice


def test_cache_key_covers_base_url_model_messages_and_parameters(endpoint):
    keys = {
        cache_key(endpoint, ask("a")),
        cache_key(endpoint, ask("b")),
        cache_key(endpoint, ask("a", model="other")),
        cache_key(endpoint, ask("a", temperature=0.7)),
        cache_key(EndpointConfig("x", "http://127.0.0.1:1/v1", "K", "m"), ask("a")),
    }
    assert len(keys) == 5
    assert cache_key(endpoint, ask("a")) == cache_key(endpoint, ask("a"))


def test_many_calls_keep_order_and_send_duplicates_once(endpoint, fake_llm):
    fake_llm.reply = lambda body: body["messages"][-1]["content"].upper()
    seen = []
    requests = [ask(f"q{i % 5}") for i in range(12)]
    results = run(chat_many(endpoint, requests, in_flight=4, on_result=lambda i, r: seen.append(i)))
    assert [r.text for r in results] == [f"Q{i % 5}" for i in range(12)]
    assert fake_llm.count == 5
    assert sorted(seen) == list(range(12))
    assert sum(r.cached for r in results) == 7


def test_429_with_retry_after_500_and_garbage_are_retried(endpoint, fake_llm):
    fake_llm.script = ["429", "500", "garbage"]
    fake_llm.reply = lambda body: "fine"
    result = chat_one(endpoint, ask("retry me"))
    assert result.text == "fine"
    assert fake_llm.count == 4
    assert fake_llm.statuses[429] == 1 and fake_llm.statuses[500] == 1


def test_retry_after_is_honoured(endpoint, fake_llm):
    fake_llm.retry_after = "0.3"
    fake_llm.script = ["429"]
    result = chat_one(endpoint, ask("slow down"))
    assert result.text
    # The second attempt waited for Retry-After: the measured latency covers only the last attempt,
    # so read the wait from the header parser directly.
    assert retry_after_seconds({"retry-after": "0.3"}) == pytest.approx(0.3)
    assert retry_after_seconds({"retry-after-ms": "1500"}) == pytest.approx(1.5)
    assert retry_after_seconds({}) is None


def test_a_hanging_server_times_out_and_the_reason_is_kept(fake_llm, fast_retries):
    endpoint = EndpointConfig("fake", fake_llm.base_url, "FAKE_LLM_KEY", "m", timeout_seconds=0.3, max_retries=1)
    fake_llm.hang_seconds = 1.0
    fake_llm.script = ["hang", "hang"]
    with pytest.raises(LLMCallError) as caught:
        chat_one(endpoint, ask("hang"))
    assert caught.value.reason == "timeout (no reply within 0.3 s) after 2 attempts"
    assert fake_llm.count == 2
    assert LLMResponse.objects.count() == 0


def test_a_dropped_connection_is_retried_and_named_not_called_a_timeout(fake_llm, fast_retries):
    endpoint = EndpointConfig("fake", fake_llm.base_url, "FAKE_LLM_KEY", "m", timeout_seconds=5, max_retries=1)
    fake_llm.script = ["drop", "drop"]
    with pytest.raises(LLMCallError) as caught:
        chat_one(endpoint, ask("dropped"))
    assert caught.value.reason.startswith(f"lost the connection to {fake_llm.base_url} (")
    assert caught.value.reason.endswith("after 2 attempts")
    assert "timeout" not in caught.value.reason
    assert fake_llm.count == 2
    # Dropped once, answered on the second attempt; a dropped connection is no sign of a full
    # server queue, so the window keeps its size (a timeout would halve it).
    fake_llm.script = ["drop"]
    window = AdaptiveWindow(ceiling=4)
    (outcome,) = run(chat_many(endpoint, [ask("dropped once")], window=window))
    assert isinstance(outcome, ChatResult) and outcome.text
    assert window.overloads == 0 and window.size == 4


def test_persistent_500_gives_up_after_max_retries(endpoint, fake_llm):
    fake_llm.script = ["500"] * 10
    with pytest.raises(LLMCallError) as caught:
        chat_one(endpoint, ask("boom"))
    assert caught.value.reason == "HTTP 500: server exploded after 4 attempts"
    assert fake_llm.count == 4  # 1 + max_retries=3


def test_a_400_is_not_retried(endpoint, fake_llm):
    fake_llm.script = ["400"]
    with pytest.raises(LLMCallError) as caught:
        chat_one(endpoint, ask("too long"))
    assert caught.value.reason == "HTTP 400: bad request: context too long"
    assert fake_llm.count == 1


def test_failures_are_returned_in_place_not_raised(endpoint, fake_llm):
    fake_llm.faults = {"bad": ["400"]}
    results = run(chat_many(endpoint, [ask("good"), ask("bad"), ask("good too")]))
    assert [type(r) for r in results] == [ChatResult, LLMCallError, ChatResult]
    assert LLMResponse.objects.count() == 2  # failures are never cached


def test_in_flight_limit_is_respected(endpoint, fake_llm):
    fake_llm.latency = 0.05
    active = {"now": 0, "peak": 0}
    original = fake_llm.reply

    import threading

    lock = threading.Lock()

    def reply(body):
        return original(body)

    fake_llm.reply = reply
    # Count concurrency at the server by wrapping the latency sleep.
    import time as _time

    real_sleep = _time.sleep

    def counting_sleep(seconds):
        with lock:
            active["now"] += 1
            active["peak"] = max(active["peak"], active["now"])
        real_sleep(seconds)
        with lock:
            active["now"] -= 1

    import tests.judging.fake_llm as module

    module.time.sleep = counting_sleep
    try:
        run(chat_many(endpoint, [ask(f"p{i}") for i in range(20)], in_flight=3))
    finally:
        module.time.sleep = real_sleep
    assert active["peak"] == 3
    assert fake_llm.count == 20


def test_the_key_comes_from_the_named_environment_variable(endpoint, fake_llm, monkeypatch):
    captured = []
    fake_llm.reply = lambda body: "ok"
    original = fake_llm.server.RequestHandlerClass.do_POST

    def spy(handler):
        captured.append(handler.headers.get("Authorization"))
        return original(handler)

    monkeypatch.setattr(fake_llm.server.RequestHandlerClass, "do_POST", spy)
    monkeypatch.setenv("FAKE_LLM_KEY", "sk-test-secret")
    chat_one(endpoint, ask("who am I"))
    assert captured == ["Bearer sk-test-secret"]
    row = LLMResponse.objects.get()
    assert "sk-test-secret" not in str(row.__dict__)


def test_endpoint_config_default_and_named(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="OPENAI_BASE_URL is not set"):
        endpoint_config()
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert endpoint_config().base_url == "http://127.0.0.1:9/v1"
    assert endpoint_config().api_key_env == "OPENAI_API_KEY"

    Endpoint.objects.create(
        name="vllm",
        base_url="http://127.0.0.1:8001/v1",
        api_key_env="VLLM_KEY",
        default_model="qwen",
        max_in_flight=32,
        requests_per_minute=600,
    )
    config = endpoint_config("vllm")
    assert (
        config.base_url,
        config.api_key_env,
        config.default_model,
        config.max_in_flight,
        config.requests_per_minute,
    ) == ("http://127.0.0.1:8001/v1", "VLLM_KEY", "qwen", 32, 600)
    with pytest.raises(ValueError, match=r"Unknown endpoint 'nope'; known endpoints: vllm\."):
        endpoint_config("nope")


def test_backoff_grows_and_honours_retry_after(settings):
    from llm.retry import backoff_seconds

    settings.JUDGING_RETRY_BASE_SECONDS = 1.0
    settings.JUDGING_RETRY_CAP_SECONDS = 8.0
    assert all(0 <= backoff_seconds(0, None) <= 1.0 for _ in range(50))
    assert all(0 <= backoff_seconds(5, None) <= 8.0 for _ in range(50))
    assert all(backoff_seconds(0, 3.0) >= 3.0 for _ in range(50))
