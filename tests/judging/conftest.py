import pytest

from llm.config import EndpointConfig
from tests.judging.fake_llm import FakeLLM


@pytest.fixture
def fake_llm():
    """A real OpenAI-compatible server on a loopback port the OS chose."""
    server = FakeLLM().start()
    yield server
    server.stop()


@pytest.fixture
def fast_retries(settings):
    settings.JUDGING_RETRY_BASE_SECONDS = 0.01
    settings.JUDGING_RETRY_CAP_SECONDS = 0.05


@pytest.fixture
def endpoint(fake_llm, fast_retries):
    return EndpointConfig(
        name="fake",
        base_url=fake_llm.base_url,
        api_key_env="FAKE_LLM_KEY",
        default_model="judge-m",
        max_in_flight=8,
        timeout_seconds=2.0,
        max_retries=3,
    )
