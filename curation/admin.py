from django.contrib import admin

from curation.models import Case, Dataset, Item, Study, Submission


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ["slug", "title_en", "is_open", "min_cases", "max_cases", "created_at"]
    list_filter = ["is_open"]
    search_fields = ["slug", "title_en", "title_zh"]


class CaseInline(admin.TabularInline):
    model = Case
    extra = 0
    fields = ["position", "service", "intent", "intent_other", "review_status"]
    readonly_fields = fields


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    list_display = ["id", "study", "status", "language", "country", "excluded", "started_at", "submitted_at"]
    list_filter = ["study", "status", "excluded", "language"]
    # The resume token opens a participant's answers: never shown, never searchable.
    exclude = ["resume_token"]
    inlines = [CaseInline]


@admin.register(Dataset)
class DatasetAdmin(admin.ModelAdmin):
    list_display = ["name", "source", "frozen_at", "created_at"]
    list_filter = ["source"]
    search_fields = ["name"]


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ["external_id", "dataset", "intent", "category", "language"]
    list_filter = ["dataset", "language", "intent"]
    search_fields = ["external_id", "question"]
    list_select_related = ["dataset"]
