"""Authentication: Django's model backend, reading a session's user together with their
workspaces and the roles they hold in each."""

from functools import cache
from typing import cast

from asgiref.sync import sync_to_async
from axes.backends import AxesStandaloneBackend
from axes.exceptions import AxesBackendPermissionDenied
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.db import connection
from rest_framework import exceptions
from rest_framework.authentication import SessionAuthentication

from core.models import Membership
from core.rate_counters import counter_hit, counter_peek
from core.raw_rows import raw_first
from core.roles import remember_roles
from core.throttling import client_fingerprint
from core.workspaces import FLAG_LETTERS, WorkspaceUnknown, api_current_bind, places_from_flags, remember_places


@cache
def _user_with_places_sql(vendor: str) -> str:
    """The user row and their memberships in one column ("3:rm,7:a": workspace id, then one
    letter per flag), as fixed SQL: every signed-in request runs it, and composing the same with
    the ORM cost more than the query itself."""
    quote = connection.ops.quote_name
    user_model = get_user_model()
    table = quote(Membership._meta.db_table)
    pk_column = quote(cast(str, user_model._meta.pk.column))  # a primary key always has a column
    joined = " || ".join(
        f"CASE WHEN m.{quote(name)} THEN '{letter}' ELSE '' END" for name, letter in FLAG_LETTERS.items()
    )
    entry = f"CAST(m.{quote('workspace_id')} AS TEXT) || ':' || {joined}"
    aggregate = f"string_agg({entry}, ',')" if vendor == "postgresql" else f"group_concat({entry}, ',')"
    places = f"(SELECT {aggregate} FROM {table} m WHERE m.{quote('user_id')} = u.{pk_column}) AS userbench_places"
    return f"SELECT u.*, {places} FROM {quote(user_model._meta.db_table)} u WHERE u.{pk_column} = %s"


class RoleLoadingBackend(ModelBackend):
    """The user of a session is read with their workspaces and roles: one query instead of two on
    every signed-in request. They are still read afresh on every request, so taking a role away
    takes effect at once."""

    def get_user(self, user_id):
        sql = _user_with_places_sql(connection.vendor)
        user = raw_first(get_user_model(), sql, [user_id])
        if user is None or not self.user_can_authenticate(user):
            return None
        places = remember_places(user, places_from_flags(getattr(user, "userbench_places", None)))
        remember_roles(user, set().union(*(place.roles for place in places.values())))
        return user

    async def aget_user(self, user_id):
        return await sync_to_async(self.get_user)(user_id)


def _address_key(request) -> str:
    return f"login-failures:{client_fingerprint(request)}"


def login_failure_count(request) -> None:
    """Count a failed log-in against the client's address (a keyed hash), for the looser
    per-address limit; django-axes counts it per user name and address."""
    if request is not None:
        counter_hit(_address_key(request), settings.AXES_COOLOFF_TIME.total_seconds())


class LoginLockoutBackend(AxesStandaloneBackend):
    """django-axes, locking a user name per address (AXES_LOCKOUT_PARAMETERS): a stranger's
    wrong passwords lock only the stranger's address out of that account, never the owner
    elsewhere. Before it, a looser limit per address (LOGIN_ADDRESS_FAILURE_LIMIT failures in
    LOGIN_LOCKOUT_MINUTES, over every user name) stops one client from guessing across accounts.
    Both answer with axes' lockout page (429)."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is not None and counter_peek(_address_key(request)) >= settings.LOGIN_ADDRESS_FAILURE_LIMIT:
            request.axes_locked_out = True
            # django-axes adds its defaults to the settings as it loads, which the stubs cannot see.
            kwargs.get("response_context", {})["error"] = settings.AXES_COOLOFF_MESSAGE  # type: ignore[misc]
            raise AxesBackendPermissionDenied("Too many failed log-ins from this address")
        return super().authenticate(request, username=username, password=password, **kwargs)


class CurrentWorkspaceMixin:
    """For the API's authentication classes: once a request is signed in, its workspace is the one
    its X-Userbench-Workspace header (or `?workspace=`) names (core.workspaces.api_current_bind);
    one that is not the person's is 404, naming theirs."""

    def authenticate(self, request):
        signed_in = super().authenticate(request)  # type: ignore[misc]
        if signed_in is not None:
            try:
                api_current_bind(request, signed_in[0])
            except WorkspaceUnknown as error:
                raise exceptions.NotFound(error.message) from None
        return signed_in


class WorkspaceSessionAuthentication(CurrentWorkspaceMixin, SessionAuthentication):
    """DRF's session authentication (with its CSRF check), the workspace named as for tokens."""
