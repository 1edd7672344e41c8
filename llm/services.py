"""Writes of the llm app: endpoints as researchers set them up, and their connection test."""

from __future__ import annotations

import dataclasses
import logging
import time
from dataclasses import dataclass

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.utils.translation import gettext as _

from core.audit import AuditAction, audit_record, audit_value
from core.constraints import constraint_answered
from core.models import Workspace
from core.workspaces import administers, in_workspace
from llm.calls import ChatRequest
from llm.config import EndpointConfig
from llm.egress import egress_refusal
from llm.errors import EndpointError, LLMCallError
from llm.models import Endpoint
from llm.sdk import sdk_modules
from llm.stream import chat_one

logger = logging.getLogger("userbench.changes")

# The connection test is one short call: a few tokens, one attempt, and one deadline for the
# whole call (connect, wait, read), well within a web worker's own timeout.
TEST_MAX_TOKENS = 16
TEST_TIMEOUT_SECONDS = 5.0


# Where an endpoint sends its key: changing either of these needs an admin of its workspace.
KEY_ROUTE_FIELDS = ("base_url", "api_key_env")


class EndpointChangeRefused(EndpointError):
    """A change to an endpoint this person may not make; nothing was changed."""


class EndpointNameTaken(EndpointError):
    """Another endpoint of the same workspace has the name; nothing was changed. Names are unique
    within a workspace only, so what other workspaces named is never consulted (nor told)."""


def endpoint_change_record(*, actor: AbstractBaseUser | None, action: str, endpoint: Endpoint, changes: dict) -> None:
    """Record who created or changed an endpoint, and which settings (old and new values).

    The one place endpoint changes are recorded; it writes the application log and the audit log.
    Only settings are recorded, never a key: an endpoint stores the name of its key's variable,
    not the key.
    """
    audit_record(
        actor=actor,
        action=AuditAction.ENDPOINT_CHANGED,
        target=f"endpoint:{endpoint.name}",
        workspace=endpoint.workspace_id,
        details={
            "created": action == "created",
            "changes": {
                field: [audit_value(before), audit_value(after)] for field, (before, after) in sorted(changes.items())
            },
        },
    )
    logger.info(
        "endpoint %s %s by %s: %s",
        endpoint.name,
        action,
        getattr(actor, "username", None) or "system",
        {field: [before, after] for field, (before, after) in sorted(changes.items())},
    )


@transaction.atomic
def endpoint_save(
    *, endpoint: Endpoint | None, values: dict, actor: AbstractBaseUser | None, workspace: Workspace | None = None
) -> Endpoint:
    """Create an endpoint (`endpoint` None, in `workspace`, the default one when None) or change
    one from validated form values, and record what changed (audited, before and after). The
    database constraints still hold (full_clean before saving).

    Changing an existing endpoint's base URL or key variable (where its key goes) needs an admin
    of its workspace: EndpointChangeRefused otherwise, and nothing is changed. `actor` None is
    the operator (a command), who is trusted."""
    created = endpoint is None or endpoint.pk is None
    endpoint = endpoint or Endpoint()
    if created and workspace is not None:
        endpoint.workspace = workspace
    before = {} if created else Endpoint.objects.filter(pk=endpoint.pk).values(*values).get()
    rerouted = [
        field for field in KEY_ROUTE_FIELDS if not created and field in values and before[field] != values[field]
    ]
    if rerouted and actor is not None and not administers(actor, endpoint.workspace_id):
        raise EndpointChangeRefused(
            _(
                "Only an admin of workspace %(workspace)s may change where endpoint %(name)s sends its key "
                "(its base URL or key variable); ask one of them."
            )
            % {"workspace": endpoint.workspace.slug, "name": endpoint.name}
        )
    for field, value in values.items():
        setattr(endpoint, field, value)
    if (
        in_workspace(Endpoint.objects.all(), endpoint.workspace_id)
        .filter(name=endpoint.name)
        .exclude(pk=endpoint.pk)
        .exists()
    ):
        raise endpoint_name_taken(endpoint.name)
    endpoint.full_clean()
    # Taken meanwhile by another request: the same words as the check above.
    with constraint_answered(
        Endpoint, "endpoint_name_unique_per_workspace", lambda: endpoint_name_taken(endpoint.name)
    ):
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


def endpoint_name_taken(name: str) -> EndpointNameTaken:
    return EndpointNameTaken(
        _("An endpoint named %(name)s exists already in this workspace; choose another name.") % {"name": repr(name)}
    )


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
        timeout_seconds=min(config.timeout_seconds or TEST_TIMEOUT_SECONDS, TEST_TIMEOUT_SECONDS),
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
        return ConnectionTest(ok=False, endpoint=config.name, model=model, error=connection_test_failure(error, config))
    latency = result.latency_ms or int((time.monotonic() - started) * 1000)
    return ConnectionTest(
        ok=True, endpoint=config.name, model=model, answer=result.text.strip()[:500], latency_ms=latency
    )


def _status_meaning(status: int, config: EndpointConfig) -> str:
    if status == 401:
        if not config.api_key_env:
            return _("the server asks for a key, and this endpoint sends none.")
        return _("the server refused the key (read from $%(variable)s).") % {"variable": config.api_key_env}
    if status == 403:
        return _("the server refused access.")
    if status == 404:
        return _("nothing there: check that the base URL ends in /v1, and the model's name.")
    if status in (400, 422):
        return _("the server refused the request: check the model's name.")
    if status in (408, 429, 503, 504):
        return _("the server is busy or over its limit; try again later.")
    if status >= 500:
        return _("the server failed.")
    return _("not an answer an OpenAI-compatible server gives.")


def connection_test_failure(error: LLMCallError | EndpointError, config: EndpointConfig) -> str:
    """What a failed connection test shows: a refusal of ours (llm.egress) or a setting to fix as it
    is worded; otherwise a status code and a fixed message, never the server's words (an internal
    page's body must not be read out through the test), and one message for every way of getting
    no HTTP answer (a closed port, a filtered one, a server that is not HTTP), so that the test
    cannot tell them apart for someone mapping a network."""
    refused = egress_refusal(error)
    if refused is not None:
        return str(refused)
    if not isinstance(error, LLMCallError):
        return str(error)
    openai, _httpx2 = sdk_modules()
    cause = error.__cause__
    if isinstance(cause, openai.APIStatusError):
        return _("HTTP %(status)s: %(meaning)s") % {
            "status": cause.status_code,
            "meaning": _status_meaning(cause.status_code, config),
        }
    if isinstance(cause, (ValueError, TypeError, KeyError, openai.APIResponseValidationError)):
        return _("HTTP 200, but the reply is not an OpenAI-compatible chat completion.")
    # A one-slot local server busy with a run's call is silent too: saying so keeps one message
    # for every kind of silence (the port-oracle rule) while pointing at the likely cause.
    return _(
        "No HTTP answer from %(url)s: nothing answered there in time, or not in HTTP. A local server "
        "busy with a run's calls looks the same: test it again when no run is going."
    ) % {"url": config.base_url}


def endpoint_test_record(*, actor: AbstractBaseUser | None, result: ConnectionTest, endpoint: Endpoint | None) -> None:
    """Audit a connection test: who asked which endpoint (`endpoint` None: the default one from
    the environment) and model, and whether it answered (never the answer or the error's text,
    which may carry what the server echoed)."""
    audit_record(
        actor=actor,
        action=AuditAction.ENDPOINT_TESTED,
        target=f"endpoint:{result.endpoint}",
        details={"model": result.model, "ok": result.ok},
        workspace=endpoint.workspace_id if endpoint is not None else None,
    )
