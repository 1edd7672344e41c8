from django.contrib import admin

from annotation.models import Assignment, Campaign, ComparisonPair, Vote


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ["slug", "title", "dataset", "votes_per_pair", "is_open"]
    filter_horizontal = ["candidates", "annotators"]


@admin.register(ComparisonPair)
class ComparisonPairAdmin(admin.ModelAdmin):
    list_display = ["id", "campaign", "item", "model_a", "model_b"]
    list_select_related = ["campaign", "item__dataset", "model_a", "model_b"]


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["id", "pair", "annotator", "status", "leased_until"]
    list_filter = ["status"]


@admin.register(Vote)
class VoteAdmin(admin.ModelAdmin):
    list_display = ["id", "item", "model_a", "model_b", "winner", "annotator", "annotator_label", "campaign"]
    list_filter = ["winner", "campaign"]
    list_select_related = ["item__dataset", "model_a", "model_b", "annotator", "campaign"]
