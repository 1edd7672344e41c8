"""The public dataset formats and dataset sources the benchmarks bring. Pure: no Django.

Curation reads and writes a benchmark's public files, but a benchmark is a judging thing (its
prompts, parser, tables), and curation may not import judging. So each benchmark registers its
format(s) here from above (judging/benchmarks/registry.py, `benchmark_register`, as judging's
app loads), and curation asks this registry: `import_dataset --format`, the import page, the
`export --format` choices, a dataset's source choices.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class DatasetFormat:
    """A benchmark's public item file: how it is read and written back."""

    name: str  # import_dataset --format, export --format
    label: Any  # the import page's name for it (translatable)
    fields: tuple[str, ...]  # what each line or row holds, as the reader requires it
    # (stream, *, columns) -> curation.datasets.public_formats.ItemRecord one at a time, FormatError
    # at the first bad line as it is read (an import stops there, not after the whole file)
    read: Callable[..., Iterable]
    # item rows (as `items` exports produce them) -> the file's text, chunk by chunk
    write: Callable[[Iterable[Mapping[str, Any]]], Iterator[str]]
    source: str  # the Dataset.source an import records
    source_label: Any


_FORMATS: dict[str, DatasetFormat] = {}


def format_register(fmt: DatasetFormat) -> None:
    """Register a format (again under the same name: replaced, so a reload stays one entry)."""
    _FORMATS[fmt.name] = fmt


def format_unregister(name: str) -> None:
    _FORMATS.pop(name, None)


def formats() -> dict[str, DatasetFormat]:
    """Every registered format by name, in registration order."""
    return dict(_FORMATS)


def format_names() -> tuple[str, ...]:
    return tuple(_FORMATS)


def source_labels() -> dict[str, Any]:
    """The dataset sources the registered formats record, with their labels."""
    return {fmt.source: fmt.source_label for fmt in _FORMATS.values()}
