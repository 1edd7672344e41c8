from django.urls import path

from curation.api import DatasetListApi, StudyListApi

urlpatterns = [
    path("studies/", StudyListApi.as_view(), name="api-studies"),
    path("datasets/", DatasetListApi.as_view(), name="api-datasets"),
]
