from django.urls import path

from annotation import annotate_api, api, campaign_edit_api

urlpatterns = [
    path("campaigns/", api.CampaignListApi.as_view(), name="api-campaigns"),
    path("campaigns/<slug:slug>/", campaign_edit_api.CampaignDetailApi.as_view(), name="api-campaign"),
    path("campaigns/<slug:slug>/bt/", api.CampaignBtApi.as_view(), name="api-campaign-bt"),
    path("campaigns/<slug:slug>/bt/style/", api.CampaignStyleBtApi.as_view(), name="api-campaign-bt-style"),
    path("campaigns/<slug:slug>/manifest/", api.CampaignManifestApi.as_view(), name="api-campaign-manifest"),
    path("campaigns/<slug:slug>/alignment/", api.CampaignAlignmentApi.as_view(), name="api-campaign-alignment"),
    path("campaigns/<slug:slug>/quality/", api.CampaignQualityApi.as_view(), name="api-campaign-quality"),
    path("campaigns/<slug:key>/archive/", api.CampaignArchiveApi.as_view(archived=True), name="api-campaign-archive"),
    path("campaigns/<slug:key>/restore/", api.CampaignArchiveApi.as_view(archived=False), name="api-campaign-restore"),
    path("annotate/<slug:slug>/next/", annotate_api.NextPairApi.as_view(), name="api-annotate-next"),
    path("annotate/<slug:slug>/votes/", annotate_api.VoteApi.as_view(), name="api-annotate-vote"),
    path("annotate/<slug:slug>/skip/", annotate_api.SkipApi.as_view(), name="api-annotate-skip"),
    path("annotate/<slug:slug>/undo/", annotate_api.UndoApi.as_view(), name="api-annotate-undo"),
]
