"""The three staff roles of Userbench. A person holds roles in workspaces (core.models.Membership;
core/workspaces.py says where); participants stay anonymous.

`roles_of` is what a person holds in any of their workspaces: it opens a page. What the page then
shows is narrowed to the workspaces where the role is held (core.workspaces.scoped). A person may
hold several roles. Every app's `access.py` builds on `has_role`,
so the rule "which group may do what" lives in one place per app.
"""

from functools import wraps

from django.contrib.auth.models import User
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.db import models
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _
from rest_framework.permissions import BasePermission

from core.kept_forms import form_keep, form_restore
from core.workspaces import places_of


class Role(models.TextChoices):
    RESEARCHER = "researcher", _("Researcher")
    REVIEWER = "reviewer", _("Reviewer")
    ANNOTATOR = "annotator", _("Annotator")


def roles_of(user) -> set[str]:
    """The role names a user holds; cached on the user object for the request (a session's
    user arrives with them already, see core.auth).

    A superuser holds every role: the person who ran `createsuperuser` must not meet a 403
    until they add themselves to the researcher group."""
    if not user.is_authenticated or not user.is_active:
        return set()
    if user.is_superuser:
        return set(Role.values)
    cached = getattr(user, "_userbench_roles", None)
    if cached is None:
        cached = remember_roles(user, set().union(*(place.roles for place in places_of(user).values())))
    return cached


def remember_roles(user, names: set[str]) -> set[str]:
    user._userbench_roles = names
    return names


def has_role(user, role: Role) -> bool:
    return role.value in roles_of(user)


class AuthenticatedHttpRequest(HttpRequest):
    """The request a view behind `role_required` receives: its user is signed in."""

    user: User


def _to_login(request: HttpRequest):
    """The log-in page, coming back here after; a form sent after the session ended is kept
    first, and the person comes back to the page the form is on (core/kept_forms.py)."""
    if request.method == "POST":
        return redirect_to_login(form_keep(request))
    return redirect_to_login(request.get_full_path())


def _with_kept_form(view, request, *args, **kwargs):
    """The view, with the fields kept for this page (if any) handed to the template through
    core.context_processors.kept_form."""
    if request.method == "GET":
        request.kept_form = form_restore(request)
    return view(request, *args, **kwargs)


def role_required(*allowed: Role):
    """View decorator: anonymous people go to the log-in page, signed-in people without
    one of the allowed roles get 403 and never any data. A form sent after the session ended
    is filled in again once the person has logged in (core/kept_forms.py)."""

    def decorator(view):
        @wraps(view)
        def wrapped(request, *args, **kwargs):
            if not request.user.is_authenticated:
                return _to_login(request)
            if not any(has_role(request.user, role) for role in allowed):
                raise PermissionDenied
            return _with_kept_form(view, request, *args, **kwargs)

        return wrapped

    return decorator


def signed_in_required(view):
    """View decorator for pages of anyone signed in, whatever their roles (their own account);
    as role_required, a form sent after the session ended is kept across the log-in."""

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if not request.user.is_authenticated:
            return _to_login(request)
        return _with_kept_form(view, request, *args, **kwargs)

    return wrapped


def role_permission(*allowed: Role):
    """A DRF permission class granting access to holders of any allowed role."""

    class HasRole(BasePermission):
        message = "This needs the role: " + " or ".join(role.value for role in allowed) + "."

        def has_permission(self, request, view):
            return any(has_role(request.user, role) for role in allowed)

    HasRole.__name__ = "Has" + "Or".join(role.name.title() for role in allowed) + "Role"
    return HasRole
