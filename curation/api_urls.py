from django.urls import path

from curation.api import DatasetListApi, ExportApi, StudyListApi
from curation.study_api import StudyStatisticsApi

urlpatterns = [
    path("studies/", StudyListApi.as_view(), name="api-studies"),
    path("datasets/", DatasetListApi.as_view(), name="api-datasets"),
    path("exports/<slug:what>/", ExportApi.as_view(), name="api-export"),
    path("studies/<slug:slug>/", StudyStatisticsApi.as_view(), name="api-study-statistics"),
]
