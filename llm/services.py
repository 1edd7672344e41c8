"""Writes of the llm app: endpoints as researchers set them up, and their connection test."""

from __future__ import annotations

import dataclasses
import logging
import time
from dataclasses import dataclass

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.utils.translation import gettext as _

from llm.calls import ChatRequest
from llm.config import EndpointConfig
from llm.errors import EndpointError, LLMCallError
from llm.models import Endpoint
from llm.stream import chat_one

logger = logging.getLogger("userbench.changes")

# The connection test is one short call: a few tokens, one attempt, and one deadline for the
# whole call (connect, wait, read), well within a web worker's own timeout.
TEST_MAX_TOKENS = 16
TEST_TIMEOUT_SECONDS = 5.0


def endpoint_change_record(*, actor: AbstractBaseUser, action: str, endpoint: Endpoint, changes: dict) -> None:
    """Record who created or changed an endpoint, and which settings (old and new values).

    The one place endpoint changes are recorded; it writes the application log. Only settings
    are recorded, never a key: an endpoint stores the name of its key's variable, not the key.
    """
    logger.info(
        "endpoint %s %s by %s: %s",
        endpoint.name,
        action,
        getattr(actor, "username", None) or "system",
        {field: [before, after] for field, (before, after) in sorted(changes.items())},
    )


@transaction.atomic
def endpoint_save(*, endpoint: Endpoint | None, values: dict, actor: AbstractBaseUser) -> Endpoint:
    """Create an endpoint (`endpoint` None) or change one from validated form values, and record
    what changed. The database constraints still hold (full_clean before saving)."""
    created = endpoint is None or endpoint.pk is None
    endpoint = endpoint or Endpoint()
    before = {} if created else Endpoint.objects.filter(pk=endpoint.pk).values(*values).get()
    for field, value in values.items():
        setattr(endpoint, field, value)
    endpoint.full_clean()
    endpoint.save()
    changes = {
        field: (None if created else before[field], value)
        for field, value in values.items()
        if created or before[field] != value
    }
    if changes:
        endpoint_change_record(
            actor=actor, action="created" if created else "changed", endpoint=endpoint, changes=changes
        )
    return endpoint


@dataclass(frozen=True)
class ConnectionTest:
    ok: bool
    endpoint: str
    model: str
    answer: str = ""
    error: str = ""
    latency_ms: int = 0


def endpoint_connection_test(*, config: EndpointConfig, model: str = "") -> ConnectionTest:
    """Make one cheap call (a few tokens, no retry) and report the answer or the error.

    The prompt carries the time so that the response cache never answers for the server.
    """
    model = (model or config.default_model).strip()
    if not model:
        return ConnectionTest(
            ok=False,
            endpoint=config.name,
            model="",
            error=_("Name a model to ask: this endpoint has no default model."),
        )
    # One call with one deadline (the page answers within it, whatever the upstream does), and
    # outside the shared budget: a test is not held back by the runs using the endpoint.
    once = dataclasses.replace(
        config,
        max_retries=0,
        max_in_flight=None,
        requests_per_minute=None,
        tokens_per_minute=None,
        timeout_seconds=min(config.timeout_seconds, TEST_TIMEOUT_SECONDS),
    )
    request = ChatRequest(
        model=model,
        messages=(("user", f"Connection test at {time.time():.3f}. Reply with the single word OK."),),
        max_tokens=TEST_MAX_TOKENS,
    )
    started = time.monotonic()
    try:
        result = chat_one(once, request)
    except (LLMCallError, EndpointError) as error:
        return ConnectionTest(ok=False, endpoint=config.name, model=model, error=str(error))
    latency = result.latency_ms or int((time.monotonic() - started) * 1000)
    return ConnectionTest(
        ok=True, endpoint=config.name, model=model, answer=result.text.strip()[:500], latency_ms=latency
    )
