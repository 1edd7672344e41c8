"""Curation: duplicate search and concurrent review leases, measured side by side in one run.

1. Duplicate search over the URS questions (1,846, grouped 5 per made-up participant), as
   `case_process` does it (exact key first, a length bound before any n-gram set, cached
   n-grams), against the plain pairwise Jaccard a one-off script would run. Both must find
   the same matches.
2. Review leases: 8 reviewers in threads leasing and accepting 400 quality tasks at once,
   against one reviewer doing all 400. On PostgreSQL the row locks with SKIP LOCKED let the
   8 work in parallel; on SQLite writers queue. Every task must be decided exactly once.

Run: .venv/bin/python bench/bench_review.py   (DATABASE_URL picks PostgreSQL)
"""

import csv
import sys
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench._django import DATA, setup_django  # noqa: E402

setup_django()

from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection, connections  # noqa: E402
from django.utils import timezone  # noqa: E402

from curation import conversation  # noqa: E402
from curation.models import Case, CaseCuration, ReviewQueue, ReviewTask, Study, Submission  # noqa: E402
from curation.review.services import quality_review_decide, review_task_lease  # noqa: E402


def questions() -> list[str]:
    path = DATA / "urs" / "data_all.csv"
    if path.exists():
        with path.open(encoding="utf-8-sig", newline="") as stream:
            return [row["question"] for row in csv.DictReader(stream)]
    print("(../shared/data/urs/data_all.csv absent: synthetic questions)")
    return [f"How would you explain topic number {n} to a child of {n % 12} years?" for n in range(1846)]


def naive_matches(entries, threshold=0.8):
    """Every earlier entry's n-grams computed afresh, no bounds: the straightforward way."""
    found: list[tuple] = []
    for index in range(1, len(entries)):
        key, group, text = entries[index]
        norm = conversation.normalise.__wrapped__(text)
        grams = conversation.shingles.__wrapped__(text)
        best: dict[bool, tuple | None] = {True: None, False: None}
        for other_key, other_group, other_text in entries[:index]:
            same = other_group == group
            other_norm = conversation.normalise.__wrapped__(other_text)
            if not norm or not other_norm:
                continue
            if other_norm == norm:
                similarity, kind = 1.0, conversation.EXACT
            else:
                similarity = conversation.jaccard(grams, conversation.shingles.__wrapped__(other_text))
                kind = conversation.NEAR
            held = best[same]
            if similarity >= threshold and (held is None or (similarity, kind == "exact") > held[1:]):
                best[same] = (other_key, similarity, kind == "exact")
        pick = best[True] or best[False]
        if pick:
            found.append((key, pick[0]))
    return found


def dedup_ratio() -> None:
    texts = questions()
    entries = [(n, n // 5, text) for n, text in enumerate(texts)]
    started = time.perf_counter()
    fast = conversation.find_duplicates(entries)
    fast_s = time.perf_counter() - started
    started = time.perf_counter()
    slow = naive_matches(entries)
    slow_s = time.perf_counter() - started
    same = {m.key for m in fast} == {key for key, _ in slow}
    print(
        f"duplicate search over {len(texts)} questions: {fast_s:.2f} s, plain pairwise {slow_s:.2f} s; "
        f"speed-up {slow_s / fast_s:.1f}x; {len(fast)} matches, same entries flagged: {same}"
    )


def make_tasks(count: int, tag: str) -> None:
    study = Study.objects.create(slug=f"bench-{tag}", title_en=f"bench-{tag}")
    submission = Submission.objects.create(study=study, status=Submission.Status.SUBMITTED)
    now = timezone.now()
    cases = Case.objects.bulk_create(
        [
            Case(
                submission=submission,
                position=n + 1,
                service="x",
                conversation=f"Q: question {tag} {n}?\nA: a",
                intent="factual_qa",
            )
            for n in range(count)
        ]
    )
    CaseCuration.objects.bulk_create(
        [CaseCuration(case=case, question=f"question {tag} {n}?", processed_at=now) for n, case in enumerate(cases)]
    )
    ReviewTask.objects.bulk_create([ReviewTask(queue=ReviewQueue.QUALITY, case=case) for case in cases])


def work_queue(reviewers) -> tuple[float, Counter]:
    taken: Counter = Counter()
    lock = threading.Lock()
    barrier = threading.Barrier(len(reviewers))

    def work(reviewer):
        try:
            barrier.wait()
            while task := review_task_lease(queue=ReviewQueue.QUALITY, reviewer=reviewer):
                with lock:
                    taken[task.pk] += 1
                quality_review_decide(task=task, reviewer=reviewer, decision="accept")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=work, args=(reviewer,)) for reviewer in reviewers]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started, taken


def lease_ratio(tasks: int = 400, people: int = 8) -> None:
    User = get_user_model()
    reviewers = [User.objects.get_or_create(username=f"bench-rev-{n}")[0] for n in range(people)]
    make_tasks(tasks, "one")
    one_s, one_taken = work_queue(reviewers[:1])
    make_tasks(tasks, "many")
    many_s, many_taken = work_queue(reviewers)
    exactly_once = set(one_taken.values()) == {1} and set(many_taken.values()) == {1} and len(many_taken) == tasks
    print(
        f"leases on {connection.vendor}: {tasks} tasks by 1 reviewer {one_s:.2f} s ({tasks / one_s:.0f}/s), "
        f"by {people} at once {many_s:.2f} s ({tasks / many_s:.0f}/s): ratio {one_s / many_s:.2f}x; "
        f"each task decided exactly once: {exactly_once}"
    )


if __name__ == "__main__":
    dedup_ratio()
    lease_ratio()
