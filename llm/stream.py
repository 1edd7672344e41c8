"""The one module that talks to LLM endpoints: `openai.AsyncOpenAI` with a base URL.

Everything else (judging, generation, reference drafting, translation) sends through
`CallStream` (via `llm.delivery`, which stores replies in batches), or `chat_many` /
`chat_one` for a few calls. This module owns what the papers' one-call-at-a-time scripts
lacked: an adaptive window of calls in flight (`llm.window`), retries with exponential
backoff and jitter that honour `Retry-After`, an optional requests-per-minute pace, a
`max_tokens` on every call, errors a researcher can act on (the URL, the server's own
message; errors retrying cannot fix are not retried, and a stream stops after a few
identical ones), and a response cache in the database so an identical prompt is never
paid twice.

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
import re
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from asgiref.sync import async_to_sync, sync_to_async
from django.conf import settings

from core.errors import UserbenchError
from llm.models import Endpoint, LLMResponse
from llm.secrets import key_variable_problem, redact_secrets
from llm.window import AdaptiveWindow

# A local server (vLLM, llama.cpp, Ollama) needs no key, but the client insists on one.
NO_KEY_PLACEHOLDER = "no-key-set"
# Cache rows are looked up and written in chunks: one query per chunk, not per call.
CACHE_CHUNK = 500
CACHE_FLUSH_SECONDS = 0.2
# httpx's pool scans every connection for each request, so one client with 64 connections
# spends more CPU per call than four with 16: calls are spread over small clients.
CONNECTIONS_PER_CLIENT = 16
# A stream stops after this many identical errors that retrying cannot fix (a wrong key, an
# unknown model, a base URL without /v1), or identical errors of any kind before any call was
# answered (a server that is down): the next thousand calls would fail the same way.
FATAL_REPEATS = 3
# Replies remembered per stream so that an identical request sent later is not paid again
# before the cache row is written (bounded: memory stays flat over a long run).
RECENT_REPLIES = 2000


class CallKind:
    """What a call is for; each kind has its own default `max_tokens` (settings.LLM_MAX_TOKENS)."""

    JUDGING = "judging"
    GENERATION = "generation"
    REFERENCE = "reference"
    TRANSLATION = "translation"


@dataclass(frozen=True)
class EndpointConfig:
    """How to reach an OpenAI-compatible server. Holds the key's variable name, never the key."""

    name: str
    base_url: str
    api_key_env: str
    default_model: str
    # None: the endpoint states no limit, so the window finds the server's capacity (`auto`).
    max_in_flight: int | None = None
    requests_per_minute: int | None = None
    timeout_seconds: float = 120.0
    max_retries: int = 6
    # The endpoint's own max_tokens for every kind of call; None: each kind's default.
    max_tokens: int | None = None


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
    # "stop", "length" (cut off by max_tokens), ... as the server said; None when it did not.
    finish_reason: str | None = None
    # The model name the server put in its reply ("" when it gave none, or for a cached reply).
    model: str = ""

    def __post_init__(self):
        # A reply is stored (cache, judgment, draft) and shown: an upstream that repeats the
        # API key must not get it there, nor a NUL byte, which PostgreSQL refuses to store.
        object.__setattr__(self, "text", storable(self.text))
        object.__setattr__(self, "model", storable(self.model))

    @property
    def cut_off(self) -> bool:
        """The reply stopped at max_tokens: never a complete answer, draft or verdict."""
        return self.finish_reason == "length"


def storable(text: str) -> str:
    """Upstream text as it may be stored: key values redacted, NUL bytes shown as U+FFFD."""
    return redact_secrets(text).replace("\x00", "\ufffd")


class LLMCallError(UserbenchError):
    """A call that failed for good (after its retries, or at once when retrying cannot help).

    `kind`: "failed" (retries used up, or a request the server refused), "fatal" (an error
    every call would meet: 401, 403, 404), or "context_length" (this prompt does not fit the
    model: sending it again to the same endpoint cannot help)."""

    def __init__(self, reason: str, *, kind: str = "failed"):
        # Redacted before it is cut: the reason is stored and shown, and upstream errors
        # often quote the key they refused.
        reason = storable(reason)
        super().__init__(reason)
        self.reason = reason[:300]
        self.kind = kind


class EndpointError(UserbenchError):
    """An endpoint that cannot be used as configured; the message says what to set."""


class EndpointUnusable(EndpointError):
    """Several calls met the same error that retrying cannot fix: the stream stopped."""

    def __init__(self, message: str):
        # The message quotes the server's error, which may quote the key it refused.
        super().__init__(redact_secrets(message))


# The default endpoint's limits, from the environment (or the local .env); unset means the
# EndpointConfig default. Named endpoints keep theirs in the database (/endpoints/).
DEFAULT_ENDPOINT_LIMITS = {
    "timeout_seconds": ("OPENAI_TIMEOUT_SECONDS", float, 0.1),
    "max_retries": ("OPENAI_MAX_RETRIES", int, 0),
    "max_in_flight": ("OPENAI_MAX_IN_FLIGHT", int, 1),
    "requests_per_minute": ("OPENAI_REQUESTS_PER_MINUTE", int, 1),
    "max_tokens": ("OPENAI_MAX_TOKENS", int, 1),
}


def default_endpoint_limits() -> dict:
    """Timeout, retries, in-flight limit, pace and max_tokens of the default endpoint as set in
    the environment; a value that is not a number, or too small, raises EndpointError naming it."""
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


def max_tokens_for(kind: str, *, endpoint: EndpointConfig, override: int | None = None) -> int:
    """The max_tokens of a call: the run's or command's, else the endpoint's, else the kind's default."""
    if override:
        return int(override)
    if endpoint.max_tokens:
        return int(endpoint.max_tokens)
    defaults = settings.LLM_MAX_TOKENS
    return int(defaults.get(kind) or defaults[CallKind.GENERATION])


def endpoint_signature(endpoint: EndpointConfig, model: str, max_tokens: int | None = None) -> str:
    """A short digest of where a call went (base URL, model) and how long a reply it asked for
    (servers count max_tokens into the context): a context-length failure is sent again only
    when this changes."""
    return hashlib.sha256(f"{endpoint.base_url.rstrip('/')}|{model}|{max_tokens}".encode()).hexdigest()[:16]


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
        max_tokens=row.max_tokens,
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


# A 400 (or 413) whose message says the prompt does not fit: llama.cpp, vLLM, OpenAI and
# gateways word it differently.
CONTEXT_LENGTH = re.compile(
    r"context[ _-]?(length|size|window)|maximum context|context too long|too many tokens|prompt is too long"
    r"|exceeds? the (available )?context",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class _Failure:
    retryable: bool
    overload: bool  # a sign the server has more calls than it can serve: the window shrinks
    kind: str
    reason: str
    retry_after: float | None = None


def _sdk():
    """The openai package, imported on first use: it takes about a second to import, and most
    processes that load this module (the web app, `judge` following its workers) never call.
    A worker loads it as it starts (`load_sdk`)."""
    import httpx2
    import openai

    return openai, httpx2


def load_sdk() -> None:
    """Import the SDK (with its aiohttp transport) now, not with the first call."""
    _sdk()


def _server_message(error) -> str:
    """The server's own words: OpenAI's {"error": {"message"}}, vLLM's {"message"}, or the raw body."""
    body = error.body
    detail = None
    if isinstance(body, dict):
        inner = body.get("error")
        detail = body.get("message") or (inner.get("message") if isinstance(inner, dict) else inner)
    if not detail:
        try:
            detail = error.response.text.strip()
        except Exception:  # noqa: BLE001 - a body that cannot be read is not worth a second error
            detail = ""
    return " ".join(str(detail or error.message).split())[:200]


def _transport_error(error: BaseException):
    """The aiohttp error behind an SDK error, if any (the SDK reports it through httpx2's types)."""
    import aiohttp

    while error is not None:
        if isinstance(error, aiohttp.ClientError):
            return error
        error = error.__cause__
    return None


def _root_cause(error: BaseException) -> BaseException:
    while error.__cause__ is not None:
        error = error.__cause__
    return error


def _classify(error: Exception, endpoint: EndpointConfig) -> _Failure:
    """How a failed attempt is handled, with a reason that names what the researcher can fix."""
    url = endpoint.base_url
    openai, _ = _sdk()
    transport_error = _transport_error(error)
    # The aiohttp transport reports a refused or dropped connection as a connect timeout; only
    # a time that ran out is one (and only that shrinks the window).
    if isinstance(error, openai.APITimeoutError) and (
        transport_error is None or isinstance(transport_error, TimeoutError)
    ):
        return _Failure(True, True, "failed", f"timeout (no reply within {endpoint.timeout_seconds:g} s)")
    if isinstance(error, openai.APIConnectionError):
        import aiohttp

        cause = _root_cause(error)
        dropped = transport_error is not None and not isinstance(transport_error, aiohttp.ClientConnectorError)
        what = "lost the connection to" if dropped else "cannot connect to"
        return _Failure(True, False, "failed", f"{what} {url} ({type(cause).__name__}: {cause})")
    if isinstance(error, openai.APIStatusError):
        status = error.status_code
        message = _server_message(error)
        retry_after = retry_after_seconds(getattr(error.response, "headers", None))
        if status in (429, 503, 504):
            return _Failure(True, True, "failed", f"HTTP {status}: {message}", retry_after)
        if status == 408 or status >= 500:
            return _Failure(True, False, "failed", f"HTTP {status}: {message}", retry_after)
        if status in (400, 413) and CONTEXT_LENGTH.search(message):
            return _Failure(False, False, "context_length", f"HTTP {status}: {message}")
        if status == 401:
            return _Failure(
                False, False, "fatal", f"HTTP 401 from {url}: {message} (the key is read from ${endpoint.api_key_env})"
            )
        if status == 403:
            return _Failure(False, False, "fatal", f"HTTP 403 from {url}: {message}")
        if status == 404:
            if "model" in message.lower():
                return _Failure(False, False, "fatal", f"HTTP 404: {message} at {url}")
            if not re.search(r"/v\d+/?$", url):
                return _Failure(
                    False,
                    False,
                    "fatal",
                    f"HTTP 404 from {url}: the base URL probably lacks /v1 (the server said: {message})",
                )
            return _Failure(False, False, "fatal", f"HTTP 404 from {url}: {message}")
        return _Failure(False, False, "failed", f"HTTP {status}: {message}")
    if isinstance(error, (openai.APIResponseValidationError, json.JSONDecodeError, ValueError, TypeError)):
        # A garbled body from a proxy or an overloaded server: worth another try.
        return _Failure(True, False, "failed", f"unreadable response: {type(error).__name__}")
    return _Failure(False, False, "failed", f"{type(error).__name__}: {error}")


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


CacheRow = tuple[str, str, str, ChatResult]  # key, base URL, model, reply


def _cache_lookup(keys: list[str]) -> dict[str, ChatResult]:
    found = {}
    for start in range(0, len(keys), CACHE_CHUNK):
        chunk = keys[start : start + CACHE_CHUNK]
        for row in LLMResponse.objects.filter(key__in=chunk).only(
            "key", "text", "prompt_tokens", "completion_tokens", "latency_ms", "finish_reason"
        ):
            found[row.key] = ChatResult(
                row.text, row.prompt_tokens, row.completion_tokens, row.latency_ms, True, row.finish_reason or None
            )
    return found


def cache_store(rows: Sequence[CacheRow]) -> None:
    """Keep paid replies (a duplicate key is a no-op). Callers store before they parse."""
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
                finish_reason=result.finish_reason or "",
            )
            for key, base_url, model, result in rows
        ],
        ignore_conflicts=True,
        batch_size=CACHE_CHUNK,
    )


def make_client(endpoint: EndpointConfig, connections: int):
    """An AsyncOpenAI client that never retries by itself (we do) and has a deliberate timeout.

    The timeout runs from when a call is sent: a call waiting for a place in the window is
    not sent yet, and each client has a connection for every call it carries, so none waits
    in the connection pool either. The transport is aiohttp (the SDK's `DefaultAioHttpClient`):
    at 64 calls in flight it takes a quarter less CPU per call than the default httpx transport
    (1.5 against 2.0 ms, `bench/bench_llm_client.py`), and a worker's CPU is what a run at high
    concurrency waits for."""
    openai, httpx2 = _sdk()
    return openai.AsyncOpenAI(
        base_url=endpoint.base_url,
        api_key=os.environ.get(endpoint.api_key_env) or NO_KEY_PLACEHOLDER,
        max_retries=0,
        timeout=endpoint.timeout_seconds,
        http_client=openai.DefaultAioHttpClient(
            timeout=endpoint.timeout_seconds,
            # A plain-http endpoint (a local vLLM or llama.cpp) has no TLS: loading the CA bundle
            # for it only costs time. https endpoints are always verified; redirects are not followed.
            verify=not endpoint.base_url.lower().startswith("http://"),
            follow_redirects=False,
            limits=httpx2.Limits(max_connections=connections, max_keepalive_connections=connections),
        ),
    )


class _Clients:
    """Small clients, each carrying at most CONNECTIONS_PER_CLIENT calls, made as the window grows."""

    def __init__(self, endpoint: EndpointConfig):
        self.endpoint = endpoint
        self.clients: list = []  # openai.AsyncOpenAI
        self.active: list[int] = []

    def take(self) -> int:
        for n, count in enumerate(self.active):
            if count < CONNECTIONS_PER_CLIENT:
                self.active[n] += 1
                return n
        self.clients.append(make_client(self.endpoint, CONNECTIONS_PER_CLIENT + 4))
        self.active.append(1)
        return len(self.clients) - 1

    def give(self, n: int) -> None:
        self.active[n] -= 1

    async def close(self) -> None:
        for client in self.clients:
            await client.close()


def _read_reply(content: bytes, started: float) -> ChatResult:
    data = json.loads(content)
    choices = data.get("choices") if isinstance(data, dict) else None
    choice = choices[0] if choices and isinstance(choices[0], dict) else {}
    message = choice.get("message")
    text = message.get("content") if isinstance(message, dict) else None
    finish_reason = choice.get("finish_reason")
    finish_reason = finish_reason if isinstance(finish_reason, str) else None
    if not isinstance(text, str):
        if finish_reason != "length":
            raise ValueError("the reply has no message content")
        text = ""  # cut off before it said anything
    usage = data.get("usage") or {}
    reported = data.get("model")
    return ChatResult(
        text=text,
        prompt_tokens=usage.get("prompt_tokens"),
        completion_tokens=usage.get("completion_tokens"),
        latency_ms=int((time.monotonic() - started) * 1000),
        cached=False,
        finish_reason=finish_reason,
        model=reported[:128] if isinstance(reported, str) else "",
    )


class _Slot:
    """A call's place in a stream's window. A call that failed and will be retried gives its
    place up for the backoff and waits for a new one before it is sent again: the window has
    usually just shrunk (a timeout, a 429), and retries that went out all at once would queue
    at the server again, time out again, and run out of attempts."""

    def __init__(self, stream: CallStream):
        self.stream = stream
        self.state = "held"  # held -> backoff -> waiting -> held ... -> gone
        self.granted: asyncio.Future | None = None

    def release_for_retry(self) -> None:
        self.stream.active -= 1
        self.stream.retrying += 1
        self.state = "backoff"
        self.stream._wake.set()

    async def reacquire(self) -> None:
        self.state = "waiting"
        self.granted = asyncio.get_running_loop().create_future()
        self.stream._retry_queue.append(self)
        self.stream._wake.set()
        await self.granted  # the stream's loop grants it when the window has room

    def grant(self) -> None:
        """Called by the stream's loop: retries take free places before calls not yet sent."""
        self.stream.retrying -= 1
        self.stream.active += 1
        self.state = "held"
        if not self.granted.done():
            self.granted.set_result(None)

    def finish(self) -> None:
        if self.state == "held":
            self.stream.active -= 1
        elif self.state in ("backoff", "waiting"):
            self.stream.retrying -= 1
        self.state = "gone"
        self.stream._wake.set()


async def _call_with_retries(
    clients: _Clients,
    endpoint: EndpointConfig,
    request: ChatRequest,
    pace: _Pace,
    window: AdaptiveWindow,
    slot: _Slot,
) -> ChatResult:
    _openai, httpx2 = _sdk()
    attempt = 0
    while True:
        await pace.wait()
        epoch = window.epoch
        n = clients.take()
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
            response = await clients.clients[n].post("/chat/completions", body=payload, cast_to=httpx2.Response)
            result = _read_reply(response.content, started)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - every failure is classified, none escapes raw
            failure = _classify(error, endpoint)
            if failure.overload:
                window.on_overload(epoch=epoch)
            if not failure.retryable or attempt >= endpoint.max_retries:
                suffix = f" after {attempt + 1} attempts" if failure.retryable else ""
                raise LLMCallError(failure.reason + suffix, kind=failure.kind) from error
            delay = backoff_seconds(attempt, failure.retry_after)
        else:
            window.on_success(
                epoch=epoch, seconds=time.monotonic() - started, completion_tokens=result.completion_tokens
            )
            return result
        finally:
            clients.give(n)
        slot.release_for_retry()
        await asyncio.sleep(delay)
        await slot.reacquire()
        attempt += 1


def window_for(endpoint: EndpointConfig, in_flight: int | str | None = None) -> AdaptiveWindow:
    """A fixed ceiling (`in_flight`, else the endpoint's stated limit) with AIMD below it, or,
    when neither states one (or `in_flight` is "auto"), `auto`: the window finds the server's
    capacity by itself, up to LLM_AUTO_MAX_IN_FLIGHT."""
    if in_flight == "auto":
        return AdaptiveWindow(ceiling=int(settings.LLM_AUTO_MAX_IN_FLIGHT), auto=True)
    if in_flight:
        return AdaptiveWindow(ceiling=int(in_flight))
    if endpoint.max_in_flight:
        return AdaptiveWindow(ceiling=endpoint.max_in_flight)
    return AdaptiveWindow(ceiling=int(settings.LLM_AUTO_MAX_IN_FLIGHT), auto=True)


Outcome = ChatResult | LLMCallError
OnOutcome = Callable[[int, Outcome, CacheRow | None], None]


class CallStream:
    """Calls flowing through a window: as one call finishes the next starts.

    Requests come from `run(requests)` and then from `feed()`, which is asked for more while
    fewer calls wait than two windows hold (so a slow call never holds back what comes next),
    until it returns nothing; a feed that returns None has nothing yet but may have more
    later, and is asked again after `poke()`. Each request gets the next index; `on_outcome(index, outcome,
    cache_row)` hears of every outcome on the event loop, with the row to store in the cache
    for a reply that was paid for (None for a cached or shared one). Identical requests are sent
    once. `stop()` ends the stream: calls in flight are cancelled, nothing more is sent.
    FATAL_REPEATS identical errors that retrying cannot fix stop it too (`unusable` says why).
    """

    def __init__(
        self,
        endpoint: EndpointConfig,
        *,
        window: AdaptiveWindow,
        on_outcome: OnOutcome,
        feed: Callable[[], Awaitable[Sequence[ChatRequest]]] | None = None,
        use_cache: bool = True,
    ):
        self.endpoint = endpoint
        # False: the database cache is not read (a re-run measuring a judge's drift asks the
        # server again); identical requests within the stream still share one call.
        self.use_cache = use_cache
        self.window = window
        self.on_outcome = on_outcome
        self.feed = feed
        self.pending: deque[tuple[int, ChatRequest, str]] = deque()
        self.next_index = 0
        self.active = 0  # calls holding a place in the window
        self.retrying = 0  # calls waiting to be sent again, without a place
        self._retry_queue: deque[_Slot] = deque()
        self.stopped = False
        self.exhausted = feed is None
        self.feed_waiting = False
        self.unusable: EndpointUnusable | None = None
        self.failures: Counter[str] = Counter()
        self.answered = 0  # calls that got a reply
        self._leaders: dict[str, list[int]] = {}
        self._recent: OrderedDict[str, ChatResult] = OrderedDict()
        self._tasks: set[asyncio.Task] = set()
        self._wake = asyncio.Event()
        self._clients = _Clients(endpoint)
        self._pace = _Pace(endpoint.requests_per_minute)

    def stop(self) -> None:
        """Send nothing more and cancel the calls in flight (what came back was handed over)."""
        self.stopped = True
        self._wake.set()

    def poke(self) -> None:
        """Ask the feed again: it said it had nothing yet (None), and something may have come."""
        self.feed_waiting = False
        self._wake.set()

    async def add(self, requests: Sequence[ChatRequest]) -> None:
        """Queue requests: what the cache holds is handed over at once, the rest waits its turn."""
        keys = [cache_key(self.endpoint, request) for request in requests]
        cached = await sync_to_async(_cache_lookup)(sorted(set(keys))) if keys and self.use_cache else {}
        for request, key in zip(requests, keys):
            index = self.next_index
            self.next_index += 1
            hit = cached.get(key)
            if hit is not None:
                self.on_outcome(index, hit, None)
            else:
                self.pending.append((index, request, key))
        self._wake.set()

    async def _refill(self) -> None:
        try:
            more = await self.feed()
            if more is None:
                self.feed_waiting = True  # nothing now, more may come: asked again after poke()
            elif more:
                await self.add(more)
            else:
                self.exhausted = True
        finally:
            self._wake.set()

    async def run(self, requests: Sequence[ChatRequest] = ()) -> None:
        """Send everything (or until stopped); returns when no call is left in flight."""
        feeding: asyncio.Task | None = None
        try:
            await self.add(list(requests))
            while not self.stopped:
                self._wake.clear()
                if feeding is not None and feeding.done():
                    feeding.result()  # a feed that failed stops the stream with its error
                    feeding = None
                if (
                    not self.exhausted
                    and not self.feed_waiting
                    and feeding is None
                    and len(self.pending) < max(2 * self.window.size, 32)
                ):
                    feeding = asyncio.create_task(self._refill())
                while self._retry_queue and self.active < self.window.size:
                    slot = self._retry_queue.popleft()
                    if slot.state == "waiting":
                        slot.grant()
                while self.pending and self.active < self.window.size:
                    self._start(*self.pending.popleft())
                if self.exhausted and feeding is None and not self.pending and self.active == 0 and self.retrying == 0:
                    break
                await self._wake.wait()
        finally:
            if feeding is not None:
                # Never cancelled: a feed may be claiming work in the database; let it finish so
                # what it claimed is known (and released) by the caller.
                await asyncio.wait([feeding])
            for task in list(self._tasks):
                task.cancel()
            if self._tasks:
                await asyncio.gather(*self._tasks, return_exceptions=True)
            await self._clients.close()

    def _start(self, index: int, request: ChatRequest, key: str) -> None:
        followers = self._leaders.get(key)
        if followers is not None:
            followers.append(index)  # the same request is in flight: share its reply
            return
        recent = self._recent.get(key)
        if recent is not None:
            self.on_outcome(index, _shared(recent), None)
            return
        self._leaders[key] = []
        self.active += 1
        task = asyncio.create_task(self._one(index, request, key))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _one(self, index: int, request: ChatRequest, key: str) -> None:
        slot = _Slot(self)
        try:
            outcome: Outcome = await _call_with_retries(
                self._clients, self.endpoint, request, self._pace, self.window, slot
            )
        except LLMCallError as error:
            outcome = error
        finally:
            slot.finish()
        followers = self._leaders.pop(key, [])
        row = None
        if isinstance(outcome, ChatResult):
            row = (key, self.endpoint.base_url.rstrip("/"), request.model, outcome)
            self._recent[key] = outcome
            if len(self._recent) > RECENT_REPLIES:
                self._recent.popitem(last=False)
        self.on_outcome(index, outcome, row)
        for follower in followers:
            self.on_outcome(follower, _shared(outcome), None)
        if isinstance(outcome, ChatResult):
            self.answered += 1
        elif outcome.kind != "context_length":
            self.failures[outcome.reason] += 1
            # Errors retrying cannot fix (a wrong key, model or path) stop the stream after a few;
            # others (a 500, a refused connection) only while no call has been answered: a
            # server that is down or a wrong URL, never a flaky server that mostly answers.
            repeated = self.failures[outcome.reason] >= FATAL_REPEATS
            if repeated and (outcome.kind == "fatal" or not self.answered) and self.unusable is None:
                where = "" if self.endpoint.base_url in outcome.reason else f" at {self.endpoint.base_url}"
                self.unusable = EndpointUnusable(
                    f"Stopped after {FATAL_REPEATS} calls failed the same way: {outcome.reason}{where}"
                )
                self.stop()


def _shared(outcome: Outcome) -> Outcome:
    if isinstance(outcome, ChatResult):
        return ChatResult(
            outcome.text,
            outcome.prompt_tokens,
            outcome.completion_tokens,
            outcome.latency_ms,
            True,
            outcome.finish_reason,
            outcome.model,
        )
    return outcome


async def chat_many(
    endpoint: EndpointConfig,
    requests: Sequence[ChatRequest],
    *,
    in_flight: int | None = None,
    on_result: Callable[[int, Outcome], None] | None = None,
    window: AdaptiveWindow | None = None,
    use_cache: bool = True,
) -> list[Outcome]:
    """Every request's outcome, in order: a window of calls in flight (`in_flight`, else the
    endpoint's limit, else `auto`), retries with exponential backoff and jitter on 429, 5xx,
    timeouts and connection errors, honouring Retry-After, and the response cache (keyed by
    base URL, model, messages and parameters) so an identical prompt is never paid twice.
    `on_result(index, outcome)` hears of each outcome as it arrives. Calls a stopped stream
    never sent fail with the reason it stopped. `use_cache=False` asks the server again (a
    re-run measuring a judge's drift) and still stores the new replies."""
    results: list[Outcome | None] = [None] * len(requests)
    pending_cache: list[CacheRow] = []

    def on_outcome(index: int, outcome: Outcome, row: CacheRow | None) -> None:
        results[index] = outcome
        if row is not None:
            pending_cache.append(row)
        if on_result is not None:
            maybe = on_result(index, outcome)
            if inspect.isawaitable(maybe):
                asyncio.ensure_future(maybe)

    async def flush():
        if pending_cache:
            batch = pending_cache[:]
            pending_cache.clear()
            await sync_to_async(cache_store)(batch)

    stopping = asyncio.Event()

    async def flusher():
        while not stopping.is_set():
            try:
                await asyncio.wait_for(stopping.wait(), CACHE_FLUSH_SECONDS)
            except TimeoutError:
                pass
            await flush()

    stream = CallStream(
        endpoint, window=window or window_for(endpoint, in_flight), on_outcome=on_outcome, use_cache=use_cache
    )
    flushing = asyncio.create_task(flusher())
    try:
        await stream.run(requests)
    finally:
        stopping.set()
        await flushing
        # Shielded: a cancelled run still keeps the replies it already paid for.
        await asyncio.shield(flush())
    if stream.unusable is not None:
        for index, outcome in enumerate(results):
            if outcome is None:
                results[index] = LLMCallError(str(stream.unusable), kind="fatal")
    return results  # type: ignore[return-value]


def chat_one(endpoint: EndpointConfig, request: ChatRequest) -> ChatResult:
    """Synchronous convenience for one call (raises LLMCallError)."""
    [outcome] = async_to_sync(chat_many)(endpoint, [request], in_flight=1)
    if isinstance(outcome, LLMCallError):
        raise outcome
    return outcome
