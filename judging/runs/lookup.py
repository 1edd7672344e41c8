"""Finding a judge run by its id: the one lookup the pages, the API, the commands and the tasks
share, with the one error they turn into a 404 or a command's message."""

from __future__ import annotations

from django.db.models import QuerySet
from django.utils.translation import gettext as _

from core.roles import Role
from core.workspaces import scoped
from judging.errors import RunNotFound
from judging.models import JudgeRun


def run_by_id(*, run_id: int, queryset: QuerySet[JudgeRun] | None = None, user=None) -> JudgeRun:
    """The run with this id, read through `queryset` when given (its select_related and
    prefetches); raises RunNotFound naming the id. With a `user`, a run of a workspace where
    they are no researcher is not found either (the operator, `user` None, finds every one)."""
    runs = JudgeRun.objects.all() if queryset is None else queryset
    if user is not None:
        runs = scoped(runs, user, role=Role.RESEARCHER.value)
    found = runs.filter(pk=run_id).first()
    if found is None:
        raise RunNotFound(_("No judge run %(id)s.") % {"id": run_id})
    return found
