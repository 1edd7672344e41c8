"""Authentication: Django's model backend, reading a session's user together with their
workspaces and the roles they hold in each."""

from functools import cache
from typing import cast

from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.db import connection

from core.models import Membership
from core.roles import remember_roles
from core.workspaces import FLAG_LETTERS, places_from_flags, remember_places


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
        user = next(iter(get_user_model()._default_manager.raw(sql, [user_id])), None)
        if user is None or not self.user_can_authenticate(user):
            return None
        places = remember_places(user, places_from_flags(getattr(user, "userbench_places", None)))
        remember_roles(user, set().union(*(place.roles for place in places.values())))
        return user

    async def aget_user(self, user_id):
        return await sync_to_async(self.get_user)(user_id)
