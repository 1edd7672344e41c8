"""What a worker reads to start a shard and to look its calls up in the response cache does not
grow with the data set or the cache (PostgreSQL, where the planner decides)."""

from collections import Counter

import pytest
from django.db import connection

from curation.models import Item
from judging.engine.execution import shard_plan
from judging.models import Answer
from llm.cache import cache_lookup
from llm.models import Endpoint, LLMResponse
from tests.factories import CandidateModelFactory, DatasetFactory

on_postgresql = pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL (set DATABASE_URL)")
pytestmark = [on_postgresql, pytest.mark.django_db]


def rows_read() -> Counter:
    """Rows this transaction has read so far, by table (pg_stat_xact_user_tables)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT relname, seq_tup_read + COALESCE(idx_tup_fetch, 0) FROM pg_stat_xact_user_tables")
        return Counter(dict(cursor.fetchall()))


def run_of(size: int, endpoint):
    from judging.runs.creation import run_create
    from judging.runs.spec import RunSpec

    dataset = DatasetFactory(name=f"data-{size}")
    models = [CandidateModelFactory(name=f"m1-{size}"), CandidateModelFactory(name=f"m2-{size}")]
    items = Item.objects.bulk_create(
        Item(dataset=dataset, external_id=f"q{n}", question=f"question {n}", reference=f"reference {n}")
        for n in range(size)
    )
    Answer.objects.bulk_create(
        Answer(item=item, model=model, text=f"<<{model.name}:{n}>>") for n, item in enumerate(items) for model in models
    )
    spec = RunSpec(
        dataset=dataset, mode="pointwise", judge_model="j", candidates=models, endpoint=endpoint,
        concurrency=4, shard_size=10,
    )  # fmt: skip
    return run_create(spec=spec)


def test_a_shards_plan_reads_its_own_answers_whatever_the_data_sets_size():
    endpoint = Endpoint.objects.create(name="planned", base_url="http://127.0.0.1:9/v1")
    runs = {100: run_of(100, endpoint)}
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # planner statistics, then the data grows before the next ANALYZE
    runs[1000] = run_of(1000, endpoint)
    read = {}
    for size, run in runs.items():
        before = rows_read()
        plan = shard_plan(run.shards.get(index=0))
        read[size] = (rows_read() - before)["judging_answer"]
        assert len(plan) == 10
    # The shard's 5 items by 2 models: 10 answers, whatever the data set holds (it read every
    # answer of the run's versions: 200 and 2,000).
    assert read[1000] <= 2 * 10, read


def test_a_cache_lookup_reads_its_keys_rows_whatever_the_workspaces_cache_holds():
    from core.models import Workspace

    ours = CandidateModelFactory(name="cache-owner").workspace_id
    theirs = Workspace.objects.create(name="Other lab", slug="other-lab").pk

    def replies(workspace_id, numbers):
        LLMResponse.objects.bulk_create(
            LLMResponse(key=f"key-{workspace_id}-{n:05}", base_url="http://x", model="j", text=f"reply {n}",
                        workspace_id=workspace_id)
            for n in numbers
        )  # fmt: skip

    replies(theirs, range(5000))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # planner statistics, then this workspace's cache grows before the next
    replies(ours, range(5000))
    before = rows_read()
    found = cache_lookup([f"key-{ours}-{n:05}" for n in range(0, 5000, 500)] + ["missing"], ours)
    read = (rows_read() - before)["judging_llmresponse"]
    assert len(found) == 10
    assert read <= 2 * 11, read  # it read the workspace's whole index: 5,000 rows
