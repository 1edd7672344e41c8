from django.contrib import admin

from core.admin import AuditedAdmin, ReadOnlyAdmin
from core.audit import AuditAction
from llm.forms import EndpointForm
from llm.models import Endpoint, LLMResponse
from llm.services import AUDITED_WITH_VALUES


@admin.register(Endpoint)
class EndpointAdmin(AuditedAdmin):
    audit_action, audit_kind = AuditAction.ENDPOINT_CHANGED, "endpoint"
    list_display = ["name", "base_url", "api_key_env", "default_model", "max_in_flight"]
    # The key variable may be left empty (no key sent), as on /endpoints/.
    form = EndpointForm

    def save_model(self, request, obj, form, change):
        # As AuditedAdmin records it, with the old and new values of where the calls and the key
        # go, as /endpoints/ records them (llm.services.endpoint_save).
        admin.ModelAdmin.save_model(self, request, obj, form, change)
        values = {
            field: {"before": form.initial.get(field) if change else None, "after": form.cleaned_data.get(field)}
            for field in AUDITED_WITH_VALUES
            if field in form.changed_data
        }
        self._audit(request, obj, {"created": not change, "fields": sorted(form.changed_data), **values})


@admin.register(LLMResponse)
class LLMResponseAdmin(ReadOnlyAdmin):
    list_display = ["model", "base_url", "prompt_tokens", "completion_tokens", "created_at"]
    search_fields = ["key", "model"]
