"""`SESSION_ENGINE`: Django's database sessions, the stored session read with one plain query.

Every signed-in request reads its session, annotators' API calls included (two a vote). Django's
store reads it through the ORM (`Session.objects.get(...)`), whose building and compiling of the
query cost a web worker more CPU than the query itself; this store sends the same statement (the
key, and an expiry date still to come) as plain SQL. Everything else (writing, expiry, a new key
at log-in, `clearsessions`) is Django's own."""

from typing import cast

from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.db import connections, router
from django.utils import timezone


class SessionStore(DatabaseSessionStore):
    def _get_session_from_db(self):
        model = self.model
        connection = connections[router.db_for_read(model)]
        table = connection.ops.quote_name(model._meta.db_table)
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT session_data, expire_date FROM {table} WHERE session_key = %s AND expire_date > %s",
                [self.session_key, connection.ops.adapt_datetimefield_value(timezone.now())],
            )
            row = cursor.fetchone()
        if row is None:
            # As Django's store does: a key not found (or expired) is dropped, and a new one is
            # made if the session is saved.
            self._session_key = None
            return None
        # load() asks only for a session that has a key.
        return model(session_key=cast(str, self.session_key), session_data=row[0], expire_date=row[1])
