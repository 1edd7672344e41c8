"""Everything Userbench stores, read whole: what a refused change to archived work must leave
exactly as it was (tests/home/test_archived_read_only.py, tests/test_archived_commands.py)."""

from django.apps import apps

# Every app whose rows are Userbench's work, and the task queue (a change may only queue a task).
APPS = ("core", "llm", "curation", "judging", "annotation", "home", "django_tasks_database")
# What reading a page may write: the stored figures of a campaign or run, computed by a task the
# page queues when none are stored yet. They are read, not work; an archived object's page shows them.
READ_CACHES = {"annotation.StoredFigures", "judging.RunFigures"}
FIGURES_TASKS = ("annotation.tasks.figures_task", "judging.tasks.run_figures_task")


def stored_state() -> dict[str, list[str]]:
    """Each model's rows, every field's value, in primary-key order (the read caches left out)."""
    state = {}
    for label in APPS:
        for model in apps.get_app_config(label).get_models():
            if model._meta.label in READ_CACHES:
                continue
            rows = model._base_manager.order_by("pk")
            if model._meta.label == "django_tasks_database.DBTaskResult":
                rows = rows.exclude(task_path__in=FIGURES_TASKS)
            state[model._meta.label] = [repr(row) for row in rows.values_list()]
    return state


def changes_between(before: dict[str, list[str]], after: dict[str, list[str]]) -> dict[str, str]:
    """The models whose rows differ, with how many rows each had before and after."""
    return {
        label: f"{len(before[label])} rows before, {len(after[label])} after"
        for label in before
        if before[label] != after[label]
    }
