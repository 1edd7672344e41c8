from django.urls import path

from curation import views

app_name = "curation"
urlpatterns = [
    path("review/", views.review_index, name="review"),
]
