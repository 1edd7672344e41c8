"""A name taken at the same moment by two requests: both pass the service's check that it is
free, and the database's unique constraint refuses the second insert. That refusal is answered
with the words the check uses, not as a server error.

Only the IntegrityError of the named constraint is translated; any other (a foreign key, a check)
goes up as it is. PostgreSQL names the constraint it enforced; SQLite names its columns instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import cast

from django.db import IntegrityError, transaction
from django.db.models import Field, Model, UniqueConstraint


def violates(error: IntegrityError, model: type[Model], constraint_name: str) -> bool:
    """Whether the database refused a row because of `model`'s unique constraint `constraint_name`."""
    constraint = next(
        one for one in model._meta.constraints if isinstance(one, UniqueConstraint) and one.name == constraint_name
    )
    diagnosis = getattr(error.__cause__, "diag", None)
    if diagnosis is not None:
        return diagnosis.constraint_name == constraint_name
    table = model._meta.db_table
    columns = ", ".join(f"{table}.{cast(Field, model._meta.get_field(name)).column}" for name in constraint.fields)
    return str(error) == f"UNIQUE constraint failed: {columns}"


@contextmanager
def constraint_answered(model: type[Model], constraint_name: str, refusal: Callable[[], Exception]) -> Iterator[None]:
    """Run the block in a savepoint (so the transaction around it stays usable); the database
    refusing a row because of `constraint_name` raises `refusal()` instead."""
    try:
        with transaction.atomic():
            yield
    except IntegrityError as error:
        if violates(error, model, constraint_name):
            raise refusal() from error
        raise
