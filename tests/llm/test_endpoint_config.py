"""The default endpoint comes from the environment, its limits included."""

from dataclasses import replace

import pytest

from llm.calls import ChatRequest
from llm.config import EndpointConfig, call_deadline
from llm.errors import EndpointError
from llm.selectors import endpoint_config
from llm.stream import chat_one
from tests.judging.fake_llm import FakeLLM

# The default endpoint's limits are also held to the lowest any named endpoint of the same
# account states (llm/selectors.py, with_account_limits): reading them reads the endpoints.
pytestmark = pytest.mark.django_db


def test_default_endpoint_limits_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    for name in ("OPENAI_TIMEOUT_SECONDS", "OPENAI_MAX_RETRIES", "OPENAI_MAX_IN_FLIGHT", "OPENAI_REQUESTS_PER_MINUTE"):
        monkeypatch.delenv(name, raising=False)
    plain = endpoint_config(None)
    defaults = EndpointConfig(name="x", base_url="", api_key_env="", default_model="")
    assert (plain.timeout_seconds, plain.max_retries, plain.max_in_flight, plain.requests_per_minute) == (
        defaults.timeout_seconds,
        defaults.max_retries,
        defaults.max_in_flight,
        None,
    )
    monkeypatch.setenv("OPENAI_TIMEOUT_SECONDS", "7.5")
    monkeypatch.setenv("OPENAI_MAX_RETRIES", "0")
    monkeypatch.setenv("OPENAI_MAX_IN_FLIGHT", "3")
    monkeypatch.setenv("OPENAI_REQUESTS_PER_MINUTE", "120")
    config = endpoint_config("default")
    assert (config.timeout_seconds, config.max_retries, config.max_in_flight, config.requests_per_minute) == (
        7.5,
        0,
        3,
        120,
    )


@pytest.mark.parametrize(
    "name,value,message",
    [
        ("OPENAI_TIMEOUT_SECONDS", "soon", "OPENAI_TIMEOUT_SECONDS='soon' is not a number of at least 0.1."),
        ("OPENAI_MAX_RETRIES", "-1", "OPENAI_MAX_RETRIES='-1' is not a whole number of at least 0."),
        ("OPENAI_MAX_IN_FLIGHT", "2.5", "OPENAI_MAX_IN_FLIGHT='2.5' is not a whole number of at least 1."),
        ("OPENAI_MAX_IN_FLIGHT", "0", "OPENAI_MAX_IN_FLIGHT='0' is not a whole number of at least 1."),
    ],
)
def test_a_bad_limit_is_named(monkeypatch, name, value, message):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv(name, value)
    with pytest.raises(EndpointError) as caught:
        endpoint_config(None)
    assert str(caught.value) == message


@pytest.mark.django_db(transaction=True)
def test_the_environment_timeout_and_retries_govern_real_calls(monkeypatch, settings):
    settings.JUDGING_RETRY_BASE_SECONDS = 0.01
    settings.JUDGING_RETRY_CAP_SECONDS = 0.02
    server = FakeLLM().start()
    server.hang_seconds = 3.0
    try:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_TIMEOUT_SECONDS", "0.3")
        monkeypatch.setenv("OPENAI_MAX_RETRIES", "1")
        server.script = ["hang", "hang"]
        with pytest.raises(Exception, match=r"timeout \(no reply within 0.3 s\) after 2 attempts"):
            chat_one(endpoint_config(None), ChatRequest(model="m", messages=(("user", "hello"),)))
        assert server.count == 2
    finally:
        server.stop()


def test_a_call_without_a_stated_timeout_gets_long_enough_for_its_reply(settings):
    settings.LLM_MIN_CALL_SECONDS = 120
    settings.LLM_SLOWEST_TOKENS_PER_SECOND = 5
    unstated = EndpointConfig("e", "http://127.0.0.1:1/v1", "", "m")
    assert call_deadline(unstated, 2048) == pytest.approx(409.6)
    assert call_deadline(unstated, 1024) == pytest.approx(204.8)
    assert call_deadline(unstated, 16) == 120
    assert call_deadline(unstated, None) == 120
    assert call_deadline(replace(unstated, timeout_seconds=30), 2048) == 30
