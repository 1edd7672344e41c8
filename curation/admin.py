from django.contrib import admin

from core.admin import AuditedAdmin, FrozenAwareAdmin, ReadOnlyAdmin
from core.audit import AuditAction
from curation.models import Case, CurationJob, Dataset, Item, ReviewEvent, ReviewTask, Study, Submission


@admin.register(Study)
class StudyAdmin(AuditedAdmin):
    audit_action, audit_kind = AuditAction.STUDY_CHANGED, "study"
    list_display = ["slug", "title_en", "is_open", "min_cases", "max_cases", "created_at"]
    list_filter = ["is_open"]
    search_fields = ["slug", "title_en", "title_zh"]
    fieldsets = [
        (None, {"fields": ["slug", "title_en", "title_zh", "is_open"]}),
        ("Texts", {"fields": ["consent_en", "consent_zh", "instructions_en", "instructions_zh"]}),
        (
            "Questionnaire",
            {"fields": ["min_cases", "max_cases", "services", "intents", "age_groups", "attention_answer"]},
        ),
        ("Prolific", {"fields": ["completion_code", "screenout_code"]}),
    ]


class CaseInline(admin.TabularInline):
    model = Case
    extra = 0
    fields = ["position", "service", "intent", "intent_other", "review_status"]
    # Plain names suit both; the stubs type `fields` as a list of groups and lists do not vary.
    readonly_fields = fields  # type: ignore[assignment]


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    list_display = ["id", "study", "status", "language", "country", "excluded", "started_at", "submitted_at"]
    list_filter = ["study", "status", "excluded", "language"]
    # The resume token opens a participant's answers: never shown, never searchable.
    # Drafts are a page's unsaved typing, not answers: not for anyone to read.
    exclude = ["resume_token", "drafts"]
    readonly_fields = ["attention_passed", "consented_at", "submitted_at", "current_step"]
    search_fields = ["prolific_pid"]
    raw_id_fields = ["study"]
    inlines = [CaseInline]


@admin.register(Dataset)
class DatasetAdmin(FrozenAwareAdmin):
    list_display = ["name", "source", "frozen_at", "created_at"]
    list_filter = ["source"]
    search_fields = ["name"]
    raw_id_fields = ["study", "previous_version", "frozen_from", "created_by"]

    def frozen(self, obj) -> bool:
        return obj.frozen_at is not None


@admin.register(Item)
class ItemAdmin(FrozenAwareAdmin):
    list_display = ["external_id", "dataset", "intent", "category", "language"]
    list_filter = ["dataset", "language", "intent"]
    search_fields = ["external_id", "question"]
    list_select_related = ["dataset"]
    raw_id_fields = ["dataset", "source_case", "created_by"]

    def frozen(self, obj) -> bool:
        return obj.dataset.frozen_at is not None


# Curation: the audit trail and job rows are read-only here; decisions go through /review/.
@admin.register(ReviewTask)
class ReviewTaskAdmin(admin.ModelAdmin):
    list_display = ["id", "queue", "status", "case", "item", "leased_to", "lease_expires_at", "decision"]
    list_filter = ["queue", "status"]
    raw_id_fields = ["case", "item", "author", "leased_to", "decided_by"]


@admin.register(ReviewEvent)
class ReviewEventAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "action", "queue", "case", "item", "actor"]
    list_filter = ["action", "queue"]


@admin.register(CurationJob)
class CurationJobAdmin(ReadOnlyAdmin):
    list_display = ["id", "kind", "dataset", "model", "status", "done", "failed", "total", "heartbeat_at"]
    list_filter = ["kind", "status"]
