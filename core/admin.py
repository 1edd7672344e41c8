"""Admin building blocks shared by the apps."""

from django.contrib import admin

from core.audit import AuditAction, audit_record
from core.models import Membership, Workspace


def superusers_only(request) -> bool:
    """Who may open the admin: active superusers only. The pages scope every object to a
    person's workspaces; the admin does not, so a staff account with view permissions would read
    every team's data there."""
    return bool(request.user.is_active and request.user.is_superuser)


admin.site.has_permission = superusers_only  # type: ignore[method-assign]


class ReadOnlyAdmin(admin.ModelAdmin):
    """For records that are evidence (audit trails, votes, judgments, cached replies): the admin
    may show them but never add, change or delete one; their services are the only writers."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class FrozenAwareAdmin(admin.ModelAdmin):
    """A frozen dataset version never changes: its rows are read-only, working ones editable.

    `frozen(obj)` says whether a row belongs to a frozen version."""

    def frozen(self, obj) -> bool:
        raise NotImplementedError

    def has_change_permission(self, request, obj=None):
        return super().has_change_permission(request, obj) and not (obj is not None and self.frozen(obj))

    def has_delete_permission(self, request, obj=None):
        return super().has_delete_permission(request, obj) and not (obj is not None and self.frozen(obj))


class AuditedAdmin(admin.ModelAdmin):
    """For the set-up the audit log follows (studies, campaigns, endpoints): every save and
    delete made in the admin is recorded as `audit_action` on "<audit_kind>:<row>"."""

    audit_action = ""
    audit_kind = ""

    def _audit(self, request, obj, details):
        audit_record(
            actor=request.user,
            action=self.audit_action,
            target=f"{self.audit_kind}:{obj}",
            details={**details, "via": "admin"},
            workspace=getattr(obj, "workspace_id", None),
        )

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        self._audit(request, obj, {"created": not change, "fields": sorted(form.changed_data)})

    def delete_model(self, request, obj):
        self._audit(request, obj, {"deleted": True})
        super().delete_model(request, obj)

    def delete_queryset(self, request, queryset):
        for obj in queryset:
            self._audit(request, obj, {"deleted": True})
        super().delete_queryset(request, queryset)


@admin.register(Workspace)
class WorkspaceAdmin(AuditedAdmin):
    """Workspaces are made and renamed here (superusers); their members' roles on /people/."""

    audit_action = AuditAction.WORKSPACE_CHANGED
    audit_kind = "workspace"
    list_display = ["slug", "name", "created_at"]
    search_fields = ["slug", "name"]

    def _audit(self, request, obj, details):
        # A deleted workspace's entry keeps no link to it: the row is gone.
        audit_record(
            actor=request.user,
            action=self.audit_action,
            target=f"workspace:{obj.slug}",
            details={**details, "via": "admin"},
            workspace=None if details.get("deleted") else obj.pk,
        )


@admin.register(Membership)
class MembershipAdmin(AuditedAdmin):
    """Who is a member of which workspace, with which roles; every change is audited."""

    audit_action = AuditAction.PEOPLE_CHANGED
    audit_kind = "membership"
    list_display = ["workspace", "user", "researcher", "reviewer", "annotator", "admin"]
    list_filter = ["workspace", "admin"]
    search_fields = ["user__username", "workspace__slug"]
    autocomplete_fields = ["user"]
