"""The curation API: studies (curation.studies) and datasets (curation.datasets)."""

from django.urls import path

from curation.datasets.api import DatasetFreezeApi, DatasetListApi
from curation.studies.api import StudyListApi, StudyStatisticsApi

urlpatterns = [
    path("studies/", StudyListApi.as_view(), name="api-studies"),
    path("datasets/", DatasetListApi.as_view(), name="api-datasets"),
    path("datasets/<str:name>/freeze/", DatasetFreezeApi.as_view(), name="api-dataset-freeze"),
    path("studies/<slug:slug>/", StudyStatisticsApi.as_view(), name="api-study-statistics"),
]
