"""The one module that talks to LLM endpoints: `openai.AsyncOpenAI` with a base URL.

Everything else (judging, generation, reference drafting, translation) calls `chat_many`
or `chat_one`. This module owns the four things the papers' one-call-at-a-time scripts
lacked: a limit on calls in flight, retries with exponential backoff and jitter that honour
`Retry-After`, an optional requests-per-minute pace, and a response cache in the database
so an identical prompt is never paid twice.

API keys are read from the environment variable the endpoint names, at call time, and are
never stored, logged or put in the cache key. Only allowed variables can be named, and every
text an upstream sends back (a reply or an error) is redacted of key values as it becomes a
ChatResult or an LLMCallError (llm.secrets).
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import inspect
import json
import os
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import httpx2
import openai
from asgiref.sync import async_to_sync, sync_to_async
from django.conf import settings

from core.errors import UserbenchError
from llm.models import Endpoint, LLMResponse
from llm.secrets import key_variable_problem, redact_secrets

# A local server (vLLM, llama.cpp, Ollama) needs no key, but the client insists on one.
NO_KEY_PLACEHOLDER = "no-key-set"
# Cache rows are looked up and written in chunks: one query per chunk, not per call.
CACHE_CHUNK = 500
CACHE_FLUSH_SECONDS = 0.2
# httpx's pool scans every connection for each request, so one client with 64 connections
# spends more CPU per call than four with 16: calls are spread over small clients.
CONNECTIONS_PER_CLIENT = 16


@dataclass(frozen=True)
class EndpointConfig:
    """How to reach an OpenAI-compatible server. Holds the key's variable name, never the key."""

    name: str
    base_url: str
    api_key_env: str
    default_model: str
    max_in_flight: int = 16
    requests_per_minute: int | None = None
    timeout_seconds: float = 120.0
    max_retries: int = 6


@dataclass(frozen=True)
class ChatRequest:
    model: str
    messages: tuple[tuple[str, str], ...]  # (role, content) pairs: hashable
    temperature: float | None = 0.0  # None: none sent, the server's default applies
    max_tokens: int | None = None


@dataclass(frozen=True)
class ChatResult:
    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_ms: int
    cached: bool
    # The model name the server put in its reply ("" when it gave none, or for a cached reply).
    model: str = ""

    def __post_init__(self):
        # A reply is stored (cache, judgment, draft) and shown: an upstream that repeats the
        # API key must not get it there, nor a NUL byte, which PostgreSQL refuses to store.
        object.__setattr__(self, "text", storable(self.text))
        object.__setattr__(self, "model", storable(self.model))


def storable(text: str) -> str:
    """Upstream text as it may be stored: key values redacted, NUL bytes shown as U+FFFD."""
    return redact_secrets(text).replace("\x00", "\ufffd")


class LLMCallError(UserbenchError):
    """A call that failed for good (after its retries, or at once when retrying cannot help)."""

    def __init__(self, reason: str):
        # Redacted before it is cut: the reason is stored and shown, and upstream errors
        # often quote the key they refused.
        reason = storable(reason)
        super().__init__(reason)
        self.reason = reason[:300]


class EndpointError(UserbenchError):
    """An endpoint that cannot be used as configured; the message says what to set."""


# The default endpoint's limits, from the environment (or the local .env); unset means the
# EndpointConfig default. Named endpoints keep theirs in the database (/endpoints/).
DEFAULT_ENDPOINT_LIMITS = {
    "timeout_seconds": ("OPENAI_TIMEOUT_SECONDS", float, 0.1),
    "max_retries": ("OPENAI_MAX_RETRIES", int, 0),
    "max_in_flight": ("OPENAI_MAX_IN_FLIGHT", int, 1),
    "requests_per_minute": ("OPENAI_REQUESTS_PER_MINUTE", int, 1),
}


def default_endpoint_limits() -> dict:
    """Timeout, retries, in-flight limit and pace of the default endpoint as set in the
    environment; a value that is not a number, or too small, raises EndpointError naming it."""
    limits = {}
    for field, (variable, kind, minimum) in DEFAULT_ENDPOINT_LIMITS.items():
        raw = os.environ.get(variable, "").strip()
        if not raw:
            continue
        try:
            value = kind(raw)
        except ValueError:
            value = None
        if value is None or value < minimum:
            kind_name = "a whole number" if kind is int else "a number"
            raise EndpointError(f"{variable}={raw!r} is not {kind_name} of at least {minimum}.")
        limits[field] = value
    return limits


def endpoint_config(name: str | None = None) -> EndpointConfig:
    """None -> the default endpoint from OPENAI_BASE_URL / OPENAI_API_KEY; otherwise the
    llm.Endpoint row of that name. Raises ValueError with a clear message when unknown
    or when the base URL is missing."""
    if name is None or name == "default":
        base_url = os.environ.get("OPENAI_BASE_URL", "").strip()
        if not base_url:
            raise EndpointError(
                "No endpoint given and OPENAI_BASE_URL is not set: set it (e.g. http://127.0.0.1:8001/v1) "
                "or name an endpoint with --endpoint."
            )
        return EndpointConfig(
            name="default",
            base_url=base_url,
            api_key_env="OPENAI_API_KEY",
            default_model=os.environ.get("OPENAI_MODEL", ""),
            **default_endpoint_limits(),
        )
    row = Endpoint.objects.filter(name=name).first()
    if row is None:
        known = ", ".join(Endpoint.objects.order_by("name").values_list("name", flat=True)) or "none"
        raise EndpointError(f"Unknown endpoint {name!r}; known endpoints: {known}.")
    if not row.base_url:
        raise EndpointError(f"Endpoint {name!r} has no base URL.")
    # Checked here too, not only when the row is saved: a row written some other way (a fixture,
    # a shell) must not send SECRET_KEY or DATABASE_URL to its server either.
    problem = key_variable_problem(row.api_key_env)
    if problem:
        raise EndpointError(f"Endpoint {name!r}: {problem}")
    return EndpointConfig(
        name=row.name,
        base_url=row.base_url,
        api_key_env=row.api_key_env,
        default_model=row.default_model,
        max_in_flight=row.max_in_flight,
        requests_per_minute=row.requests_per_minute,
        timeout_seconds=row.timeout_seconds,
        max_retries=row.max_retries,
    )


def cache_key(endpoint: EndpointConfig, request: ChatRequest) -> str:
    """A stable hash of everything that changes the reply: base URL, model, messages, parameters."""
    payload = [
        endpoint.base_url.rstrip("/"),
        request.model,
        [list(message) for message in request.messages],
        request.temperature,
        request.max_tokens,
    ]
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False).encode()).hexdigest()


def _retry_base_seconds() -> float:
    return float(settings.JUDGING_RETRY_BASE_SECONDS)


def _retry_cap_seconds() -> float:
    return float(settings.JUDGING_RETRY_CAP_SECONDS)


def retry_after_seconds(headers) -> float | None:
    """`Retry-After` as seconds (either form the RFC allows), or None when absent or unreadable."""
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        if parsed is None:
            return None
        return max(0.0, parsed.timestamp() - time.time())


def backoff_seconds(attempt: int, retry_after: float | None) -> float:
    """Exponential backoff with full jitter; never sooner than the server's Retry-After."""
    ceiling = min(_retry_cap_seconds(), _retry_base_seconds() * (2**attempt))
    delay = random.uniform(0, ceiling)
    if retry_after is not None:
        delay = max(delay, min(retry_after, _retry_cap_seconds() * 4))
    return delay


def _classify(error: Exception) -> tuple[bool, str, float | None]:
    """(retryable, reason, retry_after) for an exception raised by the openai client."""
    if isinstance(error, openai.APITimeoutError):
        return True, "timeout", None
    if isinstance(error, openai.APIConnectionError):
        return True, f"connection error: {error}", None
    if isinstance(error, openai.APIStatusError):
        status = error.status_code
        retry_after = retry_after_seconds(getattr(error.response, "headers", None))
        body = error.body if isinstance(error.body, dict) else {}
        detail = body.get("message") or (body.get("error") or {}).get("message") if body else None
        reason = f"HTTP {status}: {str(detail or error.message)[:200]}"
        return (status == 429 or status == 408 or status >= 500), reason, retry_after
    if isinstance(error, (openai.APIResponseValidationError, json.JSONDecodeError, ValueError, TypeError)):
        # A garbled body from a proxy or an overloaded server: worth another try.
        return True, f"unreadable response: {type(error).__name__}", None
    return False, f"{type(error).__name__}: {error}", None


class _Pace:
    """Spaces call starts so that no more than `per_minute` begin in any minute."""

    def __init__(self, per_minute: int | None):
        self.interval = 60.0 / per_minute if per_minute else 0.0
        self.next_start = 0.0
        self.lock = asyncio.Lock()

    async def wait(self):
        if not self.interval:
            return
        async with self.lock:
            now = time.monotonic()
            if self.next_start > now:
                await asyncio.sleep(self.next_start - now)
            self.next_start = max(now, self.next_start) + self.interval


def _cache_lookup(keys: list[str]) -> dict[str, ChatResult]:
    found = {}
    for start in range(0, len(keys), CACHE_CHUNK):
        chunk = keys[start : start + CACHE_CHUNK]
        for row in LLMResponse.objects.filter(key__in=chunk).only(
            "key", "text", "prompt_tokens", "completion_tokens", "latency_ms"
        ):
            found[row.key] = ChatResult(row.text, row.prompt_tokens, row.completion_tokens, row.latency_ms, True)
    return found


def _cache_store(rows: list[tuple[str, str, str, ChatResult]]) -> None:
    LLMResponse.objects.bulk_create(
        [
            LLMResponse(
                key=key,
                base_url=base_url,
                model=model,
                text=result.text,
                prompt_tokens=result.prompt_tokens,
                completion_tokens=result.completion_tokens,
                latency_ms=result.latency_ms,
            )
            for key, base_url, model, result in rows
        ],
        ignore_conflicts=True,
        batch_size=CACHE_CHUNK,
    )


async def _call_with_retries(client, endpoint: EndpointConfig, request: ChatRequest, pace: _Pace) -> ChatResult:
    attempt = 0
    while True:
        await pace.wait()
        started = time.monotonic()
        try:
            payload = {
                "model": request.model,
                "messages": [{"role": role, "content": content} for role, content in request.messages],
            }
            if request.temperature is not None:
                payload["temperature"] = request.temperature
            if request.max_tokens is not None:
                payload["max_tokens"] = request.max_tokens
            # The client's own POST (auth, headers, typed errors) with the raw body: building
            # pydantic models for every reply cost more CPU than the rest of a call.
            response = await client.post("/chat/completions", body=payload, cast_to=httpx2.Response)
            data = json.loads(response.content)
            choices = data.get("choices") if isinstance(data, dict) else None
            message = (choices[0] or {}).get("message") if choices and isinstance(choices[0], dict) else None
            text = message.get("content") if isinstance(message, dict) else None
            if not isinstance(text, str):
                raise ValueError("the reply has no message content")
            usage = data.get("usage") or {}
            reported = data.get("model")
            return ChatResult(
                text=text,
                prompt_tokens=usage.get("prompt_tokens"),
                completion_tokens=usage.get("completion_tokens"),
                latency_ms=int((time.monotonic() - started) * 1000),
                cached=False,
                model=reported[:128] if isinstance(reported, str) else "",
            )
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - every failure is classified, none escapes raw
            retryable, reason, retry_after = _classify(error)
            if not retryable or attempt >= endpoint.max_retries:
                suffix = f" after {attempt + 1} attempts" if retryable else ""
                raise LLMCallError(reason + suffix) from error
            await asyncio.sleep(backoff_seconds(attempt, retry_after))
            attempt += 1


def make_client(endpoint: EndpointConfig, in_flight: int) -> openai.AsyncOpenAI:
    """An AsyncOpenAI client that never retries by itself (we do) and has a deliberate timeout."""
    return openai.AsyncOpenAI(
        base_url=endpoint.base_url,
        api_key=os.environ.get(endpoint.api_key_env) or NO_KEY_PLACEHOLDER,
        max_retries=0,
        timeout=endpoint.timeout_seconds,
        http_client=httpx2.AsyncClient(
            timeout=endpoint.timeout_seconds,
            # A plain-http endpoint (a local vLLM or llama.cpp) has no TLS: loading the CA bundle
            # for it only costs time. https endpoints are always verified; redirects are not followed.
            verify=not endpoint.base_url.lower().startswith("http://"),
            limits=httpx2.Limits(max_connections=in_flight + 4, max_keepalive_connections=in_flight + 4),
        ),
    )


async def chat_many(
    endpoint: EndpointConfig,
    requests: Sequence[ChatRequest],
    *,
    in_flight: int | None = None,
    on_result: Callable[[int, ChatResult | LLMCallError], Awaitable[None] | None] | None = None,
    use_cache: bool = True,
) -> list[ChatResult | LLMCallError]:
    """Up to in_flight (default endpoint.max_in_flight) calls at once; retries with
    exponential backoff and jitter on 429, 5xx, timeouts and connection errors, honouring
    Retry-After; a response cache in the database keyed by endpoint base URL, model, messages
    and parameters so an identical prompt is never paid twice. `use_cache=False` asks the
    server again (a re-run measuring a judge's drift) and still stores the new replies."""
    limit = max(1, in_flight or endpoint.max_in_flight)
    results: list[ChatResult | LLMCallError | None] = [None] * len(requests)
    keys = [cache_key(endpoint, request) for request in requests]
    cached = await sync_to_async(_cache_lookup)(sorted(set(keys))) if use_cache else {}

    async def deliver(index: int, outcome: ChatResult | LLMCallError):
        results[index] = outcome
        if on_result is not None:
            maybe = on_result(index, outcome)
            if inspect.isawaitable(maybe):
                await maybe

    # Identical requests in one batch are sent once; the rest wait for the first.
    first_of_key: dict[str, int] = {}
    todo: list[int] = []
    followers: dict[int, list[int]] = {}
    for index, key in enumerate(keys):
        if key in cached:
            continue
        if key in first_of_key:
            followers.setdefault(first_of_key[key], []).append(index)
        else:
            first_of_key[key] = index
            todo.append(index)
    for index, key in enumerate(keys):
        if key in cached:
            await deliver(index, cached[key])
    if not todo:
        return results  # type: ignore[return-value]

    pending_cache: list[tuple[str, str, str, ChatResult]] = []

    async def flush():
        if pending_cache:
            batch = pending_cache[:]
            pending_cache.clear()
            await sync_to_async(_cache_store)(batch)

    async def flusher():
        while True:
            await asyncio.sleep(CACHE_FLUSH_SECONDS)
            await flush()

    semaphore = asyncio.Semaphore(limit)
    pace = _Pace(endpoint.requests_per_minute)
    client_count = -(-min(limit, len(todo)) // CONNECTIONS_PER_CLIENT)
    clients = [make_client(endpoint, -(-limit // client_count)) for _ in range(client_count)]
    free_clients = asyncio.Queue()
    for n in range(limit):
        free_clients.put_nowait(clients[n % client_count])

    async def one(index: int):
        request = requests[index]
        async with semaphore:
            # Each slot owns one client while it calls: a client never has more calls than connections.
            client = free_clients.get_nowait()
            try:
                outcome: ChatResult | LLMCallError = await _call_with_retries(client, endpoint, request, pace)
            except LLMCallError as error:
                outcome = error
            finally:
                free_clients.put_nowait(client)
        if isinstance(outcome, ChatResult):
            pending_cache.append((keys[index], endpoint.base_url.rstrip("/"), request.model, outcome))
        await deliver(index, outcome)
        for follower in followers.get(index, []):
            await deliver(
                follower,
                ChatResult(
                    outcome.text,
                    outcome.prompt_tokens,
                    outcome.completion_tokens,
                    outcome.latency_ms,
                    True,
                    outcome.model,
                )
                if isinstance(outcome, ChatResult)
                else outcome,
            )

    flushing = asyncio.create_task(flusher())
    try:
        await asyncio.gather(*(one(index) for index in todo))
    finally:
        flushing.cancel()
        try:
            await flushing
        except asyncio.CancelledError:
            pass
        # Shielded: a cancelled run still keeps the replies it already paid for.
        await asyncio.shield(flush())
        for client in clients:
            await client.close()
    return results  # type: ignore[return-value]


def chat_one(endpoint: EndpointConfig, request: ChatRequest) -> ChatResult:
    """Synchronous convenience for one call (raises LLMCallError)."""
    [outcome] = async_to_sync(chat_many)(endpoint, [request], in_flight=1)
    if isinstance(outcome, LLMCallError):
        raise outcome
    return outcome
