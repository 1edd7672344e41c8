"""llm/sending.py: a chat completion POSTed without the SDK's per-call models is still the SDK's
request (its URL, headers, key and body, byte for byte), read up to its cap whether compressed or
not, and fails with the SDK's own errors, which the retry policy reads as before.

The server is real, on loopback, and scripted per request; the client is the openai client that
`llm.pool` makes, with its transport.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import aiohttp
import httpx2
import openai
import pytest
from asgiref.sync import async_to_sync

from llm.calls import ChatRequest
from llm.config import EndpointConfig
from llm.errors import LLMCallError
from llm.pool import make_client, make_sender
from llm.sending import ERROR_BODY_BYTES
from llm.stream import chat_many

pytestmark = pytest.mark.django_db(transaction=True)

KEY = "sk-lab-7c1d2e3f4a5b6c7d8e9f"
PAYLOAD = {
    "model": "judge-m",
    "messages": [{"role": "system", "content": "Judge."}, {"role": "user", "content": 'héllo 你好 "quoted"'}],
    "temperature": 0.0,
    "max_tokens": 16,
}


def completion(text: str) -> bytes:
    return json.dumps(
        {
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2},
        }
    ).encode()


class Recorder:
    """Records each request (path, headers, body) and answers with the next scripted
    (status, body, headers), or a plain completion when the script is empty."""

    def __init__(self):
        self.requests: list[tuple[str, dict[str, str], bytes]] = []
        self.script: list[tuple[int, bytes, dict[str, str]]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                recorder.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                status, payload, headers = recorder.script.pop(0) if recorder.script else (200, completion("ok"), {})
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                try:
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def recorder(monkeypatch):
    monkeypatch.setenv("FAKE_LLM_KEY", KEY)
    server = Recorder()
    yield server
    server.stop()


def endpoint_of(base_url: str, **options) -> EndpointConfig:
    values = {"timeout_seconds": 5.0, "max_retries": 0, **options}
    return EndpointConfig("lab", base_url, "FAKE_LLM_KEY", "judge-m", **values)


def post(endpoint: EndpointConfig, payload=PAYLOAD):
    """ChatSender.post, as the stream calls it: (body, headers), or the error it raised."""

    async def send():
        sender = make_sender(endpoint, 4)
        try:
            return await sender.post(payload)
        except Exception as error:  # noqa: BLE001 - the test looks at which error it is
            return error
        finally:
            await sender.close()

    return async_to_sync(send)()


def test_the_request_is_the_one_the_sdk_sends_byte_for_byte(recorder):
    endpoint = endpoint_of(recorder.base_url)

    async def through_the_sdk():
        client = make_client(endpoint, 4)
        response = await client.post("/chat/completions", body=PAYLOAD, cast_to=httpx2.Response)
        await response.aread()
        await client.close()

    async_to_sync(through_the_sdk)()
    body, _headers = post(endpoint)
    assert json.loads(body)["choices"][0]["message"]["content"] == "ok"
    (sdk_path, sdk_headers, sdk_body), (path, headers, sent) = recorder.requests
    assert path == sdk_path == "/v1/chat/completions"
    assert sent == sdk_body  # compact UTF-8 JSON, as the SDK serialises it
    assert json.loads(sent) == PAYLOAD
    assert headers == sdk_headers  # the key, the SDK's user agent and its own headers, the same
    assert headers["authorization"] == f"Bearer {KEY}"
    assert headers["user-agent"].startswith("AsyncOpenAI/Python")


def test_a_compressed_reply_is_decoded(recorder):
    recorder.script = [(200, gzip.compress(completion("packed reply")), {"Content-Encoding": "gzip"})]
    request = ChatRequest(model="judge-m", messages=(("user", "q"),), max_tokens=16)
    [outcome] = async_to_sync(chat_many)(endpoint_of(recorder.base_url), [request])
    assert outcome.text == "packed reply" and outcome.completion_tokens == 2


def test_a_status_error_is_the_sdks_own_with_the_servers_words_even_compressed(recorder):
    error_body = json.dumps({"error": {"message": "slow down, lab quota"}}).encode()
    recorder.script = [
        (429, gzip.compress(error_body), {"Content-Encoding": "gzip", "Retry-After": "7"}),
        (401, json.dumps({"error": {"message": "bad key"}}).encode(), {}),
    ]
    endpoint = endpoint_of(recorder.base_url)
    limited = post(endpoint)
    assert isinstance(limited, openai.RateLimitError)
    assert limited.status_code == 429 and limited.body == {"message": "slow down, lab quota"}
    assert limited.response.headers["retry-after"] == "7"
    refused = post(endpoint)
    assert isinstance(refused, openai.AuthenticationError) and "bad key" in str(refused)


def test_the_retry_policy_reads_a_status_error_as_before(recorder):
    recorder.script = [(401, json.dumps({"error": {"message": "bad key"}}).encode(), {})]
    request = ChatRequest(model="judge-m", messages=(("user", "q"),), max_tokens=16)
    [outcome] = async_to_sync(chat_many)(endpoint_of(recorder.base_url), [request])
    assert isinstance(outcome, LLMCallError) and outcome.kind == "fatal"
    assert "HTTP 401" in outcome.reason and "bad key" in outcome.reason and "$FAKE_LLM_KEY" in outcome.reason


def test_an_error_body_is_read_only_up_to_its_cap(recorder):
    huge = b'{"error": {"message": "' + b"x" * (8 * ERROR_BODY_BYTES) + b'"}}'
    recorder.script = [(500, huge, {})]
    error = post(endpoint_of(recorder.base_url))
    assert isinstance(error, openai.InternalServerError)
    assert len(error.response.content) == ERROR_BODY_BYTES  # cut, not read whole, and no error of its own


def test_a_closed_port_is_the_sdks_connection_error_from_aiohttps(recorder):
    port = recorder.server.server_address[1]
    recorder.stop()
    error = post(endpoint_of(f"http://127.0.0.1:{port}/v1"))
    assert isinstance(error, openai.APIConnectionError) and not isinstance(error, openai.APITimeoutError)
    assert isinstance(error.__cause__, aiohttp.ClientConnectorError)


def test_a_read_that_runs_out_of_time_is_the_sdks_timeout(recorder):
    release = threading.Event()
    handler_class = recorder.server.RequestHandlerClass
    answer = handler_class.do_POST

    def stall(handler):
        release.wait(10)  # set once the client has given up
        answer(handler)

    handler_class.do_POST = stall
    try:
        error = post(endpoint_of(recorder.base_url, timeout_seconds=0.3))
    finally:
        release.set()
    assert isinstance(error, openai.APITimeoutError)
    assert isinstance(error.__cause__, asyncio.TimeoutError)


def test_a_key_bound_elsewhere_never_leaves(recorder, settings):
    settings.LLM_KEY_HOSTS = {**settings.LLM_KEY_HOSTS, "FAKE_LLM_KEY": ["api.openai.com"]}
    error = post(endpoint_of(recorder.base_url))
    assert "may only be sent to api.openai.com" in str(error)
    assert recorder.requests == []
