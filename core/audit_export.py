"""The audit log as an export table (`export audit`), registered when core is ready."""

from core.exports import EXPORT_CHUNK, ExportTable, exporter
from core.models import AuditEvent

AUDIT_FIELDS = ["created_at", "actor", "action", "target", "details"]


@exporter("audit", across=True)
def audit_export(*, dataset=None, study=None, run=None, workspaces: set[int] | None = None) -> ExportTable:
    """Every entry of the audit log, oldest first: of the given workspaces only (those of no
    workspace, about a person or the site, only when every workspace is asked for: a superuser,
    the command line)."""

    def rows():
        events = AuditEvent.objects.all()
        if workspaces is not None:
            events = events.filter(workspace_id__in=workspaces)
        values = events.order_by("created_at", "id").values_list(
            "created_at", "actor_name", "action", "target", "details"
        )
        for created_at, name, action, target, details in values.iterator(chunk_size=EXPORT_CHUNK):
            yield {"created_at": created_at, "actor": name, "action": action, "target": target, "details": details}

    return ExportTable(fields=AUDIT_FIELDS, rows=rows())
