from django.apps import AppConfig
from django.contrib.auth.signals import user_login_failed
from django.utils.translation import gettext_lazy as _


class CoreConfig(AppConfig):
    """The ground floor every app stands on: roles, access, progress, counting, exports, errors,
    and the audit log."""

    name = "core"
    verbose_name = _("Userbench core")

    def ready(self):
        # Registered once the apps are loaded: the audit log's export table reads AuditEvent, and
        # the log-in signal handler writes it (failed log-ins, the admin's and the site's).
        from core import audit_export  # noqa: F401

        # The receiver writes AuditEvent rows, so it too is imported once the models are loaded.
        from core.signals import login_failed_audit

        user_login_failed.connect(login_failed_audit, dispatch_uid="userbench-audit-login-failed")
