"""How to reach an endpoint and how long its replies may be.

`EndpointConfig` is what a call needs to know about a server (never the key itself, only the
name of the variable that holds it); the default endpoint comes from the environment
(OPENAI_BASE_URL, OPENAI_API_KEY, OPENAI_MODEL and the OPENAI_* limits), named endpoints from
the database (`llm.selectors.endpoint_config`). Every call has a `max_tokens`: the run's or
command's, else the endpoint's, else its kind's default (settings.LLM_MAX_TOKENS).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

from django.conf import settings
from django.utils.translation import gettext as _

from llm.errors import EndpointError


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
    # Prompt tokens (estimated before sending) plus max_tokens per minute, as providers count them.
    tokens_per_minute: int | None = None
    # The deadline of each call (connect, wait and read together); None: one that fits the reply
    # asked (`call_deadline`).
    timeout_seconds: float | None = None
    max_retries: int = 6
    # The endpoint's own max_tokens for every kind of call; None: each kind's default.
    max_tokens: int | None = None
    # The workspace whose work sends the calls (a run's, a generation's, a curation job's): its
    # replies are cached for that workspace alone (llm/cache.py). Set by
    # `llm.selectors.endpoint_config(..., workspace_id=...)`, for the default endpoint too.
    cache_workspace_id: int | None = None


# The default endpoint's limits, from the environment (or the local .env); unset means the
# EndpointConfig default. Named endpoints keep theirs in the database (/endpoints/).
DEFAULT_ENDPOINT_LIMITS = {
    "timeout_seconds": ("OPENAI_TIMEOUT_SECONDS", float, 0.1),
    "max_retries": ("OPENAI_MAX_RETRIES", int, 0),
    "max_in_flight": ("OPENAI_MAX_IN_FLIGHT", int, 1),
    "requests_per_minute": ("OPENAI_REQUESTS_PER_MINUTE", int, 1),
    "tokens_per_minute": ("OPENAI_TOKENS_PER_MINUTE", int, 1),
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
            problem = {"variable": variable, "value": repr(raw), "minimum": minimum}
            if kind is int:
                raise EndpointError(
                    _("%(variable)s=%(value)s is not a whole number of at least %(minimum)s.") % problem
                )
            raise EndpointError(_("%(variable)s=%(value)s is not a number of at least %(minimum)s.") % problem)
        limits[field] = value
    return limits


def max_tokens_problem(max_tokens: int | None) -> str:
    """Why `max_tokens` cannot be asked for, or "" when it can (None: the default applies). The one
    check of a reply's length, for an endpoint, a run and a command alike; each raises its own error."""
    if max_tokens is not None and max_tokens < 1:
        return _("Max tokens must be at least 1, or unset to send none; got %(value)s.") % {"value": max_tokens}
    return ""


def max_tokens_for(kind: str, *, endpoint: EndpointConfig, override: int | None = None) -> int:
    """The max_tokens of a call: the run's or command's, else the endpoint's, else the kind's default."""
    return max_tokens_resolve(kind, stated=endpoint.max_tokens, override=override)


def max_tokens_resolve(kind: str, *, stated: int | None, override: int | None = None) -> int:
    """The one place a default max_tokens is decided: `override` (the run's or command's), else
    `stated` (the endpoint's own), else the kind's default (settings.LLM_MAX_TOKENS). A call and
    the run that records it ask here alike."""
    if override:
        return int(override)
    if stated:
        return int(stated)
    defaults = settings.LLM_MAX_TOKENS
    return int(defaults.get(kind) or defaults[CallKind.GENERATION])


def call_deadline(endpoint: EndpointConfig, max_tokens: int | None) -> float:
    """Seconds a call may take, all told: the endpoint's timeout when it states one, else long
    enough for the reply asked written at LLM_SLOWEST_TOKENS_PER_SECOND, and never less than
    LLM_MIN_CALL_SECONDS. A fixed 120 s gave up on a small local model that was still writing
    its 2,048 tokens at 12-20 a second, and the server's work was paid for nothing."""
    if endpoint.timeout_seconds:
        return float(endpoint.timeout_seconds)
    writing = (max_tokens or 0) / float(settings.LLM_SLOWEST_TOKENS_PER_SECOND)
    return max(float(settings.LLM_MIN_CALL_SECONDS), writing)


def endpoint_signature(endpoint: EndpointConfig, model: str, max_tokens: int | None = None) -> str:
    """A short digest of where a call went (base URL, model) and how long a reply it asked for
    (servers count max_tokens into the context): a context-length failure is sent again only
    when this changes."""
    return hashlib.sha256(f"{endpoint.base_url.rstrip('/')}|{model}|{max_tokens}".encode()).hexdigest()[:16]


def default_endpoint_config() -> EndpointConfig:
    """The default endpoint, from OPENAI_BASE_URL, OPENAI_API_KEY, OPENAI_MODEL and the OPENAI_*
    limits; EndpointError when OPENAI_BASE_URL is not set or a limit is not a number."""
    base_url = os.environ.get("OPENAI_BASE_URL", "").strip()
    if not base_url:
        raise EndpointError(
            _("No endpoint given and OPENAI_BASE_URL is not set: set it (e.g. %(example)s) or choose a named endpoint.")
            % {"example": "http://127.0.0.1:8001/v1"}
        )
    return EndpointConfig(
        name="default",
        base_url=base_url,
        api_key_env="OPENAI_API_KEY",
        default_model=os.environ.get("OPENAI_MODEL", ""),
        **default_endpoint_limits(),
    )
