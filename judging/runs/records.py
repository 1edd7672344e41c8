"""What researchers do to judge runs from the pages and the API, in the audit log: the one place
a run's start, resume, re-run and re-parse are recorded (a cancel is recorded where it happens,
judging/engine/queue.py)."""

from __future__ import annotations

from django.contrib.auth.base_user import AbstractBaseUser

from core.audit import AuditAction, audit_record
from judging.models import JudgeRun


def run_change_record(
    *, actor: AbstractBaseUser | None, run: JudgeRun, change: str, details: dict | None = None
) -> None:
    """Audit `change` ("started", "resumed", "rerun", "reparsed") of the run, in its workspace."""
    audit_record(
        actor=actor,
        action=AuditAction.RUN_CHANGED,
        target=f"run:{run.pk}",
        details={"change": change, **(details or {})},
        workspace=run.workspace_id,
    )
