"""The errors of a call to an LLM endpoint, as the person who made the call can act on them.

`LLMCallError` is one call that failed for good (its `kind` says whether retrying, or another
call to the same endpoint, could help); `EndpointError` an endpoint that cannot be used as
configured; `EndpointUnusable` a stream stopped because its calls kept failing the same way.
Which failed attempt is retried, and why, is `llm.retry`'s classification.
"""

from __future__ import annotations

from core.errors import UserbenchError
from llm.secrets import redact_secrets, storable


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
