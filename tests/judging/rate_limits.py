"""A provider's rate limits for the loopback server (tests/judging/fake_llm.py): requests and
tokens per sliding minute, enforced with 429s as OpenAI does, with its headers.

Tokens are counted as providers count them when a call arrives: the prompt, estimated from
its characters (a quarter of a token per ASCII character, one per other character, four per
message), plus the max_tokens asked. This is the test's own count, written apart from
Userbench's estimate (llm/budget.py), so a client that under-counts meets 429s here.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque


def provider_tokens(body: dict) -> int:
    tokens = 0
    for message in body.get("messages") or []:
        text = str(message.get("content") or "")
        ascii_chars = len(text.encode("ascii", "ignore"))
        tokens += math.ceil(ascii_chars / 4) + (len(text) - ascii_chars) + 4
    return tokens + int(body.get("max_tokens") or 0)


class ProviderLimits:
    """Requests and tokens per `window` seconds (a provider's minute; shorter in tests)."""

    def __init__(self, *, rpm: int | None = None, tpm: int | None = None, window: float = 60.0):
        self.rpm, self.tpm, self.window = rpm, tpm, window
        self.accepted: deque[tuple[float, int]] = deque()
        self.refused = 0  # 429s sent because a limit would have been passed
        self.lock = threading.Lock()

    def _prune(self, now: float) -> None:
        while self.accepted and self.accepted[0][0] <= now - self.window:
            self.accepted.popleft()

    def admit(self, body: dict) -> tuple[bool, dict[str, str]]:
        """Whether the call is served, and the headers to send with the reply (or the 429)."""
        tokens = provider_tokens(body)
        with self.lock:
            now = time.monotonic()
            self._prune(now)
            used_requests = len(self.accepted)
            used_tokens = sum(spent for _at, spent in self.accepted)
            fits = (self.rpm is None or used_requests + 1 <= self.rpm) and (
                self.tpm is None or used_tokens + tokens <= self.tpm
            )
            if fits:
                self.accepted.append((now, tokens))
                used_requests, used_tokens = used_requests + 1, used_tokens + tokens
            else:
                self.refused += 1
            reset = max(0.0, self.accepted[0][0] + self.window - now) if self.accepted else 0.0
        headers = {}
        if self.rpm is not None:
            headers["x-ratelimit-limit-requests"] = str(self.rpm)
            headers["x-ratelimit-remaining-requests"] = str(max(0, self.rpm - used_requests))
            headers["x-ratelimit-reset-requests"] = f"{reset:.3f}s"
        if self.tpm is not None:
            headers["x-ratelimit-limit-tokens"] = str(self.tpm)
            headers["x-ratelimit-remaining-tokens"] = str(max(0, self.tpm - used_tokens))
            headers["x-ratelimit-reset-tokens"] = f"{reset:.3f}s"
        if not fits:
            headers["Retry-After"] = f"{max(reset, 0.001):.3f}"
        return fits, headers
