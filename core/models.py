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
    # The workspace the change belongs to: its members read the entry on /audit/. None for what
    # belongs to no workspace (a failed log-in, a change the operator made to the site).
    workspace = models.ForeignKey("core.Workspace", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # The person an entry is about when it belongs to no workspace (their API tokens, a failed
    # log-in with their user name): they read it on /audit/, and superusers do; nobody else.
    subject = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"{self.action} {self.target} by {self.actor_name or 'system'}"


class ApiToken(models.Model):
    """A person's token for the API, made on /account/tokens/. Only a SHA-256 hash of the token
    is stored: the token itself is shown once, when it is made, and cannot be read again. Written
    only through core/tokens.py (which records each creation and revocation in the audit log).

    A revoked token stays as a tombstone (its hash and `revoked_at`): a script still sending it
    is told it was revoked (401) without that counting as a guess against the script's address."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    # What the person calls it ("laptop script"), so that they know which one to revoke.
    name = models.CharField(max_length=100)
    key_hash = models.CharField(max_length=64, unique=True)
    # The token's first characters, shown in the list to tell tokens apart; never enough to use.
    prefix = models.CharField(max_length=12)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    # None: valid until revoked.
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"{self.name} ({self.prefix}…) of {self.user_id}"

    def is_live(self, now=None) -> bool:
        """Neither revoked nor past its expiry."""
        if self.revoked_at is not None:
            return False
        return self.expires_at is None or self.expires_at > (now or timezone.now())


# The workspace of a fresh install and of everything that existed before workspaces.
DEFAULT_SLUG = "default"


def default_workspace_id() -> int:
    """The workspace objects land in when nothing else is named: `default`, made on first use
    (the default of every workspace foreign key, so a single team never chooses one)."""
    workspace = Workspace.objects.filter(slug=DEFAULT_SLUG).only("pk").first()
    if workspace is None:
        workspace, _ = Workspace.objects.get_or_create(slug=DEFAULT_SLUG, defaults={"name": "Default"})
    return workspace.pk


class Workspace(models.Model):
    """A team's room: its studies, datasets, endpoints, judge runs and campaigns, and its members.

    Staff see and change only what belongs to the workspaces they are members of
    (`core/workspaces.py`); a superuser sees every workspace. A fresh install has one, `default`.
    """

    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=100)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["slug"]

    def __str__(self):
        return self.slug


class Membership(models.Model):
    """A person's place in a workspace: the roles they hold there, and whether they administer it
    (change members' roles, deactivate members, change where an endpoint sends its key)."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    researcher = models.BooleanField(default=False)
    reviewer = models.BooleanField(default=False)
    annotator = models.BooleanField(default=False)
    admin = models.BooleanField(default=False)

    class Meta:
        ordering = ["workspace__slug", "user__username"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "user"], name="membership_once_per_workspace"),
        ]

    def __str__(self):
        return f"{self.user_id} in {self.workspace_id}"

    def role_names(self) -> list[str]:
        """The roles held here, in the order Role lists them."""
        return [name for name in ("researcher", "reviewer", "annotator") if getattr(self, name)]


class WorkspaceInvitation(models.Model):
    """The workspace an invitation link (home.models.Invitation, by the hash of its token) lets
    its invitee join: they become a member there with the invitation's roles."""

    token_hash = models.CharField(max_length=64, unique=True)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")

    def __str__(self):
        return f"invitation into {self.workspace_id}"
