"""Lists across all of a person's workspaces: a Workspace column and a filter to one of them.

A person in several workspaces who has not chosen one in the header's switcher sees every list
across all of theirs (the dashboard, /runs/, /annotate/ ...). There each row names its workspace,
and `?workspace=SLUG` keeps the list to one (a GET: a link one can keep). With a current
workspace, or a single one, the list is of that workspace alone: no column and no filter."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db.models import QuerySet
from django.http import Http404

from core.models import Workspace
from core.workspaces import current_of, is_everywhere, places_of, workspaces_of


@dataclass(frozen=True)
class ListWorkspaces:
    """The workspaces a list spans (none when it spans one), the one it is kept to, and each
    workspace's name by id for the column."""

    choices: list[Workspace] = field(default_factory=list)
    chosen: Workspace | None = None

    @property
    def shown(self) -> bool:
        """Whether the list has the column and the filter."""
        return len(self.choices) > 1

    @property
    def names(self) -> dict[int, str]:
        return {workspace.pk: workspace.name for workspace in self.choices}

    def narrow[Q: QuerySet[Any]](self, queryset: Q, via: str = "workspace") -> Q:
        """`queryset` kept to the chosen workspace (reached through `via`), or whole."""
        return queryset if self.chosen is None else queryset.filter(**{f"{via}_id": self.chosen.pk})


def list_workspaces(request, role: str | None = None) -> ListWorkspaces:
    """The workspace column and filter of a list of the person's objects in the workspaces where
    they hold `role`. `?workspace=` naming a workspace not among them: 404, as for its objects."""
    user = request.user
    if current_of(user) is not None:
        return ListWorkspaces()
    if not is_everywhere(user):
        # From the memberships the person arrived with: no query for someone in one workspace.
        held = [pk for pk, place in places_of(user).items() if role is None or role in place.roles]
        if len(held) < 2:
            return ListWorkspaces()
    choices = list(workspaces_of(user, role).order_by("slug"))
    if len(choices) < 2:
        return ListWorkspaces()
    slug = request.GET.get("workspace", "")
    chosen = next((workspace for workspace in choices if workspace.slug == slug), None)
    if slug and chosen is None:
        raise Http404("No such workspace.")
    return ListWorkspaces(choices=choices, chosen=chosen)
