"""Reads that must agree with each other: a page that counts in one query and lists in the next
would otherwise show a vote cast between the two in one figure and not in the other."""

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connections, transaction


@contextmanager
def read_snapshot(using: str = "default") -> Iterator[bool]:
    """On PostgreSQL, the queries inside see the database as it was at the first of them (one
    REPEATABLE READ, READ ONLY transaction; nothing is locked, writers go on). Yields True then;
    False where it cannot (SQLite, whose transactions here begin IMMEDIATE and would hold the
    write lock; or inside a transaction already, which a snapshot cannot start in): callers must
    then tolerate rows that changed between their queries."""
    connection = connections[using]
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        yield False
        return
    with transaction.atomic(using=using):
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        yield True
