"""Pages of the core app: the researcher's audit log and the page of a refused form."""

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import REASON_NO_CSRF_COOKIE
from django.shortcuts import render
from django.utils.http import url_has_allowed_host_and_scheme

from core.audit import AuditAction, audit_action_label, audit_detail_rows, audit_events
from core.roles import Role, role_required

PAGE_SIZE = 100


@role_required(Role.RESEARCHER)
def audit_log(request: HttpRequest) -> HttpResponse:
    """Who exported participant data, changed studies, campaigns, endpoints, people, workspaces
    or templates, started or cancelled runs, withdrew participants, and which log-ins failed;
    newest first. Entries of the person's workspaces and those of none (see audit_events)."""
    action = request.GET.get("action", "")
    page = Paginator(audit_events(action=action, user=request.user), PAGE_SIZE).get_page(request.GET.get("page"))
    rows = [
        {"event": event, "label": audit_action_label(event.action), "details": audit_detail_rows(event.details)}
        for event in page
    ]
    return render(
        request,
        "core/audit.html",
        {"page": page, "rows": rows, "action": action, "actions": AuditAction.choices},
    )


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """settings.CSRF_FAILURE_VIEW: a form came with a missing or stale security token (a page
    left open for long, a log-in or log-out in another tab, cookies blocked). Says what
    happened and what to do in the reader's language, and links back to the page the form was
    on; rendering it sets a fresh token, so that page works again once reloaded."""
    referer = request.headers.get("referer", "")
    back = referer if url_has_allowed_host_and_scheme(referer, allowed_hosts={request.get_host()}) else request.path
    context = {"no_cookie": reason == REASON_NO_CSRF_COOKIE, "back_url": back}
    return render(request, "403_csrf.html", context, status=403)
