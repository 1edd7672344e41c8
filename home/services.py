"""Writes that span the apps: people's accounts, their roles, and one-time invitation links.

A workspace's admins manage its members here without the admin: accounts, roles in the
workspace, invitations into it. Nobody changes someone with more rights than they have: a
superuser's account is left to the admin, a staff account to a superuser, and an account that is
also a member of a workspace the admin does not administer can be deactivated only by a superuser.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from core.audit import AuditAction, audit_record
from core.errors import UserbenchError
from core.models import Membership, Workspace, WorkspaceInvitation
from core.roles import Role
from core.workspaces import administers, default_workspace_id, membership_set
from home.models import Invitation

logger = logging.getLogger("userbench.changes")

INVITATION_DAYS_DEFAULT = 7
INVITATION_DAYS_MAX = 30


class PeopleError(UserbenchError):
    """A change to an account or an invitation that cannot be made; nothing was changed."""


def people_change_record(
    *,
    actor: User | None,
    action: str,
    subject: str,
    details: dict | None = None,
    workspace: Workspace | None = None,
    audit_action: str = AuditAction.PEOPLE_CHANGED,
    subject_user: User | None = None,
) -> None:
    """Record who changed an account, a role or an invitation, and how: the application log and
    the audit log (in the workspace it happened in).

    The one place these changes are recorded. Passwords and invitation tokens never reach it.
    """
    logger.info(
        "people: %s %s by %s %s",
        subject,
        action,
        getattr(actor, "username", None) or "the invitee",
        details or {},
    )
    audit_record(
        actor=actor,
        action=audit_action,
        target=subject if subject.startswith("invitation") else f"user:{subject}",
        details={"change": action, **(details or {})},
        workspace=workspace,
        subject=subject_user,
    )


class PeopleRefused(PeopleError):
    """A change the person asking has no right to make (the API answers 403)."""


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _checked_roles(roles) -> list[str]:
    chosen = sorted(set(roles))
    unknown = [role for role in chosen if role not in Role.values]
    if unknown:
        raise PeopleError(_("Unknown role: %(roles)s.") % {"roles": ", ".join(unknown)})
    return chosen


def _workspace(workspace: Workspace | None) -> Workspace:
    return workspace if workspace is not None else Workspace.objects.get(pk=default_workspace_id())


def _rank(user: User) -> int:
    """How many rights an account has, site-wide: superuser, staff, anyone else."""
    return 2 if user.is_superuser else 1 if user.is_staff else 0


def _guard(*, actor: User, user: User) -> None:
    """Nobody changes someone with more rights than they have."""
    if user.is_superuser and not actor.is_superuser:
        raise PeopleRefused(_("%(name)s is a superuser; manage that account in the admin.") % {"name": user.username})
    if _rank(user) > _rank(actor):
        raise PeopleRefused(
            _("%(name)s has more rights than you (a staff account); ask a superuser.") % {"name": user.username}
        )


def _guard_other_admin(*, actor: User, user: User, workspace: Workspace) -> None:
    """Only a superuser changes the place of someone who administers another workspace."""
    if actor.is_superuser:
        return
    elsewhere = Membership.objects.filter(user=user, admin=True).exclude(workspace=workspace)
    if elsewhere.exists():
        raise PeopleRefused(
            _("%(name)s administers another workspace; only a superuser changes their roles or removes them.")
            % {"name": user.username}
        )


def _require_admin(*, actor: User, workspace: Workspace) -> None:
    if not administers(actor, workspace.pk):
        raise PeopleRefused(
            _("Only an admin of workspace %(workspace)s changes its members and their roles.")
            % {"workspace": workspace.slug}
        )


def _place(user: User, workspace: Workspace) -> tuple[list[str], bool]:
    """The roles and admin flag the account holds in the workspace, as recorded."""
    membership = Membership.objects.filter(user=user, workspace=workspace).first()
    return (sorted(membership.role_names()), membership.admin) if membership else ([], False)


@transaction.atomic
def account_create(
    *, username: str, password: str, roles, actor: User, workspace: Workspace | None = None, admin: bool = False
):
    """A new active account, a member of `workspace` (the default one when None) with these roles
    (the username and password already validated). Only an admin of the workspace makes one."""
    roles = _checked_roles(roles)
    workspace = _workspace(workspace)
    _require_admin(actor=actor, workspace=workspace)
    User = get_user_model()
    if User.objects.filter(username__iexact=username).exists():
        raise PeopleError(_("The username %(name)s is taken.") % {"name": username})
    user = User.objects.create_user(username=username, password=password)
    membership_set(user=user, workspace=workspace, roles=roles, admin=admin)
    people_change_record(
        actor=actor,
        action="created",
        subject=username,
        details={"roles": roles, **({"admin": True} if admin else {})},
        workspace=workspace,
    )
    return user


@transaction.atomic
def account_roles_set(
    *, user: User, roles, actor: User, workspace: Workspace | None = None, admin: bool | None = None
) -> list[str]:
    """Give the account exactly these roles in `workspace` (the default one when None), and make
    it an admin there or not (`admin` None keeps the flag); returns the roles. Only an admin of
    the workspace (or a superuser) does it, never to someone with more rights than they have.
    Nobody takes the researcher role or the admin flag from themselves, so a team never locks
    itself out by accident. An account left with no role and no admin flag leaves the workspace."""
    roles = _checked_roles(roles)
    workspace = _workspace(workspace)
    _require_admin(actor=actor, workspace=workspace)
    _guard(actor=actor, user=user)
    _guard_other_admin(actor=actor, user=user, workspace=workspace)
    before, was_admin = _place(user, workspace)
    if user.pk == actor.pk and Role.RESEARCHER.value in before and Role.RESEARCHER.value not in roles:
        raise PeopleError(_("You cannot take the researcher role from yourself; ask another researcher."))
    if user.pk == actor.pk and was_admin and admin is False:
        raise PeopleError(_("You cannot stop being an admin yourself; ask another admin."))
    membership_set(user=user, workspace=workspace, roles=roles, admin=admin)
    after_admin = was_admin if admin is None else admin
    if before != roles or was_admin != after_admin:
        changes: dict = {"roles": [before, roles]}
        if was_admin != after_admin:
            changes["admin"] = [was_admin, after_admin]
        people_change_record(
            actor=actor,
            action="roles changed",
            subject=user.username,
            details=changes,
            workspace=workspace,
            subject_user=user,
        )
    return roles


def account_active_refusal(*, user: User, actor: User) -> str:
    """Why `actor` may not deactivate (or activate) `user`, or "" when they may: what the people
    page asks before offering the action."""
    try:
        if user.pk == actor.pk:
            raise PeopleError(_("You cannot deactivate your own account."))
        _active_check(user=user, actor=actor)
    except PeopleError as error:
        return error.message
    return ""


def _active_check(*, user: User, actor: User) -> list[Membership]:
    _guard(actor=actor, user=user)
    places = list(Membership.objects.filter(user=user).select_related("workspace"))
    foreign = [place.workspace.slug for place in places if not administers(actor, place.workspace_id)]
    if foreign or (not places and not actor.is_superuser):
        raise PeopleError(
            _("%(name)s is also a member of workspaces you do not administer (%(workspaces)s); ask a superuser.")
            % {"name": user.username, "workspaces": ", ".join(foreign) or "—"}
        )
    return places


@transaction.atomic
def account_active_set(*, user: User, active: bool, actor: User) -> None:
    """Deactivate an account (it can no longer log in; its work stays) or activate it again.

    An account spans workspaces, so only someone who administers every workspace it is a member
    of (or a superuser) does it, and never to someone with more rights than they have."""
    if user.pk == actor.pk and not active:
        raise PeopleError(_("You cannot deactivate your own account."))
    places = _active_check(user=user, actor=actor)
    if user.is_active != active:
        user.is_active = active
        user.save(update_fields=["is_active"])
        workspaces: list[Workspace | None] = [place.workspace for place in places] or [None]
        for workspace in workspaces:
            people_change_record(
                actor=actor,
                action="activated" if active else "deactivated",
                subject=user.username,
                workspace=workspace,
                subject_user=user,
            )


@transaction.atomic
def invitation_create(
    *, roles, note: str = "", days: int = INVITATION_DAYS_DEFAULT, actor: User, workspace: Workspace | None = None
) -> tuple[Invitation, str]:
    """A one-time invitation link's row and its token, into `workspace` (the default one when
    None; only its admins invite). Return the token to the researcher once: only its hash is
    stored."""
    roles = _checked_roles(roles)
    workspace = _workspace(workspace)
    _require_admin(actor=actor, workspace=workspace)
    if not roles:
        raise PeopleError(_("Choose at least one role for the invitee."))
    if not 1 <= days <= INVITATION_DAYS_MAX:
        raise PeopleError(_("An invitation lasts from 1 to %(max)d days.") % {"max": INVITATION_DAYS_MAX})
    token = secrets.token_urlsafe(32)
    now = timezone.now()
    invitation = Invitation.objects.create(
        token_hash=token_hash(token),
        roles=roles,
        note=note.strip()[:200],
        created_by=actor,
        created_at=now,
        expires_at=now + timedelta(days=days),
    )
    WorkspaceInvitation.objects.create(token_hash=invitation.token_hash, workspace=workspace)
    people_change_record(
        actor=actor,
        action="created",
        subject=f"invitation {invitation.pk}",
        details={"roles": roles, "days": days},
        workspace=workspace,
        audit_action=AuditAction.INVITATION_CHANGED,
    )
    return invitation, token


def invitation_for_token(token: str) -> Invitation | None:
    """The invitation a link's token opens, whatever its state, or None."""
    return Invitation.objects.filter(token_hash=token_hash(token)).first()


@transaction.atomic
def invitation_accept(*, token: str, username: str, password: str):
    """Use an open invitation: a new account with the invitation's roles. The invitation is
    used at most once, even when two people submit it at the same moment."""
    invitation = Invitation.objects.select_for_update().filter(token_hash=token_hash(token)).first()
    if invitation is None or invitation.state() != "open":
        raise PeopleError(_("This invitation link cannot be used: it was used, withdrawn or has expired."))
    User = get_user_model()
    if User.objects.filter(username__iexact=username).exists():
        raise PeopleError(_("The username %(name)s is taken.") % {"name": username})
    try:
        with transaction.atomic():
            user = User.objects.create_user(username=username, password=password)
    except IntegrityError:
        raise PeopleError(_("The username %(name)s is taken.") % {"name": username}) from None
    place = WorkspaceInvitation.objects.filter(token_hash=invitation.token_hash).select_related("workspace").first()
    workspace = place.workspace if place else _workspace(None)
    membership_set(user=user, workspace=workspace, roles=list(invitation.roles))
    invitation.used_at = timezone.now()
    invitation.used_by = user
    invitation.save(update_fields=["used_at", "used_by"])
    people_change_record(
        actor=None,
        action="used",
        subject=f"invitation {invitation.pk}",
        details={"user": username, "roles": invitation.roles},
        workspace=workspace,
        audit_action=AuditAction.INVITATION_CHANGED,
    )
    return user


@transaction.atomic
def invitation_revoke(*, invitation: Invitation, actor: User) -> None:
    """Withdraw an invitation that was not used yet (an admin of its workspace)."""
    invitation = Invitation.objects.select_for_update().get(pk=invitation.pk)
    workspace = invitation_workspace(invitation=invitation)
    _require_admin(actor=actor, workspace=workspace)
    if invitation.used_at:
        raise PeopleError(_("This invitation was used already."))
    if not invitation.revoked_at:
        invitation.revoked_at = timezone.now()
        invitation.save(update_fields=["revoked_at"])
        people_change_record(
            actor=actor,
            action="withdrawn",
            subject=f"invitation {invitation.pk}",
            workspace=workspace,
            audit_action=AuditAction.INVITATION_CHANGED,
        )


def invitation_workspace(*, invitation: Invitation) -> Workspace:
    """The workspace an invitation lets its invitee join (the default one for links made before
    workspaces)."""
    place = WorkspaceInvitation.objects.filter(token_hash=invitation.token_hash).select_related("workspace").first()
    return place.workspace if place else _workspace(None)
