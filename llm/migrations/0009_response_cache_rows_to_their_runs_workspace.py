"""The response cache became per workspace (llm/cache.py): each row made before is moved to the
workspace of the runs whose judgments it answered, under the key that workspace's calls now ask
for, so a team's reruns still find their replies. A row no run used (a generation's, a curation
job's), or used by runs of several workspaces, keeps no workspace and is served to nobody."""

import hashlib

from django.db import migrations

CHUNK = 500


def _scoped(key: str, workspace_id: int) -> str:
    # llm.cache.workspace_cache_key, as it is written now (a migration does not import app code).
    return hashlib.sha256(f"workspace {workspace_id}|{key}".encode()).hexdigest()


def rows_to_their_runs_workspace(apps, schema_editor):
    LLMResponse = apps.get_model("llm", "LLMResponse")
    Judgment = apps.get_model("judging", "Judgment")
    workspaces: dict[str, set] = {}
    used = (
        Judgment.objects.filter(response__isnull=False, response__workspace__isnull=True)
        .values_list("response_id", "run__workspace_id")
        .distinct()
    )
    for key, workspace_id in used.iterator(chunk_size=CHUNK):
        workspaces.setdefault(key, set()).add(workspace_id)
    moves = {
        key: (_scoped(key, next(iter(held))), next(iter(held)))
        for key, held in workspaces.items()
        if len(held) == 1 and None not in held
    }
    keys = list(moves)
    for start in range(0, len(keys), CHUNK):
        chunk = keys[start : start + CHUNK]
        rows = list(LLMResponse.objects.filter(key__in=chunk).only("pk", "key"))
        for row in rows:
            row.key, row.workspace_id = moves[row.key]
        LLMResponse.objects.bulk_update(rows, ["key", "workspace"], batch_size=CHUNK)
        # The judgments follow their row to its new key (the foreign key is checked at commit).
        judgments = list(Judgment.objects.filter(response_id__in=chunk).only("pk", "response_id"))
        for judgment in judgments:
            judgment.response_id = moves[judgment.response_id][0]
        Judgment.objects.bulk_update(judgments, ["response"], batch_size=CHUNK)


class Migration(migrations.Migration):
    dependencies = [
        ("llm", "0008_response_cache_per_workspace"),
        ("judging", "0022_answer_cut_off"),
    ]

    operations = [migrations.RunPython(rows_to_their_runs_workspace, migrations.RunPython.noop)]
