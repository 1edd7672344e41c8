"""What `reproduce` does with a benchmark's public files: find them, check the published
configuration against Userbench's copy, take a small slice. Pure: no Django. The benchmarks
themselves (files, prompts, parameters, tables) are in judging/benchmarks/.

The public data is read where the researcher keeps it (`reproduce --data DIR`): either the
benchmark's repository as published (a clone) or a folder holding its files, so each file is
looked for at its path in the repository and at the top of the folder.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from judging.benchmarks.registry import Benchmark, PublishedConfig, benchmarks


class _Benchmarks(Mapping[str, Benchmark]):
    """{name: benchmark}: the registry's (judging/benchmarks/), read when asked."""

    def __getitem__(self, name: str) -> Benchmark:
        return benchmarks()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(benchmarks())

    def __len__(self) -> int:
        return len(benchmarks())


BENCHMARKS: Mapping[str, Benchmark] = _Benchmarks()


def locate(root: Path, paths: Sequence[str]) -> Path | None:
    """The first of `paths` (relative to `root`) that is a file, or None."""
    for relative in paths:
        candidate = root / relative
        if candidate.is_file():
            return candidate
    return None


def published_answers(root: Path, benchmark: Benchmark, model: str) -> Path | None:
    """The file of a model's published answers under `root`, or None. A model name never leaves
    the answers folder (no separators, no dots in front)."""
    if not model or "/" in model or "\\" in model or model.startswith("."):
        return None
    return locate(root, [f"{folder}/{model}.jsonl" for folder in benchmark.answers])


def published_matches(path: Path, config: PublishedConfig) -> bool:
    """Whether a published configuration file says what Userbench's copy says."""
    data = path.read_bytes()
    if config.read is not None:
        try:
            return config.read(data) == config.expected()
        except (UnicodeDecodeError, ValueError):
            return False
    if config.kind == "text":
        return data.decode("utf-8", errors="replace") == config.expected()
    try:
        return json.loads(data.decode("utf-8")) == config.expected()
    except (UnicodeDecodeError, ValueError):
        return False


def spread[Record](records: Sequence[Record], *, key: Callable[[Record], str], limit: int) -> list[Record]:
    """At most `limit` records taken in turn from each group (by `key`, groups in order of first
    appearance, records in file order within a group), returned in file order: a small slice that
    still shows every column of the paper's table when it can."""
    groups: dict[str, list[int]] = {}
    for index, record in enumerate(records):
        groups.setdefault(key(record), []).append(index)
    chosen: list[int] = []
    depth = 0
    while len(chosen) < min(limit, len(records)):
        for members in groups.values():
            if depth < len(members) and len(chosen) < limit:
                chosen.append(members[depth])
        depth += 1
    return [records[index] for index in sorted(chosen)]
