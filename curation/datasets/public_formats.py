"""The public dataset formats' shared parts, and candidate answers (JSONL).

Each benchmark's own item format (its reader and writer) is in its module under
judging/benchmarks/ and registered with curation/registry.py; this file holds what they share:
the record a reader returns and the column limits it checks. Pure: reading turns a file into
validated records or raises `FormatError` with the line number and what was expected; writing
turns item rows back into the same format, so an export read again gives the same items. The
rules every file shares (encoding, JSON, sizes, characters a database cannot store) live in
core/import_checks.py.

Readers take a binary stream (decoded line by line) or an iterable of text lines, and
`columns`: the longest value each column takes, {field name: max_length}, which the importers
read from the model fields so the limit is the database's. A field not listed has no column
limit (free text is still capped at MAX_TEXT_CHARS).
"""

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from core.import_checks import FormatError
from curation.registry import format_names, formats

__all__ = ["FormatError", "ItemRecord", "NO_LIMITS", "column_limit", "iter_public", "public_formats"]

NO_LIMITS: Mapping[str, int] = MappingProxyType({})


@dataclass(frozen=True)
class ItemRecord:
    external_id: str
    question: str
    reference: str = ""
    intent: str = ""
    category: str = ""
    subcategory: str = ""
    language: str = "en"
    metadata: dict[str, Any] = field(default_factory=dict)


def column_limit(columns: Mapping[str, int], name: str) -> int:
    return columns.get(name, 10**9)


def public_formats() -> tuple[str, ...]:
    """The registered formats' names (import_dataset --format, export --format)."""
    return format_names()


def iter_public(items: Iterable[Mapping[str, Any]], fmt: str) -> Iterator[str]:
    """Write item rows in a registered public format, chunk by chunk."""
    return formats()[fmt].write(items)
