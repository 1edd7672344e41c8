from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from core.admin import AuditedAdmin, ReadOnlyAdmin
from core.audit import AuditAction
from llm.forms import ENDPOINT_FIELDS, EndpointForm
from llm.models import Endpoint, LLMResponse
from llm.services import endpoint_change_record


class EndpointAdminForm(EndpointForm):
    """The admin names the workspace an endpoint goes to (a superuser works in all of them); with
    it on the form, a name taken in that workspace is an error on the form, not a server error."""

    class Meta(EndpointForm.Meta):
        fields = ["workspace", *ENDPOINT_FIELDS]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["workspace"].required = True


@admin.register(Endpoint)
class EndpointAdmin(AuditedAdmin):
    audit_action, audit_kind = AuditAction.ENDPOINT_CHANGED, "endpoint"
    list_display = ["name", "base_url", "api_key_env", "default_model", "max_in_flight"]
    # The key variable may be left empty (no key sent), as on /endpoints/.
    form = EndpointAdminForm

    def save_model(self, request: HttpRequest, obj: Endpoint, form: EndpointForm, change: bool) -> None:
        # Recorded as /endpoints/ records it (llm.services.endpoint_save): every changed setting
        # with its old and new value, where the calls and the key go included.
        assert request.user.is_authenticated  # the admin site lets in signed-in superusers only
        admin.ModelAdmin.save_model(self, request, obj, form, change)
        changes = {
            field: (form.initial.get(field) if change else None, form.cleaned_data.get(field))
            for field in form.changed_data
        }
        endpoint_change_record(
            actor=request.user, action="changed" if change else "created", endpoint=obj, changes=changes
        )


@admin.register(LLMResponse)
class LLMResponseAdmin(ReadOnlyAdmin):
    list_display = ["model", "base_url", "workspace", "prompt_tokens", "completion_tokens", "created_at"]
    search_fields = ["key", "model"]
