"""The audit log: who did what to participant data and to the set-up that spends money."""

from django.conf import settings
from django.db import models
from django.utils import timezone


class AuditEvent(models.Model):
    """One audited action. Written only through `core.audit.audit_record`; never changed.

    `action` is a plain string (core.audit.AuditAction lists the known ones, with labels), so an
    app can add an action without a migration. No IP address is ever recorded.
    """

    # Null for the system (a command, a scheduled job) and for failed log-ins.
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The name at the time, kept when the account is renamed or deleted; for a failed log-in
    # the user name that was typed.
    actor_name = models.CharField(max_length=150, blank=True)
    action = models.CharField(max_length=40, db_index=True)
    # What was acted on, as "<kind>:<key>" (study:demo, run:12, export:cases).
    target = models.CharField(max_length=200, blank=True)
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"{self.action} {self.target} by {self.actor_name or 'system'}"


class ApiToken(models.Model):
    """A person's token for the API, made on /account/tokens/. Only a SHA-256 hash of the token
    is stored: the token itself is shown once, when it is made, and cannot be read again. Written
    only through core/tokens.py (which records each creation and revocation in the audit log)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    # What the person calls it ("laptop script"), so that they know which one to revoke.
    name = models.CharField(max_length=100)
    key_hash = models.CharField(max_length=64, unique=True)
    # The token's first characters, shown in the list to tell tokens apart; never enough to use.
    prefix = models.CharField(max_length=12)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"{self.name} ({self.prefix}…) of {self.user_id}"
