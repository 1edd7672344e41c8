"""Authentication: Django's model backend, reading a session's user together with their roles."""

from functools import cache
from typing import cast

from asgiref.sync import sync_to_async
from axes.backends import AxesStandaloneBackend
from axes.exceptions import AxesBackendPermissionDenied
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group
from django.db import connection
from django.db.models import Model

from core.rate_counters import counter_hit, counter_peek
from core.roles import Role, remember_roles
from core.throttling import client_fingerprint


@cache
def _user_with_roles_sql(vendor: str) -> str:
    """The user row and one flag per role, as fixed SQL: every signed-in request runs it, and
    composing the same with the ORM cost more than the query itself."""
    quote = connection.ops.quote_name
    user_model = get_user_model()
    groups = user_model._meta.get_field("groups")
    # A many-to-many field always has its through model once the models are loaded.
    membership = cast(type[Model], groups.remote_field.through)._meta
    pk_column = cast(str, user_model._meta.pk.column)  # a primary key always has a column
    flags = ", ".join(
        f"""EXISTS (SELECT 1 FROM {quote(membership.db_table)} m
                    JOIN {quote(Group._meta.db_table)} g ON g.id = m.{quote(groups.m2m_reverse_name())}
                    WHERE m.{quote(groups.m2m_column_name())} = u.{quote(pk_column)}
                      AND g.name = '{role.value}') AS holds_{role.value}"""
        for role in Role
    )
    return f"SELECT u.*, {flags} FROM {quote(user_model._meta.db_table)} u WHERE u.{quote(pk_column)} = %s"


class RoleLoadingBackend(ModelBackend):
    """The user of a session is read with the roles they hold: one query instead of two on
    every signed-in request. Roles are still read afresh on every request, so taking a role
    away takes effect at once."""

    def get_user(self, user_id):
        sql = _user_with_roles_sql(connection.vendor)
        user = next(iter(get_user_model()._default_manager.raw(sql, [user_id])), None)
        if user is None or not self.user_can_authenticate(user):
            return None
        remember_roles(user, {role.value for role in Role if getattr(user, f"holds_{role.value}")})
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
            kwargs.get("response_context", {})["error"] = settings.AXES_COOLOFF_MESSAGE
            raise AxesBackendPermissionDenied("Too many failed log-ins from this address")
        return super().authenticate(request, username=username, password=password, **kwargs)
