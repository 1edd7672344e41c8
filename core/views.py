"""Pages of the core app: the researcher's audit log, a person's API tokens and the page of a
refused form."""

import sys
from urllib.parse import urlencode

from django.contrib import messages
from django.core.paginator import Paginator
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpRequest, HttpResponse
from django.middleware.csrf import REASON_NO_CSRF_COOKIE
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST
from django.views.defaults import server_error as default_server_error

from core.audit import AuditAction, audit_action_label, audit_detail_rows, audit_events
from core.errors import UserbenchError
from core.kept_forms import typed_fields
from core.params import int_param
from core.roles import AuthenticatedHttpRequest, Role, role_required, signed_in_required
from core.tokens import (
    MAX_EXPIRY_DAYS,
    MAX_NAME,
    TokenError,
    api_token_create,
    api_token_of,
    api_token_revoke,
    api_tokens_of,
)
from core.workspaces import workspaces_of

PAGE_SIZE = 100
# How long a client is asked to wait before trying again when the database cannot be reached.
UNAVAILABLE_RETRY_SECONDS = 30
# PostgreSQL's SQLSTATE classes of a lost or refused connection and of a server shutting down;
# other operational errors (a deadlock, a serialisation failure) stay 500s.
UNREACHABLE_SQLSTATES = ("08", "57P01", "57P02", "57P03")

UNAVAILABLE_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>503</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head><body>
<h1>Userbench is unavailable for a moment</h1>
<p>The database cannot be reached. Nothing you sent was saved; try again in a minute.</p>
<p lang="zh-Hans">暂时无法连接数据库，您提交的内容未保存。请稍后再试。</p></body></html>
"""


def database_unreachable(error: BaseException | None) -> bool:
    """Is `error` the database being out of reach (a connection refused, timed out or lost)?"""
    if not isinstance(error, (OperationalError, InterfaceError)):
        return False
    sqlstate = getattr(error.__cause__, "sqlstate", None)
    return sqlstate is None or sqlstate.startswith(UNREACHABLE_SQLSTATES)


def server_error(request: HttpRequest) -> HttpResponse:
    """Django's 500, except when the database cannot be reached: then a 503 with Retry-After, as
    a page that needs no database (no session, no translation catalogue lookup by user)."""
    if database_unreachable(sys.exception()):
        response = HttpResponse(UNAVAILABLE_PAGE, status=503, content_type="text/html; charset=utf-8")
        response["Retry-After"] = str(UNAVAILABLE_RETRY_SECONDS)
        return response
    return default_server_error(request)


@role_required(Role.RESEARCHER)
def audit_log(request: HttpRequest) -> HttpResponse:
    """Who exported participant data, changed studies, campaigns, endpoints, people, workspaces
    or templates, started or cancelled runs, withdrew participants, and which log-ins failed;
    newest first. Entries of the workspaces where the person is a researcher, filtered to one by
    `?workspace=`, and those about them (see audit_events)."""
    action = request.GET.get("action", "")
    choices = list(workspaces_of(request.user, Role.RESEARCHER.value).order_by("slug"))
    slug = request.GET.get("workspace", "")
    chosen = next((workspace for workspace in choices if workspace.slug == slug), None)
    if slug and chosen is None:
        raise Http404("No such workspace.")
    events = audit_events(action=action, user=request.user, workspace=chosen)
    page = Paginator(events, PAGE_SIZE).get_page(request.GET.get("page"))
    rows = [
        {"event": event, "label": audit_action_label(event.action), "details": audit_detail_rows(event.details)}
        for event in page
    ]
    return render(
        request,
        "core/audit.html",
        {
            "page": page,
            "rows": rows,
            "action": action,
            "actions": AuditAction.choices,
            "audit_workspaces": choices,
            "audit_workspace": chosen,
            "filter_query": urlencode(
                {key: value for key, value in (("action", action), ("workspace", slug)) if value}
            ),
        },
    )


@signed_in_required
def account_tokens(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The person's own API tokens: make one (shown once, on this response only), list, revoke."""
    created, error, name, days = None, "", "", ""
    if request.method == "POST":
        name, days = request.POST.get("name", ""), request.POST.get("days", "").strip()
        try:
            expiry = int_param(days, name="days", default=None, low=1, high=MAX_EXPIRY_DAYS) if days else None
            token, key = api_token_create(user=request.user, name=name, expires_in_days=expiry)
        except UserbenchError as problem:
            error = problem.message
        else:
            created, name, days = {"token": token, "key": key}, "", ""
    response = render(
        request,
        "core/account_tokens.html",
        {
            "tokens": api_tokens_of(user=request.user),
            "created": created,
            "error": error,
            "name": name,
            "days": days,
            "max_name": MAX_NAME,
            "max_days": MAX_EXPIRY_DAYS,
            "now": timezone.now(),
        },
        status=400 if error else 200,
    )
    # The new token is on this page once: no cache may keep a copy.
    response["Cache-Control"] = "no-store"
    return response


@signed_in_required
@require_POST
def account_token_revoke(request: AuthenticatedHttpRequest, token_id: int) -> HttpResponse:
    """Revoke one of the person's tokens, after a confirmation step (the same form with `confirm`)."""
    if request.POST.get("confirm") != "1":
        token = api_token_of(user=request.user, token_id=token_id)
        if token is None:
            messages.error(request, _("You have no token %(id)s.") % {"id": token_id})
            return redirect("core:tokens")
        return render(request, "core/token_revoke_confirm.html", {"token": token})
    try:
        token = api_token_revoke(user=request.user, token_id=token_id)
    except TokenError as problem:
        messages.error(request, problem.message)
    else:
        messages.success(request, _("Token “%(name)s” revoked: requests with it are refused.") % {"name": token.name})
    return redirect("core:tokens")


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """settings.CSRF_FAILURE_VIEW: a form came with a missing or stale security token (a page
    left open for long, a log-in or log-out in another tab, cookies blocked). Says what
    happened and what to do in the reader's language, and links back to the page the form was
    on; rendering it sets a fresh token, so that page works again once reloaded."""
    referer = request.headers.get("referer", "")
    back = referer if url_has_allowed_host_and_scheme(referer, allowed_hosts={request.get_host()}) else request.path
    # What was typed, shown below to copy: never kept in the session, since this request may
    # come from another site (core/kept_forms.py).
    typed = typed_fields(request) if request.method == "POST" else []
    context = {"no_cookie": reason == REASON_NO_CSRF_COOKIE, "back_url": back, "typed": typed}
    return render(request, "403_csrf.html", context, status=403)
