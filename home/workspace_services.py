"""Workspaces made, renamed and staffed from the pages and the API, without the admin.

A superuser makes and renames workspaces and names a new one's first admin. A workspace's admins
add existing accounts (by user name) with roles, change roles and remove members; nobody but a
superuser changes the place of someone who administers another workspace (home.services). Every
change is recorded in the audit log of the workspace it happened in.
"""

from __future__ import annotations

import re

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from core.audit import AuditAction, audit_record
from core.models import Membership, Workspace
from core.workspaces import forget_places, membership_set
from home.services import (
    PeopleError,
    _checked_roles,
    _guard,
    _guard_other_admin,
    _require_admin,
    account_roles_set,
    people_change_record,
)

SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,49}$")
MAX_WORKSPACE_NAME: int = Workspace._meta.get_field("name").max_length or 100


def _require_superuser(actor: User) -> None:
    if not actor.is_superuser:
        raise PeopleError(_("Only a superuser makes or renames workspaces."))


def _checked_name(name: str) -> str:
    name = " ".join(name.split())
    if not name:
        raise PeopleError(_("Give the workspace a name."))
    if len(name) > MAX_WORKSPACE_NAME:
        raise PeopleError(_("A workspace's name has at most %(limit)d characters.") % {"limit": MAX_WORKSPACE_NAME})
    return name


def account_by_username(username: str) -> User:
    """The account of that user name (case as typed or not), or PeopleError naming it."""
    user = get_user_model().objects.filter(username__iexact=username.strip()).first()
    if user is None:
        raise PeopleError(_("There is no account named %(name)s.") % {"name": username.strip()})
    return user


@transaction.atomic
def workspace_create(*, slug: str, name: str, actor: User, first_admin: str = "") -> Workspace:
    """A new workspace (a superuser only): `slug` (lower-case letters, digits and dashes), `name`,
    and, given `first_admin`'s user name, that account as its admin and researcher. Audited in it."""
    _require_superuser(actor)
    slug = slug.strip()
    if not SLUG.match(slug):
        raise PeopleError(
            _("A workspace's short name has lower-case letters, digits and dashes (at most 50), as in lab-b.")
        )
    name = _checked_name(name)
    admin = account_by_username(first_admin) if first_admin.strip() else None
    try:
        with transaction.atomic():
            workspace = Workspace.objects.create(slug=slug, name=name)
    except IntegrityError:
        raise PeopleError(_("A workspace %(slug)s exists already.") % {"slug": slug}) from None
    audit_record(
        actor=actor,
        action=AuditAction.WORKSPACE_CHANGED,
        target=f"workspace:{slug}",
        details={"created": True, "name": name},
        workspace=workspace,
    )
    if admin is not None:
        membership_set(user=admin, workspace=workspace, roles=["researcher"], admin=True)
        people_change_record(
            actor=actor,
            action="added",
            subject=admin.username,
            details={"roles": ["researcher"], "admin": True},
            workspace=workspace,
            subject_user=admin,
        )
    return workspace


@transaction.atomic
def workspace_rename(*, workspace: Workspace, name: str, actor: User) -> Workspace:
    """Give the workspace another name (a superuser only; its slug, in links, stays). Audited."""
    _require_superuser(actor)
    name = _checked_name(name)
    if name != workspace.name:
        before, workspace.name = workspace.name, name
        workspace.save(update_fields=["name"])
        audit_record(
            actor=actor,
            action=AuditAction.WORKSPACE_CHANGED,
            target=f"workspace:{workspace.slug}",
            details={"changes": {"name": [before, name]}},
            workspace=workspace,
        )
    return workspace


@transaction.atomic
def member_add(*, workspace: Workspace, username: str, roles, actor: User, admin: bool = False) -> Membership:
    """Make an existing account a member of the workspace with these roles (and its admin, if
    `admin`); only the workspace's admins do it. PeopleError for an unknown user name, one
    already a member (change their roles instead), or nothing to hold. Audited."""
    roles = _checked_roles(roles)
    _require_admin(actor=actor, workspace=workspace)
    user = account_by_username(username)
    _guard(actor=actor, user=user)
    if Membership.objects.filter(workspace=workspace, user=user).exists():
        raise PeopleError(
            _("%(name)s is a member of this workspace already; change their roles instead.") % {"name": user.username}
        )
    if not roles and not admin:
        raise PeopleError(_("Choose at least one role for %(name)s.") % {"name": user.username})
    membership = membership_set(user=user, workspace=workspace, roles=roles, admin=admin)
    assert membership is not None  # roles or admin were given
    people_change_record(
        actor=actor,
        action="added",
        subject=user.username,
        details={"roles": roles, **({"admin": True} if admin else {})},
        workspace=workspace,
        subject_user=user,
    )
    return membership


def member_roles_change(*, workspace: Workspace, user: User, roles, actor: User, admin: bool | None = None):
    """Exactly these roles (and the admin flag, unless None) for a member: home.services's rules."""
    if not Membership.objects.filter(workspace=workspace, user=user).exists():
        raise PeopleError(_("%(name)s is not a member of this workspace.") % {"name": user.username})
    return account_roles_set(user=user, roles=roles, actor=actor, workspace=workspace, admin=admin)


def member_roles_refusal(*, workspace: Workspace, user: User, actor: User) -> str:
    """Why `actor` may not change `user`'s roles in the workspace, or "" when they may."""
    try:
        _require_admin(actor=actor, workspace=workspace)
        _guard(actor=actor, user=user)
        _guard_other_admin(actor=actor, user=user, workspace=workspace)
    except PeopleError as error:
        return error.message
    return ""


def member_remove_refusal(*, workspace: Workspace, user: User, actor: User) -> str:
    """Why `actor` may not remove `user` from the workspace, or "" when they may."""
    try:
        _remove_check(workspace=workspace, user=user, actor=actor)
    except PeopleError as error:
        return error.message
    return ""


def _remove_check(*, workspace: Workspace, user: User, actor: User) -> None:
    _require_admin(actor=actor, workspace=workspace)
    _guard(actor=actor, user=user)
    _guard_other_admin(actor=actor, user=user, workspace=workspace)
    if user.pk == actor.pk:
        raise PeopleError(_("You cannot remove yourself; ask another admin."))


@transaction.atomic
def member_remove(*, workspace: Workspace, user: User, actor: User) -> None:
    """Take the account out of the workspace (its work there stays; its account stays). Only
    the workspace's admins, never their own place, never one with more rights. Audited."""
    _remove_check(workspace=workspace, user=user, actor=actor)
    membership = Membership.objects.select_for_update().filter(workspace=workspace, user=user).first()
    if membership is None:
        raise PeopleError(_("%(name)s is not a member of this workspace.") % {"name": user.username})
    held = sorted(membership.role_names())
    membership.delete()
    forget_places(user)
    people_change_record(
        actor=actor,
        action="removed",
        subject=user.username,
        details={"roles": held, **({"admin": True} if membership.admin else {})},
        workspace=workspace,
        subject_user=user,
    )
