"""Imports and exports, measured side by side in one run.

1. The URS CSV (1,846 rows) imported by `dataset_import` (one transaction, bulk inserts) against
   the same rows saved one by one in autocommit, as a one-off script would.
2. The streaming export of 200,000 item rows against 20,000: peak Python memory (tracemalloc)
   must stay flat in the row count. A non-streaming export (all rows in a list first) is
   measured for contrast.

Run: .venv/bin/python bench/bench_import_export.py   (DATABASE_URL picks PostgreSQL)
"""

import io
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench._django import DATA, setup_django  # noqa: E402

setup_django()

from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402

from core.exports import export_table, iter_export  # noqa: E402
from curation.datasets.exports import ITEM_FIELDS  # noqa: E402
from curation.datasets.importers import dataset_import  # noqa: E402
from curation.models import Dataset, Item  # noqa: E402
from judging.benchmarks.urs import read_urs  # noqa: E402


def urs_import_ratio() -> None:
    path = DATA / "urs" / "data_all.csv"
    if not path.exists():
        print("URS import: skipped, ../shared/data/urs/data_all.csv is absent")
        return
    started = time.perf_counter()
    with path.open(encoding="utf-8-sig", newline="") as stream:
        dataset = dataset_import(fmt="urs", stream=stream, name="bench-urs")
    bulk = time.perf_counter() - started
    rows = dataset.items.count()

    started = time.perf_counter()
    with path.open(encoding="utf-8-sig", newline="") as stream:
        records = read_urs(stream)
    naive = Dataset.objects.create(name="bench-urs-naive", source="urs", frozen_at=timezone.now())
    for record in records:  # what a one-off script does: one INSERT, one commit per row
        Item.objects.create(
            dataset=naive,
            external_id=record.external_id,
            question=record.question,
            reference=record.reference,
            intent=record.intent,
            language=record.language,
        )
    one_by_one = time.perf_counter() - started
    print(
        f"URS import ({connection.vendor}): {rows} rows in {bulk * 1000:.0f} ms "
        f"({rows / bulk:,.0f} rows/s); row by row {one_by_one * 1000:.0f} ms; speed-up {one_by_one / bulk:.1f}x"
    )


def make_dataset(name: str, rows: int) -> Dataset:
    dataset = Dataset.objects.create(name=name, frozen_at=timezone.now())
    question = "How do I keep a sourdough starter alive while travelling for two weeks? " * 3
    reference = "Feed it, refrigerate it, and feed it again on return. " * 6
    batch = []
    for n in range(rows):
        batch.append(
            Item(
                dataset=dataset,
                external_id=f"{n:07d}",
                question=question,
                reference=reference,
                intent="ask_for_advice",
                language="en",
                metadata={"n": n},
            )
        )
        if len(batch) == 5000:
            Item.objects.bulk_create(batch)
            batch = []
    Item.objects.bulk_create(batch)
    return dataset


def peak_bytes(consume) -> tuple[int, float]:
    tracemalloc.start()
    tracemalloc.reset_peak()
    started = time.perf_counter()
    consume()
    elapsed = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak, elapsed


def streamed(dataset: Dataset, fmt: str):
    def run():
        sink = io.StringIO()
        for chunk in iter_export(export_table("items", dataset=dataset), fmt):
            sink.write(chunk)
            if sink.tell() > 1 << 20:  # a file or socket would take the bytes away
                sink.seek(0)
                sink.truncate()

    return run


def all_in_memory(dataset: Dataset):
    def run():
        rows = list(Item.objects.filter(dataset=dataset).values(*ITEM_FIELDS[1:]))
        "".join(str(row) for row in rows)

    return run


def export_memory_ratio() -> None:
    small = make_dataset("bench-20k", 20_000)
    large = make_dataset("bench-200k", 200_000)
    for fmt in ("csv", "jsonl"):
        small_peak, small_time = peak_bytes(streamed(small, fmt))
        large_peak, large_time = peak_bytes(streamed(large, fmt))
        print(
            f"streamed {fmt:5}: peak {small_peak / 2**20:6.1f} MiB for 20,000 rows, "
            f"{large_peak / 2**20:6.1f} MiB for 200,000 rows: ratio {large_peak / small_peak:.2f} "
            f"(10x the rows; {200_000 / large_time:,.0f} rows/s)"
        )
    small_peak, _ = peak_bytes(all_in_memory(small))
    large_peak, _ = peak_bytes(all_in_memory(large))
    print(
        f"list-first  : peak {small_peak / 2**20:6.1f} MiB for 20,000 rows, "
        f"{large_peak / 2**20:6.1f} MiB for 200,000 rows: ratio {large_peak / small_peak:.2f} (for contrast)"
    )


if __name__ == "__main__":
    urs_import_ratio()
    export_memory_ratio()
