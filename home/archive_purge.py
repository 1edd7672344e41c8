"""Deleting for good what was archived more than ARCHIVE_DAYS ago (`purge_archived`).

Campaigns and runs go first, then datasets, then studies: a dataset whose only runs were archived
with it is free once they are gone. Anything another object still refers to stays, and the
outcome says by what; a frozen version a run's or campaign's manifest cites is never deleted.
Each deletion is in the audit of its workspace, with what it was before and after.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.db import transaction
from django.db.models import Model, ProtectedError, RestrictedError
from django.utils import timezone

from annotation.models import Campaign, Vote
from core.archiving import archive_key
from core.audit import AuditAction, audit_record
from curation.models import Dataset, Study, Submission
from judging.models import JudgeRun


@dataclass
class PurgeOutcome:
    """One archived object past its restore period: deleted, or kept and why."""

    kind: str
    key: str
    purged: bool
    blocked_by: list[str] = field(default_factory=list)


def _dataset_blockers(dataset: Dataset) -> list[str]:
    blockers = [f"run #{pk}" for pk in JudgeRun.objects.filter(dataset=dataset).values_list("pk", flat=True)]
    blockers += [f"campaign {slug}" for slug in Campaign.objects.filter(dataset=dataset).values_list("slug", flat=True)]
    versions = Dataset.objects.filter(previous_version=dataset) | Dataset.objects.filter(frozen_from=dataset)
    blockers += [f"dataset {name}" for name in versions.exclude(pk=dataset.pk).values_list("name", flat=True)]
    if dataset.frozen_at is not None:
        runs = JudgeRun.objects.filter(manifest__dataset__id=dataset.pk).values_list("pk", flat=True)
        cited = [f"run #{pk}'s manifest" for pk in runs]
        cited += [
            f"campaign {slug}'s manifest"
            for slug in Campaign.objects.filter(manifest__dataset__id=dataset.pk).values_list("slug", flat=True)
        ]
        blockers += [name for name in cited if name not in blockers]
    return blockers


def _blockers(kind: str, obj: Model) -> list[str]:
    """What still refers to `obj`, in words ("run #12", "campaign demo")."""
    if kind == "dataset":
        return _dataset_blockers(obj)  # type: ignore[arg-type]
    if kind == "study":
        return [f"dataset {name}" for name in Dataset.objects.filter(study_id=obj.pk).values_list("name", flat=True)]
    if kind == "run":
        return [
            f"run #{pk} (its re-run)" for pk in JudgeRun.objects.filter(rerun_of_id=obj.pk).values_list("pk", flat=True)
        ]
    return []


def _delete(kind: str, obj: Model) -> None:
    """The object with what is its own: a campaign's votes, a study's submissions (their cases
    go with them); everything else of theirs goes by cascade."""
    if kind == "campaign":
        Vote.objects.filter(campaign_id=obj.pk).delete()
    if kind == "study":
        Submission.objects.filter(study_id=obj.pk).delete()
    obj.delete()


def archived_purge(*, now: datetime | None = None, dry_run: bool = False) -> list[PurgeOutcome]:
    """Delete every object archived longer ago than ARCHIVE_DAYS that nothing refers to; return
    an outcome per such object (with `dry_run`, what would happen, and nothing deleted)."""
    now = now or timezone.now()
    outcomes: list[PurgeOutcome] = []
    order: list[tuple[str, type[Model]]] = [
        ("campaign", Campaign),
        ("run", JudgeRun),
        ("dataset", Dataset),
        ("study", Study),
    ]
    for kind, model in order:
        for obj in model._default_manager.purgeable(now=now).order_by("pk"):  # type: ignore[attr-defined]
            outcome = PurgeOutcome(kind=kind, key=archive_key(obj), purged=False)
            outcome.blocked_by = _blockers(kind, obj)
            if not outcome.blocked_by and not dry_run:
                outcome.blocked_by = _purge_one(kind, obj, key=outcome.key)
                outcome.purged = not outcome.blocked_by
            outcomes.append(outcome)
    return outcomes


def _purge_one(kind: str, obj, *, key: str) -> list[str]:
    """Delete one object with its audit entry, in one transaction; what refused it, if anything."""
    try:
        with transaction.atomic():
            before = obj.archived_at.isoformat(timespec="seconds")
            audit_record(
                actor=None,
                action=AuditAction.PURGED,
                target=f"{kind}:{key}",
                details={"changes": {"archived_at": [before, None], "exists": [True, False]}},
                workspace=obj.workspace_id,
            )
            _delete(kind, obj)
    except ProtectedError as error:
        return sorted(f"{type(row).__name__} {row}" for row in error.protected_objects)
    except RestrictedError as error:
        return sorted(f"{type(row).__name__} {row}" for row in error.restricted_objects)
    return []
