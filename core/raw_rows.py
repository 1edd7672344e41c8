"""The first row of a hand-written query as a model instance, for the requests that come most often.

`next(iter(Model.objects.raw(sql, params)), None)` builds a RawQuerySet, a RawQuery and a compiler
on every call, and works out again which column is which field and which converters apply: on an
annotator's vote -> next round (two requests, five such queries) that work cost more of the web
worker's CPU than reading the rows. `raw_first` reads the cursor's columns and keeps that plan
per model, database and column list, so a call is the query and a model instance made as the
ORM makes one (`Model.from_db`, each field's database converters applied). As with `.raw()`,
columns that are no field of the model become attributes of the instance, fields the query
did not read are deferred (read on access), and the primary key must be among the columns.
"""

from __future__ import annotations

from typing import Any, cast

from django.core.exceptions import FieldDoesNotExist
from django.db import connections, router
from django.db.models import Model
from django.db.models.base import DEFERRED

# (model, database alias, column names) -> the plan of _plan.
_PLANS: dict[tuple[type[Model], str, tuple[str, ...]], tuple] = {}


def _plan(model: type[Model], alias: str, columns: tuple[str, ...]) -> tuple:
    """Where each concrete field's value is in a row (None: deferred), the converters of each
    such column, and the columns that are no field (set as attributes)."""
    connection = connections[alias]
    fields = model._meta.concrete_fields
    position = {column: index for index, column in enumerate(columns)}
    if model._meta.pk is None or model._meta.pk.column not in position:
        raise FieldDoesNotExist("Raw query must include the primary key")
    # A concrete field always has its column.
    positions = [position.get(cast(str, field.column)) for field in fields]
    converters = []
    for field in fields:
        if field.column not in position:
            continue
        column = field.get_col(model._meta.db_table)
        found = connection.ops.get_db_converters(column) + column.get_db_converters(connection)
        if found:
            converters.append((position[field.column], column, found))
    known = {field.column for field in fields}
    extras = [(index, column) for index, column in enumerate(columns) if column not in known]
    return positions, converters, extras


def raw_first[M: Model](model: type[M], sql: str, params: list[Any]) -> M | None:
    """The first row `sql` returns as a `model` instance (None: no row), as `.raw()` gives it."""
    alias = router.db_for_read(model)
    connection = connections[alias]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
        if not rows:
            return None
        convert_name = connection.introspection.identifier_converter
        columns = tuple(convert_name(description[0]) for description in cursor.description)
    key = (model, alias, columns)
    plan = _PLANS.get(key)
    if plan is None:
        plan = _PLANS[key] = _plan(model, alias, columns)
    positions, converters, extras = plan
    row = list(rows[0])
    for index, column, functions in converters:
        value = row[index]
        for function in functions:
            value = function(value, column, connection)
        row[index] = value
    # A field the query did not read is DEFERRED: from_db leaves it to be read on access.
    values = [DEFERRED if index is None else row[index] for index in positions]
    # One value per concrete field: from_db needs no field names then.
    instance = model.from_db(alias, (), values)
    for index, column in extras:
        setattr(instance, column, row[index])
    return instance


def _insert_plan(model: type[Model], alias: str) -> tuple[str, list, bool]:
    """The INSERT of every concrete field but a primary key the database makes, the fields in
    the statement's order, and whether it returns that key."""
    connection = connections[alias]
    meta = model._meta
    pk = cast(Any, meta.pk)
    made_by_database = bool(pk.db_returning)
    fields = [field for field in meta.concrete_fields if not (made_by_database and field is pk)]
    quote = connection.ops.quote_name
    columns = ", ".join(quote(cast(str, field.column)) for field in fields)
    sql = f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES ({', '.join(['%s'] * len(fields))})"
    if made_by_database:
        sql += f" RETURNING {quote(pk.column)}"
    return sql, fields, made_by_database


# (model, database alias) -> the plan of _insert_plan.
_INSERTS: dict[tuple[type[Model], str], tuple[str, list, bool]] = {}


def raw_insert[M: Model](instance: M) -> M:
    """Insert a new, unsaved `instance` as `instance.save()` would write it (each field's
    `pre_save`, so `auto_now_add` is set, then its database value) with one statement composed
    once per model, and return it saved, its primary key set (save() composes the statement
    anew each time: 758 µs of CPU against 491 µs for an assignment, bench/README.md). Unlike
    save() it sends no pre_save or post_save signal; it is for the annotator's path, whose models
    have no receivers (tests/core/test_sessions_and_raw_rows.py holds that)."""
    model = type(instance)
    alias = router.db_for_write(model, instance=instance)
    connection = connections[alias]
    plan = _INSERTS.get((model, alias))
    if plan is None:
        plan = _INSERTS[(model, alias)] = _insert_plan(model, alias)
    sql, fields, returns_pk = plan
    values = [field.get_db_prep_save(field.pre_save(instance, True), connection) for field in fields]
    with connection.cursor() as cursor:
        cursor.execute(sql, values)
        if returns_pk:
            instance.pk = cursor.fetchone()[0]
    instance._state.adding = False
    instance._state.db = alias
    return instance
