"""Commands' `--workspace SLUG`: which workspace a name given on the command line means.

Names (of datasets, endpoints, studies, campaigns, templates) belong to a workspace, so one name
can mean an object in each of two workspaces. A command that takes names resolves them in one
workspace: the one named with `--workspace`, else the only workspace where every name given
exists (so a script written when there was one team works unchanged). A name found in several
workspaces is refused, listing them; once there are several workspaces, the command says on
standard error which one it used.

The operator running a command is trusted with every workspace: this says which one is meant,
it guards nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db.models import QuerySet

from core.models import Workspace

# (what the name is, the name, the objects of that name in any workspace, the path to their workspace)
Named = tuple[str, str, QuerySet[Any], str]


def add_workspace_argument(parser, what: str = "the names given") -> None:
    parser.add_argument(
        "--workspace",
        help=f"slug of the workspace {what} belong to (needed only when a name is used in several)",
    )


def _known() -> str:
    return ", ".join(Workspace.objects.order_by("slug").values_list("slug", flat=True)) or "none"


def _slugs(ids: Iterable[int]) -> str:
    return ", ".join(Workspace.objects.filter(pk__in=list(ids)).order_by("slug").values_list("slug", flat=True))


def named(what: str, name: str | None, queryset: QuerySet[Any], via: str = "workspace") -> Named | None:
    """One name to resolve, or None when it was not given."""
    if not name:
        return None
    return (what, name, queryset, via)


def command_workspace(slug: str | None, names: Iterable[Named | None] = ()) -> Workspace | None:
    """The workspace the command works in. With `slug`: that workspace (CommandError naming the
    known ones for an unknown slug). Without: the one workspace holding every given name; when a
    name is in several, CommandError listing them. When no name is found anywhere: the only
    workspace if there is one, else None (the command's own lookup then says which name is
    unknown). Names in different workspaces: the first name's workspace (the lookup of the others
    then fails there, as it would for an unknown name)."""
    if slug:
        workspace = Workspace.objects.filter(slug=slug).first()
        if workspace is None:
            raise CommandError(f"No workspace {slug!r}; known: {_known()}.")
        return workspace
    possible: set[int] | None = None
    found: list[tuple[str, str, set[int]]] = []
    for entry in names:
        if entry is None:
            continue
        what, name, queryset, via = entry
        ids = set(queryset.values_list(f"{via}_id", flat=True).distinct())
        ids.discard(None)
        if not ids:
            continue
        found.append((what, name, ids))
        possible = ids if possible is None else possible & ids
    if possible is None:
        only = list(Workspace.objects.all()[:2])
        return only[0] if len(only) == 1 else None
    if len(possible) == 1:
        return Workspace.objects.get(pk=next(iter(possible)))
    if not possible:
        # The names are in different workspaces: the first one given (the dataset, the study) says
        # where the command works, and its own lookup then names the one missing there.
        possible = found[0][2]
        if len(possible) == 1:
            return Workspace.objects.get(pk=next(iter(possible)))
    what, name, _ids = next((entry for entry in found if len(entry[2] & possible) > 1), found[0])
    raise CommandError(
        f"{what.capitalize()} {name!r} is in several workspaces: {_slugs(possible)}; name one with --workspace."
    )


def workspace_said(command: BaseCommand, workspace: Workspace | None) -> None:
    """Say on standard error which workspace the command used, once there are several to choose
    from (standard output may be a report or JSON that a script reads; with one workspace the
    output stays as it was, so a script reading `2>&1` line by line works unchanged)."""
    if workspace is not None and Workspace.objects.exclude(pk=workspace.pk).exists():
        command.stderr.write(f"Workspace: {workspace.slug}.")


def command_workspace_said(
    command: BaseCommand, slug: str | None, names: Iterable[Named | None] = ()
) -> Workspace | None:
    """command_workspace, then said (see workspace_said)."""
    workspace = command_workspace(slug, names)
    workspace_said(command, workspace)
    return workspace
