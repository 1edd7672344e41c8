"""The response cache: an identical prompt to the same endpoint and model is paid once.

A call's key hashes everything that changes the reply (base URL, model, messages, parameters),
never a key or a header. Rows are looked up and written in chunks, one query per chunk.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from llm.calls import ChatRequest, ChatResult
from llm.config import EndpointConfig
from llm.models import LLMResponse

# Cache rows are looked up and written in chunks: one query per chunk, not per call.
CACHE_CHUNK = 500
CACHE_FLUSH_SECONDS = 0.2


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


CacheRow = tuple[str, str, str, ChatResult]  # key, base URL, model, reply


def cache_lookup(keys: list[str]) -> dict[str, ChatResult]:
    """The cached replies of these keys (those the cache holds), each marked as cached."""
    found = {}
    for start in range(0, len(keys), CACHE_CHUNK):
        chunk = keys[start : start + CACHE_CHUNK]
        for row in LLMResponse.objects.filter(key__in=chunk).only(
            "key", "text", "prompt_tokens", "completion_tokens", "latency_ms", "finish_reason"
        ):
            found[row.key] = ChatResult(
                row.text,
                row.prompt_tokens,
                row.completion_tokens,
                row.latency_ms,
                True,
                row.finish_reason or None,
                key=row.key,
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
