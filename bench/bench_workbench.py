"""The researcher's pages as a researcher feels them, measured side by side in one run.

1. /runs/new/ counts a run before it starts (`run_plan`: units, templates, token estimate)
   against creating the same run (`run_create`: the same plan plus the run and its shards):
   the preview must cost no more than creating, and both must stay well under a second on
   the URS dataset (1,846 questions) with 10 candidate models, 18,460 calls.
2. /datasets/<name>/ on the same dataset: the first page of items against a full-text
   search over every item, each request timed through the test client.

Run: .venv/bin/python bench/bench_workbench.py   (DATABASE_URL picks PostgreSQL)
"""

import csv
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench._django import DATA, setup_django  # noqa: E402

setup_django()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.test import Client  # noqa: E402
from django.utils import timezone  # noqa: E402

from core.workspaces import membership_set  # noqa: E402
from curation.models import Dataset, Item  # noqa: E402
from judging.models import Answer, CandidateModel, JudgeRun  # noqa: E402
from judging.runs.creation import run_create  # noqa: E402
from judging.runs.planning import run_plan
from judging.runs.spec import RunSpec

MODELS = 10


def questions() -> list[tuple[str, str]]:
    path = DATA / "urs" / "data_all.csv"
    if path.exists():
        with path.open(encoding="utf-8-sig", newline="") as stream:
            return [(row["question"], row["reference_ans"]) for row in csv.DictReader(stream)]
    print("(../shared/data/urs/data_all.csv absent: synthetic questions)")
    return [(f"How would you explain topic number {n}?", f"Reference {n}.") for n in range(1846)]


def build():
    dataset = Dataset.objects.create(name="urs-bench", source="urs", frozen_at=timezone.now())
    rows = questions()
    Item.objects.bulk_create(
        [
            Item(
                dataset=dataset,
                external_id=f"{n:04d}",
                question=q,
                reference=r,
                intent="factual_qa" if n % 2 else "leisure",
                language="en" if n % 3 else "zh",
            )
            for n, (q, r) in enumerate(rows)
        ]
    )
    models = [CandidateModel.objects.create(name=f"model-{n}") for n in range(MODELS)]
    items = list(dataset.items.values_list("pk", flat=True))
    Answer.objects.bulk_create(
        [
            Answer(item_id=item, model=model, text=f"An answer of {model.name} " * 20)
            for model in models
            for item in items
        ],
        batch_size=5000,
    )
    return dataset, models


def best_of(fn, rounds=3):
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - started)
    return min(times), result


def main():
    dataset, models = build()
    params = dict(dataset=dataset, mode="pointwise", judge_model="judge", candidates=models, seed=1)
    plan_time, plan = best_of(lambda: run_plan(spec=RunSpec(**params)))
    create_time, run = best_of(lambda: run_create(spec=RunSpec(**params)))
    print(
        f"{settings.DATABASES['default']['ENGINE'].rsplit('.', 1)[-1]}: {plan.calls:,} calls; "
        f"preview (run_plan) {plan_time * 1000:.0f} ms, create (run_create) {create_time * 1000:.0f} ms: "
        f"ratio {plan_time / create_time:.2f}; {JudgeRun.objects.count()} runs, {run.shards.count()} shards each"
    )

    person = get_user_model().objects.create_user(username="bench-researcher", password="x")
    membership_set(user=person, roles=["researcher"])
    client = Client(HTTP_HOST="localhost")
    client.force_login(person)
    url = f"/datasets/{dataset.name}/"

    def timed(query):
        samples = []
        for _ in range(7):
            started = time.perf_counter()
            response = client.get(url, query)
            samples.append(time.perf_counter() - started)
            assert response.status_code == 200
        return statistics.median(samples)

    first = timed({})
    search = timed({"q": "what", "language": "en"})
    print(
        f"/datasets/<name>/ on {dataset.items.count():,} items: first page {first * 1000:.0f} ms, "
        f"search + filter over all items {search * 1000:.0f} ms: ratio {search / first:.2f} (medians of 7)"
    )


if __name__ == "__main__":
    main()
