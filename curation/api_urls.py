"""The curation API: studies (curation.studies) and datasets (curation.datasets)."""

from django.urls import path

from curation.datasets.api import (
    DatasetArchiveApi,
    DatasetFreezeApi,
    DatasetListApi,
    DatasetUploadApi,
    DatasetUploadResumeApi,
)
from curation.studies.api import StudyArchiveApi, StudyListApi, StudyStatisticsApi

urlpatterns = [
    path("studies/", StudyListApi.as_view(), name="api-studies"),
    path("datasets/", DatasetListApi.as_view(), name="api-datasets"),
    path("dataset-uploads/<int:upload_id>/", DatasetUploadApi.as_view(), name="api-dataset-upload"),
    path("dataset-uploads/<int:upload_id>/resume/", DatasetUploadResumeApi.as_view(), name="api-dataset-upload-resume"),
    path("datasets/<str:name>/freeze/", DatasetFreezeApi.as_view(), name="api-dataset-freeze"),
    path("studies/<slug:slug>/", StudyStatisticsApi.as_view(), name="api-study-statistics"),
    path("studies/<slug:key>/archive/", StudyArchiveApi.as_view(archived=True), name="api-study-archive"),
    path("studies/<slug:key>/restore/", StudyArchiveApi.as_view(archived=False), name="api-study-restore"),
    # A dataset's name may hold "/" (its answers' routes in judging/api_urls.py take a path too).
    path("datasets/<path:key>/archive/", DatasetArchiveApi.as_view(archived=True), name="api-dataset-archive"),
    path("datasets/<path:key>/restore/", DatasetArchiveApi.as_view(archived=False), name="api-dataset-restore"),
]
