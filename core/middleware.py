"""Web input checked in one place, before any view or serializer sees it.

PostgreSQL refuses NUL in text (a 500 on every form that saved one), other C0 control
characters are never typed by a person and break exports and terminals, and JSON nested
deeper than Python's recursion limit made the JSON parser raise. Every request's query
string, form fields and JSON body are checked here; a bad one gets a 400 that names the
field and says what to change, and nothing runs.
"""

from __future__ import annotations

import json
import re

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext as _

from core.errors import UserbenchError
from core.workspaces import WorkspaceUnknown, current_set

# C0 controls but tab, line feed and carriage return; DEL and the C1 controls.
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
MAX_JSON_DEPTH = 64


def json_depth(text: str) -> int:
    """The deepest nesting of [ and { outside strings, in one pass."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _control_in_json(value) -> str | None:
    """The path of the first string (key or value) holding a control character, if any."""
    stack = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str) and CONTROL.search(item):
            return path or "body"
        if isinstance(item, dict):
            for key, child in item.items():
                if CONTROL.search(str(key)):
                    return f"{path}.{key}".lstrip(".")
                stack.append((f"{path}.{key}".lstrip("."), child))
        elif isinstance(item, list):
            stack.extend((f"{path}[{k}]", child) for k, child in enumerate(item))
    return None


def bad_input(request: HttpRequest) -> str | None:
    """What is wrong with the request's input, as a message for the person who sent it."""
    for name, values in request.GET.lists():
        if CONTROL.search(name) or any(CONTROL.search(value) for value in values):
            return _("The parameter “%(name)s” contains a control character; remove it and try again.") % {
                "name": CONTROL.sub("?", name)
            }
    if request.method not in ("POST", "PUT", "PATCH"):
        return None
    content_type = request.content_type or ""
    if content_type == "application/json":
        try:
            text = request.body.decode("utf-8")
        except UnicodeDecodeError:
            return _("The request body is not UTF-8 text.")
        if json_depth(text) > MAX_JSON_DEPTH:
            return _("The JSON is nested more than %(depth)s levels deep.") % {"depth": MAX_JSON_DEPTH}
        try:
            parsed = json.loads(text) if text.strip() else None
        except ValueError:
            return None  # the parser of the view answers malformed JSON with its own 400
        field = _control_in_json(parsed)
        if field:
            return _("The field “%(name)s” contains a control character; remove it and try again.") % {"name": field}
    elif content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
        for name, values in request.POST.lists():
            if CONTROL.search(name) or any(CONTROL.search(value) for value in values):
                return _("The field “%(name)s” contains a control character; remove it and try again.") % {
                    "name": CONTROL.sub("?", name)
                }
    return None


class InputCheckMiddleware:
    """Refuses requests whose input no view should have to handle (see the module docstring)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        problem = bad_input(request)
        if problem is None:
            return self.get_response(request)
        return _refusal(request, problem)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        """A UserbenchError that reaches a page (a parameter out of range, say) is the person's
        to correct: a 400 with its message, never a 500. The API has its own handler."""
        if isinstance(exception, UserbenchError):
            return _refusal(request, exception.message)
        return None


def _refusal(request: HttpRequest, message: str) -> HttpResponse:
    if request.path.startswith("/api/") or request.content_type == "application/json":
        return JsonResponse({"detail": message}, status=400)
    return render(request, "400.html", {"message": message}, status=400)


# The session key of the workspace a person chose with the header's switcher (its slug).
SESSION_WORKSPACE = "userbench_workspace"
# The hidden field of a form drawn in a workspace (templates/includes/drawn_workspace.html): the
# slug it was drawn in, "" when drawn across all of the person's workspaces.
DRAWN_FIELD = "drawn_workspace"


class CurrentWorkspaceMiddleware:
    """Pages work in the workspace the person chose with the header's switcher (remembered in
    the session; core.workspaces.current_set narrows every scoped read to it). A workspace they
    have since left is forgotten. A form that carries the workspace it was drawn in and arrives
    after the person switched to another is refused (400, saying which), so a half-filled form
    never lands in another workspace. The API names its workspace itself (core.auth)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path.startswith("/api/"):
            return self.get_response(request)
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return self.get_response(request)
        current = None
        slug = request.session.get(SESSION_WORKSPACE, "")
        if slug:
            try:
                current = current_set(user, slug)
            except WorkspaceUnknown:
                del request.session[SESSION_WORKSPACE]
        if request.method == "POST" and DRAWN_FIELD in request.POST:
            drawn = request.POST[DRAWN_FIELD]
            if drawn != (current.slug if current else ""):
                return render(
                    request,
                    "core/workspace_changed.html",
                    {"drawn": drawn, "current": current},
                    status=400,
                )
        return self.get_response(request)
