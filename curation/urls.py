from django.urls import include, path

from curation import review_urls, study_research_views, study_views

app_name = "curation"
urlpatterns = [
    # Review queues, histories and dataset versions (a list: the names stay in `curation:`).
    path("review/", include(review_urls.urlpatterns)),
    # The participant's questionnaire (anonymous).
    path("study/<slug:slug>/", study_views.study_start, name="study-start"),
    path("study/<slug:slug>/resume/<str:token>/", study_views.study_resume, name="study-resume"),
    path("study/<slug:slug>/cases/", study_views.study_cases, name="study-cases"),
    path("study/<slug:slug>/cases/<int:position>/", study_views.study_case_edit, name="study-case-edit"),
    path("study/<slug:slug>/cases/<int:position>/remove/", study_views.study_case_remove, name="study-case-remove"),
    path("study/<slug:slug>/about/", study_views.study_about, name="study-about"),
    path("study/<slug:slug>/usage/", study_views.study_usage, name="study-usage"),
    path("study/<slug:slug>/review/", study_views.study_review, name="study-review"),
    path("study/<slug:slug>/done/", study_views.study_done, name="study-done"),
    # The researcher's study pages.
    path("studies/new/", study_research_views.study_edit, name="study-new"),
    path("studies/<slug:slug>/", study_research_views.study_detail, name="study-detail"),
    path("studies/<slug:slug>/edit/", study_research_views.study_edit, name="study-edit"),
]
