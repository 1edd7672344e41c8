"""Thin task wrappers. Shards run on the `judging` queue so long LLM work never starves `default`."""

from django.tasks import task

from judging.execution import shard_execute


@task(queue_name="judging")
def judge_shard_task(shard_id: int) -> str:
    return shard_execute(shard_id=shard_id)
