"""The retry policy: which failed attempt is sent again, and when.

A failed attempt is classified (`classify`): retryable or not, a sign of overload (the window
shrinks) or not, and of which kind: "failed", "fatal" (every call would meet it: a wrong key,
model or path) or "context_length" (this prompt does not fit the model). Its reason names what
the researcher can fix (the URL, the server's own message). Retries wait with exponential
backoff and full jitter, never sooner than the server's Retry-After.
"""

from __future__ import annotations

import email.utils
import json
import random
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings
from django.utils.translation import gettext as _

if TYPE_CHECKING:
    import aiohttp
    from openai import APIStatusError

from llm.config import EndpointConfig
from llm.egress import egress_refusal
from llm.reading import ReplyTooLarge
from llm.sdk import sdk_modules


def _retry_base_seconds() -> float:
    return float(settings.JUDGING_RETRY_BASE_SECONDS)


def _retry_cap_seconds() -> float:
    return float(settings.JUDGING_RETRY_CAP_SECONDS)


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
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


# x-ratelimit-reset-* as OpenAI writes it: "1s", "6m0s", "20ms", "1h2m3.5s".
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
# Waits a provider's headers may impose at most: a garbled header must not stop a run for days.
MAX_PROVIDER_WAIT_SECONDS = 120.0


def _duration_seconds(value: str | None) -> float | None:
    if not value:
        return None
    value = value.strip()
    try:
        return float(value)
    except ValueError:
        pass
    parts = _DURATION_PART.findall(value)
    if not parts or "".join(number + unit for number, unit in parts) != value:
        return None
    return sum(float(number) * _UNIT_SECONDS[unit] for number, unit in parts)


def ratelimit_wait(headers: Mapping[str, str] | None) -> float | None:
    """How long every worker should wait before sending again, by the provider's
    `x-ratelimit-remaining-requests` / `-tokens` and their `x-ratelimit-reset-*`: the reset of a
    limit that has nothing left, or None when something is left (or the headers are absent)."""
    if headers is None:
        return None
    waits = []
    for limit in ("requests", "tokens"):
        remaining = headers.get(f"x-ratelimit-remaining-{limit}")
        if remaining is None:
            continue
        try:
            left = float(remaining)
        except ValueError:
            continue
        if left <= 0:
            reset = _duration_seconds(headers.get(f"x-ratelimit-reset-{limit}"))
            if reset:
                waits.append(min(reset, MAX_PROVIDER_WAIT_SECONDS))
    return max(waits) if waits else None


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
class Failure:
    """How one failed attempt is handled: sent again or not, shrinking the window or not, and why."""

    retryable: bool
    overload: bool  # a sign the server has more calls than it can serve: the window shrinks
    kind: str
    reason: str
    retry_after: float | None = None


def _server_message(error: APIStatusError) -> str:
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


def _transport_error(error: BaseException | None) -> aiohttp.ClientError | None:
    """The aiohttp error behind an SDK error, if any (the SDK reports it through httpx2's types)."""
    # Imported here, not at the top: aiohttp comes with the SDK, which is loaded on first use (llm.sdk).
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


def classify(error: Exception, endpoint: EndpointConfig, *, deadline: float) -> Failure:
    """How a failed attempt is handled, with a reason that names what the researcher can fix.
    `deadline`: the seconds the call was given (llm.config.call_deadline), named in a timeout."""
    url = endpoint.base_url
    refused = egress_refusal(error)
    if refused is not None:
        # A key bound to other hosts or an internal address (llm.egress): every call would meet it.
        return Failure(False, False, "fatal", str(refused))
    openai, _httpx2 = sdk_modules()
    transport_error = _transport_error(error)
    # The aiohttp transport reports a refused or dropped connection as a connect timeout; only
    # a time that ran out is one (and only that shrinks the window).
    if isinstance(error, ReplyTooLarge):
        # The same server would send it again: not retried, and nothing of it is kept.
        return Failure(False, False, "failed", str(error))
    if (isinstance(error, openai.APITimeoutError) or type(error) is TimeoutError) and (
        transport_error is None or isinstance(transport_error, TimeoutError)
    ):
        return Failure(
            True,
            True,
            "failed",
            _("timeout (no reply within %(seconds)s s)") % {"seconds": f"{deadline:g}"},
        )
    if isinstance(error, openai.APIConnectionError):
        # Imported here, not at the top: aiohttp comes with the SDK, which is loaded on first use (llm.sdk).
        import aiohttp

        cause = _root_cause(error)
        dropped = transport_error is not None and not isinstance(transport_error, aiohttp.ClientConnectorError)
        where = {"url": url, "error": f"{type(cause).__name__}: {cause}"}
        if dropped:
            return Failure(True, False, "failed", _("lost the connection to %(url)s (%(error)s)") % where)
        return Failure(True, False, "failed", _("cannot connect to %(url)s (%(error)s)") % where)
    if isinstance(error, openai.APIStatusError):
        status = error.status_code
        message = _server_message(error)
        said = {"url": url, "message": message}
        headers = getattr(error.response, "headers", None)
        retry_after = retry_after_seconds(headers)
        if status == 429 and retry_after is None:
            retry_after = ratelimit_wait(headers)
        if status in (429, 503, 504):
            return Failure(True, True, "failed", f"HTTP {status}: {message}", retry_after)
        if status == 408 or status >= 500:
            return Failure(True, False, "failed", f"HTTP {status}: {message}", retry_after)
        if status in (400, 413) and CONTEXT_LENGTH.search(message):
            return Failure(False, False, "context_length", f"HTTP {status}: {message}")
        if status == 401:
            return Failure(
                False,
                False,
                "fatal",
                _("HTTP 401 from %(url)s: %(message)s (the key is read from $%(variable)s)")
                % {"url": url, "message": message, "variable": endpoint.api_key_env},
            )
        if status == 403:
            return Failure(
                False, False, "fatal", _("HTTP %(status)s from %(url)s: %(message)s") % {**said, "status": 403}
            )
        if status == 404:
            if "model" in message.lower():
                return Failure(False, False, "fatal", _("HTTP 404: %(message)s at %(url)s") % said)
            if not re.search(r"/v\d+/?$", url):
                return Failure(
                    False,
                    False,
                    "fatal",
                    _("HTTP 404 from %(url)s: the base URL probably lacks /v1 (the server said: %(message)s)") % said,
                )
            return Failure(
                False, False, "fatal", _("HTTP %(status)s from %(url)s: %(message)s") % {**said, "status": 404}
            )
        return Failure(False, False, "failed", f"HTTP {status}: {message}")
    if isinstance(error, (openai.APIResponseValidationError, json.JSONDecodeError, ValueError, TypeError)):
        # A garbled body from a proxy or an overloaded server: worth another try.
        return Failure(True, False, "failed", _("unreadable response: %(error)s") % {"error": type(error).__name__})
    return Failure(False, False, "failed", f"{type(error).__name__}: {error}")
