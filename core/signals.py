"""Receivers of Django's own signals. Thin: each hands the event to a service."""

from django.contrib.auth import get_user_model

from core.audit import AuditAction, audit_record
from core.auth import login_failure_count

MAX_TYPED_NAME = 150


def login_failed_audit(sender, credentials=None, request=None, **kwargs):
    """A failed log-in (a wrong password, an unknown name, or a locked-out account) goes to the
    audit log with the name that was typed; Django has already masked the password."""
    typed = str((credentials or {}).get("username", ""))[:MAX_TYPED_NAME]
    path = request.path if request is not None else ""
    locked = bool(getattr(request, "axes_locked_out", False))
    audit_record(
        actor=None,
        action=AuditAction.LOGIN_FAILED,
        target=f"login:{path}" if path else "login",
        details={"username": typed, "locked_out": locked},
        # About the account of that name, if there is one: its owner reads the entry too. An
        # unknown name's entries are for superusers only.
        subject=get_user_model().objects.filter(username=typed).first() if typed else None,
    )


def login_failed_count(sender, credentials=None, request=None, **kwargs):
    """A failed log-in counts against its client's address (core.auth.LoginLockoutBackend)."""
    login_failure_count(request)
