"""Archive and restore: what datasets, runs, campaigns and studies share when a researcher puts
one away.

An archived object keeps its row and its name (names stay unique across archived and live
objects, so a restore never clashes); it is left out of every list, picker, count and queue
through `.active()`, its page still opens read-only, and it can be restored for ARCHIVE_DAYS
days. After that `purge_archived` deletes it (home/archive_purge.py), unless something still
refers to it.

The default manager keeps returning archived rows: a foreign key, an export of an old run or the
admin must still reach them. Lists ask for `.active()` explicitly.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError
from django.db import models, transaction
from django.urls import reverse
from django.utils import formats, timezone
from django.utils.translation import gettext as _

from core.audit import AuditAction, audit_record
from core.errors import UserbenchError


def archive_period() -> timedelta:
    """How long an archived object can be restored (ARCHIVE_DAYS, 30 by default)."""
    return timedelta(days=settings.ARCHIVE_DAYS)


class ArchivableQuerySet(models.QuerySet):
    def active(self):
        """What is not archived: every list, picker, count and queue reads this."""
        return self.filter(archived_at__isnull=True)

    def archived(self):
        return self.filter(archived_at__isnull=False)

    def purgeable(self, *, now: datetime | None = None):
        """Archived longer ago than ARCHIVE_DAYS: no longer restorable."""
        return self.filter(archived_at__lte=(now or timezone.now()) - archive_period())


class Archivable(models.Model):
    """An abstract model: `archived_at` (None while live) and the `.active()` queryset."""

    archived_at = models.DateTimeField(null=True, blank=True, db_index=True)

    objects = ArchivableQuerySet.as_manager()

    class Meta:
        abstract = True

    @property
    def is_archived(self) -> bool:
        return self.archived_at is not None

    @property
    def restorable_until(self) -> datetime | None:
        return None if self.archived_at is None else self.archived_at + archive_period()


class ArchivedError(UserbenchError):
    """A change to an archived object, or an archive or restore that cannot be done."""


def archive_key(obj: Archivable) -> str:
    """How the audit and the API name it: a study's or campaign's slug, a dataset's name, a run's id."""
    return str(getattr(obj, "slug", None) or getattr(obj, "name", None) or obj.pk)


def _date(moment: datetime) -> str:
    return formats.date_format(timezone.localtime(moment), "DATE_FORMAT")


def archived_note(obj: Archivable) -> str:
    """ "Archived on <date>, restorable until <date>." in the reader's language."""
    assert obj.archived_at is not None and obj.restorable_until is not None
    return _("Archived on %(archived)s, restorable until %(until)s.") % {
        "archived": _date(obj.archived_at),
        "until": _date(obj.restorable_until),
    }


def refuse_if_archived(obj: Archivable | None) -> None:
    """Raise ArchivedError when `obj` is archived: an archived object is read-only until restored."""
    if obj is not None and obj.archived_at is not None:
        raise ArchivedError(
            _("%(name)s is archived and cannot be changed; restore it first. %(note)s")
            % {"name": str(obj), "note": archived_note(obj)}
        )


# What still uses an object, so that it cannot be archived yet: each app registers, per kind
# ("dataset"), a function naming its live users of it in words ("run #3", "campaign demo"). An
# archived dataset under a live run or campaign would leave that run or campaign in the lists and
# the annotators' queues without it, and a worker at work on it would meet an archived dataset.
# Each function takes an object of its own kind (a Dataset for "dataset"), hence Any.
ArchiveUsers = Callable[[Any], list[str]]
ARCHIVE_USERS: dict[str, list[ArchiveUsers]] = {}
# How many users the refusal names; the rest it counts.
USERS_NAMED = 10


def archive_users(kind: str) -> Callable[[ArchiveUsers], ArchiveUsers]:
    """Register `fn(obj) -> users in words` as what may stop an object of `kind` from being archived."""

    def register(fn: ArchiveUsers) -> ArchiveUsers:
        found = ARCHIVE_USERS.setdefault(kind, [])
        if fn not in found:
            found.append(fn)
        return fn

    return register


def refuse_while_in_use(obj: Archivable, *, kind: str) -> None:
    """Raise ArchivedError naming what still uses `obj`, when anything registered for `kind` does."""
    users = [name for find in ARCHIVE_USERS.get(kind, []) for name in find(obj)]
    if not users:
        return
    named = ", ".join(users[:USERS_NAMED])
    if len(users) > USERS_NAMED:
        named += " " + _("and %(count)d more") % {"count": len(users) - USERS_NAMED}
    raise ArchivedError(
        _(
            "%(kind)s %(name)s cannot be archived while it is in use: %(users)s. Archive those runs and "
            "campaigns first, and let its generations, uploads and curation jobs finish (or cancel them)."
        )
        % {"kind": str(obj._meta.verbose_name).capitalize(), "name": archive_key(obj), "users": named}
    )


@transaction.atomic
def archive_set[M: Archivable](*, obj: M, archived: bool, actor, kind: str, now: datetime | None = None) -> M:
    """Archive (`archived` True) or restore `obj`, recording it in the audit of its workspace
    with `archived_at` before and after. `kind` names it in the audit's target ("dataset",
    "run", "campaign", "study"). ArchivedError when it already is in that state, when its
    restore period has passed, or (archiving) while something registered with `archive_users`
    still uses it: checked under the row's lock."""
    model = type(obj)
    locked = model._default_manager.select_for_update().get(pk=obj.pk)
    before = locked.archived_at
    moment = now or timezone.now()
    if archived and before is not None:
        raise ArchivedError(_("%(name)s is already archived.") % {"name": str(locked)})
    if archived:
        refuse_while_in_use(locked, kind=kind)
    if not archived and before is None:
        raise ArchivedError(_("%(name)s is not archived.") % {"name": str(locked)})
    if not archived and before is not None and before + archive_period() < moment:
        raise ArchivedError(
            _("%(name)s can no longer be restored: it was archived more than %(days)s days ago.")
            % {"name": str(locked), "days": settings.ARCHIVE_DAYS}
        )
    after = moment if archived else None
    model._default_manager.filter(pk=obj.pk).update(archived_at=after)
    obj.archived_at = after
    audit_record(
        actor=actor,
        action=AuditAction.ARCHIVED if archived else AuditAction.RESTORED,
        target=f"{kind}:{archive_key(locked)}",
        details={"changes": {"archived_at": [_iso(before), _iso(after)]}},
        workspace=getattr(obj, "workspace_id", None),
    )
    return obj


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat(timespec="seconds")


# Where each kind is restored through the API (the routes of curation, judging and annotation).
_RESTORE_ROUTES = {
    "dataset": "api-dataset-restore",
    "judgerun": "api-run-restore",
    "campaign": "api-campaign-restore",
    "study": "api-study-restore",
}


def refuse_archived_in_command(*objects: Archivable | None, flag: str = "") -> None:
    """For the commands: archived work is absent from their choices. Raise ArchivedError for the
    first archived object given (a run or campaign on an archived dataset counts too: pass both),
    saying when it was archived and how to restore it; `flag` names the option that reads it
    anyway, for a command whose purpose allows that."""
    for obj in objects:
        if obj is None or obj.archived_at is None:
            continue
        kind = obj._meta.verbose_name
        restore = reverse(_RESTORE_ROUTES[str(obj._meta.model_name)], args=[archive_key(obj)])
        message = _(
            "%(kind)s %(name)s is archived, and commands leave archived work out. %(note)s Restore it first, "
            "with the Restore button on its page or POST %(restore)s."
        ) % {"kind": str(kind).capitalize(), "name": archive_key(obj), "note": archived_note(obj), "restore": restore}
        if flag:
            message += " " + _("Or add %(flag)s to read it as it is.") % {"flag": flag}
        raise ArchivedError(message)


def command_refuses_archived(*objects: Archivable | None, flag: str = "") -> None:
    """`refuse_archived_in_command` as the CommandError a command stops with (its message, no traceback)."""
    try:
        refuse_archived_in_command(*objects, flag=flag)
    except ArchivedError as error:
        raise CommandError(error.message) from None
