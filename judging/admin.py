from django.contrib import admin

from core.admin import FrozenAwareAdmin, ReadOnlyAdmin
from judging.models import Answer, BatchJob, CandidateModel, JudgeRun, JudgeShard, JudgeTemplate, Judgment


@admin.register(CandidateModel)
class CandidateModelAdmin(admin.ModelAdmin):
    search_fields = ["name", "provider", "family"]
    list_display = ["name", "provider", "family", "is_probe"]
    list_editable = ["provider", "family"]
    list_filter = ["is_probe"]


@admin.register(Answer)
class AnswerAdmin(FrozenAwareAdmin):
    list_display = ["item", "model", "origin", "created_at"]
    list_filter = ["model", "origin"]
    list_select_related = ["item__dataset", "model"]
    raw_id_fields = ["item", "model"]

    def frozen(self, obj) -> bool:
        return obj.item.dataset.frozen_at is not None


# A template version is what runs record they used: edits make a new version in the app.
@admin.register(JudgeTemplate)
class JudgeTemplateAdmin(ReadOnlyAdmin):
    list_display = ["name", "version", "mode", "language", "created_at"]
    list_filter = ["mode", "language"]


@admin.register(JudgeRun)
class JudgeRunAdmin(admin.ModelAdmin):
    list_display = ["id", "dataset", "mode", "judge_model", "status", "created_at"]
    list_filter = ["mode", "status"]
    raw_id_fields = ["dataset", "endpoint", "reference_model", "created_by"]


@admin.register(Judgment)
class JudgmentAdmin(ReadOnlyAdmin):
    list_display = ["run", "item", "model", "order", "final_score", "outcome", "parse_error"]
    list_filter = ["run"]
    list_select_related = ["run", "item__dataset", "model"]
    # The reply wherever it is stored (raw_text is empty when the cache row holds it).
    readonly_fields = ["reply"]


@admin.register(JudgeShard)
class JudgeShardAdmin(ReadOnlyAdmin):
    list_display = ["run", "index", "status", "attempts", "worker_id", "heartbeat_at", "in_flight"]
    list_filter = ["status"]
    readonly_fields = ["units"]


# A batch's row is its record at the provider (file and batch ids): written by judging/batching.py alone.
@admin.register(BatchJob)
class BatchJobAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "run",
        "generation",
        "status",
        "provider_status",
        "batch_id",
        "requests",
        "completed",
        "failed",
    ]
    list_filter = ["status", "provider_status"]
