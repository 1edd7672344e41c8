"""Answers saved before answers had versions become version 1 of their (dataset, model); each run
pins the versions it judged, and each judgment the version of its candidate's answers."""

from django.db import migrations


def backfill(apps, schema_editor):
    Answer = apps.get_model("judging", "Answer")
    AnswerSet = apps.get_model("judging", "AnswerSet")
    JudgeRun = apps.get_model("judging", "JudgeRun")
    Judgment = apps.get_model("judging", "Judgment")
    pairs = Answer.objects.values_list("item__dataset_id", "model_id").distinct().order_by()
    sets = {}
    for dataset_id, model_id in pairs:
        answer_set = AnswerSet.objects.create(dataset_id=dataset_id, model_id=model_id, version=1, is_current=True)
        sets[(dataset_id, model_id)] = answer_set.pk
        Answer.objects.filter(item__dataset_id=dataset_id, model_id=model_id).update(
            answer_set_id=answer_set.pk, is_current=True
        )
    Pinned = JudgeRun.answer_sets.through
    pins = []
    for run_id, dataset_id, reference_id in JudgeRun.objects.values_list("id", "dataset_id", "reference_model_id"):
        judged = set(Judgment.objects.filter(run_id=run_id).values_list("model_id", flat=True).distinct().order_by())
        judged |= set(
            JudgeRun.candidates.through.objects.filter(judgerun_id=run_id).values_list("candidatemodel_id", flat=True)
        )
        if reference_id is not None:
            judged.add(reference_id)
        for model_id in judged:
            if (dataset_id, model_id) in sets:
                pins.append(Pinned(judgerun_id=run_id, answerset_id=sets[(dataset_id, model_id)]))
    Pinned.objects.bulk_create(pins, batch_size=1000)
    for (dataset_id, model_id), set_id in sets.items():
        Judgment.objects.filter(run__dataset_id=dataset_id, model_id=model_id).update(answer_set_id=set_id)


class Migration(migrations.Migration):
    dependencies = [("judging", "0018_answer_versions")]

    operations = [
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
