from django.urls import path

from llm import api

urlpatterns = [
    path("endpoints/", api.EndpointListApi.as_view(), name="api-endpoints"),
]
