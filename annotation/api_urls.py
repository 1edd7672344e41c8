from django.urls import path

from annotation.api import CampaignListApi

urlpatterns = [
    path("campaigns/", CampaignListApi.as_view(), name="api-campaigns"),
]
