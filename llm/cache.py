"""The response cache: an identical prompt to the same endpoint and model is paid once, within
one workspace.

A call's key hashes everything that changes the reply (base URL, model, messages, parameters),
never a key or a header, and then the workspace whose work sent it: the same prompt from another
team is another key, so one team's prompts are never answered from (nor revealed by) another's
rows. Rows are looked up and written in chunks, one query per chunk.
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
    """A stable hash of everything that changes the reply (base URL, model, messages,
    parameters), within the workspace that sends it (`endpoint.cache_workspace_id`)."""
    return workspace_cache_key(_reply_key(endpoint, request), endpoint.cache_workspace_id)


def workspace_cache_key(reply_key: str, workspace_id: int | None) -> str:
    """The key of a reply in one workspace's cache. Without a workspace (a call no workspace's
    work sent, and rows made before the cache was per workspace), the reply's own key: such rows
    are never found by a workspace's calls. Each row a run made was moved to its run's workspace
    this way by llm/migrations/0009_response_cache_rows_to_their_runs_workspace.py."""
    if workspace_id is None:
        return reply_key
    return hashlib.sha256(f"workspace {workspace_id}|{reply_key}".encode()).hexdigest()


def _reply_key(endpoint: EndpointConfig, request: ChatRequest) -> str:
    payload = [
        endpoint.base_url.rstrip("/"),
        request.model,
        [list(message) for message in request.messages],
        request.temperature,
        request.max_tokens,
    ]
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False).encode()).hexdigest()


CacheRow = tuple[str, str, str, ChatResult, int | None]  # key, base URL, model, reply, workspace id


def cache_row(endpoint: EndpointConfig, key: str, request: ChatRequest, result: ChatResult) -> CacheRow:
    """A paid reply to keep, in the cache of the workspace that asked."""
    return (key, endpoint.base_url.rstrip("/"), request.model, result, endpoint.cache_workspace_id)


def cache_lookup(keys: list[str], workspace_id: int | None) -> dict[str, ChatResult]:
    """The cached replies of these keys that `workspace_id`'s work paid for, each marked as cached.
    A row without a workspace is never served to a workspace's calls (only to calls no workspace
    sent: a connection check, a test)."""
    found: dict[str, ChatResult] = {}
    for start in range(0, len(keys), CACHE_CHUNK):
        chunk = keys[start : start + CACHE_CHUNK]
        # By key alone, the workspace checked here: a key already names its workspace (above), and
        # with the workspace in the query PostgreSQL may read the workspace's whole index first
        # (9.7 ms against 0.4 ms for 16 keys at 10,500 rows, growing with the cache).
        rows = LLMResponse.objects.filter(key__in=chunk).only(
            "key", "text", "prompt_tokens", "completion_tokens", "latency_ms", "finish_reason", "workspace_id"
        )
        for row in rows:
            if row.workspace_id != workspace_id:
                continue
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
                workspace_id=workspace_id,
            )
            for key, base_url, model, result, workspace_id in rows
        ],
        ignore_conflicts=True,
        batch_size=CACHE_CHUNK,
    )
