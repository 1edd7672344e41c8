"""Reads of the llm app: endpoints by name, their configuration, and the researcher's pages."""

from __future__ import annotations

import os
from dataclasses import replace
from decimal import Decimal
from typing import TYPE_CHECKING

from django.db.models import QuerySet
from django.utils.translation import gettext as _

from core.roles import Role
from core.workspaces import NameInSeveralWorkspaces, named_one, scoped
from llm.config import DEFAULT_ENDPOINT_LIMITS, EndpointConfig, default_endpoint_config
from llm.errors import EndpointError
from llm.gate import account_key
from llm.models import Endpoint
from llm.secrets import key_variable_problem

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User


def endpoint_list(*, user: User | AnonymousUser | None = None) -> QuerySet[Endpoint]:
    """Named endpoints by name: those of the person's workspaces where they are a researcher, or
    every one for the operator (`user` None: a command, the worker)."""
    endpoints = Endpoint.objects.select_related("workspace").order_by("name")
    return endpoints if user is None else scoped(endpoints, user, role=Role.RESEARCHER.value)


def endpoint_by_name(
    *, name: str, user: User | AnonymousUser | None = None, workspace_id: int | None = None
) -> Endpoint:
    """The named endpoint (a row, not the default one); EndpointError naming the known ones when
    there is none of that name. The one lookup of an endpoint by name: pages, the API, commands.
    With a `user`, an endpoint of another workspace is unknown to them, as if it did not exist;
    with a `workspace_id` (a run's or generation's), only that workspace's endpoints are known.
    Without either (the operator), a name several workspaces use is refused, asking for one."""
    endpoints = endpoint_list(user=user)
    if workspace_id is not None:
        endpoints = endpoints.filter(workspace_id=workspace_id)
    # Names are unique within a workspace: a name two of the person's workspaces use asks which.
    try:
        row = named_one(endpoints, user=user, role=Role.RESEARCHER.value, name=name)
    except NameInSeveralWorkspaces as error:
        raise EndpointError(error.message) from None
    if row is None:
        known = ", ".join(endpoints.values_list("name", flat=True))
        if not known:
            raise EndpointError(_("Unknown endpoint %(name)s.") % {"name": repr(name)})
        raise EndpointError(
            _("Unknown endpoint %(name)s; known endpoints: %(known)s.") % {"name": repr(name), "known": known}
        )
    return row


def endpoint_config(name: str | None = None, *, workspace_id: int | None = None) -> EndpointConfig:
    """None -> the default endpoint from OPENAI_BASE_URL / OPENAI_API_KEY (shared by every
    workspace by design); otherwise the llm.Endpoint row of that name, within `workspace_id` when
    given (a run's calls use only its workspace's endpoints). Raises EndpointError (a ValueError)
    with a clear message when unknown or when the base URL is missing. With `workspace_id`, the
    calls' replies are cached for that workspace alone (the default endpoint's too)."""
    if name is None or name == "default":
        return with_account_limits(replace(default_endpoint_config(), cache_workspace_id=workspace_id))
    return endpoint_row_config(endpoint_by_name(name=name, workspace_id=workspace_id), cache_workspace_id=workspace_id)


def endpoint_row_config(row: Endpoint | None, *, cache_workspace_id: int | None = None) -> EndpointConfig:
    """The configuration of an endpoint row already at hand (a run's, a generation's); None is the
    default endpoint. EndpointError as endpoint_config raises it. The calls' replies are cached
    for `cache_workspace_id` (the work's workspace), else for the row's own workspace."""
    if row is None:
        return with_account_limits(replace(default_endpoint_config(), cache_workspace_id=cache_workspace_id))
    name = row.name
    if not row.base_url:
        raise EndpointError(_("Endpoint %(name)s has no base URL.") % {"name": repr(name)})
    # Checked here too, not only when the row is saved: a row written some other way (a fixture,
    # a shell) must not send SECRET_KEY or DATABASE_URL to its server either.
    # An empty variable: the endpoint sends no key.
    problem = key_variable_problem(row.api_key_env) if row.api_key_env else ""
    if problem:
        raise EndpointError(_("Endpoint %(name)s: %(problem)s") % {"name": repr(name), "problem": problem})
    return with_account_limits(
        EndpointConfig(
            name=row.name,
            base_url=row.base_url,
            api_key_env=row.api_key_env,
            default_model=row.default_model,
            max_in_flight=row.max_in_flight,
            requests_per_minute=row.requests_per_minute,
            tokens_per_minute=row.tokens_per_minute,
            timeout_seconds=row.timeout_seconds,
            max_retries=row.max_retries,
            max_tokens=row.max_tokens,
            cache_workspace_id=cache_workspace_id if cache_workspace_id is not None else row.workspace_id,
        )
    )


# The limits one provider account has, whoever states them.
ACCOUNT_LIMITS = ("max_in_flight", "requests_per_minute", "tokens_per_minute")


def with_account_limits(config: EndpointConfig) -> EndpointConfig:
    """`config` with, for each limit, the lowest that any endpoint of the same provider account
    states (its base URL and key variable: the shared budget's key, llm/gate.py). One account has
    one limit: when two endpoints (two workspaces', say) state different limits for it, the
    budget they share holds to the lower, whichever of them a run goes through."""
    account = account_key(config.base_url, config.api_key_env)
    stated: list = [
        row
        for row in Endpoint.objects.filter(api_key_env=config.api_key_env).only("base_url", *ACCOUNT_LIMITS)
        if account_key(row.base_url, config.api_key_env) == account
    ]
    try:
        default = default_endpoint_config()
    except EndpointError:
        pass  # no default endpoint is set up
    else:
        if account_key(default.base_url, default.api_key_env) == account:
            stated.append(default)

    def lowest(limit: str) -> int | None:
        values = [value for value in (getattr(config, limit), *(getattr(one, limit) for one in stated)) if value]
        return min(values) if values else None

    return replace(
        config,
        max_in_flight=lowest("max_in_flight"),
        requests_per_minute=lowest("requests_per_minute"),
        tokens_per_minute=lowest("tokens_per_minute"),
    )


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


def endpoint_prices(endpoint: Endpoint | None, *, batch: bool = False) -> tuple[Decimal | None, Decimal | None]:
    """(input, output) price per million tokens of the endpoint, live or through the Batch API:
    a batch price left blank is half the live one (what OpenAI and most providers charge). None
    where unknown; the default endpoint (None) has no prices."""
    if endpoint is None:
        return None, None
    if not batch:
        return endpoint.input_price_per_million, endpoint.output_price_per_million
    return (
        _batch_price(endpoint.batch_input_price_per_million, endpoint.input_price_per_million),
        _batch_price(endpoint.batch_output_price_per_million, endpoint.output_price_per_million),
    )


def _batch_price(stated: Decimal | None, live: Decimal | None) -> Decimal | None:
    if stated is not None:
        return stated
    return live / 2 if live is not None else None
