"""Reads of the llm app: endpoints for the researcher's pages."""

from __future__ import annotations

import os

from django.db.models import QuerySet

from llm.models import Endpoint
from llm.stream import DEFAULT_ENDPOINT_LIMITS, EndpointConfig, EndpointError, endpoint_config


def endpoint_list() -> QuerySet[Endpoint]:
    """Named endpoints by name."""
    return Endpoint.objects.order_by("name")


def key_is_set(*, variable: str) -> bool:
    """Whether the server's environment holds the named key variable (its value is never read out)."""
    return bool(os.environ.get(variable))


def default_endpoint_summary() -> dict:
    """The default endpoint as the environment defines it: its config (None when OPENAI_BASE_URL
    is unset), a problem to show instead, and which limits the environment set."""
    try:
        config: EndpointConfig | None = endpoint_config(None)
        problem = ""
    except EndpointError as error:
        config, problem = None, str(error)
    return {
        "config": config,
        "problem": problem,
        "base_url_missing": not os.environ.get("OPENAI_BASE_URL", "").strip(),
        "key_set": key_is_set(variable="OPENAI_API_KEY"),
        "limits_from_environment": [
            variable for variable, _k, _m in DEFAULT_ENDPOINT_LIMITS.values() if os.environ.get(variable)
        ],
    }
