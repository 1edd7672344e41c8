from django.contrib import admin

from judging.models import Answer, CandidateModel, Endpoint, JudgeRun, JudgeShard, JudgeTemplate, Judgment, LLMResponse


@admin.register(Endpoint)
class EndpointAdmin(admin.ModelAdmin):
    list_display = ["name", "base_url", "api_key_env", "default_model", "max_in_flight"]


@admin.register(CandidateModel)
class CandidateModelAdmin(admin.ModelAdmin):
    search_fields = ["name"]


@admin.register(Answer)
class AnswerAdmin(admin.ModelAdmin):
    list_display = ["item", "model", "origin", "created_at"]
    list_filter = ["model", "origin"]
    list_select_related = ["item__dataset", "model"]


@admin.register(JudgeTemplate)
class JudgeTemplateAdmin(admin.ModelAdmin):
    list_display = ["name", "version", "mode", "language", "created_at"]
    list_filter = ["mode", "language"]


@admin.register(JudgeRun)
class JudgeRunAdmin(admin.ModelAdmin):
    list_display = ["id", "dataset", "mode", "judge_model", "status", "created_at"]
    list_filter = ["mode", "status"]


@admin.register(Judgment)
class JudgmentAdmin(admin.ModelAdmin):
    list_display = ["run", "item", "model", "order", "final_score", "outcome", "parse_error"]
    list_filter = ["run"]
    list_select_related = ["run", "item__dataset", "model"]


@admin.register(JudgeShard)
class JudgeShardAdmin(admin.ModelAdmin):
    list_display = ["run", "index", "status", "attempts", "worker_id", "heartbeat_at", "in_flight"]
    list_filter = ["status"]
    readonly_fields = ["units"]


@admin.register(LLMResponse)
class LLMResponseAdmin(admin.ModelAdmin):
    list_display = ["model", "base_url", "prompt_tokens", "completion_tokens", "created_at"]
    search_fields = ["key", "model"]
