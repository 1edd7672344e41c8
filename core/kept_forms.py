"""What a person typed into a staff form survives the end of their session.

A form sent after the session ended (a log-out in another tab, an expired session) used to land
on the log-in page with the text gone. Now the staff pages' decorators (core/roles.py) keep the
fields of such a POST in the new anonymous session, which the log-in carries over, and when the
person comes back to the same page the fields are put back into its form in the browser
(static/js/kept_form.js), with a note asking them to check and send it again. Nothing is sent
for them: the form is only filled in.

Only a POST that passed Django's CSRF check reaches the decorators, so another site cannot
plant text in someone's form this way. A form refused by that check (its code rotated by a log-in
in another tab) is never kept: the refusal page shows what was typed below, to copy
(core/views.py, csrf_failure). Passwords and the CSRF token are never kept; files
cannot be (the person chooses them again). Kept fields live at most KEEP_FOR and take at most
MAX_KEPT_CHARS.
"""

from datetime import datetime, timedelta
from urllib.parse import urlsplit

from django.http import HttpRequest
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme

SESSION_KEY = "kept_forms"
KEEP_FOR = timedelta(hours=2)
MAX_KEPT_CHARS = 200_000
MAX_PAGES = 10
_NEVER_KEPT = {"csrfmiddlewaretoken", "password", "password1", "password2", "old_password", "new_password1"}


def typed_fields(request: HttpRequest) -> list[list[str]]:
    """The fields of a POST worth keeping: [[name, value], ...], without the CSRF token,
    passwords, or empty values."""
    return [
        [name, value]
        for name, values in request.POST.lists()
        if name not in _NEVER_KEPT and "password" not in name
        for value in values
        if value.strip()
    ]


def form_page(request: HttpRequest) -> str:
    """The page the form was sent from (its Referer on this site), where the person goes back
    after logging in; the form's own address when the browser sent no Referer. A form posted to
    an action URL (a POST-only view) is thus filled in again on the page that holds it."""
    referer = request.headers.get("referer", "")
    if referer and url_has_allowed_host_and_scheme(
        referer, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        parts = urlsplit(referer)
        return parts.path + (f"?{parts.query}" if parts.query else "")
    return request.get_full_path()


def form_keep(request: HttpRequest) -> str:
    """Keep the fields of an anonymous POST for the page it was sent from; returns that page."""
    page = form_page(request)
    fields = typed_fields(request)
    if not fields or sum(len(name) + len(value) for name, value in fields) > MAX_KEPT_CHARS:
        return page
    kept = {path: entry for path, entry in request.session.get(SESSION_KEY, {}).items() if _fresh(entry)}
    kept[urlsplit(page).path] = {"fields": fields, "action": request.path, "at": timezone.now().isoformat()}
    # The newest pages only: a session holds a handful of forms at most.
    request.session[SESSION_KEY] = dict(sorted(kept.items(), key=lambda pair: pair[1]["at"])[-MAX_PAGES:])
    return page


def form_restore(request: HttpRequest) -> dict | None:
    """What was kept for this page, taken out of the session (shown once): {"fields": [[name,
    value], ...], "action": the path the form was sent to}; or None."""
    kept = request.session.get(SESSION_KEY)
    if not kept or request.path not in kept:
        return None
    entry = kept.pop(request.path)
    request.session[SESSION_KEY] = kept
    return {"fields": entry["fields"], "action": entry.get("action", request.path)} if _fresh(entry) else None


def _fresh(entry: dict) -> bool:
    try:
        at = datetime.fromisoformat(entry["at"])
    except (KeyError, TypeError, ValueError):
        return False
    return timezone.now() - at < KEEP_FOR
