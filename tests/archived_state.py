"""Everything Userbench stores, read whole: what a refused change to archived work must leave
exactly as it was (tests/home/test_archived_read_only.py, tests/test_archived_commands.py)."""

from django.apps import apps

# Every app whose rows are Userbench's work, and the task queue (a change may only queue a task).
APPS = ("core", "llm", "curation", "judging", "annotation", "home", "django_tasks_database")


def stored_state() -> dict[str, list[tuple]]:
    """Each model's rows, every field's value, in primary-key order."""
    state = {}
    for label in APPS:
        for model in apps.get_app_config(label).get_models():
            manager = model._base_manager
            state[model._meta.label] = list(manager.order_by("pk").values_list())
    return state


def changes_between(before: dict[str, list[tuple]], after: dict[str, list[tuple]]) -> dict[str, str]:
    """The models whose rows differ, with how many rows each had before and after."""
    return {
        label: f"{len(before[label])} rows before, {len(after[label])} after"
        for label in before
        if before[label] != after[label]
    }
