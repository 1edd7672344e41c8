"""Writes that span the apps: people's accounts, their roles, and one-time invitation links.

Researchers manage reviewers and annotators here without the admin. Superuser accounts are
left to the admin: a researcher can neither change nor deactivate one.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, User
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from core.errors import UserbenchError
from core.roles import Role, has_role
from home.models import Invitation

logger = logging.getLogger("userbench.changes")

INVITATION_DAYS_DEFAULT = 7
INVITATION_DAYS_MAX = 30


class PeopleError(UserbenchError):
    """A change to an account or an invitation that cannot be made; nothing was changed."""


def people_change_record(*, actor: User | None, action: str, subject: str, details: dict | None = None) -> None:
    """Record who changed an account, a role or an invitation, and how.

    The one place these changes are recorded; it writes the application log. Passwords and
    invitation tokens never reach it.
    """
    logger.info(
        "people: %s %s by %s %s",
        subject,
        action,
        getattr(actor, "username", None) or "the invitee",
        details or {},
    )


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _checked_roles(roles) -> list[str]:
    chosen = sorted(set(roles))
    unknown = [role for role in chosen if role not in Role.values]
    if unknown:
        raise PeopleError(_("Unknown role: %(roles)s.") % {"roles": ", ".join(unknown)})
    return chosen


def _set_groups(user: User, roles: list[str]) -> None:
    groups = [Group.objects.get_or_create(name=role)[0] for role in roles]
    keep = user.groups.exclude(name__in=Role.values)
    user.groups.set([*keep, *groups])


def _guard(*, actor: User, user: User) -> None:
    if user.is_superuser and not actor.is_superuser:
        raise PeopleError(_("%(name)s is a superuser; manage that account in the admin.") % {"name": user.username})


@transaction.atomic
def account_create(*, username: str, password: str, roles, actor: User):
    """A new active account with these roles (the username and password already validated)."""
    roles = _checked_roles(roles)
    User = get_user_model()
    if User.objects.filter(username__iexact=username).exists():
        raise PeopleError(_("The username %(name)s is taken.") % {"name": username})
    user = User.objects.create_user(username=username, password=password)
    _set_groups(user, roles)
    people_change_record(actor=actor, action="created", subject=username, details={"roles": roles})
    return user


@transaction.atomic
def account_roles_set(*, user: User, roles, actor: User) -> list[str]:
    """Give the account exactly these roles; returns them. A researcher cannot take the
    researcher role from themselves, so the team never locks itself out by accident."""
    roles = _checked_roles(roles)
    _guard(actor=actor, user=user)
    if user.pk == actor.pk and Role.RESEARCHER.value not in roles and has_role(actor, Role.RESEARCHER):
        raise PeopleError(_("You cannot take the researcher role from yourself; ask another researcher."))
    before = sorted(user.groups.filter(name__in=Role.values).values_list("name", flat=True))
    _set_groups(user, roles)
    if before != roles:
        people_change_record(
            actor=actor, action="roles changed", subject=user.username, details={"roles": [before, roles]}
        )
    return roles


@transaction.atomic
def account_active_set(*, user: User, active: bool, actor: User) -> None:
    """Deactivate an account (it can no longer log in; its work stays) or activate it again."""
    _guard(actor=actor, user=user)
    if user.pk == actor.pk and not active:
        raise PeopleError(_("You cannot deactivate your own account."))
    if user.is_active != active:
        user.is_active = active
        user.save(update_fields=["is_active"])
        people_change_record(actor=actor, action="activated" if active else "deactivated", subject=user.username)


@transaction.atomic
def invitation_create(
    *, roles, note: str = "", days: int = INVITATION_DAYS_DEFAULT, actor: User
) -> tuple[Invitation, str]:
    """A one-time invitation link's row and its token. Return the token to the researcher once:
    only its hash is stored."""
    roles = _checked_roles(roles)
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
    people_change_record(
        actor=actor, action="created", subject=f"invitation {invitation.pk}", details={"roles": roles, "days": days}
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
    _set_groups(user, list(invitation.roles))
    invitation.used_at = timezone.now()
    invitation.used_by = user
    invitation.save(update_fields=["used_at", "used_by"])
    people_change_record(
        actor=None,
        action="used",
        subject=f"invitation {invitation.pk}",
        details={"user": username, "roles": invitation.roles},
    )
    return user


@transaction.atomic
def invitation_revoke(*, invitation: Invitation, actor: User) -> None:
    """Withdraw an invitation that was not used yet."""
    invitation = Invitation.objects.select_for_update().get(pk=invitation.pk)
    if invitation.used_at:
        raise PeopleError(_("This invitation was used already."))
    if not invitation.revoked_at:
        invitation.revoked_at = timezone.now()
        invitation.save(update_fields=["revoked_at"])
        people_change_record(actor=actor, action="withdrawn", subject=f"invitation {invitation.pk}")
