"""What a call sends and what comes back: `ChatRequest`, `ChatResult` (cut off or not), and
the server's JSON read into a result."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from llm.errors import LLMCallError
from llm.reading import text_too_large
from llm.secrets import storable


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
    # The response cache key of the request this answers ("" when not known): a judgment
    # refers to the cache row instead of storing the reply a second time.
    key: str = ""

    def __post_init__(self) -> None:
        # A reply is stored (cache, judgment, draft) and shown: an upstream that repeats the
        # API key must not get it there, nor a NUL byte, which PostgreSQL refuses to store.
        object.__setattr__(self, "text", storable(self.text))
        object.__setattr__(self, "model", storable(self.model))

    @property
    def cut_off(self) -> bool:
        """The reply stopped at max_tokens: never a complete answer, draft or verdict."""
        return self.finish_reason == "length"


# What a call ends with: its reply, or the error it failed with for good.
Outcome = ChatResult | LLMCallError


# A token count above this is no count (no context holds a hundred million tokens): stored as unknown.
USAGE_MAX = 100_000_000


def usage_count(value: object) -> int | None:
    """A usage count as the server reported it, if it is one: a non-negative whole number below
    USAGE_MAX. Anything else (negative, huge, a list, a string, true) is unknown (None): it must
    never fail the batch that stores the reply, and so never make a call be paid again."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < USAGE_MAX:
        return None
    return value


def chat_body(request: ChatRequest) -> dict[str, Any]:
    """The JSON body of a chat completion: the same for a live call and a batch line."""
    body: dict[str, Any] = {
        "model": request.model,
        "messages": [{"role": role, "content": content} for role, content in request.messages],
    }
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.max_tokens is not None:
        body["max_tokens"] = request.max_tokens
    return body


def read_reply(content: bytes, started: float, *, text_cap: int | None = None, key: str = "") -> ChatResult:
    """A chat completion's body as a result; ValueError when it holds no message and was not cut
    off, ReplyTooLarge (llm.reading) when its text is longer than `text_cap`."""
    return reply_from_data(json.loads(content), int((time.monotonic() - started) * 1000), text_cap=text_cap, key=key)


def reply_from_data(data: object, latency_ms: int, *, text_cap: int | None = None, key: str = "") -> ChatResult:
    """A chat completion already read as JSON (a live reply, or a batch result line's body) as a
    result; the same errors as `read_reply`."""
    choices = data.get("choices") if isinstance(data, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    message = choice.get("message")
    text = message.get("content") if isinstance(message, dict) else None
    finish_reason = choice.get("finish_reason")
    finish_reason = finish_reason if isinstance(finish_reason, str) else None
    if not isinstance(text, str):
        if finish_reason != "length":
            raise ValueError("the reply has no message content")
        text = ""  # cut off before it said anything
    if text_cap is not None and len(text) > text_cap:
        raise text_too_large(len(text), text_cap)
    usage = data.get("usage") if isinstance(data, dict) else None
    usage = usage if isinstance(usage, dict) else {}
    reported = data.get("model") if isinstance(data, dict) else None
    return ChatResult(
        text=text,
        prompt_tokens=usage_count(usage.get("prompt_tokens")),
        completion_tokens=usage_count(usage.get("completion_tokens")),
        latency_ms=latency_ms,
        cached=False,
        finish_reason=finish_reason,
        model=reported[:128] if isinstance(reported, str) else "",
        key=key,
    )
