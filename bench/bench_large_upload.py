"""A large answers file with a bad line 2: how long until the error, streamed against parsed whole.

A file of 1,000,000 JSONL lines (about 48 MiB, near the 50 MB upload limit) for a dataset of 1,000
items, whose line 2 is wrong in one of three ways: it names a question the dataset lacks, it
answers the same item as line 1, or it is not JSON. `answers_import` matches each line to its
item as it reads it and stops at the first bad one; the former order (every line parsed into a
list first, then matched) is measured beside it as `read_answers` over the whole file followed
by the same import, which is what the request used to spend before it could answer.

With --web, the answers page is posted the same file with its bad line last instead, through
Django's test client: read in the request (UPLOAD_BACKGROUND_BYTES above the file, as before)
against stored for a worker (the 2 MB default): how long a web worker is held.

With --dataset-web, the dataset import page (/review/datasets/import/) is posted an Arena-Hard
question file of --lines lines whose last line is bad, the same two ways: read in the request
(as before) against stored for a worker.

Run: .venv/bin/python bench/bench_large_upload.py [--lines N] [--web | --web-only | --dataset-web]
(DATABASE_URL picks PostgreSQL)
"""

import argparse
import io
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench._django import setup_django  # noqa: E402

setup_django()

from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402

from curation.datasets.importers import DataImportError  # noqa: E402
from curation.models import Dataset, Item  # noqa: E402
from judging.answers.imports import answers_import, read_answers  # noqa: E402

ITEMS = 1_000


def answers_file(lines: int, second: str) -> bytes:
    first = json.dumps({"question_id": "0000000", "response": "Yes."})
    filler = json.dumps({"question_id": "0000002", "response": "Yes."})
    return (first + "\n" + second + "\n" + (filler + "\n") * (lines - 2)).encode()


def until_error(call) -> tuple[float, str]:
    started = time.perf_counter()
    try:
        call()
    except DataImportError as error:
        return time.perf_counter() - started, str(error)
    raise SystemExit("the import did not refuse the file")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--web", action="store_true")
    parser.add_argument("--web-only", action="store_true", help="only the answers page's request")
    parser.add_argument("--dataset-web", action="store_true", help="only the dataset import page's request")
    arguments = parser.parse_args()
    lines = arguments.lines
    if arguments.web_only:
        web_request(lines)
        return
    if arguments.dataset_web:
        dataset_web_request(lines)
        return
    dataset = Dataset.objects.create(name="bench-answers", frozen_at=timezone.now())
    Item.objects.bulk_create(Item(dataset=dataset, external_id=f"{n:07d}", question=f"q{n}") for n in range(ITEMS))
    cases = {
        "unknown question": json.dumps({"question_id": "9999999", "response": "x"}),
        "same item twice": json.dumps({"question_id": "0000000", "response": "x"}),
        "not JSON": '{"question_id": "0000001", "response": ',
    }
    load = " / ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"{lines:,} lines, {connection.vendor}, load average {load}")
    for name, second in cases.items():
        data = answers_file(lines, second)

        def streamed(data=data):
            answers_import(dataset_name=dataset.name, model_name="m", stream=io.BytesIO(data))

        def whole_first(data=data):
            try:
                read_answers(io.BytesIO(data))
            except Exception:  # a JSON error on line 2 stops the whole parse too
                pass
            streamed(data)

        after, message = until_error(streamed)
        before, _ = until_error(whole_first)
        print(
            f"{name:17} ({len(data) / 2**20:.0f} MiB): parsed whole first {before * 1000:8.0f} ms, "
            f"streamed {after * 1000:6.1f} ms, ratio {before / after:8.0f}x  [{message[:60]}]"
        )
    if arguments.web:
        web_request(lines)


def web_request(lines: int) -> None:
    from django.conf import settings
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.test import Client, override_settings

    from tests.factories import UserFactory

    client = Client()
    researcher = UserFactory(username="bench-researcher", roles=["researcher"])
    client.force_login(researcher)  # type: ignore[arg-type]  # factory_boy builds a User
    # Every line but the last answers its own item, so the whole file is read before the error.
    web = Dataset.objects.create(name="bench-web", frozen_at=timezone.now())
    Item.objects.bulk_create(
        (Item(dataset=web, external_id=f"w{n}", question=f"w{n}") for n in range(lines)), batch_size=5000
    )
    text = "".join(f'{{"question_id":"w{n}","response":"Yes."}}\n' for n in range(lines - 1))
    data = (text + '{"question_id": "9999999", "response": "x"}\n').encode()
    with override_settings(ALLOWED_HOSTS=["testserver"]):
        client.get(f"/datasets/{web.name}/answers/")  # the first request loads what every later one uses
    dummy = {"default": {"BACKEND": "django.tasks.backends.dummy.DummyBackend", "QUEUES": ["default", "judging"]}}
    timings = {}
    for name, threshold in (("read in the request", len(data) + 1), ("stored for a worker", 2 * 1024 * 1024)):
        with override_settings(UPLOAD_BACKGROUND_BYTES=threshold, TASKS=dummy, ALLOWED_HOSTS=["testserver"]):
            started = time.perf_counter()
            response = client.post(
                f"/datasets/{web.name}/answers/",
                {"action": "upload", "model": "web", "file": SimpleUploadedFile("a.jsonl", data)},
            )
            timings[name] = time.perf_counter() - started
        print(
            f"web request, bad last line ({len(data) / 2**20:.0f} MiB), {name}: {timings[name]:.1f} s, HTTP {response.status_code}"
        )
    assert settings.UPLOAD_BACKGROUND_BYTES  # the default again
    ratio = timings["read in the request"] / timings["stored for a worker"]
    print(f"web request held {ratio:.0f}x less when the file goes to a worker")


DUMMY_TASKS = {"default": {"BACKEND": "django.tasks.backends.dummy.DummyBackend", "QUEUES": ["default", "judging"]}}


def dataset_web_request(lines: int) -> None:
    """The import page posted a question file whose last line is bad: read in the request (the
    threshold above the file, as before) against stored for a worker (the 2 MB default)."""
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.test import Client, override_settings

    from curation.models import DatasetUpload
    from tests.factories import UserFactory

    client = Client()
    client.force_login(UserFactory(username="bench-importer", roles=["researcher"]))  # type: ignore[arg-type]  # factory_boy builds a User
    text = "".join(f'{{"uid":"u{n}","prompt":"Question {n}?"}}\n' for n in range(lines - 1))
    data = (text + '{"uid": "u-last"}\n').encode()  # no prompt: refused on the last line
    with override_settings(ALLOWED_HOSTS=["testserver"]):
        client.get("/review/datasets/import/")  # the first request loads what every later one uses
    load = " / ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"{lines:,} lines, {connection.vendor}, load average {load}")
    timings = {}
    for number, (name, threshold) in enumerate(
        (("read in the request", len(data) + 1), ("stored for a worker", 2 * 1024 * 1024))
    ):
        with override_settings(UPLOAD_BACKGROUND_BYTES=threshold, TASKS=DUMMY_TASKS, ALLOWED_HOSTS=["testserver"]):
            started = time.perf_counter()
            response = client.post(
                "/review/datasets/import/",
                {
                    "name": f"bench-import-{number}",
                    "format": "arena_hard",
                    "file": SimpleUploadedFile("question.jsonl", data),
                },
            )
            timings[name] = time.perf_counter() - started
        print(
            f"dataset import, bad last line ({len(data) / 2**20:.0f} MiB), {name}: {timings[name]:.1f} s, "
            f"HTTP {response.status_code}"
        )
    DatasetUpload.objects.filter(name__startswith="bench-import-").delete()
    ratio = timings["read in the request"] / timings["stored for a worker"]
    load = " / ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"web request held {ratio:.0f}x less when the file goes to a worker (load average {load} at the end)")


if __name__ == "__main__":
    main()
