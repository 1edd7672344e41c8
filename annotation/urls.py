from django.urls import path

from annotation import views

app_name = "annotation"
urlpatterns = [
    path("annotate/", views.annotate_index, name="index"),
]
