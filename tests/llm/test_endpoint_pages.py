"""/endpoints/: researchers set up endpoints and test them without the admin."""

import logging
import time

import pytest
from django.urls import reverse

from llm.forms import EndpointForm
from llm.models import Endpoint
from tests.judging.fake_llm import FakeLLM
from tests.judging.hostile_llm import HostileLLM

pytestmark = pytest.mark.django_db

VALID = {
    "name": "local",
    "base_url": "http://127.0.0.1:8080/v1",
    # A local server needs no key, and sends none: a key variable is bound to its own hosts
    # (LLM_KEY_HOSTS, tests/llm/test_egress.py), and this one was bound to none.
    "api_key_env": "",
    "default_model": "qwen2.5-7b",
    "max_in_flight": "4",
    "requests_per_minute": "",
    "tokens_per_minute": "",
    "timeout_seconds": "30",
    "max_retries": "2",
    "input_price_per_million": "0.15",
    "output_price_per_million": "0.60",
}


@pytest.fixture
def server():
    fake = FakeLLM(reply=lambda body: "OK").start()
    yield fake
    fake.stop()


def test_only_researchers_open_the_endpoint_pages(client, client_as, reviewer, annotator):
    for url in (reverse("llm:endpoints"), reverse("llm:endpoint-new")):
        client.logout()
        assert client.get(url).status_code == 302
        assert client_as(reviewer).get(url).status_code == 403
        assert client_as(annotator).get(url).status_code == 403
    assert client_as(annotator).post(reverse("llm:endpoint-new"), VALID).status_code == 403
    assert client_as(annotator).post(reverse("llm:endpoint-test"), {"endpoint": "default"}).status_code == 403
    assert Endpoint.objects.count() == 0


def test_create_and_edit_an_endpoint(client_as, researcher, caplog):
    client = client_as(researcher)
    with caplog.at_level(logging.INFO, logger="userbench.changes"):
        response = client.post(reverse("llm:endpoint-new"), VALID)
    endpoint = Endpoint.objects.get(name="local")
    assert response["Location"] == reverse("llm:endpoint-edit", args=[endpoint.pk])
    assert (
        endpoint.max_in_flight,
        endpoint.timeout_seconds,
        endpoint.max_retries,
        str(endpoint.output_price_per_million),
    ) == (
        4,
        30.0,
        2,
        "0.6000",
    )
    assert "endpoint local created by res" in caplog.text

    caplog.clear()
    with caplog.at_level(logging.INFO, logger="userbench.changes"):
        client.post(
            reverse("llm:endpoint-edit", args=[endpoint.pk]), {**VALID, "max_in_flight": "8", "timeout_seconds": "60"}
        )
    endpoint.refresh_from_db()
    assert (endpoint.max_in_flight, endpoint.timeout_seconds) == (8, 60.0)
    assert "endpoint local changed by res: {'max_in_flight': [4, 8], 'timeout_seconds': [30.0, 60.0]}" in caplog.text
    page = client.get(reverse("llm:endpoints")).text
    assert "none sent" in page and "http://127.0.0.1:8080/v1" in page


@pytest.mark.parametrize(
    "field,value,message",
    [
        ("name", "default", "&#x27;default&#x27; is the endpoint set by OPENAI_BASE_URL in the environment"),
        ("api_key_env", "sk-live-123", "Name an environment variable, e.g. OPENAI_API_KEY."),
        ("base_url", "not a url", "Enter a valid URL."),
        ("max_in_flight", "0", "At least one call must be allowed in flight."),
        ("timeout_seconds", "0", "A timeout is at least 0.1 seconds."),
    ],
)
def test_bad_values_are_refused_beside_their_field(client_as, researcher, field, value, message):
    response = client_as(researcher).post(reverse("llm:endpoint-new"), {**VALID, field: value})
    assert response.status_code == 400
    page = response.text
    error_list = page.index(f'id="id_{field}_error"')
    assert message in page[error_list : error_list + 400]
    assert 'aria-invalid="true"' in page
    assert Endpoint.objects.count() == 0
    assert "sk-live-123" not in page or field == "api_key_env"


def test_max_tokens_is_offered_only_when_endpoints_have_it():
    has_field = any(field.name == "max_tokens" for field in Endpoint._meta.get_fields())
    assert ("max_tokens" in EndpointForm.base_fields) == has_field


def test_connection_test_makes_one_cheap_uncached_call(client_as, researcher, server):
    endpoint = Endpoint.objects.create(name="fake", base_url=server.base_url, default_model="tiny", max_retries=5)
    client = client_as(researcher)
    response = client.post(reverse("llm:endpoint-test"), {"endpoint": "fake", "model": ""}, follow=True)
    assert response.redirect_chain[-1][0] == reverse("llm:endpoint-edit", args=[endpoint.pk])
    assert "Connection to fake works: tiny answered “OK” in" in response.text
    assert server.count == 1
    body = server.requests[0]
    assert (body["model"], body["max_tokens"]) == ("tiny", 16)
    client.post(reverse("llm:endpoint-test"), {"endpoint": "fake", "model": "other-model"})
    assert server.count == 2 and server.requests[1]["model"] == "other-model"  # never answered from the cache


def test_connection_test_shows_the_error_after_one_attempt(client_as, researcher, server):
    Endpoint.objects.create(name="flaky", base_url=server.base_url, default_model="tiny", max_retries=5)
    server.script = ["500"]
    response = client_as(researcher).post(reverse("llm:endpoint-test"), {"endpoint": "flaky"}, follow=True)
    # A status code and a fixed message: the server's own words are not shown (they may be an
    # internal page's, tests/llm/test_egress.py).
    assert "Connection to flaky failed: HTTP 500: the server failed." in response.text
    assert "server exploded" not in response.text
    assert server.count == 1


def test_the_connection_test_answers_within_its_deadline_whatever_the_upstream_does(client_as, researcher):
    """An upstream dripping its reply a byte a second: the page answers within the test's
    deadline (5 s for connect, wait and read together), well before a web worker is killed."""
    server = HostileLLM("drip").start()
    try:
        Endpoint.objects.create(name="drip", base_url=server.base_url, default_model="m", timeout_seconds=120)
        started = time.monotonic()
        response = client_as(researcher).post(reverse("llm:endpoint-test"), {"endpoint": "drip"}, follow=True)
        elapsed = time.monotonic() - started
    finally:
        server.stop()
    # One fixed message for every way of getting no whole answer in time (llm.services).
    assert "Connection to drip failed: No HTTP answer from" in response.text
    assert elapsed < 25  # gunicorn's timeout is 30 s; the drip would take minutes


def test_connection_test_needs_a_model(client_as, researcher, server):
    Endpoint.objects.create(name="bare", base_url=server.base_url)
    response = client_as(researcher).post(reverse("llm:endpoint-test"), {"endpoint": "bare"}, follow=True)
    assert "Connection to bare failed: Name a model to ask: this endpoint has no default model." in response.text
    assert server.count == 0


def test_default_endpoint_comes_from_the_environment(client_as, researcher, server, monkeypatch):
    client = client_as(researcher)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    page = client.get(reverse("llm:endpoints")).text
    assert "OPENAI_BASE_URL is not set, so there is no default endpoint." in page
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_MAX_RETRIES", "many")
    page = client.get(reverse("llm:endpoints")).text
    assert "<code>OPENAI_MAX_RETRIES=&#x27;many&#x27; is not a whole number of at least 0.</code>" in page
    monkeypatch.delenv("OPENAI_MAX_RETRIES")
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_MODEL", "env-model")
    monkeypatch.setenv("OPENAI_MAX_IN_FLIGHT", "5")
    page = client.get(reverse("llm:endpoints")).text
    assert f"<code>{server.base_url}</code>" in page and "<dd>5 (OPENAI_MAX_IN_FLIGHT)</dd>" in page
    response = client.post(reverse("llm:endpoint-test"), {"endpoint": "default", "model": ""}, follow=True)
    assert response.redirect_chain[-1][0] == reverse("llm:endpoints")
    assert "Connection to default works: env-model answered “OK”" in response.text


def test_endpoint_pages_speak_chinese(client_as, researcher):
    client = client_as(researcher)
    client.cookies["django_language"] = "zh-hans"
    page = client.get(reverse("llm:endpoints")).text
    assert "<h1>端点</h1>" in page and "新建端点" in page
    page = client.get(reverse("llm:endpoint-new")).text
    assert "保存a端点" not in page and "保存端点" in page
