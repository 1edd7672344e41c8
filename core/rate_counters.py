"""Counters for rate limits, shared by every process and counted atomically.

DRF's throttles keep a list of timestamps under a cache key, read it, append and write it back:
with several gunicorn workers, requests arriving together each read the same list, and a
30-a-minute limit let 120 of 200 requests through. Here a counter is incremented in one atomic
step: an upsert on the database cache's own table (the default cache, shared by every process
that reaches the database), or the cache's `incr` for other backends (atomic in Redis and
Memcached, and in local memory within one process). A window starts with its first request and
lasts the limit's period.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django.core.cache import caches
from django.core.cache.backends.db import DatabaseCache
from django.db import connections, router

PREFIX = "userbench-rate:"


def counter_hit(key: str, period: float) -> tuple[int, float]:
    """Count one more event under `key`: (events in the current window, seconds until it ends)."""
    cache = caches["default"]
    if isinstance(cache, DatabaseCache) and _in_database(cache):
        return _database_hit(cache, PREFIX + key, period)
    return _cache_hit(cache, PREFIX + key, period)


def counter_peek(key: str) -> int:
    """Events counted under `key` in its current window (0 once the window has ended)."""
    cache = caches["default"]
    if isinstance(cache, DatabaseCache) and _in_database(cache):
        connection = connections[router.db_for_read(cache.cache_model_class)]
        table = connection.ops.quote_name(_table_name(cache))
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT value FROM {table} WHERE cache_key = %s AND expires > %s",
                [PREFIX + key, connection.ops.adapt_datetimefield_value(_now())],
            )
            row = cursor.fetchone()
        return int(row[0]) if row else 0
    return int(cache.get(PREFIX + key, 0))


def _now() -> datetime:
    return datetime.now(UTC)


def _in_database(cache: DatabaseCache) -> bool:
    """The database cache is on a database whose upsert the counters use."""
    return connections[router.db_for_write(cache.cache_model_class)].vendor in {"sqlite", "postgresql"}


def _table_name(cache: DatabaseCache) -> str:
    """The cache's table: its LOCATION, kept by Django as a private attribute."""
    return str(getattr(cache, "_table"))  # noqa: B009  (no stubs for the private attribute)


def _database_hit(cache: DatabaseCache, key: str, period: float) -> tuple[int, float]:
    """One upsert on the cache table: a new or ended window restarts at 1, else the count grows.

    The counter's rows share the table with the cache's own entries under a prefix nothing else
    uses; `cache.clear()` and culling remove them like any entry."""
    connection = connections[router.db_for_write(cache.cache_model_class)]
    table = connection.ops.quote_name(_table_name(cache))
    now = _now()
    adapt = connection.ops.adapt_datetimefield_value
    # SET expressions read the row as it was before the update, in SQLite and PostgreSQL alike.
    sql = f"""
        INSERT INTO {table} (cache_key, value, expires) VALUES (%s, '1', %s)
        ON CONFLICT (cache_key) DO UPDATE SET
            value = CASE WHEN {table}.expires <= %s THEN '1'
                         ELSE CAST(CAST({table}.value AS INTEGER) + 1 AS TEXT) END,
            expires = CASE WHEN {table}.expires <= %s THEN %s ELSE {table}.expires END
        RETURNING value, expires
    """
    ends = now + timedelta(seconds=period)
    with connection.cursor() as cursor:
        cursor.execute(sql, [key, adapt(ends), adapt(now), adapt(now), adapt(ends)])
        value, expires = cursor.fetchone()
    if isinstance(expires, str):
        expires = datetime.fromisoformat(expires)
    if expires.tzinfo is None:
        expires = expires.replace(tzinfo=UTC)
    return int(value), max(0.0, (expires - now).total_seconds())


def _cache_hit(cache, key: str, period: float) -> tuple[int, float]:
    """add() starts a window (it writes only when the key is absent), incr() counts in it."""
    now = _now().timestamp()
    if cache.add(key, 1, timeout=period):
        cache.set(key + ":ends", now + period, timeout=period)
        return 1, period
    try:
        count = cache.incr(key)
    except ValueError:  # the window ended between add() and incr(): this event starts the next
        return _cache_hit(cache, key, period)
    ends = cache.get(key + ":ends", now + period)
    return count, max(0.0, ends - now)
