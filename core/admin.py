"""Admin building blocks shared by the apps."""

from django.contrib import admin

from core.audit import audit_record


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
