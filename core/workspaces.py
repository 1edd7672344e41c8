"""Workspaces: who sees what. The one place that says which workspaces a person belongs to, with
which roles, and that narrows a queryset to them.

Every staff page, API route, export and command reads through `scoped` (or `workspace_get` for
one object): a person sees the objects of the workspaces they are a member of, with the role the
page needs there; a superuser sees every workspace; a person in no workspace sees nothing. An
object of another workspace is "not found" (404), never "forbidden", so its existence does not
leak.

A person's memberships are read once per request: a session's user arrives with them (see
core.auth), any other user object reads them on first use and keeps them.

The current workspace: a person in several workspaces works in one at a time once they choose it
(the header's switcher on pages, remembered in the session; `X-Userbench-Workspace` or
`?workspace=` in the API). While one is current, every scoped list, picker and lookup reads only
that workspace (`workspace_ids` narrows to it); without one, everything of theirs, as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Model, QuerySet
from django.http import Http404
from django.utils.translation import gettext as _

from core.errors import UserbenchError
from core.models import DEFAULT_SLUG, Membership, Workspace, default_workspace_id

ROLE_FIELDS = ("researcher", "reviewer", "annotator")
# One letter per flag, as core.auth reads a session user's memberships in one query.
FLAG_LETTERS = {"researcher": "r", "reviewer": "v", "annotator": "a", "admin": "m"}


@dataclass(frozen=True)
class Place:
    """What a person holds in one workspace."""

    roles: frozenset[str]
    admin: bool


def remember_places(user, places: dict[int, Place]) -> dict[int, Place]:
    user._userbench_places = places
    return places


def places_from_flags(encoded: str | None) -> dict[int, Place]:
    """Memberships as core.auth reads them: "3:rm,7:a" (workspace id, then flag letters)."""
    places: dict[int, Place] = {}
    for part in (encoded or "").split(","):
        if ":" not in part:
            continue
        workspace_id, letters = part.split(":", 1)
        roles = frozenset(name for name in ROLE_FIELDS if FLAG_LETTERS[name] in letters)
        places[int(workspace_id)] = Place(roles=roles, admin=FLAG_LETTERS["admin"] in letters)
    return places


def places_of(user) -> dict[int, Place]:
    """Workspace id -> what the person holds there; empty for the anonymous and the inactive.
    A superuser's own memberships are listed too, but `is_everywhere` is what counts for them."""
    if user is None or not user.is_authenticated or not user.is_active:
        return {}
    cached = getattr(user, "_userbench_places", None)
    if cached is not None:
        return cached
    rows = Membership.objects.filter(user=user).values_list("workspace_id", *ROLE_FIELDS, "admin")
    return remember_places(
        user,
        {
            row[0]: Place(roles=frozenset(name for name, held in zip(ROLE_FIELDS, row[1:4]) if held), admin=row[4])
            for row in rows
        },
    )


class WorkspaceUnknown(UserbenchError):
    """A workspace was asked for that the person is not a member of (or that does not exist; the
    two are not told apart)."""


def workspace_choices(user) -> list[Workspace]:
    """The workspaces a person may work in (every one for a superuser), by slug, whichever is
    current."""
    if is_everywhere(user):
        return list(Workspace.objects.order_by("slug"))
    return list(Workspace.objects.filter(pk__in=list(places_of(user))).order_by("slug"))


def _listed(user) -> str:
    return ", ".join(workspace.slug for workspace in workspace_choices(user)) or "—"


def current_set(user, slug: str) -> Workspace:
    """Make the workspace named by `slug` the person's current one for this request; every scoped
    read then narrows to it. WorkspaceUnknown, listing their workspaces, for one they are not a
    member of."""
    clear_current(user)
    workspace = next((choice for choice in workspace_choices(user) if choice.slug == slug), None)
    if workspace is None:
        raise WorkspaceUnknown(
            _("No workspace %(slug)s of yours; yours: %(yours)s.") % {"slug": repr(slug), "yours": _listed(user)}
        )
    user._userbench_current = workspace
    return workspace


def current_of(user) -> Workspace | None:
    """The person's current workspace, or None when they work across all of theirs."""
    return getattr(user, "_userbench_current", None)


def clear_current(user) -> None:
    if hasattr(user, "_userbench_current"):
        delattr(user, "_userbench_current")


def forget_places(user) -> None:
    """Drop what was read of a person's memberships (after they change in this request)."""
    for attribute in ("_userbench_places", "_userbench_roles"):
        if hasattr(user, attribute):
            delattr(user, attribute)


def is_everywhere(user) -> bool:
    """A superuser sees and changes every workspace."""
    return bool(user is not None and user.is_authenticated and user.is_active and user.is_superuser)


def workspace_ids(user, role: str | None = None) -> set[int] | None:
    """The ids of the workspaces where the person holds `role` (any membership when None);
    None means every workspace (a superuser). Narrowed to the current workspace, if one is set."""
    current = current_of(user)
    if is_everywhere(user):
        return None if current is None else {current.pk}
    held = {pk for pk, place in places_of(user).items() if role is None or role in place.roles}
    return held if current is None else held & {current.pk}


def admin_workspace_ids(user) -> set[int] | None:
    """The workspaces the person administers; None means every one (a superuser)."""
    if is_everywhere(user):
        return None
    return {pk for pk, place in places_of(user).items() if place.admin}


def workspaces_of(user, role: str | None = None) -> QuerySet[Workspace]:
    """The workspaces the person belongs to (with `role` there, when given), by slug."""
    ids = workspace_ids(user, role)
    return Workspace.objects.all() if ids is None else Workspace.objects.filter(pk__in=ids)


def holds(user, role: str | None, workspace_id: int | None) -> bool:
    """Whether the person holds `role` (or is a member, when None) in that workspace."""
    ids = workspace_ids(user, role)
    return ids is None or workspace_id in ids


def administers(user, workspace_id: int | None) -> bool:
    """Whether the person is an admin of that workspace (a superuser administers every one)."""
    ids = admin_workspace_ids(user)
    return ids is None or workspace_id in ids


def scoped[S: QuerySet[Any]](queryset: S, user, *, role: str | None = None, via: str = "workspace") -> S:
    """`queryset` narrowed to what the person may see: objects whose workspace (reached through
    `via`, e.g. "dataset__workspace" for an item) is one where they hold `role` (or are a member)."""
    ids = workspace_ids(user, role)
    return queryset if ids is None else queryset.filter(**{f"{via}_id__in": ids})


def workspace_get[M: Model](
    queryset: QuerySet[M], user, *, role: str | None = None, via: str = "workspace", **lookup
) -> M:
    """One object the person may see, or 404: an object of another workspace is "not found". When
    the lookup finds one in each of two of their workspaces (a name both use), WorkspaceUnknown
    asks which, listing their workspaces."""
    found = list(scoped(queryset, user, role=role, via=via).filter(**lookup)[:2])
    if not found:
        raise Http404("Not found.")
    if len(found) > 1:
        raise WorkspaceUnknown(
            _(
                "That name is used in more than one of your workspaces; switch to one (in the API: the "
                "X-Userbench-Workspace header): %(yours)s."
            )
            % {"yours": _listed(user)}
        )
    return found[0]


def in_workspace[S: QuerySet[Any]](queryset: S, workspace_id: int | None) -> S:
    """`queryset` narrowed to one workspace's objects: where a name a team chose is looked up
    (names are unique within a workspace, not across the server)."""
    return queryset.filter(workspace_id=workspace_id)


class NameInSeveralWorkspaces(UserbenchError):
    """A name looked up by the operator (a command, `user` None) that several workspaces use;
    the operator names one with --workspace."""


def named_one[M: Model](
    queryset: QuerySet[M], *, user=None, role: str | None = None, workspace_id: int | None = None, **lookup
) -> M | None:
    """The one object `lookup` (a name) finds, or None. Names are unique within a workspace, not
    across the server: with a `user`, only their workspaces (narrowed to the current one) are
    searched, and a name found in two of theirs asks which (WorkspaceUnknown); with a
    `workspace_id`, only that workspace; the operator (neither) finds a name any workspace uses,
    and is asked for --workspace when several do (NameInSeveralWorkspaces)."""
    if workspace_id is not None:
        queryset = queryset.filter(workspace_id=workspace_id)
    if user is not None:
        queryset = scoped(queryset, user, role=role)
    found = list(queryset.filter(**lookup)[:2])
    if len(found) < 2:
        return found[0] if found else None
    if user is not None:
        raise WorkspaceUnknown(
            _(
                "That name is used in more than one of your workspaces; switch to one (in the API: the "
                "X-Userbench-Workspace header): %(yours)s."
            )
            % {"yours": _listed(user)}
        )
    slugs = sorted(set(queryset.filter(**lookup).values_list("workspace__slug", flat=True)))
    raise NameInSeveralWorkspaces(
        _("%(name)s is used in several workspaces (%(slugs)s); name one with --workspace.")
        % {"name": repr(next(iter(lookup.values()))), "slugs": ", ".join(slugs)}
    )


def workspace_for_new(user, role: str, slug: str = "") -> Workspace | None:
    """The workspace a new object of this person goes to: the one named by `slug` if they hold
    `role` there, else their only such workspace (the default one, or the first by slug, when
    they hold it in several); None when they hold it in none (or not in the one named)."""
    choices = workspaces_of(user, role)
    if slug:
        return choices.filter(slug=slug).first()
    first_two = list(choices[:2])
    if len(first_two) == 1:
        return first_two[0]
    if not first_two:
        return None
    # A superuser, or someone in several: the default workspace when it is one of them, else
    # the first by slug (never one where they do not hold the role).
    return choices.filter(slug=DEFAULT_SLUG).first() or choices.order_by("slug").first()


def workspace_for_command(slug: str | None, *, required: bool) -> Workspace | None:
    """A command's `--workspace SLUG`. The operator running a command is trusted: the slug only
    says where new objects go, or narrows what is read. Unknown slugs raise UserbenchError
    naming the known ones; with `required`, no slug is fine only while there is one workspace
    (a single team never names it)."""
    known = list(Workspace.objects.order_by("slug").values_list("slug", flat=True))
    if slug:
        workspace = Workspace.objects.filter(slug=slug).first()
        if workspace is None:
            raise UserbenchError(f"No workspace {slug!r}; known: {', '.join(known) or 'none'}.")
        return workspace
    if not required:
        return None
    if len(known) > 1:
        raise UserbenchError(f"Name the workspace with --workspace, one of: {', '.join(known)}.")
    return Workspace.objects.get(pk=default_workspace_id()) if not known else Workspace.objects.get(slug=known[0])


@transaction.atomic
def membership_set(
    *, user, workspace: Workspace | None = None, roles=(), admin: bool | None = None
) -> Membership | None:
    """Give the person exactly these roles in the workspace (the default one when None), keeping
    their admin flag unless `admin` is given. A member left with no role stays a member (listed
    on /people/, seeing nothing); no membership is made for a person given none."""
    workspace_id = workspace.pk if workspace is not None else default_workspace_id()
    chosen = set(roles)
    membership = Membership.objects.select_for_update().filter(workspace_id=workspace_id, user=user).first()
    keep_admin = bool(membership.admin) if membership is not None and admin is None else bool(admin)
    forget_places(user)
    if membership is None and not chosen and not keep_admin:
        return None
    fields = {name: name in chosen for name in ROLE_FIELDS} | {"admin": keep_admin}
    if membership is None:
        return Membership.objects.create(workspace_id=workspace_id, user=user, **fields)
    for name, value in fields.items():
        setattr(membership, name, value)
    membership.save(update_fields=list(fields))
    return membership


# The API's way to name the current workspace (or `?workspace=` in the query string).
WORKSPACE_HEADER = "X-Userbench-Workspace"


def api_current_bind(request, user) -> Workspace | None:
    """The current workspace of an API request, from its X-Userbench-Workspace header or its
    `?workspace=` parameter: set on the person (None when neither is given: every workspace of
    theirs, as before). WorkspaceUnknown, listing theirs, for one that is not theirs."""
    slug = request.headers.get(WORKSPACE_HEADER, "") or request.GET.get("workspace", "")
    clear_current(user)
    if not slug:
        return None
    return current_set(user, slug.strip())
