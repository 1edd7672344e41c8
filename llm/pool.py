"""The client pool: small AsyncOpenAI clients, each carrying a few calls, made as a window grows,
and the chat completions sent through each (llm.sending).

API keys are read from the environment variable the endpoint names when a client is made, and
are never stored or logged; llm.egress decides whether the key may go to the endpoint's host,
and its transport (llm.egress_transport) which addresses a call may connect to.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llm.config import EndpointConfig, call_deadline
from llm.egress import EgressRefused, endpoint_key
from llm.sdk import sdk_modules

if TYPE_CHECKING:
    from openai import AsyncOpenAI

    from llm.egress_transport import GuardedTransport
    from llm.sending import ChatSender

# A local server (vLLM, llama.cpp, Ollama) needs no key, but the client insists on one.
NO_KEY_PLACEHOLDER = "no-key-set"
# httpx's pool scans every connection for each request, so one client with 64 connections
# spends more CPU per call than four with 16: calls are spread over small clients.
CONNECTIONS_PER_CLIENT = 16


def make_client(endpoint: EndpointConfig, connections: int) -> AsyncOpenAI:
    """An AsyncOpenAI client that never retries by itself (we do) and has a deliberate timeout.

    The timeout runs from when a call is sent: a call waiting for a place in the window is
    not sent yet, and each client has a connection for every call it carries, so none waits
    in the connection pool either. The transport is aiohttp (the SDK's `DefaultAioHttpClient`):
    at 64 calls in flight it takes a quarter less CPU per call than the default httpx transport
    (`bench/bench_llm_client.py`), and a worker's CPU is what a run at high concurrency waits for."""
    return _client_and_transport(endpoint, connections)[0]


def make_sender(endpoint: EndpointConfig, connections: int) -> ChatSender:
    """A `llm.sending.ChatSender`: chat completions POSTed through a client of `make_client`'s
    making, on its transport, without the SDK's per-call models (a third of the CPU per call)."""
    # Imported here, not at the top: it loads aiohttp and the SDK, which load on first use (llm.sdk).
    from llm.sending import ChatSender

    client, transport = _client_and_transport(endpoint, connections)
    # Each call's own deadline (llm.config.call_deadline) bounds it whole; the sender's socket
    # timeouts only back up a deadline the endpoint states.
    return ChatSender(client, transport, timeout_seconds=endpoint.timeout_seconds)


def _client_and_transport(endpoint: EndpointConfig, connections: int) -> tuple[AsyncOpenAI, GuardedTransport]:
    openai, httpx2 = sdk_modules()
    # Imported here, not at the top: it loads aiohttp and the SDK, which load on first use (llm.sdk).
    from llm.egress_transport import guarded_transport

    # A key bound to other hosts (LLM_KEY_HOSTS) is never put in the client: its transport
    # refuses every request instead, with the reason (llm.egress).
    try:
        key, key_refusal = endpoint_key(variable=endpoint.api_key_env, base_url=endpoint.base_url), ""
    except EgressRefused as refused:
        key, key_refusal = "", str(refused)
    connection_limits = httpx2.Limits(max_connections=connections, max_keepalive_connections=connections)
    transport = guarded_transport(
        base_url=endpoint.base_url,
        key_refusal=key_refusal,
        # A plain-http endpoint (a local vLLM or llama.cpp) has no TLS: loading the CA bundle
        # for it only costs time. https endpoints are always verified; redirects are not followed.
        verify=not endpoint.base_url.lower().startswith("http://"),
        limits=connection_limits,
    )
    # What the SDK itself sends (the Batch API's files) gets the endpoint's timeout, else the
    # shortest call's deadline.
    timeout = call_deadline(endpoint, None)
    client = openai.AsyncOpenAI(
        base_url=endpoint.base_url,
        api_key=key or NO_KEY_PLACEHOLDER,
        max_retries=0,
        timeout=timeout,
        http_client=openai.DefaultAioHttpClient(
            timeout=timeout,
            follow_redirects=False,
            # No proxy from the environment: a request goes straight to the address checked.
            trust_env=False,
            transport=transport,
            limits=connection_limits,
        ),
    )
    return client, transport


class ClientPool:
    """Small senders, each carrying at most CONNECTIONS_PER_CLIENT calls, made as the window grows."""

    def __init__(self, endpoint: EndpointConfig):
        self.endpoint = endpoint
        self.senders: list = []  # llm.sending.ChatSender
        self.active: list[int] = []

    def take(self) -> int:
        for n, count in enumerate(self.active):
            if count < CONNECTIONS_PER_CLIENT:
                self.active[n] += 1
                return n
        self.senders.append(make_sender(self.endpoint, CONNECTIONS_PER_CLIENT + 4))
        self.active.append(1)
        return len(self.senders) - 1

    def give(self, n: int) -> None:
        self.active[n] -= 1

    async def close(self) -> None:
        for sender in self.senders:
            await sender.close()
