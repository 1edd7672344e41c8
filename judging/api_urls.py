from django.urls import path

from judging.api import RunListApi

urlpatterns = [
    path("runs/", RunListApi.as_view(), name="api-runs"),
]
