"""Whole numbers from query strings and form fields, read one way everywhere.

`str.isdigit` is not enough ("²".isdigit() is True, and int("²") raises), and a number
beyond the database's integer range makes PostgreSQL refuse the query: both used to end in
a 500. Only ASCII digits within [low, high] count.
"""

import re
from typing import overload

from django.utils.translation import gettext as _

from core.errors import UserbenchError

_DIGITS = re.compile(r"[0-9]{1,19}")
# The largest primary key PostgreSQL's bigint holds.
MAX_ID = 2**63 - 1


class ParameterError(UserbenchError):
    """A query or form parameter that is not a whole number in range."""


@overload
def int_param(raw, *, name: str, low: int = ..., high: int = ..., default: int) -> int: ...
@overload
def int_param(raw, *, name: str, low: int = ..., high: int = ..., default: int | None = ...) -> int | None: ...
def int_param(raw, *, name: str, low: int = 0, high: int = MAX_ID, default: int | None = None) -> int | None:
    """`raw` as an int in [low, high]; `default` when it is missing or empty; ParameterError
    naming the parameter otherwise."""
    if raw is None or raw == "":
        return default
    text = str(raw).strip()
    if not _DIGITS.fullmatch(text) or not low <= int(text) <= high:
        raise ParameterError(
            _("%(name)s must be a whole number from %(low)d to %(high)d.") % {"name": name, "low": low, "high": high}
        )
    return int(text)
